"""Variant direct-calls: the scheduler tells the chosen node's kubelet to run the pod instead of binding it."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply
from kmodel.kubelet.pod_worker import POD_NAME_LABEL
from kmodel.variants import DIRECT_CALLS, variant
from kmodel.invariants.registry import REGISTRY

S = 1000


def test_the_variant_is_registered_where_the_switch_is():
    v = variant(DIRECT_CALLS)
    assert v.where == "kmodel/scheduler/component.py" and v.expect == ("api-single-contract",)


def cluster_with_web(variant_name: str, partition_kubelets: bool = False) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=2, variant=variant_name))
    cluster.run(15 * S)
    if partition_kubelets:
        for node in ("node-1", "node-2"):
            cluster.partition(f"kubelet/{node}")
    cluster.submit(Apply(deployment_manifest("web", 1, 0, False)))
    cluster.run(cluster.now + 10 * S)
    return cluster


def web_pod(cluster: Cluster):
    [pod] = [p for p in cluster.objects("pods", "default") if p.metadata.name.startswith("web-")]
    return pod


def running_on(cluster: Cluster, name: str) -> list[str]:
    return [node for node in ("node-1", "node-2")
            if any(c.labels.get(POD_NAME_LABEL) == name
                   for c in cluster.loop.components[f"kubelet/{node}"].runtime.running())]


def test_the_switch_is_off_by_default_and_on_only_under_the_variant():
    assert not Cluster(ClusterConfig(nodes=1)).loop.components["scheduler"].direct_calls
    assert Cluster(ClusterConfig(nodes=1, variant=DIRECT_CALLS)).loop.components["scheduler"].direct_calls


def test_default_binds_through_the_api_and_the_variant_calls_the_kubelet_which_runs_the_unbound_pod():
    default = cluster_with_web("default")
    pod = web_pod(default)
    assert pod.spec.node_name and running_on(default, pod.metadata.name) == [pod.spec.node_name]
    assert list(REGISTRY["api-single-contract"].check(default, {})) == []

    cluster = cluster_with_web(DIRECT_CALLS)
    pod = web_pod(cluster)
    assert pod.spec.node_name == "" and pod.status.phase == "Pending"  # the store never learns
    [node] = running_on(cluster, pod.metadata.name)  # but a kubelet runs it
    edges = [pair for pair in cluster.network.communication_counts() if pair[0] == "scheduler"
             and pair[1].startswith("kubelet/")]
    assert edges == [("scheduler", f"kubelet/{node}")]
    [message] = list(REGISTRY["api-single-contract"].check(cluster, {}))
    assert f"scheduler sent 1 message(s) straight to kubelet/{node}" in message


def test_under_a_partition_the_kubelet_never_gets_it_and_after_the_heal_runs_what_the_store_calls_pending():
    cluster = cluster_with_web(DIRECT_CALLS, partition_kubelets=True)
    pod = web_pod(cluster)
    assert running_on(cluster, pod.metadata.name) == []
    assert cluster.loop.components["scheduler"].cache.is_assumed(pod)  # the scheduler thinks it is placed
    for node in ("node-1", "node-2"):
        cluster.heal(f"kubelet/{node}")
    cluster.run(cluster.now + 10 * S)
    pod = web_pod(cluster)
    assert pod.spec.node_name == "" and pod.status.phase == "Pending"
    assert len(running_on(cluster, pod.metadata.name)) == 1
