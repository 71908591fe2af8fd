"""`x-kubernetes-embedded-resource` nodes of a custom object (apiextensions-apiserver pkg/apiserver/schema/
pruning and objectmeta/validation.go, Kubernetes 1.30-1.32): apiVersion and kind required, metadata validated
as ObjectMeta, and unknown fields pruned per the node's schema."""

from __future__ import annotations

import copy

import pytest

from kmodel.apiserver import embedded_resources, openapi_schema
from kmodel.objects import dump
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000

TEMPLATE = {"type": "object", "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}}}


@pytest.fixture
def api_with_template(api):
    body = copy.deepcopy(crd_body())
    spec = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["template"] = TEMPLATE
    assert api.handle(req("create", "customresourcedefinitions", body=body), now=NOW).code == 201
    return api


def create(api, template, **kw):
    spec = {"engine": "postgres", "template": template}
    return api.handle(req("create", "databases", "default", body=database(spec=spec), **kw), now=NOW)


def test_an_embedded_resource_keeps_its_type_and_object_meta_and_loses_unknown_fields(api_with_template):
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1},
                "spec": {"image": "db", "extra": True}, "other": 1}
    r = create(api_with_template, template, field_validation="Ignore")
    assert r.code == 201, r.body
    assert dump(r.body)["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod",
                                                "metadata": {"name": "p", "labels": {"a": "b"}},
                                                "spec": {"image": "db"}}


def test_strict_field_validation_names_the_unknown_fields_of_an_embedded_resource(api_with_template):
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"bogus": 1}}
    r = create(api_with_template, template)
    assert r.code == 400
    assert r.body.message.endswith('strict decoding error: unknown field "spec.template.metadata.bogus"')


def test_apiversion_and_kind_are_required(api_with_template):
    r = create(api_with_template, {"spec": {"image": "db"}})
    assert r.code == 422
    assert [(c.field, c.reason) for c in r.body.details.causes] == [
        ("spec.template.apiVersion", "FieldValueRequired"), ("spec.template.kind", "FieldValueRequired")]


def test_kind_apiversion_and_metadata_are_validated():
    errs = embedded_resources.validate(
        {"type": "object", "properties": {"t": TEMPLATE}},
        {"t": {"apiVersion": "a/b/c", "kind": "Bad_Kind", "metadata": {"name": "a/b", "labels": {"-x": "y"}}}})
    assert [str(e) for e in errs] == [
        't.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        't.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label '
        "must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
        "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        "t.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        't.metadata.labels: Invalid value: "-x": name part must consist of alphanumeric characters, \'-\', \'_\' '
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_an_embedded_resource_without_metadata_or_name_is_fine():
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": TEMPLATE}}}
    assert embedded_resources.validate(schema, {"items": [{"apiVersion": "apps/v1", "kind": "Deployment"},
                                                          {"apiVersion": "v1", "kind": "Pod",
                                                           "metadata": {"generateName": "web-"}}]}) == []


def test_pruning_keeps_type_meta_only_on_embedded_nodes():
    schema = {"type": "object", "properties": {"t": TEMPLATE, "plain": {"type": "object", "properties": {}}}}
    pruned, dropped = openapi_schema.prune(schema, {"t": {"apiVersion": "v1", "kind": "Pod"},
                                                    "plain": {"apiVersion": "v1", "kind": "Pod"}})
    assert pruned == {"t": {"apiVersion": "v1", "kind": "Pod"}, "plain": {}}
    assert dropped == ["plain.apiVersion", "plain.kind"]
