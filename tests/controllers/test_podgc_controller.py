"""PodGC removes the pods of a node that is gone, after the quarantine, so their ReplicaSets replace them."""

from __future__ import annotations

from pathlib import Path

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.objects import load_yaml

WEB = Path(__file__).resolve().parents[2] / "examples" / "web-service.yaml"


def test_pods_of_a_removed_node_are_force_deleted_and_replaced():
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(load_yaml(WEB.read_text()))
    cluster.run(30_000)
    doomed = [p.metadata.name for p in cluster.objects("pods", "default") if p.spec.node_name == "node-3"]
    assert doomed
    cluster.remove_node("node-3")
    removed_at = cluster.now
    cluster.run(removed_at + 30_000)
    # quarantine: still there 30 s after the node went
    assert {p.metadata.name for p in cluster.objects("pods", "default")} >= set(doomed)
    cluster.run(removed_at + 120_000)
    pods = cluster.objects("pods", "default")
    assert not [p for p in pods if p.metadata.name in doomed]
    deletes = [r for r in cluster.audit.records if r.verb == "delete" and r.resource == "pods"
               and r.name in doomed and r.code == 200]
    assert deletes and all(r.time >= removed_at + 40_000 for r in deletes)
    running = [p for p in pods if p.status.phase == "Running"]
    assert len(running) == 3 and all(p.spec.node_name in ("node-1", "node-2") for p in running)


def test_pods_on_existing_nodes_are_left_alone():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(load_yaml(WEB.read_text()))
    cluster.run(200_000)
    gc = cluster.loop.components["controller/podgc"]
    assert gc.missing_since == {}
    assert not [r for r in cluster.audit.records if r.verb == "delete" and r.resource == "pods"]
