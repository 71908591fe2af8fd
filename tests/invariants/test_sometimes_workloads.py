"""Sometimes properties of the user's workload edits (invariants/sometimes_workloads.py): each is reached by the
edit that makes its situation happen, and not by a quiet cluster or a near miss."""

from __future__ import annotations

from kmodel.checker.actions import ApplyDeployment, ApplyService
from kmodel.checker.workload_actions import (
    ApplyInvalid, ApplyPodShape, CordonNode, LabelPod, TaintNodeAction, UndoRollout,
)
from kmodel.cluster import Cluster, ClusterConfig

from tests.invariants.test_sometimes import Watcher

WORKLOAD = {"manifest-refused", "pod-released-and-adopted", "old-replicaset-revived", "cordoned-node-skipped",
            "pod-evicted-by-user-taint"}


def web() -> tuple[Cluster, Watcher]:
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 2).apply(cluster)
    ApplyService("web").apply(cluster)
    cluster.run(20_000)
    return cluster, Watcher(cluster)


def test_a_quiet_cluster_reaches_none_of_them():
    _, watcher = web()
    assert watcher.run(60) & WORKLOAD == set()


def test_an_invalid_manifest_is_refused():
    cluster, watcher = web()
    ApplyInvalid(0).apply(cluster)
    assert watcher.run(5) & WORKLOAD == {"manifest-refused"}


def test_a_pod_labelled_out_and_back_is_released_then_adopted():
    cluster, watcher = web()
    pod = sorted(p.metadata.name for p in cluster.objects("pods", "default"))[0]
    LabelPod(pod).apply(cluster)
    assert watcher.run(20) & WORKLOAD == set()  # released only
    LabelPod(pod, "web").apply(cluster)
    assert "pod-released-and-adopted" in watcher.run(20)


def test_a_rollback_revives_the_old_replicaset():
    cluster, watcher = web()
    ApplyDeployment("web", 2, 500).apply(cluster)
    assert watcher.run(60) & WORKLOAD == set()  # a rollout to a new template: no old set revived
    UndoRollout("web").apply(cluster)
    assert "old-replicaset-revived" in watcher.run(60)


def test_a_pod_placed_while_a_node_is_cordoned_skips_it():
    cluster, watcher = web()
    ApplyPodShape("debug-1").apply(cluster)
    assert watcher.run(10) & WORKLOAD == set()  # placed with no node cordoned
    CordonNode("node-1").apply(cluster)
    ApplyPodShape("debug-2").apply(cluster)
    assert "cordoned-node-skipped" in watcher.run(10)
    assert cluster.get("pods", "default", "debug-2").spec.node_name == "node-2"


def test_a_users_noexecute_taint_evicts():
    cluster, watcher = web()
    node = sorted(p.spec.node_name for p in cluster.objects("pods", "default"))[0]
    TaintNodeAction(node, effect="NoSchedule").apply(cluster)
    assert watcher.run(30) & WORKLOAD == set()  # NoSchedule evicts nothing
    TaintNodeAction(node, effect="NoExecute").apply(cluster)
    assert "pod-evicted-by-user-taint" in watcher.run(30)
