"""A node without a podCIDR is not Ready: the kubelet reports NetworkPluginNotReady until the runtime's CNI is
configured from the podCIDR, so the node lifecycle controller taints it and the scheduler keeps pods off it."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.kubelet.cni import RUNTIME_NETWORK_NOT_READY
from kmodel.kubelet.component import NODE_READY_GRACE_PERIOD_MS

NODE = "node-1"
UPSTREAM_MESSAGE = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                    "message:Network plugin returns error: cni plugin not initialized")


def ready(c: Cluster, node: str = NODE):
    return next(x for x in c.get("nodes", "", node).status.conditions if x.type == "Ready")


def give_cidr(c: Cluster, node: str = NODE) -> None:
    c.apply([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}, "spec": {"podCIDR": "10.244.1.0/24"}}])


def test_the_message_is_upstreams():
    assert RUNTIME_NETWORK_NOT_READY == UPSTREAM_MESSAGE


def test_a_node_registers_not_ready_and_turns_ready_as_soon_as_its_pod_cidr_comes():
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet",)))
    c.run(30_000)
    r = ready(c)
    assert (r.status, r.reason, r.message) == ("False", "KubeletNotReady", UPSTREAM_MESSAGE)
    given = c.now
    give_cidr(c)
    c.run_for(500)  # the fast status update writes at once, not at the next 10 s sync
    r = ready(c)
    assert (r.status, r.reason, r.message) == ("True", "KubeletReady", "kubelet is posting ready status")
    assert given <= r.last_transition_time <= given + 500


def test_a_pod_cidr_given_after_the_grace_period_makes_the_node_ready_at_the_next_sync():
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet",)))
    c.run(NODE_READY_GRACE_PERIOD_MS + 5_000)
    assert ready(c).status == "False"
    give_cidr(c)
    c.run_for(500)
    assert ready(c).status == "False"  # no fast update any more: the regular sync, at most 10 s later
    c.run_for(10_000)
    assert ready(c).status == "True"


def test_a_node_left_without_a_block_is_tainted_not_ready_and_gets_no_pods():
    """One /24 block for two nodes: the node IPAM controller gives one of them none (CIDRNotAvailable); that
    node stays NotReady, the node lifecycle controller taints it not-ready, and every replica lands on the other."""
    c = Cluster(ClusterConfig(nodes=2, cluster_cidr="10.244.0.0/24", node_cidr_mask_size=24))
    c.run(60_000)
    nodes = {n.metadata.name: n for n in c.objects("nodes", "")}
    without = [name for name, n in nodes.items() if not n.spec.pod_cidr]
    assert len(without) == 1
    left = nodes[without[0]]
    assert ready(c, left.metadata.name).status == "False"
    assert {(t.key, t.effect) for t in left.spec.taints} >= {("node.kubernetes.io/not-ready", "NoSchedule")}
    assert all(ready(c, name).status == "True" for name in nodes if name != left.metadata.name)
    c.apply([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}])
    c.run_for(30_000)
    pods = c.objects("pods", "default")
    assert len(pods) == 3
    assert all(p.spec.node_name != left.metadata.name and p.status.phase == "Running" for p in pods)


def test_converges_node_status_expects_the_node_without_a_block_not_ready_and_no_other(monkeypatch):
    from kmodel.invariants.liveness import converges_node_status
    from kmodel.kubelet.component import Kubelet

    c = Cluster(ClusterConfig(nodes=2, cluster_cidr="10.244.0.0/24", node_cidr_mask_size=24))
    c.run(60_000)
    assert list(converges_node_status(c, {})) == []
    left = next(n.metadata.name for n in c.objects("nodes", "") if not n.spec.pod_cidr)
    monkeypatch.setattr(Kubelet, "network_error", property(lambda self: None))  # kubelets that ignore the network
    c.run_for(20_000)
    assert list(converges_node_status(c, {})) == [
        f"node {left} has no podCIDR (every block is held) but is not NotReady (Ready=True)"]
