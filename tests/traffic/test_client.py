"""The traffic client: requests by Service name through its node's rules, on a timer, never a message."""

from __future__ import annotations

from kmodel.checker.actions import APPS, deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.config import DEFAULT_COMPONENTS
from kmodel.cluster.kubectl import Apply
from kmodel.component import Out, SetTimer
from kmodel.traffic.client import (
    NO_ANSWER, NO_ENDPOINTS, NO_SUCH_SERVICE, PERIOD_MS, REQUEST_TIMER, TARGETS, VIA_POD_IP, VIA_SERVICE,
    TrafficClient, make,
)
from kmodel.traffic.dataplane import Reached

S = 1000


class FakePlane:
    """A data plane set by hand: node-1's rules per Service, and which IPs answer."""

    def __init__(self) -> None:
        self.rules: dict[str, dict[str, list[str]]] = {}
        self.pods: dict[str, Reached] = {}

    def service_rules(self, node: str, namespace: str, name: str) -> dict[str, list[str]]:
        return dict(self.rules.get(f"{namespace}/{name}", {})) if node == "node-1" else {}

    def pod_at(self, ip: str, port: int = 0):
        return self.pods.get(ip)


def pod(name: str, ip: str) -> Reached:
    return Reached("node-2", "default", name, f"uid-{name}", ip)


def client(hardcoded: bool = False) -> tuple[TrafficClient, FakePlane]:
    c = TrafficClient("node-1", ("default/web",), hardcoded_pod_ip=hardcoded)
    plane = FakePlane()
    c.attach_dataplane(plane)  # type: ignore[arg-type]
    return c, plane


def test_the_targets_are_the_checkers_apps_and_the_client_is_in_the_default_cluster():
    assert TARGETS == tuple(f"default/{app}" for app in APPS)
    assert "traffic" in DEFAULT_COMPONENTS
    cluster = Cluster(ClusterConfig(nodes=2))
    assert "traffic/node-1" in cluster.loop.components


def test_start_and_every_tick_only_set_the_timer_again_no_message():
    c, plane = client()
    out = Out()
    c.start(0, out)
    assert out.effects == [SetTimer(REQUEST_TIMER, PERIOD_MS)]
    out = Out()
    c.on_timer(PERIOD_MS, REQUEST_TIMER, out)
    assert out.effects == [SetTimer(REQUEST_TIMER, PERIOD_MS)]
    assert c.sent == 1 and c.last["default/web"].error == NO_SUCH_SERVICE


def test_a_request_follows_the_rules_backends_in_turn_and_reports_what_it_reached():
    c, plane = client()
    plane.rules["default/web"] = {"10.96.0.50:80": []}
    assert c.request(1, "default/web").error == NO_ENDPOINTS
    a, b = pod("a", "10.244.1.2"), pod("b", "10.244.1.3")
    plane.rules["default/web"] = {"10.96.0.50:80": ["10.244.1.2:80", "10.244.1.3:80"]}
    plane.pods = {a.ip: a, b.ip: b}
    route = c.route("default/web")
    assert route.via == VIA_SERVICE and route.destinations == ("10.244.1.2:80", "10.244.1.3:80")
    reached = {c.request(t, "default/web").reached for t in (2, 3)}
    assert reached == {a, b}
    # the rules change (a replaced by d): the next requests follow them; nothing is remembered
    d = pod("d", "10.244.1.4")
    plane.pods = {b.ip: b, d.ip: d}
    plane.rules["default/web"] = {"10.96.0.50:80": ["10.244.1.3:80", "10.244.1.4:80"]}
    assert {c.request(t, "default/web").reached for t in (4, 5)} == {b, d}
    assert c.remembered == {}


def test_a_rule_whose_backend_is_gone_is_a_request_nobody_answers():
    c, plane = client()
    plane.rules["default/web"] = {"10.96.0.50:80": ["10.244.1.2:80"]}
    sent = c.request(1, "default/web")
    assert sent.destination == "10.244.1.2:80" and sent.reached is None and sent.error == NO_ANSWER
    assert c.failed == 1


def test_the_crash_forgets_what_the_process_remembered():
    c, plane = client(hardcoded=True)
    a = pod("a", "10.244.1.2")
    plane.rules["default/web"] = {"10.96.0.50:80": ["10.244.1.2:80"]}
    plane.pods = {a.ip: a}
    c.request(1, "default/web")
    assert c.route("default/web").via == VIA_POD_IP
    c.crash()
    assert c.route("default/web").via == VIA_SERVICE


def test_in_a_real_cluster_the_client_reaches_the_service_and_is_never_on_the_communication_graph():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(15 * S)
    cluster.submit(Apply(deployment_manifest("web", 2, 0, False)))
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 30 * S)
    c = cluster.loop.components["traffic/node-1"]
    web = {p.metadata.uid for p in cluster.objects("pods", "default") if p.metadata.name.startswith("web-")}
    assert c.last["default/web"].reached.uid in web
    assert c.last["default/api"].error == NO_SUCH_SERVICE
    assert c.sent >= 2 * (cluster.now // PERIOD_MS)  # two targets, one request each per tick
    assert not [pair for pair in cluster.network.communication_counts() if "traffic/node-1" in pair]
    assert not cluster.loop.components["traffic/node-1"].has_work()


def test_make_reads_the_variant():
    from kmodel.cluster.components import ClusterContext

    [default] = make(ClusterContext(ClusterConfig(nodes=2), ("apiserver-0",)))
    [variant] = make(ClusterContext(ClusterConfig(nodes=2, variant="hardcoded-pod-ip"), ("apiserver-0",)))
    assert default.name == "traffic/node-1" and not default.hardcoded_pod_ip
    assert variant.hardcoded_pod_ip
