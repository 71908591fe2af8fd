"""The garbage collector and custom resources: monitored once their CRD is established, collected with each
propagation policy as built-in kinds are (custom owners of custom and built-in dependents)."""

from __future__ import annotations

import itertools

import pytest

from kmodel.apiserver.wire import Request
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.garbagecollector import GarbageCollector
from kmodel.objects import ObjectMeta, OwnerReference, Pod
from tests.apiserver.crd_fixtures import crd_body, database

from .cluster_helpers import template

_ids = itertools.count(1)


def call(c: Cluster, verb: str, resource: str, *, namespace: str = "default", name: str = "", body=None,
         policy: str = "") -> object:
    req = Request(-5000 - next(_ids), verb, resource, namespace, name, "", body, "admin-token",
                  propagation_policy=policy)
    response = c.replicas[0].pipeline.handle(req, now=c.now, replica="test")
    c.etcd.poke()
    return response


def owned_by(owner) -> dict:
    m = owner.metadata
    return {"apiVersion": owner.api_version, "kind": owner.kind, "name": m.name, "uid": m.uid,
            "controller": True, "blockOwnerDeletion": True}


def cluster_with_databases():
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.run(1_000)
    assert call(c, "create", "customresourcedefinitions", namespace="", body=crd_body()).code == 201
    owner = call(c, "create", "databases", body=database("owner")).body
    child = database("child")
    child["metadata"]["ownerReferences"] = [owned_by(owner)]
    assert call(c, "create", "databases", body=child).code == 201
    ref = OwnerReference(**{"api_version": owner.api_version, "kind": "Database", "name": "owner",
                            "uid": owner.metadata.uid, "controller": True, "block_owner_deletion": True})
    pod = Pod(metadata=ObjectMeta(name="worker", namespace="default", owner_references=(ref,)), spec=template().spec)
    assert call(c, "create", "pods", body=pod).code == 201
    c.run_for(5_000)  # the GC has seen the CRD established: it monitors databases now
    gc = garbage_collector(c)
    assert "databases" in gc.caches
    # the monitor is the process's shared informer, started by the factory: its list came back and it synced,
    # so the GC (which works only once every cache it uses has synced) goes on working
    assert gc.caches["databases"].has_synced and gc.synced()
    return c, gc


def garbage_collector(c: Cluster) -> GarbageCollector:
    return next(x for x in c.components if isinstance(x, GarbageCollector))


def names(c: Cluster, resource: str) -> list[str]:
    return [o.metadata.name for o in c.objects(resource, "default")]


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_dependents_of_a_deleted_custom_owner_are_collected(policy):
    c, _ = cluster_with_databases()
    assert call(c, "delete", "databases", name="owner", policy=policy).code == 200
    if policy == "Foreground":
        owner = c.get("databases", "default", "owner")
        assert owner is not None and "foregroundDeletion" in owner.metadata.finalizers
    c.run_for(10_000)
    assert names(c, "databases") == [] and names(c, "pods") == []


def test_orphaned_dependents_of_a_custom_owner_stay_without_their_owner_reference():
    c, _ = cluster_with_databases()
    assert call(c, "delete", "databases", name="owner", policy="Orphan").code == 200
    c.run_for(10_000)
    assert names(c, "databases") == ["child"] and names(c, "pods") == ["worker"]
    assert c.get("databases", "default", "child").metadata.owner_references == ()
    assert c.get("pods", "default", "worker").metadata.owner_references == ()


def test_the_gc_monitors_a_custom_resource_once_its_crd_is_established_and_not_when_configured_off():
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.run(1_000)
    gc = garbage_collector(c)
    assert "databases" not in gc.caches
    call(c, "create", "customresourcedefinitions", namespace="", body=crd_body())
    c.run_for(2_000)
    assert "databases" in gc.caches and gc.caches["databases"].has_synced
    assert gc.owner_resource("example.com/v1", "Database").name == "databases"
    off = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",), gc_monitors_custom_resources=False))
    off.run(1_000)
    call(off, "create", "customresourcedefinitions", namespace="", body=crd_body())
    off.run_for(2_000)
    assert "databases" not in garbage_collector(off).caches


def test_a_deleted_crd_is_no_longer_monitored_and_the_gc_goes_on_working():
    """Once its CRD is gone the resource can no longer be listed: the GC stops monitoring it (syncMonitors), so
    its other caches alone decide whether it works, and it still collects built-in dependents."""
    c, gc = cluster_with_databases()
    assert call(c, "delete", "customresourcedefinitions", namespace="", name="databases.example.com").code == 200
    c.run_for(30_000)
    assert [crd.metadata.name for crd in c.objects("customresourcedefinitions")] == []
    assert "databases" not in gc.caches and gc.synced()
    owner = Pod(metadata=ObjectMeta(name="owner-pod", namespace="default"), spec=template().spec)
    owner = call(c, "create", "pods", body=owner).body
    ref = OwnerReference(api_version="v1", kind="Pod", name="owner-pod", uid=owner.metadata.uid)
    dependent = Pod(metadata=ObjectMeta(name="dependent", namespace="default", owner_references=(ref,)),
                    spec=template().spec)
    assert call(c, "create", "pods", body=dependent).code == 201
    c.run_for(5_000)
    assert call(c, "delete", "pods", name="owner-pod", policy="Background").code == 200
    c.run_for(60_000)
    assert "dependent" not in names(c, "pods")


def test_dependents_of_custom_objects_deleted_with_their_crd_are_collected():
    """Deleting the CRD deletes its objects, then the CRD: the GC stops monitoring the kind, takes what its monitor
    still held for deleted and keeps the kind's mapping, so the pod a Database owned is found dangling (its
    owner's GET: 404) and collected."""
    c, gc = cluster_with_databases()
    assert call(c, "delete", "customresourcedefinitions", namespace="", name="databases.example.com").code == 200
    c.run_for(30_000)
    assert c.objects("customresourcedefinitions") == [] and "databases" not in gc.caches
    assert names(c, "pods") == []
    assert gc.owner_resource("example.com/v1", "Database").name == "databases"
