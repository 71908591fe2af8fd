"""RBAC on a custom resource, finalizers on custom objects, and deleting a CRD (the cleanup finalizer)."""

from __future__ import annotations

import pytest

from kmodel.apiserver.crd_status import TERMINATING
from kmodel.objects import dump
from kmodel.objects.apiextensions import CLEANUP_FINALIZER
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000


@pytest.fixture
def crd_api(api):
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=NOW).code == 201
    return api


def grant(api, group: str, resources: list[str], verbs: list[str]) -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "db-editor", "namespace": "default"},
            "rules": [{"apiGroups": [group], "resources": resources, "verbs": verbs}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "alice-db", "namespace": "default"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "db-editor"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}
    assert api.handle(req("create", "roles", "default", body=role), now=NOW).code == 201
    assert api.handle(req("create", "rolebindings", "default", body=binding), now=NOW).code == 201


def test_rbac_rules_name_the_group_and_plural_of_a_custom_resource(crd_api):
    r = crd_api.handle(req("create", "databases", "default", body=database(), token="alice-token"), now=NOW)
    assert (r.code, r.body.message) == (403, 'databases.example.com is forbidden: User "alice" cannot create '
                                             'resource "databases" in API group "example.com" in the namespace '
                                             '"default"')
    grant(crd_api, "other.io", ["databases"], ["create"])  # the right plural in another group grants nothing
    assert crd_api.handle(req("create", "databases", "default", body=database(), token="alice-token"),
                          now=NOW).code == 403
    grant_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": "db-editor", "namespace": "default"},
                  "rules": [{"apiGroups": ["example.com"], "resources": ["databases"], "verbs": ["create", "get"]}]}
    current = crd_api.handle(req("get", "roles", "default", "db-editor"), now=NOW).body
    grant_role["metadata"]["resourceVersion"] = current.metadata.resource_version
    assert crd_api.handle(req("update", "roles", "default", "db-editor", body=grant_role), now=NOW).code == 200
    assert crd_api.handle(req("create", "databases", "default", body=database(), token="alice-token"),
                          now=NOW).code == 201
    assert crd_api.handle(req("get", "databases", "default", "orders", token="alice-token"), now=NOW).code == 200
    r = crd_api.handle(req("get", "databases", "default", "orders", subresource="status", token="alice-token"),
                       now=NOW)
    assert r.code == 403  # databases/status is a resource of its own to RBAC
    assert crd_api.handle(req("delete", "databases", "default", "orders", token="alice-token"), now=NOW).code == 403


def test_a_custom_object_with_a_finalizer_stays_until_it_is_removed(crd_api):
    crd_api.handle(req("create", "databases", "default",
                       body=database(metadata={"name": "orders", "namespace": "default",
                                               "finalizers": ["example.com/backup"]})), now=NOW)
    r = crd_api.handle(req("delete", "databases", "default", "orders"), now=NOW + 1)
    assert r.code == 200 and r.body.metadata.deletion_timestamp == NOW + 1
    obj = dump(crd_api.handle(req("get", "databases", "default", "orders"), now=NOW).body)
    obj["metadata"]["finalizers"] = []
    assert crd_api.handle(req("update", "databases", "default", "orders", body=obj), now=NOW).code == 200
    assert crd_api.handle(req("get", "databases", "default", "orders"), now=NOW).code == 404


def test_deleting_a_crd_deletes_its_objects_then_itself(crd_api, store):
    for name in ("a", "b"):
        crd_api.handle(req("create", "databases", "default", body=database(name)), now=NOW)
    r = crd_api.handle(req("delete", "customresourcedefinitions", name="databases.example.com"), now=NOW)
    assert r.code == 200
    assert CLEANUP_FINALIZER in r.body.metadata.finalizers and r.body.metadata.deletion_timestamp == NOW
    assert r.body.status.condition(TERMINATING).reason == "InstanceDeletionPending"
    assert not store.peek("/registry/example.com/databases/", "/registry/example.com/databases0")
    assert crd_api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).code == 404
    assert crd_api.handle(req("list", "databases", "default"), now=NOW).code == 404


def test_a_terminating_crd_refuses_new_objects_and_waits_for_finalizers(crd_api):
    crd_api.handle(req("create", "databases", "default",
                       body=database(metadata={"name": "kept", "namespace": "default",
                                               "finalizers": ["example.com/backup"]})), now=NOW)
    crd_api.handle(req("delete", "customresourcedefinitions", name="databases.example.com"), now=NOW)
    crd = crd_api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).body
    assert crd.status.condition(TERMINATING).reason == "InstanceDeletionInProgress"
    r = crd_api.handle(req("create", "databases", "default", body=database("new")), now=NOW)
    assert (r.code, r.body.reason, r.body.message) == (
        405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating")
    kept = crd_api.handle(req("get", "databases", "default", "kept"), now=NOW).body
    assert kept.metadata.deletion_timestamp == NOW
    patch = {"metadata": {"finalizers": None}}
    assert crd_api.handle(req("patch", "databases", "default", "kept", body=patch), now=NOW).code == 200
    assert crd_api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).code == 404
