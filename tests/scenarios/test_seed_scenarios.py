"""The example scenarios on a whole model cluster (issue: the cluster). Each reads what a user or an operator
would look at: the audit trail, the objects, the nodes' runtimes, kube-proxy's rules."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.kubelet.pod_worker import POD_NAME_LABEL
from kmodel.objects import load_yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
S = 1000  # logical milliseconds per second


def manifest(name: str) -> list:
    return load_yaml((EXAMPLES / name).read_text())


def kubelet(cluster: Cluster, node: str):
    return cluster.loop.components[f"kubelet/{node}"]


def running_containers(cluster: Cluster, node: str) -> list[str]:
    """Names of the pods whose containers run on `node`, as the node's runtime has them."""
    return sorted(c.labels.get(POD_NAME_LABEL, "") for c in kubelet(cluster, node).runtime.running())


def condition(obj, kind: str):
    return next((c for c in obj.status.conditions if c.type == kind), None)


def pods_of(cluster: Cluster, prefix: str) -> list:
    return [p for p in cluster.objects("pods", "default") if p.metadata.name.startswith(prefix)]


def in_cidr(ip: str, cidr: str) -> bool:
    return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr)


# 1 ---------------------------------------------------------------------------------------------------------

def test_a_deployment_flows_through_the_seeds_pipeline_in_order():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(15 * S)  # nodes registered, CIDRs assigned
    start = len(cluster.audit.records)
    deployment = [d for d in manifest("web-service.yaml") if d.metadata.name == "storefront"
                  and type(d).__name__ == "Deployment"]
    cluster.apply(deployment)
    cluster.run(cluster.now + 30 * S)
    records = cluster.audit.records[start:]

    def first(user: str, verb: str, resource: str, subresource: str = "") -> int:
        for i, r in enumerate(records):
            if (r.user, r.verb, r.resource, r.subresource) == (user, verb, resource, subresource) and r.code < 300:
                return i
        raise AssertionError(f"no {user} {verb} {resource}/{subresource} in the audit trail")

    created = first("admin", "create", "deployments")
    rs = first("system:serviceaccount:kube-system:deployment-controller", "create", "replicasets")
    pod = first("system:serviceaccount:kube-system:replicaset-controller", "create", "pods")
    bound = first("system:kube-scheduler", "create", "pods", "binding")
    status = [i for i, r in enumerate(records) if r.user.startswith("system:node:") and r.resource == "pods"
              and r.subresource == "status" and r.code == 200]
    assert created < rs < pod < bound < min(status)
    # client → API server → store: every accepted write is in the store at the revision the audit names
    kv = cluster.store.range(f"/registry/deployments/default/storefront").kvs[0]
    assert kv.create_revision == records[created].revision
    # kubelet → runtime → API server: the containers run on the nodes, and the API says Running
    pods = pods_of(cluster, "storefront-")
    assert len(pods) == 3 and all(p.status.phase == "Running" for p in pods)
    on_nodes = running_containers(cluster, "node-1") + running_containers(cluster, "node-2")
    assert sorted(on_nodes) == sorted(p.metadata.name for p in pods)


# 2 ---------------------------------------------------------------------------------------------------------

