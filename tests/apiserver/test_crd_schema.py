"""A custom object against its CRD's structural schema: every keyword the model serves, with kube-apiserver's
422 messages (kube-openapi's `in body` errors wrapped as apiextensions does), pruning with each field
validation level, and defaults."""

from __future__ import annotations

import pytest

from kmodel.apiserver import openapi_schema
from kmodel.objects import dump
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
    "size": {"type": "string", "enum": ["small", "large"]},
    "count": {"type": "integer", "minimum": 0, "maximum": 10},
    "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "exclusiveMaximum": True, "maximum": 1},
    "big": {"type": "integer", "maximum": 1000000},
    "flag": {"type": "boolean"},
    "port": {"x-kubernetes-int-or-string": True},
    "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
    "note": {"type": "string", "nullable": True},
    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "mode": {"type": "string", "default": "fast"},
    "nested": {"type": "object", "properties": {"depth": {"type": "integer", "default": 3}}},
}}}}


def errors_of(spec: dict) -> list[str]:
    return [str(e) for e in openapi_schema.validate(SCHEMA, {"spec": spec})]


@pytest.mark.parametrize("spec, message", [
    ({}, "spec.name: Required value"),
    ({"name": "ab", "size": "huge"}, 'spec.size: Unsupported value: "huge": supported values: "small", "large"'),
    ({"name": "ab", "count": -1}, "spec.count: Invalid value: -1: spec.count in body should be greater than or equal to 0"),
    ({"name": "ab", "count": 11}, "spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10"),
    ({"name": "ab", "count": "string"},
     'spec.count: Invalid value: "string": spec.count in body must be of type integer: "string"'),
    ({"name": "ab", "count": 1.5}, 'spec.count: Invalid value: "number": spec.count in body must be of type integer: "number"'),
    ({"name": "ab", "ratio": 0}, "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"),
    ({"name": "ab", "ratio": 1}, "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"),
    ({"name": "ab", "big": 2000000},
     "spec.big: Invalid value: 2000000: spec.big in body should be less than or equal to 1e+06"),
    ({"name": "a"}, 'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'),
    ({"name": "abcdef"}, "spec.name: Too long: may not be longer than 5"),
    ({"name": "AB"}, "spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"),
    ({"name": "ab", "tags": []}, "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"),
    ({"name": "ab", "tags": ["a", "b", "c"]}, "spec.tags: Too many: 3: must have at most 2 items"),
    ({"name": "ab", "tags": [1]}, 'spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"'),
    ({"name": "ab", "flag": "yes"}, 'spec.flag: Invalid value: "string": spec.flag in body must be of type boolean: "string"'),
    ({"name": "ab", "port": True},
     'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'),
    ({"name": "ab", "labels": {"a": 1}},
     'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'),
    ({"name": "ab", "size": None}, 'spec.size: Invalid value: "null": spec.size in body must be of type string: "null"'),
])
def test_each_keyword_has_upstreams_message(spec, message):
    assert errors_of(spec) == [message]


@pytest.mark.parametrize("spec", [
    {"name": "ab", "port": 8080}, {"name": "ab", "port": "http"}, {"name": "ab", "note": None},
    {"name": "ab", "count": 3.0}, {"name": "ab", "ratio": 0.5}, {"name": "abc", "extra": {"any": ["thing"]}},
])
def test_values_the_schema_allows_pass(spec):
    assert errors_of(spec) == []


def test_pruning_drops_undeclared_fields_and_keeps_preserved_ones():
    value, dropped = openapi_schema.prune(SCHEMA, {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
                                                   "spec": {"name": "ab", "foo": 1, "extra": {"kept": True}},
                                                   "other": 2})
    assert value == {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
                     "spec": {"name": "ab", "extra": {"kept": True}}}
    assert dropped == ["spec.foo", "other"]


def test_defaults_fill_absent_fields_at_every_depth_but_not_absent_parents():
    assert openapi_schema.apply_defaults(SCHEMA, {"spec": {"name": "ab", "nested": {}}}) == \
        {"spec": {"name": "ab", "nested": {"depth": 3}, "mode": "fast"}}
    assert openapi_schema.apply_defaults(SCHEMA, {"spec": {"name": "ab"}}) == {"spec": {"name": "ab", "mode": "fast"}}
    assert openapi_schema.apply_defaults(SCHEMA, {}) == {}


# --- through the API server ---------------------------------------------------------------------------------

@pytest.fixture
def crd_api(api):
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=NOW).code == 201
    return api


