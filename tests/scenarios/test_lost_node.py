"""A machine lost for good with its Node left behind (Cluster.lose_node): the control plane notices on its own.
The node lifecycle controller marks the Node unreachable and taints it NoExecute, taint eviction deletes its pods
once their 300 s tolerations end, and their ReplicaSet replaces them elsewhere; no one deletes the Node."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.invariants.liveness import converges_endpoints, converges_node_status, converges_replicas
from kmodel.checker.actions import LoseNode, Settle
from kmodel.checker.action_json import action_from_json
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.objects import load_yaml

WEB = Path(__file__).resolve().parents[2] / "examples" / "web-service.yaml"


def web_cluster() -> tuple[Cluster, list[str]]:
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(load_yaml(WEB.read_text()))
    cluster.run(30_000)
    doomed = [p.metadata.name for p in cluster.objects("pods", "default") if p.spec.node_name == "node-3"]
    assert doomed
    return cluster, doomed


def problems(cluster: Cluster) -> list[str]:
    return [*converges_replicas(cluster, {}), *converges_endpoints(cluster, {}), *converges_node_status(cluster, {})]


def test_a_lost_nodes_pods_are_evicted_after_their_tolerations_and_replaced_and_its_node_stays():
    cluster, doomed = web_cluster()
    cluster.lose_node("node-3")
    lost_at = cluster.now
    assert cluster.nodes == ["node-1", "node-2"] and cluster.lost_nodes == ["node-3"]
    assert not cluster.loop.is_up("kubelet/node-3")
    cluster.run(lost_at + 300_000)
    # not evicted yet: 40 s of grace before the taint, then 300 s of toleration
    assert not [p for p in cluster.objects("pods", "default")
                if p.metadata.name in doomed and p.metadata.deletion_timestamp is not None]
    assert list(converges_replicas(cluster, {}))  # two ready pods serve nothing
    cluster.run(lost_at + 420_000)
    node = cluster.get("nodes", "", "node-3")
    assert node is not None  # no one deleted it
    assert "node.kubernetes.io/unreachable" in [t.key for t in node.spec.taints]
    evicted = [p for p in cluster.objects("pods", "default") if p.metadata.name in doomed]
    assert evicted and all(p.metadata.deletion_timestamp is not None for p in evicted)  # Terminating for good
    deletes = [r for r in cluster.audit.records if r.verb == "delete" and r.resource == "pods" and r.name in doomed
               and r.code == 200]
    assert deletes and all(r.time >= lost_at + 340_000 for r in deletes)
    assert problems(cluster) == []  # replaced on node-1 and node-2; node-3 is no longer judged


def test_a_lost_node_is_never_restarted_nor_deleted_by_a_settle():
    cluster, _ = web_cluster()
    LoseNode("node-3").apply(cluster)
    Settle(check_at_once=True, release_holds=True, finish_removals=True).apply(
        cluster, converged=lambda: not problems(cluster))
    assert not cluster.loop.is_up("kubelet/node-3")
    assert cluster.get("nodes", "", "node-3") is not None
    assert problems(cluster) == []


def test_lose_node_round_trips_and_refuses_an_unknown_node():
    action = LoseNode("node-2")
    assert action_from_json(action.to_json()) == action
    assert "no one deletes the Node" in action.name
    cluster, _ = web_cluster()
    with pytest.raises(Exception, match="no node 'node-9'"):
        cluster.lose_node("node-9")
