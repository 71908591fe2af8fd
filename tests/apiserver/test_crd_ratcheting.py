"""Validation ratcheting of custom objects (CRDValidationRatcheting, on by default since Kubernetes 1.30), as
apiextensions-apiserver pkg/apiserver/validation/ratcheting.go and its ratcheting_test.go cases: an update may
keep a value a tightened schema refuses, when it does not change it."""

from __future__ import annotations

import copy

import pytest

from kmodel.apiserver import openapi_schema
from kmodel.objects import dump
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000


def tightened(body: dict, **spec_props) -> dict:
    """The example CRD with spec properties replaced (a stricter schema for the same objects)."""
    body = copy.deepcopy(body)
    schema = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"].update(spec_props)
    return body


@pytest.fixture
def stale(api):
    """A Database with replicas 4 and version "10.1", then the CRD tightened: replicas at most 3, version at
    most 3 characters."""
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=NOW).code == 201
    db = database(spec={"engine": "postgres", "replicas": 4, "version": "10.1"})
    assert api.handle(req("create", "databases", "default", body=db), now=NOW).code == 201
    crd = dump(api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).body)
    crd = tightened(crd, replicas={"type": "integer", "minimum": 0, "maximum": 3},
                    version={"type": "string", "maxLength": 3})
    assert api.handle(req("update", "customresourcedefinitions", name="databases.example.com", body=crd),
                      now=NOW).code == 200
    return dump(api.handle(req("get", "databases", "default", "orders"), now=NOW).body)


def put(api, body, subresource=""):
    return api.handle(req("update", "databases", "default", "orders", subresource=subresource, body=body), now=NOW)


def test_an_update_that_keeps_a_value_the_tightened_schema_refuses_is_accepted(api, stale):
    stale["spec"]["engine"] = "mysql"
    r = put(api, stale)
    assert r.code == 200, r.body
    assert dump(r.body)["spec"]["replicas"] == 4


def test_a_status_write_beside_a_stale_spec_is_accepted(api, stale):
    stale["status"] = {"replicas": 2}
    r = put(api, stale, "status")
    assert r.code == 200, r.body
    assert dump(r.body)["status"] == {"replicas": 2}


def test_a_changed_value_is_validated_as_usual(api, stale):
    stale["spec"]["replicas"] = 5
    r = put(api, stale)
    assert r.code == 422
    assert r.body.message.endswith("spec.replicas: Invalid value: 5: spec.replicas in body should be less than or "
                                   "equal to 3")


def test_only_the_changed_value_is_reported(api, stale):
    stale["spec"]["version"] = "10.2"
    r = put(api, stale)
    assert r.code == 422
    causes = [c.field for c in r.body.details.causes]
    assert causes == ["spec.version"]  # spec.replicas (4, unchanged) is ratcheted


def test_a_merge_patch_is_ratcheted_too(api, stale):
    r = api.handle(req("patch", "databases", "default", "orders", body={"spec": {"engine": "mysql"}}), now=NOW)
    assert r.code == 200, r.body


def test_a_create_is_never_ratcheted(api, stale):
    r = api.handle(req("create", "databases", "default",
                       body=database("other", spec={"engine": "postgres", "replicas": 4})), now=NOW)
    assert r.code == 422


# --- the schema walk (openapi_schema.validate_update), upstream's ratcheting_test.go cases -------------------

SCHEMA = {"type": "object", "properties": {
    "small": {"type": "integer", "maximum": 3},
    "obj": {"type": "object", "required": ["need"], "properties": {"need": {"type": "string"},
                                                                    "other": {"type": "string"}}},
    "byIndex": {"type": "array", "items": {"type": "string", "maxLength": 1}},
    "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string", "maxLength": 1}},
    "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 1}},
    "byKey": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                          "size": {"type": "integer", "maximum": 3}}}},
    "loose": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"n": {"type": "integer", "maximum": 3}}},
}}


