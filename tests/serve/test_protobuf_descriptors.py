"""The checked-in protobuf descriptors are what benchmarks/regenerate_protobuf.py makes of the vendored .proto
files with grpcio-tools' protoc, and the JSON field table speaks of fields those descriptors have."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from kmodel.serve.protobuf import messages, tojson

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "regenerate_protobuf.py"


def regenerate_protobuf():
    spec = importlib.util.spec_from_file_location("regenerate_protobuf", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checked_in_descriptors_are_the_scripts_output() -> None:
    script = regenerate_protobuf()
    assert script.DESCRIPTORS == messages.DESCRIPTORS
    assert script.descriptors() == messages.DESCRIPTORS.read_bytes(), (
        "kmodel/serve/protobuf/descriptors.binpb is stale: run python benchmarks/regenerate_protobuf.py")


def test_the_vendored_protos_are_release_1_31s_and_every_one_is_built() -> None:
    files = regenerate_protobuf().proto_files()
    assert "k8s.io/api/core/v1/generated.proto" in files and "k8s.io/apimachinery/pkg/runtime/generated.proto" in files
    built = {f.name for f in messages.pool().FindMessageTypeByName(
        "k8s.io.api.batch.v1.Job").file.dependencies} | {"k8s.io/api/batch/v1/generated.proto"}
    assert built <= set(files)
    # a field 1.31 added: the image volume source (KEP 4639)
    assert "image" in messages.pool().FindMessageTypeByName("k8s.io.api.core.v1.VolumeSource").fields_by_name


def test_the_json_field_table_names_fields_the_messages_have() -> None:
    table = json.loads(tojson.JSON_FIELDS.read_text())
    assert table, "the JSON field table is empty"
    for name, entry in table.items():
        descriptor = messages.pool().FindMessageTypeByName(name)
        for number in entry["inline"]:
            assert descriptor.fields_by_number[number].message_type is not None, (name, number)
        for number in entry["omit_zero"]:
            assert number in descriptor.fields_by_number, (name, number)
        # a field renamed in JSON is one the message has (the conversion writes it under its JSON name)
        for number in entry["renamed"]:
            assert int(number) in descriptor.fields_by_number, (name, number)
    # a proto field name is its Go JSON name, but in the types with a JSON form of their own (json:"-": the raw
    # bytes of RawExtension, FieldsV1, runtime.Unknown) and authentication/v1 BoundObjectReference's uID
    renamed = {(name, n): j for name, entry in table.items() for n, j in entry["renamed"].items() if j != "-"}
    assert renamed == {("k8s.io.api.authentication.v1.BoundObjectReference", "4"): "uid"}
    # the embedded structs the Go types put inline in their parent's JSON
    assert table["k8s.io.api.core.v1.Volume"]["inline"] == [2]
    assert table["k8s.io.api.core.v1.Probe"]["inline"] == [1]
