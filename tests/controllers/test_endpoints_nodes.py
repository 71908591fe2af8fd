"""Endpoints subsets, node health and taints, taint-based eviction timing (endpoints_controller_test.go,
node_lifecycle_controller_test.go TestMonitorNodeHealth*, taint_eviction_test.go TestGetMinTolerationTime)."""

import attrs
import pytest

from kmodel.controllers.endpoints_logic import (
    desired_endpoints, endpoint_subsets, endpoints_need_update, repack_subsets,
)
from kmodel.controllers.node_lifecycle_logic import (
    NOT_READY_TAINT, UNREACHABLE_TAINT, no_execute_taint_change, no_schedule_taint_change, swap_taints,
    try_update_node_health,
)
from kmodel.controllers.taint_eviction_logic import (
    FOREVER, eviction_due, eviction_time_ms, get_matching_tolerations, get_min_toleration_time_ms,
    process_pod_on_node,
)
from kmodel.objects import (
    ContainerPort, EndpointAddress, EndpointPort, EndpointSubset, FrozenDict, Node, NodeCondition, NodeSpec,
    NodeStatus, ObjectMeta, Service, ServicePort, ServiceSpec, Taint, Toleration,
)

from .helpers import pod


def svc(ports=(ServicePort(name="http", port=80, target_port=8080, protocol="TCP"),), publish=False,
        cluster_ip="10.0.0.10"):
    return Service(metadata=ObjectMeta(name="web", namespace="default", labels=FrozenDict({"app": "web"})),
                   spec=ServiceSpec(ports=tuple(ports), selector=FrozenDict({"app": "web"}), cluster_ip=cluster_ip,
                                    publish_not_ready_addresses=publish))


def test_ready_and_not_ready_addresses_sorted():
    pods = [pod("p3", ip="10.1.0.9", ready=True, node="n1"), pod("p1", ip="10.1.0.10", ready=True, node="n1"),
            pod("p2", ip="10.1.0.2", ready=False, node="n2"),
            pod("noip", ready=True), pod("done", ip="10.1.0.3", phase="Succeeded", ready=False),
            pod("dying", ip="10.1.0.4", ready=True, deleted=5)]
    (s,) = endpoint_subsets(svc(), pods)
    assert [a.ip for a in s.addresses] == ["10.1.0.10", "10.1.0.9"]   # bytewise, as upstream
    assert [a.ip for a in s.not_ready_addresses] == ["10.1.0.2"]
    assert s.ports == (EndpointPort(name="http", port=8080, protocol="TCP"),)
    a = s.addresses[0]
    assert a.node_name == "n1" and a.target_ref.kind == "Pod" and a.target_ref.name == "p1"


def test_publish_not_ready_and_terminating():
    pods = [pod("p2", ip="10.1.0.2", ready=False), pod("dying", ip="10.1.0.4", ready=True, deleted=5)]
    (s,) = endpoint_subsets(svc(publish=True), pods)
    assert [a.ip for a in s.addresses] == ["10.1.0.2", "10.1.0.4"] and s.not_ready_addresses == ()


def test_named_target_port_splits_subsets():
    ports = (ServicePort(name="http", port=80, target_port="web", protocol="TCP"),)
    pods = [pod("a", ip="10.1.0.1", ready=True, ports=[ContainerPort(name="web", container_port=8080, protocol="TCP")]),
            pod("b", ip="10.1.0.2", ready=True, ports=[ContainerPort(name="web", container_port=9090, protocol="TCP")]),
            pod("c", ip="10.1.0.3", ready=True, ports=[ContainerPort(name="web", container_port=53, protocol="UDP")])]
    subsets = endpoint_subsets(svc(ports), pods)
    assert [(s.ports[0].port, [a.ip for a in s.addresses]) for s in subsets] == [
        (8080, ["10.1.0.1"]), (9090, ["10.1.0.2"])]


