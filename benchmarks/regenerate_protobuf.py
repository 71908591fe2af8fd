"""Regenerate what kmodel.serve.protobuf decodes protobuf bodies with (a development step, not run by kmodel).

    python benchmarks/regenerate_protobuf.py                      # the descriptors, from the vendored .proto files
    python benchmarks/regenerate_protobuf.py --go API APIMACHINERY  # the JSON field table too, from Go sources

1. `descriptors.binpb`: the FileDescriptorSet grpcio-tools' protoc makes of the vendored generated.proto files
   (kmodel/serve/protobuf/proto/, upstream's release-1.31 k8s.io/api and k8s.io/apimachinery, tag v0.31.14) with
   their imports. The server builds its message classes from it in a pool of its own (no generated module is
   imported, so the ``k8s.io/...`` import paths, which are not Python package names, need no rewriting, and no
   other protobuf user's registrations can clash with these). tests/serve/test_protobuf_descriptors.py checks that
   the checked-in file is this script's output.
2. `json_fields.json` (with --go): what the Go types' JSON tags say that the .proto files do not: which fields are
   embedded inline in their parent's JSON (`json:",inline"`), which carry a JSON name other than their proto name,
   and which fields are Go values (not pointers, slices or maps) tagged omitempty, so that a zero value (which Go's
   protobuf encoder writes for every value field) of a scalar one is left out, as Go's JSON encoder leaves it out. API and
   APIMACHINERY are checkouts of k8s.io/api and k8s.io/apimachinery at the vendored tag.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kmodel" / "serve" / "protobuf"
PROTO_ROOT = PACKAGE / "proto"
DESCRIPTORS = PACKAGE / "descriptors.binpb"
JSON_FIELDS = PACKAGE / "json_fields.json"

_STRUCT = re.compile(r"^type (\w+) struct \{")
_FIELD = re.compile(r"^\t(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")


def proto_files() -> list[str]:
    """The vendored .proto files, as protoc names them (relative to PROTO_ROOT), in a stable order."""
    return sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.rglob("*.proto"))


def descriptors() -> bytes:
    """The serialized FileDescriptorSet of the vendored .proto files and their imports."""
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "descriptors.binpb"
        code = protoc.main(["protoc", f"-I{PROTO_ROOT}", "--include_imports", f"--descriptor_set_out={out}",
                            *proto_files()])
        if code != 0:
            raise SystemExit(f"protoc failed with exit code {code}")
        return out.read_bytes()


def _package(go_dir: Path) -> str:
    proto = (go_dir / "generated.proto").read_text()
    return re.search(r"^package ([\w.]+);", proto, re.M).group(1)


def json_fields(go_roots: list[Path]) -> dict:
    """The field table (see the module docstring) of every Go struct with protobuf tags under `go_roots` whose
    package has a vendored generated.proto: message full name -> {"inline": [...], "renamed": {proto: json},
    "omit_zero": [...]}, by proto field number."""
    table: dict[str, dict] = {}
    for root in go_roots:
        for proto in sorted(root.rglob("generated.proto")):
            package = _package(proto.parent)
            for go in sorted(proto.parent.glob("*.go")):
                if go.name.endswith("_test.go") or go.name.startswith("zz_generated") or go.name.endswith(".pb.go"):
                    continue
                message = ""
                for line in go.read_text().splitlines():
                    m = _STRUCT.match(line)
                    if m:
                        message = f"{package}.{m.group(1)}"
                        continue
                    if line.startswith("}"):
                        message = ""
                        continue
                    f = _FIELD.match(line)
                    if not message or not f:
                        continue
                    tags = f.group(3)
                    pb = re.search(r'protobuf:"(\w+),(\d+)[^"]*"', tags)
                    js = re.search(r'json:"([^"]*)"', tags)
                    if not pb or not js:
                        continue
                    name = re.search(r"name=(\w+)", pb.group(0))
                    number, proto_name = pb.group(2), name.group(1) if name else ""
                    json_name, _, opts = js.group(1).partition(",")
                    entry = table.setdefault(message, {"inline": [], "renamed": {}, "omit_zero": []})
                    if "inline" in opts.split(","):
                        entry["inline"].append(int(number))
                    elif json_name and json_name != proto_name:
                        entry["renamed"][number] = json_name
                    go_type = f.group(2)
                    # only value fields: a pointer, a slice or a map that is set is written whatever it holds
                    if "omitempty" in opts.split(",") and not go_type.startswith(("*", "[", "map[")):
                        entry["omit_zero"].append(int(number))
    return {k: v for k, v in sorted(table.items()) if v["inline"] or v["renamed"] or v["omit_zero"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--go", nargs=2, metavar=("API", "APIMACHINERY"), type=Path,
                        help="checkouts of k8s.io/api and k8s.io/apimachinery: regenerate json_fields.json too")
    args = parser.parse_args(argv)
    DESCRIPTORS.write_bytes(descriptors())
    print(f"wrote {DESCRIPTORS} ({len(proto_files())} .proto files)")
    if args.go:
        table = json_fields(list(args.go))
        JSON_FIELDS.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {JSON_FIELDS} ({len(table)} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