def test_an_invalid_object_gets_422_with_one_cause_per_field(crd_api, store):
    before = store.revision
    r = crd_api.handle(req("create", "databases", "default", body=database(spec={"replicas": -1})), now=NOW)
    assert (r.code, r.body.reason) == (422, "Invalid")
    assert r.body.message == ('Database.example.com "orders" is invalid: [spec.engine: Required value, '
                              'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or '
                              'equal to 0]')
    assert [(c.reason, c.field) for c in r.body.details.causes] == [
        ("FieldValueRequired", "spec.engine"), ("FieldValueInvalid", "spec.replicas")]
    assert (r.body.details.group, r.body.details.kind) == ("example.com", "Database")
    assert store.revision == before


@pytest.mark.parametrize("level, code", [("Strict", 400), ("Warn", 201), ("Ignore", 201)])
def test_unknown_fields_by_field_validation_level(crd_api, level, code):
    body = database(spec={"engine": "mysql", "foo": 1})
    r = crd_api.handle(req("create", "databases", "default", body=body, field_validation=level), now=NOW)
    assert r.code == code
    if code == 400:
        assert (r.body.reason, r.body.message) == ("BadRequest", 'Database in version "v1" cannot be handled as a '
                                                   'Database: strict decoding error: unknown field "spec.foo"')
    else:
        assert "foo" not in dump(r.body)["spec"]


def test_defaults_are_applied_on_create(crd_api):
    r = crd_api.handle(req("create", "databases", "default", body=database(spec={"engine": "mysql"})), now=NOW)
    assert dump(r.body)["spec"] == {"engine": "mysql", "replicas": 1}


def test_a_merge_patch_is_validated_and_pruned_like_an_update(crd_api):
    crd_api.handle(req("create", "databases", "default", body=database()), now=NOW)
    r = crd_api.handle(req("patch", "databases", "default", "orders", body={"spec": {"replicas": 9}}), now=NOW)
    assert r.code == 422 and "spec.replicas in body should be less than or equal to 5" in r.body.message
    r = crd_api.handle(req("patch", "databases", "default", "orders", body={"spec": {"replicas": 3}}), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"]["replicas"] == 3 and r.body.metadata.generation == 2


def test_a_default_added_to_the_crd_shows_on_objects_written_before_it(crd_api):
    crd_api.handle(req("create", "databases", "default", body=database()), now=NOW)
    crd = dump(crd_api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).body)
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["version"]["default"] = "15"
    assert crd_api.handle(req("update", "customresourcedefinitions", name="databases.example.com", body=crd),
                          now=NOW).code == 200
    got = crd_api.handle(req("get", "databases", "default", "orders"), now=NOW).body
    assert dump(got)["spec"]["version"] == "15"
    listed = crd_api.handle(req("list", "databases", "default"), now=NOW).body
    assert dump(listed.items[0])["spec"]["version"] == "15"


def _drop_version_from_crd(crd_api):
    crd = dump(crd_api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).body)
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["version"]
    assert crd_api.handle(req("update", "customresourcedefinitions", name="databases.example.com", body=crd),
                          now=NOW).code == 200


def test_a_field_dropped_from_the_crd_is_pruned_on_read(crd_api, store):
    # upstream's storage decoder prunes what it reads from etcd (unstructuredSchemaCoercer.apply)
    spec = {"engine": "postgres", "replicas": 2, "version": "15"}
    crd_api.handle(req("create", "databases", "default", body=database(spec=spec)), now=NOW)
    _drop_version_from_crd(crd_api)
    got = crd_api.handle(req("get", "databases", "default", "orders"), now=NOW).body
    assert dump(got)["spec"] == {"engine": "postgres", "replicas": 2}
    listed = crd_api.handle(req("list", "databases", "default"), now=NOW).body
    assert dump(listed.items[0])["spec"] == {"engine": "postgres", "replicas": 2}
    stored = store.peek("/registry/example.com/databases/default/orders")
    assert dump(stored[0].value)["spec"]["version"] == "15"  # kept in etcd until the next write


def test_an_update_starts_from_the_object_as_read(crd_api, store):
    spec = {"engine": "postgres", "replicas": 2, "version": "15"}
    crd_api.handle(req("create", "databases", "default", body=database(spec=spec)), now=NOW)
    _drop_version_from_crd(crd_api)
    got = dump(crd_api.handle(req("get", "databases", "default", "orders"), now=NOW).body)
    got["metadata"]["labels"] = {"tier": "gold"}
    r = crd_api.handle(req("update", "databases", "default", "orders", body=got), now=NOW)
    assert r.code == 200 and r.body.metadata.generation == 1  # the pruned field is no change of the spec
    got = dump(r.body)
    got["status"] = {"replicas": 1}
    r = crd_api.handle(req("update", "databases", "default", "orders", subresource="status", body=got), now=NOW)
    assert r.code == 200 and "version" not in dump(r.body)["spec"]
