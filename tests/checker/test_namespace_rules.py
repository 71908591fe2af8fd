"""The namespace family (kmodel/checker/namespace_rules.py, namespace_actions.py): a namespace filled and deleted
in one step, and ownerReferences written by hand, judged by the namespace controller and the garbage collector as
upstream's are."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.access_actions import HOLD, RemoveFinalizer
from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment, DeleteObject
from kmodel.checker.namespace_actions import OWNED, dangling_uid, ApplyOwned, NamespaceRoundTrip, owned_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.invariants.sometimes import SOMETIMES

from tests.checker.conftest import SmallMachine

EXAMPLES = [NamespaceRoundTrip(), NamespaceRoundTrip(3, 2, 3, 1), ApplyOwned("nodes", "", "node-1"),
            ApplyOwned("deployments", "team", "shop", 1, 2, True)]


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    again = action_from_json(json.loads(json.dumps(action.to_json())))
    assert again == action and again.stable_json() == action.stable_json()


@pytest.mark.parametrize("data, message", [
    ({"name": "namespace-round-trip", "content": 4}, "content must be below 4, not 4"),
    ({"name": "namespace-round-trip", "wait": 2}, "wait must be below 2, not 2"),
    ({"name": "apply-owned", "owner_resource": "gadgets", "owner_namespace": "", "owner": "x"},
     "owner_resource must be a resource the API serves, not 'gadgets'"),
    ({"name": "apply-owned", "owner_resource": "pods", "owner_namespace": "", "owner": "x", "shape": 3},
     "shape must be below 3, not 3"),
])
def test_bad_namespace_actions_are_refused_in_one_line(data, message):
    with pytest.raises(ValueError, match=message) as info:
        action_from_json(data)
    assert "\n" not in str(info.value)


def small(nodes: int = 1) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=nodes))
    cluster.run(10_000)
    return cluster


def conditions(cluster: Cluster) -> dict[str, str]:
    ns = cluster.get("namespaces", "", "team")
    return {c.type: c.status for c in ns.status.conditions}


def test_a_namespace_with_running_content_is_emptied_and_removed_within_the_wait():
    cluster = small()
    memo: dict = {}
    NamespaceRoundTrip().apply(cluster)  # the Deployment shop and its Service
    assert cluster.get("namespaces", "", "team") is None
    assert [r.response.code for r in cluster.kubectl.results] == [201, 201, 201, 200]
    assert SOMETIMES["namespace-terminated-with-content"].reached(cluster, memo)


def test_without_the_wait_the_namespace_is_left_terminating():
    cluster = small()
    NamespaceRoundTrip(content=1, wait=1).apply(cluster)  # the bare pod, --wait=false
    cluster.run_for(1_000)  # the delete reaches the API server
    assert cluster.get("namespaces", "", "team").status.phase == "Terminating"


def test_content_held_by_a_finalizer_keeps_the_namespace_until_the_user_removes_it():
    cluster = small()
    NamespaceRoundTrip(content=2).apply(cluster)  # probe, holding example.com/hold
    assert conditions(cluster)["NamespaceFinalizersRemaining"] == "True"
    assert conditions(cluster)["NamespaceContentRemaining"] == "True"
    pod = cluster.get("pods", "team", "probe")
    assert pod.metadata.deletion_timestamp is not None and pod.metadata.finalizers == (HOLD,)
    RemoveFinalizer("pods", "team", "probe").apply(cluster)
    cluster.run_for(30_000)
    assert cluster.get("namespaces", "", "team") is None


def test_content_applied_while_the_namespace_terminates_is_refused():
    cluster = small()
    NamespaceRoundTrip(content=2).apply(cluster)  # held: the namespace stays Terminating
    NamespaceRoundTrip(content=0, wait=1).apply(cluster)
    codes = [r.response.code for r in cluster.kubectl.results[-3:]]
    assert codes.count(403) == 2, codes  # the Deployment and the Service


def owned(cluster: Cluster, resource: str = "configmaps", namespace: str = "default"):
    return cluster.get(resource, namespace, OWNED)


def test_a_dependent_of_a_dangling_owner_is_collected():
    cluster = small()
    ApplyOwned("nodes", "", "node-1", shape=1).apply(cluster)  # node-1's name, a uid nothing has
    assert owned_manifest(0, ("nodes", "node-1", "uid-1"), 1, False)["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": dangling_uid("nodes", "node-1")}]
    cluster.run_for(30_000)
    assert cluster.kubectl.results[-1].response.code == 201 and owned(cluster) is None


def test_a_dangling_reference_beside_a_live_owner_is_dropped_and_the_dependent_kept():
    cluster = small()
    ApplyOwned("nodes", "", "node-1", shape=2).apply(cluster)
    cluster.run_for(30_000)
    refs = owned(cluster).metadata.owner_references
    assert [r.uid for r in refs] == [cluster.get("nodes", "", "node-1").metadata.uid]


def test_an_owner_in_another_namespace_is_warned_of_and_not_taken_for_the_owner():
    cluster = small()
    NamespaceRoundTrip(content=2).apply(cluster)  # team holds the pod probe (kept by its finalizer)
    ApplyOwned("pods", "team", "probe", block=True).apply(cluster)
    cluster.run_for(30_000)
    events = [e for e in cluster.objects("events", "default") if e.reason == "OwnerRefInvalidNamespace"]
    assert events and events[0].involved_object.name == OWNED
    assert owned(cluster) is None  # no pod probe in default: the reference dangles there


def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_never_collected():
    cluster = small()
    ApplyDeployment("web", 1).apply(cluster)
    cluster.run_for(5_000)
    ApplyOwned("deployments", "default", "web", dependent=1).apply(cluster)
    cluster.run_for(5_000)
    DeleteObject("deployments", "web").apply(cluster)
    cluster.run_for(60_000)
    assert cluster.get("deployments", "default", "web") is None
    assert owned(cluster, "clusterroles", "") is not None


def test_the_rules_fire_on_a_machine():
    machine = SmallMachine()
    machine.namespace_round_trip(0, 0, 0, 0)
    machine.apply_owned(0, 0, 0, False)
    assert [a.kind for a in machine.session.actions[-2:]] == ["namespace-round-trip", "apply-owned"]
    # no workload yet: the first owner is the API server's Service kubernetes, then the Nodes
    assert machine.session.actions[-1].owner_resource == "services"