def test_host_port_pins_replicas_two_run_one_pending_forever():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(manifest("anti-patterns/web-hostport.yaml"))
    cluster.run(20 * 60 * S)  # well past the scheduler's 5-minute unschedulable flush
    pods = pods_of(cluster, "storefront-hostport-")
    phases = sorted(p.status.phase for p in pods)
    assert phases == ["Pending", "Running", "Running"]
    [pending] = [p for p in pods if p.status.phase == "Pending"]
    scheduled = condition(pending, "PodScheduled")
    assert (scheduled.status, scheduled.reason) == ("False", "Unschedulable")
    assert scheduled.message.startswith(
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.")
    assert pending.spec.node_name == ""
    assert sorted(p.spec.node_name for p in pods if p.status.phase == "Running") == ["node-1", "node-2"]


def test_the_same_app_behind_a_service_runs_everywhere_with_unique_ips():
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    nodes = {n.metadata.name: n for n in cluster.objects("nodes")}
    pods = pods_of(cluster, "storefront-")
    assert len(pods) == 3 and all(p.status.phase == "Running" for p in pods)
    ips = [p.status.pod_ip for p in pods]
    assert len(set(ips)) == 3
    for p in pods:
        assert in_cidr(p.status.pod_ip, nodes[p.spec.node_name].spec.pod_cidr)
    service = cluster.get("services", "default", "storefront")
    endpoints = cluster.get("endpoints", "default", "storefront")
    addresses = sorted(a.ip for s in endpoints.subsets for a in s.addresses)
    assert addresses == sorted(ips)
    expected = sorted(f"{ip}:80" for ip in ips)
    for node in nodes:
        rules = cluster.loop.components[f"proxy/{node}"].rules
        assert sorted(rules[f"{service.spec.cluster_ip}:80"]) == expected


# 3 ---------------------------------------------------------------------------------------------------------

def test_a_node_cut_off_goes_unknown_its_pods_move_and_keep_running_until_it_is_back():
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    victim = "node-2"
    original = {p.metadata.name for p in pods_of(cluster, "storefront-")}
    before = {p.metadata.name: p for p in pods_of(cluster, "storefront-") if p.spec.node_name == victim}
    assert before, "the scheduler spread the pods over every node"
    last_renew = cluster.get("leases", "kube-node-lease", victim).spec.renew_time
    cluster.partition(victim)
    cluster.run(600 * S)

    node = cluster.get("nodes", "", victim)
    ready = condition(node, "Ready")
    assert ready.status == "Unknown" and ready.reason == "NodeStatusUnknown"
    went_unknown = ready.last_transition_time
    assert went_unknown >= last_renew + cluster.config.node_monitor_grace_period_ms
    assert any(t.key == "node.kubernetes.io/unreachable" and t.effect == "NoExecute" for t in node.spec.taints)

    evictions = [r for r in cluster.audit.records if r.verb == "delete" and r.resource == "pods"
                 and r.name in before and r.user == "system:serviceaccount:kube-system:node-controller"]
    assert evictions and all(r.time >= went_unknown + 300 * S for r in evictions)
    nodes = {n.metadata.name: n for n in cluster.objects("nodes")}
    replacements = [p for p in pods_of(cluster, "storefront-") if p.metadata.name not in original]
    running = [p for p in replacements if p.status.phase == "Running"]
    assert len(running) == len(before)
    for p in running:
        assert p.spec.node_name != victim
        assert in_cidr(p.status.pod_ip, nodes[p.spec.node_name].spec.pod_cidr)
        assert p.status.pod_ip not in {b.status.pod_ip for b in before.values()}
    # the cut-off node never heard of the eviction: its containers still run
    assert running_containers(cluster, victim) == sorted(before)

    cluster.heal(victim)
    cluster.run(cluster.now + 120 * S)
    assert running_containers(cluster, victim) == []
    assert condition(cluster.get("nodes", "", victim), "Ready").status == "True"
    assert not [p for p in cluster.objects("pods", "default") if p.metadata.name in before]


# 4 ---------------------------------------------------------------------------------------------------------

def test_node_and_pod_ips_follow_kubernetes_allocation_order():
    """The full vectors are unit tests (tests/ipam, tests/kubelet/test_cni.py, tests/controllers/
    test_nodeipam_controller.py); here the wired cluster hands them out in the same order."""
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.run(15 * S)
    assert [n.spec.pod_cidr for n in cluster.objects("nodes")] == ["10.244.0.0/24", "10.244.1.0/24",
                                                                    "10.244.2.0/24"]
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    assert sorted(p.status.pod_ip.rsplit(".", 1)[1] for p in pods_of(cluster, "storefront-")) == ["2", "2", "2"]


# 5 ---------------------------------------------------------------------------------------------------------

def test_static_pods_run_without_api_servers_and_get_mirror_pods_once_one_is_back():
    [etcd] = manifest("nodes/static-pod-etcd.yaml")
    cluster = Cluster(ClusterConfig(nodes=1, apiservers=2, static_pods=(("node-1", (etcd,)),)))
    cluster.crash("apiserver-0")
    cluster.crash("apiserver-1")
    cluster.run(60 * S)
    assert running_containers(cluster, "node-1") == ["etcd-node-1"]
    assert cluster.objects("pods", "kube-system") == []
    cluster.restart("apiserver-1")
    cluster.run(cluster.now + 180 * S)
    [mirror] = cluster.objects("pods", "kube-system")
    assert mirror.metadata.name == "etcd-node-1"
    assert "kubernetes.io/config.mirror" in mirror.metadata.annotations
    assert mirror.status.phase == "Running" and mirror.status.pod_ip == "172.18.0.2"
    assert running_containers(cluster, "node-1") == ["etcd-node-1"]


# 6 ---------------------------------------------------------------------------------------------------------

def test_host_network_pod_in_a_baseline_namespace_is_forbidden():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.apply(manifest("refused/restricted-namespace.yaml"))
    cluster.run(10 * S)
    namespace, pod = cluster.kubectl.results
    assert namespace.response.code == 201
    assert pod.response.code == 403
    assert pod.response.body.reason == "Forbidden"
    assert pod.response.body.message.startswith(
        'pods "ledger-hostnet" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
        "(hostNetwork=true)")
    assert cluster.objects("pods", "payments") == []
