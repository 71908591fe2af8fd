"""The garbage collector monitors every resource the API can delete (but events), as upstream's does: a
dependent of any kind goes with its owner of any kind, an owner of any kind deleted with Orphan or Foreground
loses its finalizer once its dependents are handled, and a Node's lease goes with the Node. A cluster configured
as traces recorded before (`gc_monitors_every_resource=False`) monitors only the workload kinds."""

from __future__ import annotations

import pytest

from kmodel.apiserver.resources import resource_of
from kmodel.apiserver.wire import Request
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.garbagecollector import WORKLOADS, GarbageCollector, monitored
from kmodel.objects import ConfigMap, ObjectMeta, OwnerReference, Service
from kmodel.objects.core import ServicePort, ServiceSpec

from .cluster_helpers import admin, replicaset

S = 1_000


def ref_to(obj, *, controller: bool = True) -> OwnerReference:
    res, m = resource_of(obj), obj.metadata
    return OwnerReference(api_version=res.api_version, kind=res.kind, name=m.name, uid=m.uid,
                          controller=controller, block_owner_deletion=True)


def config_map(name: str, *owners) -> ConfigMap:
    """A ConfigMap owned by `owners` (the first its controller: an object has at most one)."""
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="default",
                                         owner_references=tuple(ref_to(o, controller=not i) for i, o in enumerate(owners))))


def service(name: str) -> Service:
    return Service(metadata=ObjectMeta(name=name, namespace="default"),
                   spec=ServiceSpec(ports=(ServicePort(port=80),), selector={"app": name}))


def gc_cluster(**config) -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",), **config))
    c.run(2 * S)
    return c


def names(c: Cluster, resource: str) -> list[str]:
    return [o.metadata.name for o in c.objects(resource, "default")]


def test_it_monitors_every_deletable_resource_but_events():
    every = monitored()
    assert "events" not in every and "bindings" not in every
    for resource in ("configmaps", "services", "namespaces", "nodes", "leases", "roles", "clusterroles",
                     "customresourcedefinitions", *WORKLOADS):
        assert resource in every
    assert monitored(every_resource=False) == WORKLOADS
    assert list(every) == sorted(every)


@pytest.mark.parametrize("every", [True, False])
def test_a_config_map_owned_by_a_service_goes_with_it_only_when_every_resource_is_monitored(every):
    c = gc_cluster(gc_monitors_every_resource=every)
    owner = admin(c, "create", "services", body=service("front")).body
    assert admin(c, "create", "configmaps", body=config_map("settings", owner)).code == 201
    c.run_for(5 * S)
    c.submit(Delete("services", "default", "front"))
    c.run_for(10 * S)
    assert names(c, "configmaps") == ([] if every else ["settings"])


def test_a_config_map_owned_by_a_replicaset_goes_with_it():
    c = gc_cluster()
    c.apply([replicaset(0)])
    c.run_for(2 * S)
    owner = c.get("replicasets", "default", "web")
    assert admin(c, "create", "configmaps", body=config_map("settings", owner)).code == 201
    c.run_for(5 * S)
    c.submit(Delete("replicasets", "default", "web"))
    c.run_for(10 * S)
    assert names(c, "configmaps") == []


def test_a_dependent_with_a_live_owner_of_another_kind_keeps_only_that_reference():
    c = gc_cluster()
    front, back = (admin(c, "create", "services", body=service(n)).body for n in ("front", "back"))
    assert admin(c, "create", "configmaps", body=config_map("settings", front, back)).code == 201
    c.run_for(5 * S)
    c.submit(Delete("services", "default", "front"))
    c.run_for(10 * S)
    kept = c.get("configmaps", "default", "settings")
    assert [r.name for r in kept.metadata.owner_references] == ["back"]


@pytest.mark.parametrize("policy", ["Orphan", "Foreground"])
def test_a_service_deleted_with_a_finalizing_policy_is_removed_once_its_dependents_are_handled(policy):
    c = gc_cluster()
    owner = admin(c, "create", "services", body=service("front")).body
    assert admin(c, "create", "configmaps", body=config_map("settings", owner)).code == 201
    c.run_for(5 * S)
    c.submit(Delete("services", "default", "front", propagation_policy=policy))
    c.run_for(10 * S)
    assert c.get("services", "default", "front") is None  # its finalizer was removed: nothing keeps it
    if policy == "Orphan":
        assert c.get("configmaps", "default", "settings").metadata.owner_references == ()
    else:
        assert names(c, "configmaps") == []


def test_a_deleted_nodes_lease_is_collected():
    c = Cluster(ClusterConfig(nodes=2))
    c.run(30 * S)
    assert c.get("leases", "kube-node-lease", "node-2") is not None
    c.remove_node("node-2")
    c.run_for(30 * S)
    assert c.get("nodes", "", "node-2") is None
    assert c.get("leases", "kube-node-lease", "node-2") is None
    assert c.get("leases", "kube-node-lease", "node-1") is not None


def test_a_gc_built_alone_monitors_the_same_resources():
    assert GarbageCollector(["apiserver-0"]).builtin == monitored()
    assert GarbageCollector(["apiserver-0"], every_resource=False).builtin == WORKLOADS


@pytest.mark.parametrize("policy", ["", "Background", "Orphan", "Foreground"])
@pytest.mark.parametrize("with_gc", [True, False])
def test_a_namespace_deleted_with_each_policy_is_emptied_then_removed_only_with_the_gc(policy, with_gc):
    """A namespace's first DELETE puts the policy's finalizer on it (Orphan: `orphan`, Foreground:
    `foregroundDeletion`) beside `kubernetes` in spec.finalizers: the namespace controller empties it and removes
    `kubernetes`, the GC removes the other once the namespace's own dependents are handled. Without a GC a
    namespace deleted with Orphan or Foreground stays Terminating, empty."""
    components = ("namespace", "garbagecollector") if with_gc else ("namespace",)
    c = Cluster(ClusterConfig(nodes=1, components=components))
    c.run(2 * S)
    assert admin(c, "create", "namespaces", namespace="",
                 body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}).code == 201
    held = ConfigMap(metadata=ObjectMeta(name="settings", namespace="team"))
    assert admin(c, "create", "configmaps", namespace="team", body=held).code == 201
    c.run_for(5 * S)
    request = Request(-1, "delete", "namespaces", "", "team", "", None, "admin-token", propagation_policy=policy)
    answer = c.replicas[0].pipeline.handle(request, now=c.now, replica="test")
    c.etcd.poke()
    finalizers = answer.body.metadata.finalizers  # the first DELETE answers with the namespace as it left it
    assert finalizers == {"Orphan": ("orphan",), "Foreground": ("foregroundDeletion",)}.get(policy, ())
    c.run_for(30 * S)
    assert c.objects("configmaps", "team") == []
    left = c.get("namespaces", "", "team")
    if with_gc or not finalizers:
        assert left is None
    else:
        assert left is not None and left.metadata.finalizers == finalizers and not left.spec.finalizers
