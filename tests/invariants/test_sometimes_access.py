"""The access family's sometimes properties (invariants/sometimes_access.py): each reached by a run that makes
its situation happen, and not by the same cluster left alone."""

from __future__ import annotations

from kmodel.checker.access_actions import (
    AddFinalizer, ApplyInNamespace, CreateNamespace, DeleteWith, RemoveFinalizer,
)

from tests.invariants.test_sometimes import Watcher
from tests.invariants.test_invariants import web_cluster

ACCESS = {"refused-by-rbac", "namespace-terminated-with-content", "finalizer-held-then-released",
          "foreground-deletion-completed", "dependent-orphaned"}


def test_none_is_reached_by_a_quiet_cluster():
    watcher = Watcher(web_cluster())
    assert watcher.run(60) & ACCESS == set()


def test_a_request_of_a_user_without_rights_is_refused_by_rbac_and_an_admission_refusal_is_not():
    cluster = web_cluster()
    watcher = Watcher(cluster)
    CreateNamespace().apply(cluster)
    ApplyInNamespace("team", "services").apply(cluster)
    DeleteWith("namespaces", "", "team").apply(cluster)
    ApplyInNamespace("team", "pods").apply(cluster)  # the admin, refused by NamespaceLifecycle (403, allowed)
    cluster.run_for(1_000)
    assert cluster.kubectl.results[-1].response.code == 403
    assert "refused-by-rbac" not in watcher.look()
    ApplyInNamespace("default", "pods", "bob").apply(cluster)
    assert "refused-by-rbac" in watcher.run(2)


def test_a_namespace_deleted_with_content_and_one_deleted_empty():
    cluster = web_cluster()
    watcher = Watcher(cluster)
    CreateNamespace().apply(cluster)
    watcher.run(5)
    DeleteWith("namespaces", "", "team").apply(cluster)
    assert "namespace-terminated-with-content" not in watcher.run(30)  # empty: it went, but held nothing
    assert cluster.get("namespaces", "", "team") is None
    CreateNamespace().apply(cluster)
    ApplyInNamespace("team", "deployments").apply(cluster)
    watcher.run(20)
    DeleteWith("namespaces", "", "team").apply(cluster)
    assert "namespace-terminated-with-content" in watcher.run(60)


def test_an_object_held_by_a_finalizer_then_released():
    cluster = web_cluster()
    watcher = Watcher(cluster)
    ApplyInNamespace("default", "services").apply(cluster)
    AddFinalizer("services", "default", "shop").apply(cluster)
    DeleteWith("services", "default", "shop").apply(cluster)
    assert "finalizer-held-then-released" not in watcher.run(10)
    assert cluster.get("services", "default", "shop").metadata.deletion_timestamp is not None
    RemoveFinalizer("services", "default", "shop").apply(cluster)
    assert "finalizer-held-then-released" in watcher.run(5)


def test_foreground_and_orphan_deletes():
    cluster = web_cluster()
    watcher = Watcher(cluster)
    ApplyInNamespace("default", "deployments").apply(cluster)
    watcher.run(20)
    DeleteWith("deployments", "default", "shop", propagation_policy="Orphan").apply(cluster)
    seen = watcher.run(20)
    assert "dependent-orphaned" in seen and "foreground-deletion-completed" not in seen
    (rs,) = [r for r in cluster.objects("replicasets", "default") if r.metadata.name.startswith("shop-")]
    DeleteWith("replicasets", "default", rs.metadata.name, propagation_policy="Foreground").apply(cluster)
    assert "foreground-deletion-completed" in watcher.run(60)


def test_namespaces_terminate_fails_while_a_namespace_is_terminating_and_holds_once_it_is_gone():
    from kmodel.invariants.liveness import namespaces_terminate

    cluster = web_cluster()
    CreateNamespace().apply(cluster)
    ApplyInNamespace("team", "deployments").apply(cluster)
    cluster.run_for(20_000)
    DeleteWith("namespaces", "", "team").apply(cluster)
    cluster.run_for(1_000)
    assert list(namespaces_terminate(cluster, {})) == [
        f"namespace team is still Terminating, with {len(_team_objects(cluster))} object(s) left in it"]
    cluster.run_for(60_000)
    assert list(namespaces_terminate(cluster, {})) == [] and cluster.get("namespaces", "", "team") is None


def test_namespaces_terminate_lets_a_finalizer_keep_one():
    from kmodel.invariants.liveness import namespaces_terminate

    cluster = web_cluster()
    CreateNamespace().apply(cluster)
    ApplyInNamespace("team", "services").apply(cluster)
    AddFinalizer("services", "team", "shop").apply(cluster)
    DeleteWith("namespaces", "", "team").apply(cluster)
    cluster.run_for(60_000)
    assert cluster.get("namespaces", "", "team") is not None and list(namespaces_terminate(cluster, {})) == []


def _team_objects(cluster):
    from kmodel.invariants.liveness import _NAMESPACED

    return [o for r in _NAMESPACED for o in cluster.objects(r, "team")]
