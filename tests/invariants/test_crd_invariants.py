"""The custom resource invariants: each holds on a run that drives a CRD through kubectl, and catches a planted
violation of the kind it is there for."""

from __future__ import annotations

import attrs

from kmodel.invariants.registry import REGISTRY
from kmodel.checker.crd_actions import DATABASE_CRD, database_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete, Patch
from kmodel.objects.frozendict import freeze

SAFETY = ("custom-objects-valid", "custom-objects-scoped")


def check(cluster: Cluster, name: str, memo: dict | None = None) -> list[str]:
    return list(REGISTRY[name].check(cluster, {} if memo is None else memo))


def database_cluster() -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.apply([DATABASE_CRD])
    c.run(2_000)
    c.apply([database_manifest("orders", 2), database_manifest("users", 1, "negative-replicas")])
    c.submit(Patch("databases", "default", "orders", {"status": {"replicas": 2}}, subresource="status"))
    c.run(4_000)
    return c


def test_the_guarantees_hold_while_a_crd_and_its_objects_are_written_and_deleted():
    c = database_cluster()
    assert [o.metadata.name for o in c.objects("databases", "default")] == ["orders"]  # users was invalid: 422
    assert [r.response.code for r in c.kubectl.results][-3:] == [201, 422, 200]
    memos: dict = {}
    for name in SAFETY:
        assert check(c, name, memos.setdefault(name, {})) == []
    assert check(c, "crd-objects-removed") == []
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(8_000)
    assert c.get("customresourcedefinitions", "", "databases.example.com") is None
    for name in SAFETY:
        assert check(c, name, memos[name]) == []
    assert check(c, "crd-objects-removed") == []


def test_an_invalid_stored_object_breaks_custom_objects_valid():
    c = database_cluster()
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value
    spec = dict(stored.content["spec"], replicas=-4)
    c.store.put(key, attrs.evolve(stored, content=stored.content.set("spec", freeze(spec))))
    found = check(c, "custom-objects-valid")
    assert len(found) == 1 and "spec.replicas in body should be greater than or equal to 0" in found[0]


def test_an_object_at_another_version_breaks_custom_objects_valid():
    c = database_cluster()
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value
    c.store.put(key, attrs.evolve(stored, api_version="example.com/v2"))
    assert "not at the storage version example.com/v1" in check(c, "custom-objects-valid")[0]


def test_an_object_without_its_namespace_breaks_custom_objects_scoped():
    c = database_cluster()
    stored = c.store.peek("/registry/example.com/databases/default/orders")[0].value
    c.store.put("/registry/example.com/databases/orders", attrs.evolve(
        stored, metadata=attrs.evolve(stored.metadata, namespace="")))
    found = check(c, "custom-objects-scoped")
    assert found == ["/registry/example.com/databases/orders: a Database of a Namespaced CRD stored without its "
                     "namespace ('')"]


def test_objects_left_after_their_crd_break_crd_objects_removed():
    c = database_cluster()
    stored = c.store.peek("/registry/example.com/databases/default/orders")[0].value
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(6_000)
    c.store.put("/registry/example.com/databases/default/orders", stored)  # a leftover the finalizer missed
    assert check(c, "crd-objects-removed") == [
        "/registry/example.com/databases/default/orders is stored, but no Established CRD serves it"]


def test_a_crd_left_terminating_breaks_crd_objects_removed():
    c = database_cluster()
    c.apply([{**database_manifest("kept", 1), "metadata": {"name": "kept", "namespace": "default",
                                                           "finalizers": ["example.com/hold"]}}])
    c.run(6_000)
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(8_000)
    found = check(c, "crd-objects-removed")
    assert found and "CRD databases.example.com is still terminating" in found[0]
