"""The data plane: a node's programmed rules by Service name, and the pod a packet to an IP reaches."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Scale
from kmodel.traffic.dataplane import DataPlane, split_host_port

S = 1000


def web_cluster(replicas: int = 2, nodes: int = 2) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=nodes))
    cluster.run(15 * S)
    cluster.submit(Apply(deployment_manifest("web", replicas, 0, False)))
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 30 * S)
    return cluster


def web_pods(cluster: Cluster) -> list:
    return [p for p in cluster.objects("pods", "default") if p.metadata.name.startswith("web-")]


def dataplane(cluster: Cluster) -> DataPlane:
    return cluster.loop.components["traffic/node-1"].dataplane


def test_split_host_port():
    assert split_host_port("10.244.1.3:80") == ("10.244.1.3", 80)
    assert split_host_port("[fd00::3]:8080") == ("fd00::3", 8080)
    assert split_host_port("10.96.0.10:53/UDP") == ("10.96.0.10", 53)


def test_the_cluster_wiring_hands_the_traffic_client_one_dataplane_over_the_loops_components():
    cluster = web_cluster()
    plane = dataplane(cluster)
    assert isinstance(plane, DataPlane)
    assert plane.machines is cluster.loop.components


def test_service_rules_are_the_nodes_programmed_rules_of_that_service_by_name():
    cluster = web_cluster()
    service = cluster.get("services", "default", "web")
    ips = sorted(p.status.pod_ip for p in web_pods(cluster))
    for node in ("node-1", "node-2"):
        rules = dataplane(cluster).service_rules(node, "default", "web")
        assert rules == {f"{service.spec.cluster_ip}:80": [f"{ip}:80" for ip in ips]}
    assert dataplane(cluster).service_rules("node-1", "default", "api") == {}
    assert dataplane(cluster).service_rules("node-9", "default", "web") == {}


def test_rules_are_the_kernels_they_outlive_a_kube_proxy_crash_and_go_stale_until_it_is_back():
    cluster = web_cluster(replicas=1)
    before = dataplane(cluster).service_rules("node-1", "default", "web")
    cluster.crash("proxy/node-1")
    cluster.submit(Scale("deployments", "default", "web", 0))
    cluster.run(cluster.now + 30 * S)
    assert not web_pods(cluster)
    assert dataplane(cluster).service_rules("node-1", "default", "web") == before  # stale, as iptables is
    cluster.restart("proxy/node-1")
    cluster.run(cluster.now + 5 * S)
    [backends] = dataplane(cluster).service_rules("node-1", "default", "web").values()
    assert backends == []


def test_a_packet_reaches_the_running_pod_holding_the_ip_on_any_node_and_nothing_once_it_is_gone():
    cluster = web_cluster()
    plane = dataplane(cluster)
    for pod in web_pods(cluster):
        reached = plane.pod_at(pod.status.pod_ip)
        assert (reached.node, reached.namespace, reached.name, reached.uid) == (
            pod.spec.node_name, "default", pod.metadata.name, pod.metadata.uid)
    assert plane.pod_at("10.244.200.200") is None
    gone = web_pods(cluster)[0]
    cluster.submit(Delete("pods", "default", gone.metadata.name))
    cluster.run(cluster.now + 30 * S)
    assert plane.pod_at(gone.status.pod_ip) is None


def test_a_joining_nodes_pods_are_reached_and_a_removed_nodes_are_not():
    cluster = web_cluster(replicas=0, nodes=1)
    node = cluster.add_node()
    cluster.run(cluster.now + 20 * S)
    cluster.submit(Scale("deployments", "default", "web", 4))
    cluster.run(cluster.now + 30 * S)
    on_new = [p for p in web_pods(cluster) if p.spec.node_name == node]
    assert on_new
    assert dataplane(cluster).pod_at(on_new[0].status.pod_ip).node == node
    cluster.remove_node(node)
    assert dataplane(cluster).pod_at(on_new[0].status.pod_ip) is None
    assert dataplane(cluster).service_rules(node, "default", "web") == {}


def test_a_packet_to_a_nodes_ip_reaches_the_host_network_pod_publishing_its_port():
    from kmodel.checker.workload_actions import pod_shape_manifest
    from kmodel.cluster.config import node_ip

    cluster = web_cluster(replicas=0, nodes=1)
    dp = dataplane(cluster)
    ip = node_ip("node-1")
    assert dp.pod_at(ip, 80) is None  # nothing on the host network yet
    cluster.submit(Apply(pod_shape_manifest("debug-1", "node-1", (4, 0, 0, 0))))  # hostNetwork, port 80
    cluster.run_for(10_000)
    reached = dp.pod_at(ip, 80)
    assert reached is not None and reached.name == "debug-1" and reached.node == "node-1" and reached.ip == ip
    assert dp.pod_at(ip, 9090) is None  # no hostNetwork pod publishes that port
    assert dp.pod_at(ip) is not None  # any port
    cluster.submit(Delete("pods", "default", "debug-1"))
    cluster.run_for(40_000)
    assert dp.pod_at(ip, 80) is None
