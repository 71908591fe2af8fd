"""dryRun=All (kmodel/apiserver/dryrun.py): every stage runs, the answer is the object as it would be, and nothing
is stored: the store's revision stays, no watch sees anything."""

from __future__ import annotations

import pytest

from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.wire import PatchBody
from kmodel.store import Store

from .conftest import req
from .test_apply import DEPLOYMENT

CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
             "data": {"a": "1"}}


def test_a_dry_run_create_answers_the_object_and_stores_nothing(api: Pipeline, store: Store) -> None:
    revision = store.revision
    r = api.handle(req("create", "configmaps", "default", body=CONFIGMAP, dry_run=True), now=10)
    assert r.code == 201
    assert r.body.metadata.uid and r.body.metadata.creation_timestamp == 10
    assert r.body.metadata.resource_version == ""
    assert store.revision == revision
    assert api.handle(req("get", "configmaps", "default", "cm"), now=10).code == 404


def test_a_dry_run_create_is_still_validated_and_refused_for_a_taken_name(api: Pipeline) -> None:
    bad = dict(CONFIGMAP, metadata={"name": "Not_Valid", "namespace": "default"})
    assert api.handle(req("create", "configmaps", "default", body=bad, dry_run=True), now=10).code == 422
    assert api.handle(req("create", "configmaps", "default", body=CONFIGMAP), now=10).code == 201
    again = api.handle(req("create", "configmaps", "default", body=CONFIGMAP, dry_run=True), now=10)
    assert (again.code, again.body.reason) == (409, "AlreadyExists")


@pytest.mark.parametrize("verb", ["update", "patch", "apply"])
def test_a_dry_run_change_answers_the_new_object_at_the_stored_version(api: Pipeline, store: Store,
                                                                       verb: str) -> None:
    created = api.handle(req("create", "deployments", "default", body=DEPLOYMENT), now=10).body
    revision = store.revision
    changed = dict(DEPLOYMENT, spec={**DEPLOYMENT["spec"], "replicas": 9})
    body = {"update": changed, "patch": {"spec": {"replicas": 9}},
            "apply": PatchBody("apply", changed)}[verb]
    r = api.handle(req("update" if verb == "update" else "patch", "deployments", "default", "web", body=body,
                       dry_run=True, field_manager="m", force=True), now=20)
    assert r.code == 200, r.body
    assert r.body.spec.replicas == 9 and r.body.metadata.generation == 2
    assert r.body.metadata.resource_version == created.metadata.resource_version
    assert store.revision == revision
    assert api.handle(req("get", "deployments", "default", "web"), now=20).body.spec.replicas == 2


def test_a_dry_run_apply_of_an_absent_object_creates_nothing(api: Pipeline, store: Store) -> None:
    revision = store.revision
    r = api.handle(req("patch", "deployments", "default", "web", body=PatchBody("apply", DEPLOYMENT),
                       field_manager="kubectl", dry_run=True), now=10)
    assert r.code == 201 and r.body.metadata.resource_version == ""
    assert store.revision == revision


def test_a_dry_run_delete_deletes_nothing(api: Pipeline, store: Store) -> None:
    api.handle(req("create", "configmaps", "default", body=CONFIGMAP), now=10)
    revision = store.revision
    r = api.handle(req("delete", "configmaps", "default", "cm", dry_run=True), now=20)
    assert r.code == 200 and r.body.metadata.name == "cm"
    assert store.revision == revision
    assert api.handle(req("get", "configmaps", "default", "cm"), now=20).code == 200


def test_a_dry_run_service_create_allocates_no_cluster_ip(api: Pipeline) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"ports": [{"port": 80}]}}
    used = api.service_ips.used
    dry = api.handle(req("create", "services", "default", body=svc, dry_run=True), now=10).body
    assert dry.spec.cluster_ip  # answered as allocated
    assert api.service_ips.used == used
    real = api.handle(req("create", "services", "default", body=svc), now=10).body
    assert real.spec.cluster_ip and api.service_ips.used == used + 1
