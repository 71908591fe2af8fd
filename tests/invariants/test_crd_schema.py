"""invariants/_crd_schema.py: a structural schema's Kubernetes extensions as JSON Schema, each accepting what the
API server stores and refusing what it cannot."""

from __future__ import annotations

from kmodel.invariants._crd_schema import validator_for


def ok(schema: dict, content: dict) -> bool:
    return validator_for({"type": "object", "properties": schema}).is_valid(content)


def test_nullable_allows_null_and_a_nullable_enum_keeps_its_enum():
    assert ok({"a": {"type": "string", "nullable": True}}, {"a": None})
    assert not ok({"a": {"type": "string"}}, {"a": None})
    assert not ok({"a": {"type": "string", "nullable": True, "enum": ["x"]}}, {"a": None})  # kube-openapi


def test_int_or_string_and_integral_floats():
    schema = {"port": {"x-kubernetes-int-or-string": True}, "n": {"type": "integer"}}
    assert ok(schema, {"port": 80, "n": 3.0}) and ok(schema, {"port": "http", "n": 3})
    assert not ok(schema, {"port": 1.5}) and not ok(schema, {"n": 3.5}) and not ok(schema, {"port": True})


def test_pruning_unless_preserved_and_the_root_fields_are_the_api_servers():
    schema = {"spec": {"type": "object", "properties": {"a": {"type": "string"}}},
              "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
              "labels": {"type": "object", "additionalProperties": {"type": "string"}}}
    assert ok(schema, {"spec": {"a": "x"}, "free": {"anything": [1]}, "labels": {"k": "v"}})
    assert not ok(schema, {"spec": {"a": "x", "b": 1}})  # b would have been pruned
    assert not ok(schema, {"labels": {"k": 1}}) and not ok(schema, {"other": 1})
    root = {"type": "object", "required": ["metadata", "spec"], "properties": {"spec": {"type": "object"}}}
    assert validator_for(root).is_valid({"spec": {}})  # metadata is the API server's, not the content's
    assert not validator_for(root).is_valid({})


def test_an_embedded_resource_keeps_and_needs_its_apiversion_and_kind():
    schema = {"template": {"type": "object", "x-kubernetes-embedded-resource": True,
                           "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}
    assert ok(schema, {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}})
    assert not ok(schema, {"template": {"kind": "Pod", "spec": {}}})
    assert not ok(schema, {"template": {"apiVersion": "", "kind": "Pod"}})