def test_repack_not_ready_trumps_ready_and_headless():
    addr = EndpointAddress(ip="1.1.1.1")
    port = EndpointPort(port=80, protocol="TCP")
    out = repack_subsets([EndpointSubset(addresses=(addr,), ports=(port,)),
                          EndpointSubset(not_ready_addresses=(addr,), ports=(port,))])
    assert out == (EndpointSubset(not_ready_addresses=(addr,), ports=(port,)),)
    headless = svc(ports=(), cluster_ip="None")
    (s,) = endpoint_subsets(headless, [pod("a", ip="10.1.0.1", ready=True)])
    assert s.ports == () and [a.ip for a in s.addresses] == ["10.1.0.1"]
    assert endpoint_subsets(svc(ports=()), [pod("a", ip="10.1.0.1", ready=True)]) == ()


def test_endpoints_need_update():
    s = svc()
    pods = [pod("a", ip="10.1.0.1", ready=True)]
    ep = desired_endpoints(s, pods)
    assert endpoints_need_update(None, s, ep.subsets)
    assert endpoints_need_update(ep, s, ep.subsets)       # not yet created (no resourceVersion)
    stored = attrs.evolve(ep, metadata=attrs.evolve(ep.metadata, resource_version="7"))
    assert not endpoints_need_update(stored, s, endpoint_subsets(s, pods))
    assert endpoints_need_update(stored, s, endpoint_subsets(s, pods + [pod("b", ip="10.1.0.2", ready=True)]))


# --- node lifecycle ---------------------------------------------------------------------------------------

def node(ready_status="True", heartbeat=0, transition=0, taints=(), created=0, conditions=None):
    conds = conditions if conditions is not None else (
        NodeCondition(type="Ready", status=ready_status, last_heartbeat_time=heartbeat,
                      last_transition_time=transition, reason="KubeletReady"),
        NodeCondition(type="MemoryPressure", status="False", last_heartbeat_time=heartbeat,
                      last_transition_time=transition),
    )
    return Node(metadata=ObjectMeta(name="n1", creation_timestamp=created), spec=NodeSpec(taints=tuple(taints)),
                status=NodeStatus(conditions=tuple(conds)))


def test_node_goes_unknown_after_grace_period():
    n = node()
    h = try_update_node_health(n, None, None, now_ms=0)
    assert not h.status_changed and h.health.probe_timestamp == 0
    # Nothing new is heard; at 40 s exactly nothing happens (strictly after), at 40.001 s it goes Unknown.
    h2 = try_update_node_health(n, None, h.health, now_ms=40_000)
    assert not h2.status_changed
    h3 = try_update_node_health(n, None, h2.health, now_ms=40_001)
    assert h3.status_changed
    ready = next(c for c in h3.node.status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason, ready.message, ready.last_transition_time) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", 40_001)
    types = {c.type: c for c in h3.node.status.conditions}
    assert types["MemoryPressure"].status == "Unknown"
    assert types["DiskPressure"].reason == "NodeStatusNeverUpdated"
    assert types["PIDPressure"].message == "Kubelet never posted node status."
    assert h3.observed_ready.status == "True"    # taints follow the observed one: next pass
    assert no_execute_taint_change(h3.node, h3.observed_ready.status).add == ()
    h4 = try_update_node_health(h3.node, None, h3.health, now_ms=45_001)
    assert h4.observed_ready.status == "Unknown" and not h4.status_changed
    change = no_execute_taint_change(h4.node, h4.observed_ready.status)
    assert change.add == (UNREACHABLE_TAINT,)
    tainted = swap_taints(h4.node, change, 45_001)
    assert tainted.spec.taints == (attrs.evolve(UNREACHABLE_TAINT, time_added=45_001),)
    ns = no_schedule_taint_change(tainted)
    assert {t.key for t in ns.add} == {"node.kubernetes.io/unreachable"}


def test_heartbeats_and_lease_keep_node_healthy():
    h = try_update_node_health(node(heartbeat=0), None, None, now_ms=0)
    h = try_update_node_health(node(heartbeat=30_000), None, h.health, now_ms=35_000)
    assert h.health.probe_timestamp == 35_000
    h2 = try_update_node_health(node(heartbeat=30_000), 70_000, h.health, now_ms=74_000)
    assert h2.health.probe_timestamp == 74_000 and not h2.status_changed
    h3 = try_update_node_health(node(heartbeat=30_000), 70_000, h2.health, now_ms=114_001)
    assert h3.status_changed


