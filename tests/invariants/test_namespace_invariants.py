"""namespace-content-removed: holds while the namespace controller empties a namespace of built-in and custom
objects, and catches the controller that forgot custom resources (its objects outlive the namespace, and come
back with the next namespace of that name)."""

from __future__ import annotations

import pytest

import kmodel.controllers.namespace as namespace_controller
from kmodel.checker.crd_actions import DATABASE_CRD, database_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete
from kmodel.invariants.registry import REGISTRY

TEAM = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}


def check(cluster: Cluster, memo: dict) -> list[str]:
    return list(REGISTRY["namespace-content-removed"].check(cluster, memo))


def delete_and_recreate_team() -> tuple[Cluster, list[str], list[str]]:
    """A database and a config map in `team`; `team` deleted, then created again. The invariant's findings
    after the deletion, and after the re-creation."""
    c = Cluster(ClusterConfig(nodes=1, components=("namespace",)))
    memo: dict = {}
    c.apply([DATABASE_CRD, TEAM])
    c.run(2_000)
    database = database_manifest("orders", 1)
    database["metadata"]["namespace"] = "team"
    settings = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team"}}
    c.apply([database, settings])
    c.run(4_000)
    assert check(c, memo) == []
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(60_000)
    assert c.get("namespaces", "", "team") is None
    after_delete = check(c, memo)
    c.submit(Apply(TEAM))
    c.run_for(2_000)
    return c, after_delete, check(c, memo)


def test_holds_when_the_namespace_controller_empties_custom_resources_too():
    c, after_delete, after_create = delete_and_recreate_team()
    assert after_delete == [] and after_create == []
    assert c.objects("databases", "team") == [] and c.objects("configmaps", "team") == []


def test_catches_custom_objects_left_behind_by_a_deleted_namespace(monkeypatch: pytest.MonkeyPatch):
    # the old behaviour: deleteAllContent over the built-in resources only
    builtin_only = namespace_controller.discovered
    monkeypatch.setattr(namespace_controller, "discovered", lambda crds: builtin_only(()))
    c, after_delete, after_create = delete_and_recreate_team()
    assert [o.metadata.name for o in c.objects("databases", "team")] == ["orders"]
    assert c.objects("configmaps", "team") == []
    assert len(after_delete) == 1 and after_delete[0].endswith(
        "removed namespace team while 1 object(s) still live in it: /registry/example.com/databases/team/orders")
    assert after_create[:1] == after_delete and len(after_create) == 2 and after_create[1].endswith(
        "created namespace team while 1 object(s) of an earlier namespace team still live in it: "
        "/registry/example.com/databases/team/orders")


def test_a_namespace_removed_under_its_content_is_caught_at_once():
    c = Cluster(ClusterConfig(nodes=1, components=()))
    memo: dict = {}
    c.apply([TEAM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team"}}])
    c.run(2_000)
    assert check(c, memo) == []
    c.store.delete_range("/registry/namespaces/team")  # removed without the controller's sweep
    found = check(c, memo)
    assert len(found) == 1 and found[0].endswith(
        "removed namespace team while 1 object(s) still live in it: /registry/configmaps/team/settings")
