"""The plain-pod fast path of a scheduling cycle answers what the plugins answer (kmodel.scheduler.fastpath):
the same feasible nodes, the same statuses for the rejected ones, the same nodes processed, the same host."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.scheduler import NodeInfo
from kmodel.scheduler.fastpath import is_plain
from kmodel.scheduler.framework import pod_requests
from kmodel.scheduler.schedule_one import (
    choose_host, find_nodes_that_fit, find_nodes_that_fit_reference, prioritize_nodes, select_host,
)

from .helpers import allocatable, node, pod, port_pod, resource_pod, taint, toleration

TAINTS = [(), (taint("a"),), (taint("b", effect="PreferNoSchedule"),), (taint("c", effect="NoExecute"),)]


@st.composite
def node_infos(draw) -> list[NodeInfo]:
    """A cluster of 1 to 40 nodes: varied allocatable, a few cordoned or tainted, pods already on them."""
    infos = []
    for i in range(draw(st.integers(1, 40))):
        n = node(f"n{i:02d}", allocatable(draw(st.sampled_from([0, 100, 1000, 4000])),
                                          draw(st.sampled_from([0, 1000, 10**6, 10**9])),
                                          draw(st.sampled_from([0, 1, 3, 110])), ephemeral_storage=10**6),
                 taints=draw(st.sampled_from(TAINTS)) if draw(st.integers(0, 4)) == 0 else (),
                 unschedulable=draw(st.integers(0, 9)) == 0)
        on_node = [resource_pod({"cpu": draw(st.sampled_from([0, 50, 500])), "memory": draw(st.sampled_from(
            [0, 100, 10**5]))}, name=f"q{i}-{j}") for j in range(draw(st.integers(0, 3)))]
        infos.append(NodeInfo(n, on_node))
    return infos


@st.composite
def plain_pods(draw):
    usages = [{"cpu": draw(st.sampled_from([0, 10, 300, 5000])), "memory": draw(st.sampled_from([0, 16, 10**5])),
               **({"ephemeral-storage": 10**7} if draw(st.integers(0, 9)) == 0 else {})}
              for _ in range(draw(st.integers(0, 2)))]
    p = resource_pod(*usages)
    if draw(st.booleans()):  # what DefaultTolerationSeconds adds, and sometimes one for a taint drawn above
        tolerations = [toleration("node.kubernetes.io/not-ready", "Exists", effect="NoExecute")]
        tolerations += draw(st.sampled_from([[], [toleration("b")], [toleration("a", "Exists")]]))
        p = pod(containers=p.spec.containers, tolerations=tolerations)
    return p


def outcome(found):
    feasible, diagnosis, processed = found
    return ([i.name for i in feasible], dict(diagnosis.node_to_status), sorted(diagnosis.unschedulable_plugins),
            processed)


@settings(max_examples=300, deadline=None)
@given(node_infos(), plain_pods(), st.integers(0, 60), st.sampled_from([0, 5, 50]))
def test_the_fast_filter_finds_what_the_plugins_find(infos, p, start, percentage):
    assert is_plain(p, pod_requests(p))
    start %= len(infos)
    assert outcome(find_nodes_that_fit(p, infos, start, percentage)) == \
        outcome(find_nodes_that_fit_reference(p, infos, start, percentage))


@settings(max_examples=300, deadline=None)
@given(node_infos(), plain_pods())
def test_the_fast_score_picks_the_host_the_plugins_pick(infos, p):
    feasible = find_nodes_that_fit_reference(p, infos)[0]
    if len(feasible) > 1:
        assert choose_host(p, feasible) == select_host(prioritize_nodes(p, feasible))


def test_pods_that_need_a_plugin_are_not_plain():
    assert not is_plain(pod(node_name="n1"), pod_requests(pod()))
    assert not is_plain(pod(node_selector={"zone": "a"}), pod_requests(pod()))
    assert not is_plain(port_pod("TCP/0.0.0.0/8080"), pod_requests(pod()))
    extended = resource_pod({"example.com/gpu": 1})
    assert not is_plain(extended, pod_requests(extended))
    assert is_plain(resource_pod({"cpu": 10}), pod_requests(resource_pod({"cpu": 10})))


def test_plain_room_follows_every_change_of_the_node_info():
    def room_from_scratch(info):
        n = info.node
        if n is None or n.spec.unschedulable or n.spec.taints:
            return None
        a, u = info.allocatable, info.requested
        return (a.allowed_pod_number - len(info.pods), a.milli_cpu - u.milli_cpu, a.memory - u.memory,
                a.ephemeral_storage - u.ephemeral_storage)

    info = NodeInfo(node("n", allocatable(1000, 10**6, 3)))
    steps = [lambda: info.add_pod(resource_pod({"cpu": 100, "memory": 10}, name="a")),
             lambda: info.add_pod(resource_pod({"cpu": 300}, name="b")),
             lambda: info.add_pod(resource_pod({"cpu": 50}, name="a")),  # a again: replaced
             lambda: info.remove_pod(resource_pod(name="b")),
             lambda: info.set_node(node("n", allocatable(2000, 10**6, 3), taints=(taint("x"),))),
             lambda: info.set_node(node("n", allocatable(2000, 10**6, 3))),
             lambda: info.clear_node()]
    assert info.plain_room == (3, 1000, 10**6, 0)
    for step in steps:
        step()
        assert info.plain_room == room_from_scratch(info)
    assert info.plain_room is None
