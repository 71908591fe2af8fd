"""The garbage collector: dependents of a deleted owner go; a dependent whose owner its cache lacks stays."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.garbagecollector import GarbageCollector
from kmodel.loop.events import BreakStream, DelayHead
from kmodel.objects import ObjectMeta, OwnerReference, Pod

from .cluster_helpers import admin, replicaset, template


def owned_pod(name: str, owner_name: str, owner_uid: str) -> Pod:
    ref = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name=owner_name, uid=owner_uid,
                         controller=True, block_owner_deletion=True)
    return Pod(metadata=ObjectMeta(name=name, namespace="default", owner_references=(ref,)), spec=template().spec)


def test_deletes_dependents_of_a_deleted_owner_and_dangling_ones_only():
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.apply([replicaset(0)])
    c.run(2_000)
    rs = c.get("replicasets", "default", "web")
    assert admin(c, "create", "pods", body=owned_pod("child", "web", rs.metadata.uid)).code == 201
    assert admin(c, "create", "pods", body=owned_pod("lost", "gone", "no-such-uid")).code == 201
    c.run_for(5_000)
    assert [p.metadata.name for p in c.objects("pods", "default")] == ["child"]
    c.submit(Delete("replicasets", "default", "web"))
    c.run_for(5_000)
    assert c.objects("pods", "default") == []


def test_keeps_a_dependent_whose_owner_it_has_not_seen_yet():
    gc = GarbageCollector(["apiserver-0", "apiserver-1"])
    c = Cluster(ClusterConfig(nodes=1, apiservers=2, components=()), extra=[gc])
    c.run(1_000)
    # the pod informer moves to apiserver-1; the replicaset informer stays on apiserver-0, whose etcd feed
    # is then held back: the GC will see the pod long before it sees its owner
    c.loop.step(BreakStream(gc.caches["pods"].watch_stream))
    c.run_for(2_000)
    assert gc.client.endpoint == "apiserver-1"
    c.apply([replicaset(0)])
    while not c.network.has_in_flight("etcd", "apiserver-0"):
        assert c.loop.run_fair(c.now + 1_000, max_events=1)
    c.loop.step(DelayHead("etcd", "apiserver-0", 60_000))
    c.run_for(1_000)
    rs = c.get("replicasets", "default", "web")
    assert admin(c, "create", "pods", body=owned_pod("child", "web", rs.metadata.uid)).code == 201
    c.run_for(20_000)
    assert gc.caches["pods"].get("default", "child") is not None
    assert gc.caches["replicasets"].get("default", "web") is None  # the owner is unknown to the GC ...
    assert [p.metadata.name for p in c.objects("pods", "default")] == ["child"]  # ... and the pod stays
    gets = [r for r in c.audit if r.user == "system:serviceaccount:kube-system:generic-garbage-collector"
            and r.verb == "get" and r.resource == "replicasets" and r.name == "web"]
    assert gets and gets[0].code == 200  # it asked the API server instead of trusting its cache
    c.run_for(60_000)
    assert [p.metadata.name for p in c.objects("pods", "default")] == ["child"]


# -- propagation policies ---------------------------------------------------------------------------------

def _web_cluster() -> Cluster:
    from kmodel.checker.actions import deployment_manifest
    from kmodel.cluster.kubectl import Apply

    c = Cluster(ClusterConfig(nodes=1, components=("deployment", "replicaset", "garbagecollector", "scheduler",
                                                   "kubelet")))
    c.submit(Apply(deployment_manifest("web", 2, 0, False)))
    c.run(20_000)
    assert len(c.objects("pods", "default")) == 2
    return c


def test_a_foreground_delete_removes_the_pods_then_the_replicaset_then_the_deployment():
    c = _web_cluster()
    first = len(c.audit.records)
    c.submit(Delete("deployments", "default", "web", propagation_policy="Foreground"))
    c.run_for(30_000)
    assert (c.objects("pods", "default"), c.objects("replicasets", "default"),
            c.objects("deployments", "default")) == ([], [], [])
    gc = "system:serviceaccount:kube-system:generic-garbage-collector"
    steps = [(r.verb, r.resource) for r in list(c.audit.records)[first:]
             if r.user == gc and r.verb in ("delete", "patch") and r.code == 200]
    # the GC deletes the ReplicaSet (in the foreground: it has pods), then its pods; it lifts the ReplicaSet's
    # foregroundDeletion finalizer once they are gone, and then the Deployment's
    assert steps == [("delete", "replicasets"), ("delete", "pods"), ("delete", "pods"), ("patch", "replicasets"),
                     ("patch", "deployments")]


def test_an_orphan_delete_leaves_the_replicaset_and_its_pods_without_the_owner():
    c = _web_cluster()
    c.submit(Delete("deployments", "default", "web", propagation_policy="Orphan"))
    c.run_for(10_000)
    assert c.get("deployments", "default", "web") is None
    (rs,) = c.objects("replicasets", "default")
    assert rs.metadata.owner_references == ()
    pods = c.objects("pods", "default")
    assert len(pods) == 2 and all(p.metadata.deletion_timestamp is None for p in pods)


def test_an_orphan_delete_of_a_replicaset_keeps_its_pods_and_a_background_one_takes_them():
    c = _web_cluster()
    (rs,) = c.objects("replicasets", "default")
    c.submit(Delete("deployments", "default", "web", propagation_policy="Orphan"))
    c.run_for(10_000)
    c.submit(Delete("replicasets", "default", rs.metadata.name, propagation_policy="Orphan"))
    c.run_for(10_000)
    pods = c.objects("pods", "default")
    assert c.objects("replicasets", "default") == [] and len(pods) == 2
    assert all(p.metadata.owner_references == () for p in pods)
