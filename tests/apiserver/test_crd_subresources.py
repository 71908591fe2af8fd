"""The status and scale subresources of a custom resource, and metadata.generation."""

from __future__ import annotations

import pytest

from kmodel.objects import dump
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000


@pytest.fixture
def db(api):
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=NOW).code == 201
    r = api.handle(req("create", "databases", "default", body=database(status={"replicas": 7})), now=NOW)
    assert r.code == 201
    return r.body


def put(api, obj_json, subresource=""):
    return api.handle(req("update", "databases", "default", "orders", subresource=subresource, body=obj_json),
                      now=NOW)


def test_create_drops_status_and_starts_generation_at_one(db):
    assert "status" not in dump(db) and db.metadata.generation == 1


def test_a_status_write_keeps_spec_and_metadata_and_leaves_generation(api, db):
    body = dump(db)
    body["spec"]["replicas"] = 4
    body["metadata"]["labels"] = {"tier": "gold"}
    body["status"] = {"replicas": 2, "phase": "Ready"}
    r = put(api, body, "status")
    assert r.code == 200
    got = dump(r.body)
    assert got["status"] == {"replicas": 2, "phase": "Ready"}
    assert got["spec"]["replicas"] == 2 and "labels" not in got["metadata"]
    assert r.body.metadata.generation == 1


def test_a_status_write_is_validated_against_the_schema(api, db):
    body = dump(db)
    body["status"] = {"replicas": -3}
    r = put(api, body, "status")
    assert r.code == 422
    assert r.body.message.endswith("status.replicas: Invalid value: -3: status.replicas in body should be greater "
                                   "than or equal to 0")


def test_a_spec_write_keeps_status_and_moves_generation_only_when_spec_changes(api, db):
    body = dump(db)
    body["status"] = {"replicas": 1}
    status_written = put(api, body, "status").body
    body = dump(status_written)
    body["metadata"]["labels"] = {"tier": "gold"}
    body["status"] = {"replicas": 99}
    r = put(api, body)
    assert r.code == 200 and r.body.metadata.generation == 1 and dump(r.body)["status"] == {"replicas": 1}
    body = dump(r.body)
    body["spec"]["replicas"] = 3
    r = put(api, body)
    assert r.body.metadata.generation == 2 and dump(r.body)["status"] == {"replicas": 1}


def test_scale_reads_and_writes_the_paths_the_crd_names(api, db):
    body = dump(db)
    body["status"] = {"replicas": 2, "selector": "app=orders"}
    put(api, body, "status")
    r = api.handle(req("get", "databases", "default", "orders", subresource="scale"), now=NOW)
    assert r.code == 200
    scale = dump(r.body)
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 2, "selector": "app=orders"}
    scale["spec"]["replicas"] = 4
    r = api.handle(req("update", "databases", "default", "orders", subresource="scale", body=scale), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"] == {"replicas": 4}
    stored = api.handle(req("get", "databases", "default", "orders"), now=NOW).body
    assert dump(stored)["spec"]["replicas"] == 4 and stored.metadata.generation == 2


def test_a_scale_past_the_schemas_maximum_is_invalid_and_a_stale_one_conflicts(api, db):
    scale = dump(api.handle(req("get", "databases", "default", "orders", subresource="scale"), now=NOW).body)
    scale["spec"]["replicas"] = 6
    r = api.handle(req("update", "databases", "default", "orders", subresource="scale", body=scale), now=NOW)
    assert r.code == 422 and "spec.replicas in body should be less than or equal to 5" in r.body.message
    scale["spec"]["replicas"] = 3
    scale["metadata"]["resourceVersion"] = "1"
    r = api.handle(req("update", "databases", "default", "orders", subresource="scale", body=scale), now=NOW)
    assert r.code == 409


def test_without_the_subresources_status_is_an_ordinary_field(api):
    body = crd_body()
    del body["spec"]["versions"][0]["subresources"]
    api.handle(req("create", "customresourcedefinitions", body=body), now=NOW)
    r = api.handle(req("create", "databases", "default", body=database(status={"replicas": 7})), now=NOW)
    assert dump(r.body)["status"] == {"replicas": 7}
    r = api.handle(req("get", "databases", "default", "orders", subresource="status"), now=NOW)
    assert r.code == 404