def fields(new, old):
    return [e.field for e in openapi_schema.validate_update(SCHEMA, new, old, metadata_unchanged=False)]


def test_an_unchanged_scalar_ratchets_and_a_changed_one_does_not():
    assert fields({"small": 9, "other": 1}, {"small": 9}) == []
    assert fields({"small": 8}, {"small": 9}) == ["small"]
    assert fields({"small": 9}, {}) == ["small"]  # absent in the old object: not correlated


def test_an_int_and_a_float_of_the_same_value_differ_as_go_types():
    assert fields({"small": 9.0}, {"small": 9}) == ["small"]


def test_a_missing_required_field_ratchets_with_its_object():
    assert fields({"obj": {"other": "a"}}, {"obj": {"other": "a"}}) == []
    assert fields({"obj": {"other": "b"}}, {"obj": {"other": "a"}}) == ["obj.need"]


def test_list_items_correlate_by_index_without_a_list_type():
    assert fields({"byIndex": ["xx", "yy"]}, {"byIndex": ["xx", "zz"]}) == ["byIndex[1]"]
    assert fields({"byIndex": ["yy", "xx"]}, {"byIndex": ["xx", "yy"]}) == ["byIndex[0]", "byIndex[1]"]


def test_atomic_and_set_lists_ratchet_only_as_a_whole():
    # upstream correlates no item of them, and compares such a list whole (reflect.DeepEqual): unchanged, its
    # items' errors ratchet with it; any change, and every item is validated as new
    assert fields({"atomic": ["xx"]}, {"atomic": ["xx"]}) == []
    assert fields({"set": ["xx", "y"]}, {"set": ["xx", "y"]}) == []
    assert fields({"set": ["xx", "z"]}, {"set": ["xx", "y"]}) == ["set[0]"]
    assert fields({"atomic": ["xx"]}, {"atomic": ["x", "xx"]}) == ["atomic[0]"]
    assert fields({"set": [1.0]}, {"set": [1]}) == ["set[0]"]  # a float64 and an int64 differ


def test_an_uncorrelated_item_of_a_map_list_makes_it_changed():
    schema = {"type": "object", "properties": {"byKey": {
        "type": "array", "maxItems": 1, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}
    two = {"byKey": [{"name": "a"}, {"name": "b"}]}
    assert openapi_schema.validate_update(schema, two, two, metadata_unchanged=False) == []
    renamed = {"byKey": [{"name": "a"}, {"name": "c"}]}
    assert [e.field for e in openapi_schema.validate_update(schema, renamed, two, metadata_unchanged=False)] == [
        "byKey"]


def test_map_lists_correlate_by_key_whatever_the_order():
    old = {"byKey": [{"name": "a", "size": 9}, {"name": "b", "size": 1}]}
    assert fields({"byKey": [{"name": "b", "size": 1}, {"name": "a", "size": 9}]}, old) == []
    assert fields({"byKey": [{"name": "c", "size": 9}]}, old) == ["byKey[0].size"]


def test_an_unknown_field_kept_by_preserve_unknown_fields_makes_its_object_changed():
    # the error is the child's, and the child is unchanged: it ratchets
    assert fields({"loose": {"n": 9, "x": 1}}, {"loose": {"n": 9, "x": 1}}) == []
    # a required error at the object itself cannot ratchet: its unvisited key counts as changed
    schema = {"type": "object", "properties": {"loose": {
        "type": "object", "required": ["n"], "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"n": {"type": "integer"}}}}}
    errs = openapi_schema.validate_update(schema, {"loose": {"x": 1}}, {"loose": {"x": 1}}, metadata_unchanged=False)
    assert [e.field for e in errs] == ["loose.n"]


def test_the_root_ratchets_only_when_the_metadata_is_unchanged_too():
    schema = {"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}
    assert openapi_schema.validate_update(schema, {}, {}, metadata_unchanged=True) == []
    assert [e.field for e in openapi_schema.validate_update(schema, {}, {}, metadata_unchanged=False)] == ["spec"]
