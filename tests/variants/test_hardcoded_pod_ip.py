"""Variant hardcoded-pod-ip: the traffic client keeps the first pod address it got through a Service."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply
from kmodel.traffic.client import VIA_POD_IP, VIA_SERVICE, TrafficClient
from kmodel.traffic.dataplane import Reached
from kmodel.variants import HARDCODED_POD_IP, variant
from kmodel.invariants.registry import REGISTRY

S = 1000


class Plane:
    def __init__(self, backends: list[str], pods: dict) -> None:
        self.backends, self.pods = backends, pods

    def service_rules(self, node, namespace, name):
        return {"10.96.0.50:80": list(self.backends)}

    def pod_at(self, ip, port=0):
        return self.pods.get(ip)


def test_the_variant_is_registered_where_the_switch_is():
    v = variant(HARDCODED_POD_IP)
    assert v.where == "kmodel/traffic/client.py" and v.expect == ("service-reachability",)


def test_the_switch_keeps_the_first_address_and_the_default_follows_the_service():
    a = Reached("node-2", "default", "web-a", "ua", "10.244.1.2")
    b = Reached("node-2", "default", "web-b", "ub", "10.244.1.3")
    for hardcoded in (False, True):
        c = TrafficClient("node-1", ("default/web",), hardcoded_pod_ip=hardcoded)
        plane = Plane(["10.244.1.2:80"], {a.ip: a})
        c.attach_dataplane(plane)  # type: ignore[arg-type]
        assert c.request(1, "default/web").reached == a
        plane.backends, plane.pods = ["10.244.1.3:80"], {b.ip: b}  # web-a replaced by web-b
        sent = c.request(2, "default/web")
        if hardcoded:
            assert (sent.via, sent.destination, sent.reached) == (VIA_POD_IP, "10.244.1.2:80", None)
        else:
            assert (sent.via, sent.destination, sent.reached) == (VIA_SERVICE, "10.244.1.3:80", b)


def rolled_over(variant_name: str) -> Cluster:
    """web (1 replica) behind its Service; the client talks to it; then a rolling update replaces the pod."""
    cluster = Cluster(ClusterConfig(nodes=2, variant=variant_name))
    cluster.run(15 * S)
    cluster.submit(Apply(deployment_manifest("web", 1, 0, False)))
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 20 * S)
    assert cluster.loop.components["traffic/node-1"].last["default/web"].ok
    cluster.submit(Apply(deployment_manifest("web", 1, 500, False)))  # a new template: a new pod, a new IP
    cluster.run(cluster.now + 60 * S)
    return cluster


def test_service_reachability_catches_the_variant_once_the_remembered_pod_is_gone_and_not_the_default():
    check = REGISTRY["service-reachability"].check
    assert list(check(rolled_over("default"), {})) == []
    cluster = rolled_over(HARDCODED_POD_IP)
    [message] = list(check(cluster, {}))
    assert "via pod-ip" in message and "no running pod answers" in message
    client = cluster.loop.components["traffic/node-1"]
    assert client.last["default/web"].via == VIA_POD_IP and not client.last["default/web"].ok