def test_startup_grace_for_node_that_never_posted():
    n = node(conditions=(), created=1_000)
    h = try_update_node_health(n, None, None, now_ms=1_000)
    assert h.grace_period_ms == 60_000
    assert not try_update_node_health(n, None, h.health, now_ms=61_000).status_changed
    h2 = try_update_node_health(n, None, h.health, now_ms=61_001)
    assert h2.status_changed
    ready = next(c for c in h2.node.status.conditions if c.type == "Ready")
    assert ready.reason == "NodeStatusNeverUpdated"


def test_taint_swaps():
    n = node(taints=(NOT_READY_TAINT,))
    c = no_execute_taint_change(n, "Unknown")
    assert c.add == (UNREACHABLE_TAINT,) and c.remove == (NOT_READY_TAINT,)
    assert swap_taints(n, c, 9).spec.taints == (attrs.evolve(UNREACHABLE_TAINT, time_added=9),)
    c2 = no_execute_taint_change(node(taints=(UNREACHABLE_TAINT,)), "True")
    assert c2.remove == (UNREACHABLE_TAINT,) and c2.add == ()
    assert not no_execute_taint_change(node(taints=(UNREACHABLE_TAINT,)), "Unknown")
    ns = no_schedule_taint_change(node(ready_status="False",
                                       taints=(Taint(key="node.kubernetes.io/memory-pressure", effect="NoSchedule"),
                                               Taint(key="custom", effect="NoSchedule"))))
    assert [t.key for t in ns.add] == ["node.kubernetes.io/not-ready"]
    assert [t.key for t in ns.remove] == ["node.kubernetes.io/memory-pressure"]


# --- taint eviction ---------------------------------------------------------------------------------------

def tol(key="", op="Exists", effect="NoExecute", seconds=None, value=""):
    return Toleration(key=key, operator=op, effect=effect, toleration_seconds=seconds, value=value)


@pytest.mark.parametrize("tolerations, expected", [
    ([], 0),
    ([tol(seconds=None)], FOREVER),
    ([tol(seconds=-1)], 0),
    ([tol(seconds=0)], 0),
    ([tol(seconds=10), tol(seconds=5), tol(seconds=None)], 5_000),
    ([tol(seconds=None), tol(seconds=300)], 300_000),
])
def test_get_min_toleration_time(tolerations, expected):
    assert get_min_toleration_time_ms(tolerations) == expected


def test_default_tolerations_evict_after_five_minutes():
    defaults = [tol("node.kubernetes.io/not-ready", seconds=300), tol("node.kubernetes.io/unreachable", seconds=300)]
    taints = [attrs.evolve(UNREACHABLE_TAINT, time_added=45_000)]
    s = process_pod_on_node(None, defaults, taints, now_ms=45_500)
    assert s.fire_at == 345_500
    assert not eviction_due(s, 345_499) and eviction_due(s, 345_500)
    # a later update does not push the eviction back
    assert process_pod_on_node(s, defaults, taints, now_ms=100_000) == s
    # taints gone: cancelled
    assert process_pod_on_node(s, defaults, [], now_ms=100_000) is None
    assert eviction_time_ms([], taints, 7) == 7                         # untolerated: evicted at once
    assert eviction_time_ms([tol(seconds=None)], taints, 7) is None     # tolerates forever
    assert eviction_time_ms(defaults, [Taint(key="x", effect="NoSchedule")], 7) is None


def test_matching_uses_first_toleration_per_taint():
    taints = [Taint(key="a", effect="NoExecute", value="1")]
    ok, used = get_matching_tolerations(taints, [tol("a", op="Equal", value="2", seconds=1),
                                                 tol("a", seconds=50), tol("", seconds=2)])
    assert ok and [t.toleration_seconds for t in used] == [50]
    ok, _ = get_matching_tolerations(taints + [Taint(key="b", effect="NoExecute")], [tol("a", seconds=50)])
    assert not ok
