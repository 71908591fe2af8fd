"""Filter plugins against upstream's test tables (fit_test.go, node_ports_test.go, node_unschedulable_test.go,
taint_toleration_test.go, node_affinity_test.go)."""

from __future__ import annotations

import pytest

from kmodel.scheduler.framework import Code, HostPortInfo, NodeInfo, Status
from kmodel.scheduler.plugins import nodeaffinity, nodename, nodeports, noderesources, nodeunschedulable, tainttoleration

from .helpers import allocatable, node, pod, port_pod, resource_pod, taint, toleration

CPU = "Insufficient cpu"
MEM = "Insufficient memory"
EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"


def fit_status(*reasons: str) -> Status | None:
    return Status(Code.UNSCHEDULABLE, *reasons, plugin=noderesources.NAME) if reasons else None


# -- NodeResourcesFit: TestEnoughRequests (node allocatable 10m cpu, 20 memory, 32 pods, 5 example.com/aaa) -------

ENOUGH = [
    ("no resources requested always fits", pod(), [{"cpu": 10, "memory": 20}], ()),
    ("too many resources fails", resource_pod({"cpu": 1, "memory": 1}), [{"cpu": 10, "memory": 20}], (CPU, MEM)),
    ("too many resources fails due to init container cpu",
     resource_pod({"cpu": 1, "memory": 1}, init=({"cpu": 3, "memory": 1},)), [{"cpu": 8, "memory": 19}], (CPU,)),
    ("too many resources fails due to highest init container cpu",
     resource_pod({"cpu": 1, "memory": 1}, init=({"cpu": 3, "memory": 1}, {"cpu": 2, "memory": 1})),
     [{"cpu": 8, "memory": 19}], (CPU,)),
    ("too many resources fails due to init container memory",
     resource_pod({"cpu": 1, "memory": 1}, init=({"cpu": 1, "memory": 3},)), [{"cpu": 9, "memory": 19}], (MEM,)),
    ("init container fits because it's the max, not sum, of containers and init containers",
     resource_pod({"cpu": 1, "memory": 1}, init=({"cpu": 1, "memory": 1},)), [{"cpu": 9, "memory": 19}], ()),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     resource_pod({"cpu": 1, "memory": 1}, init=({"cpu": 1, "memory": 1}, {"cpu": 1, "memory": 1})),
     [{"cpu": 9, "memory": 19}], ()),
    ("both resources fit", resource_pod({"cpu": 1, "memory": 1}), [{"cpu": 5, "memory": 5}], ()),
    ("one resource memory fits", resource_pod({"cpu": 2, "memory": 1}), [{"cpu": 9, "memory": 5}], (CPU,)),
    ("one resource cpu fits", resource_pod({"cpu": 1, "memory": 2}), [{"cpu": 5, "memory": 19}], (MEM,)),
    ("equal edge case", resource_pod({"cpu": 5, "memory": 1}), [{"cpu": 5, "memory": 19}], ()),
    ("equal edge case for init container",
     resource_pod({"cpu": 4, "memory": 1}, init=({"cpu": 5, "memory": 1},)), [{"cpu": 5, "memory": 19}], ()),
    ("extended resource fits", resource_pod({EXT_A: 1}), [{}], ()),
    ("extended resource capacity enforced", resource_pod({"cpu": 1, "memory": 1, EXT_A: 10}),
     [{"cpu": 0, "memory": 0, EXT_A: 0}], (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced", resource_pod({"cpu": 1, "memory": 1, EXT_A: 1}),
     [{"cpu": 0, "memory": 0, EXT_A: 5}], (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced for multiple containers",
     resource_pod({"cpu": 1, "memory": 1, EXT_A: 3}, {"cpu": 1, "memory": 1, EXT_A: 3}),
     [{"cpu": 0, "memory": 0, EXT_A: 2}], (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable admits multiple init containers",
     resource_pod(init=({"cpu": 1, "memory": 1, EXT_A: 3}, {"cpu": 1, "memory": 1, EXT_A: 3})),
     [{"cpu": 0, "memory": 0, EXT_A: 2}], ()),
    ("extended resource allocatable enforced for unknown resource",
     resource_pod({"cpu": 1, "memory": 1, EXT_B: 1}), [{"cpu": 0, "memory": 0}], (f"Insufficient {EXT_B}",)),
]


@pytest.mark.parametrize("name,p,existing,reasons", ENOUGH, ids=[c[0] for c in ENOUGH])
def test_enough_requests(name, p, existing, reasons):
    info = NodeInfo(node(allocatable=allocatable(10, 20, 32, **{EXT_A: 5})),
                    [resource_pod(u, name=f"e{i}") for i, u in enumerate(existing)])
    assert noderesources.filter(p, info) == fit_status(*reasons)


def test_insufficient_resource_numbers():
    """wantInsufficientResources of "too many resources fails": requested, used, capacity."""
    info = NodeInfo(node(allocatable=allocatable(10, 20, 32)), [resource_pod({"cpu": 10, "memory": 20})])
    got = noderesources.fits(resource_pod({"cpu": 1, "memory": 1}), info)
    assert [(r.resource_name, r.reason, r.requested, r.used, r.capacity) for r in got] == [
        ("cpu", CPU, 1, 10, 10), ("memory", MEM, 1, 20, 20)]


NOT_ENOUGH = [
    ("even without specified resources predicate fails when there's no space for additional pod",
     pod(), {"cpu": 10, "memory": 20}),
    ("even if both resources fit predicate fails when there's no space for additional pod",
     resource_pod({"cpu": 1, "memory": 1}), {"cpu": 5, "memory": 5}),
    ("even for equal edge case predicate fails when there's no space for additional pod",
     resource_pod({"cpu": 5, "memory": 1}), {"cpu": 5, "memory": 19}),
    ("even for equal edge case predicate fails when there's no space for additional pod due to init container",
     resource_pod({"cpu": 5, "memory": 1}, init=({"cpu": 5, "memory": 1},)), {"cpu": 5, "memory": 19}),
]


@pytest.mark.parametrize("name,p,existing", NOT_ENOUGH, ids=[c[0] for c in NOT_ENOUGH])
def test_not_enough_requests(name, p, existing):
    info = NodeInfo(node(allocatable=allocatable(10, 20, 1)), [resource_pod(existing, name="e")])
    assert noderesources.filter(p, info) == fit_status("Too many pods")


def test_storage_requests():
    info = NodeInfo(node(allocatable=allocatable(10, 20, 32, **{"ephemeral-storage": 20})),
                    [resource_pod({"cpu": 2, "memory": 2}, name="e")])
    assert noderesources.filter(resource_pod({"ephemeral-storage": 25}), info) == fit_status(
        "Insufficient ephemeral-storage")
    assert noderesources.filter(resource_pod({"ephemeral-storage": 10}), info) is None


def test_node_without_allocatable_pods_admits_none():
    """AllowedPodNumber comes only from allocatable: a node that reports no "pods" fits no pod."""
    assert noderesources.filter(pod(), NodeInfo(node(allocatable={}))) == fit_status("Too many pods")


def test_too_many_pods_at_default_max_pods():
    info = NodeInfo(node(allocatable=allocatable(100_000, 10**12, 110)), [pod(name=f"p{i}") for i in range(110)])
    assert noderesources.filter(pod(name="new"), info) == fit_status("Too many pods")
    info.remove_pod(pod(name="p0"))
    assert noderesources.filter(pod(name="new"), info) is None


# -- NodePorts: TestNodePorts ---------------------------------------------------------------------------------

PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"
PORTS = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], True),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], True),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("first tcp port conflict", ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], False),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
     ["TCP/127.0.0.1/8001"], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", ["UDP/127.0.0.1/8001"],
     ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], False),
    # TestFits
    ("multiple non-conflicting ports", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90",
     "TCP/127.0.1.1/100"], ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"], True),
    ("multiple ports, some conflicting", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90",
     "TCP/127.0.1.1/100"], ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"], False),
    # sanitize: empty hostIP is 0.0.0.0 and empty protocol TCP
    ("empty ip and protocol mean 0.0.0.0/TCP", ["/127.0.0.1/8001"], ["//8001"], False),
]


@pytest.mark.parametrize("name,want,have,ok", PORTS, ids=[c[0] for c in PORTS])
def test_node_ports(name, want, have, ok):
    info = NodeInfo(node(), [port_pod(*have, name="m1")])
    status = nodeports.filter(port_pod(*want, name="p"), info)
    assert status == (None if ok else Status(Code.UNSCHEDULABLE, PORTS_REASON, plugin=nodeports.NAME))


def test_host_port_info_add_remove():
    h = HostPortInfo()
    h.add("", "", 80)
    h.add("127.0.0.1", "UDP", 53)
    h.add("127.0.0.1", "UDP", 0)  # ignored
    assert h.items() == [("0.0.0.0", "TCP", 80), ("127.0.0.1", "UDP", 53)]
    assert h.check_conflict("10.0.0.1", "TCP", 80)
    assert not h.check_conflict("10.0.0.1", "UDP", 80)
    h.remove("0.0.0.0", "TCP", 80)
    h.remove("127.0.0.1", "UDP", 53)
    assert len(h) == 0 and h.items() == []


def test_removing_a_pod_frees_its_ports():
    info = NodeInfo(node(), [port_pod("TCP/0.0.0.0/8080", name="a")])
    assert not nodeports.fits(port_pod("TCP/10.0.0.1/8080"), info)
    info.remove_pod(port_pod("TCP/0.0.0.0/8080", name="a"))
    assert nodeports.fits(port_pod("TCP/10.0.0.1/8080"), info)


def test_removing_one_of_two_pods_that_declare_a_port_frees_it_as_upstreams_set_does():
    # HostPortInfo is a set upstream: the pod still on the node no longer holds 8080 in the scheduler's view
    a, b = port_pod("TCP/0.0.0.0/8080", name="a"), port_pod("TCP/0.0.0.0/8080", name="b")
    info = NodeInfo(node(), [a, b])
    info.remove_pod(b)
    assert list(info.pods) and nodeports.fits(port_pod("TCP/0.0.0.0/8080"), info)


def test_with_the_fix_a_port_is_freed_when_the_last_pod_holding_it_goes():
    # the scheduler-count-host-port-holders fix (kmodel.fixes)
    a, b = port_pod("TCP/0.0.0.0/8080", name="a"), port_pod("TCP/0.0.0.0/8080", name="b")
    info = NodeInfo(node(), [a, b], count_port_holders=True)
    info.remove_pod(b)
    assert not nodeports.fits(port_pod("TCP/0.0.0.0/8080"), info)
    info.add_pod(a)  # an update of a pod already counted replaces it: still one holder
    info.remove_pod(a)
    assert nodeports.fits(port_pod("TCP/0.0.0.0/8080"), info) and info.used_ports.items() == []


# -- NodeUnschedulable: TestNodeUnschedulable ---------------------------------------------------------------------

def test_node_unschedulable():
    unsched = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were unschedulable", plugin=nodeunschedulable.NAME)
    assert nodeunschedulable.filter(pod(), NodeInfo(node(unschedulable=True))) == unsched
    assert nodeunschedulable.filter(pod(), NodeInfo(node(unschedulable=False))) is None
    tolerating = pod(tolerations=[toleration("node.kubernetes.io/unschedulable", effect="NoSchedule")])
    assert nodeunschedulable.filter(tolerating, NodeInfo(node(unschedulable=True))) is None
    assert nodeunschedulable.filter(pod(), NodeInfo()).reasons == ("node(s) had unknown conditions",)


# -- TaintToleration: TestTaintTolerationFilter ------------------------------------------------------------------

TAINTS = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [taint("dedicated", "user1")], "node(s) had untolerated taint {dedicated: user1}"),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [toleration("dedicated", "Equal", "user1", "NoSchedule")], [taint("dedicated", "user1")], None),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [toleration("dedicated", "Equal", "user2", "NoSchedule")], [taint("dedicated", "user1")],
     "node(s) had untolerated taint {dedicated: user1}"),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints",
     [toleration("foo", "Exists", effect="NoSchedule")], [taint("foo", "bar")], None),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
     [toleration("dedicated", "Equal", "user2", "NoSchedule"), toleration("foo", "Exists", effect="NoSchedule")],
     [taint("dedicated", "user2"), taint("foo", "bar")], None),
    ("key and value match but the (non-empty) effect doesn't",
     [toleration("foo", "Equal", "bar", "PreferNoSchedule")], [taint("foo", "bar")],
     "node(s) had untolerated taint {foo: bar}"),
    ("key and value match, toleration effect empty",
     [toleration("foo", "Equal", "bar")], [taint("foo", "bar")], None),
    ("key and value don't match but the taint is PreferNoSchedule",
     [toleration("dedicated", "Equal", "user2", "NoSchedule")], [taint("dedicated", "user1", "PreferNoSchedule")],
     None),
    ("no toleration but the taint is PreferNoSchedule",
     [], [taint("dedicated", "user1", "PreferNoSchedule")], None),
    ("empty key with Exists tolerates everything", [toleration(operator="Exists")],
     [taint("a", "1"), taint("b", "2", "NoExecute")], None),
    ("first untolerated taint is named", [toleration("a", "Exists")],
     [taint("a", "1"), taint("b", "2", "NoExecute"), taint("c", "3")], "node(s) had untolerated taint {b: 2}"),
    ("unknown operator tolerates nothing", [toleration("a", "Gt", "1")], [taint("a", "1")],
     "node(s) had untolerated taint {a: 1}"),
]


@pytest.mark.parametrize("name,tols,taints,reason", TAINTS, ids=[c[0] for c in TAINTS])
def test_taint_toleration_filter(name, tols, taints, reason):
    status = tainttoleration.filter(pod(tolerations=tols), NodeInfo(node(taints=taints)))
    if reason is None:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, plugin=tainttoleration.NAME)


def test_not_ready_node_is_filtered_by_its_taint_despite_default_tolerations():
    """DefaultTolerationSeconds tolerations (NoExecute, 300 s) do not cover the NoSchedule not-ready taint."""
    default_tols = [
        toleration("node.kubernetes.io/not-ready", "Exists", effect="NoExecute"),
        toleration("node.kubernetes.io/unreachable", "Exists", effect="NoExecute"),
    ]
    not_ready = node(taints=[taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                             taint("node.kubernetes.io/not-ready", "", "NoExecute")])
    status = tainttoleration.filter(pod(tolerations=default_tols), NodeInfo(not_ready))
    assert status.reasons == ("node(s) had untolerated taint {node.kubernetes.io/not-ready: }",)
    only_no_execute = node(taints=[taint("node.kubernetes.io/unreachable", "", "NoExecute")])
    assert tainttoleration.filter(pod(tolerations=default_tols), NodeInfo(only_no_execute)) is None


def test_taint_toleration_score():
    """TestTaintTolerationScore: fewer untolerated PreferNoSchedule taints scores higher."""
    p = pod(tolerations=[toleration("foo", "Equal", "bar", "PreferNoSchedule")])
    nodes = [
        NodeInfo(node("n0", taints=[taint("foo", "bar", "PreferNoSchedule")])),
        NodeInfo(node("n1", taints=[taint("foo", "blah", "PreferNoSchedule")])),
        NodeInfo(node("n2", taints=[taint("foo", "blah", "PreferNoSchedule"), taint("x", "y", "PreferNoSchedule")])),
    ]
    raw = [tainttoleration.score(p, n) for n in nodes]
    assert raw == [0, 1, 2]
    assert tainttoleration.normalize_score(raw) == [100, 50, 0]
    assert tainttoleration.normalize_score([0, 0]) == [100, 100]


# -- NodeAffinity (nodeSelector) and NodeName ------------------------------------------------------------------

def test_node_selector():
    reason = "node(s) didn't match Pod's node affinity/selector"
    labelled = NodeInfo(node(labels={"foo": "bar", "baz": "blah"}))
    assert nodeaffinity.filter(pod(), labelled) is None
    assert nodeaffinity.filter(pod(node_selector={"foo": "bar"}), labelled) is None
    assert nodeaffinity.filter(pod(node_selector={"foo": "bar", "baz": "blah"}), labelled) is None
    assert nodeaffinity.filter(pod(node_selector={"foo": "bar", "baz": "x"}), labelled).reasons == (reason,)
    assert nodeaffinity.filter(pod(node_selector={"foo": "bar"}), NodeInfo(node())).code == \
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_node_name():
    info = NodeInfo(node("foo"))
    assert nodename.filter(pod(), info) is None
    assert nodename.filter(pod(node_name="foo"), info) is None
    assert nodename.filter(pod(node_name="bar"), info).reasons == ("node(s) didn't match the requested node name",)


# -- NodeInfo bookkeeping ------------------------------------------------------------------------------------------

def test_node_info_incremental_matches_rebuild():
    pods = [resource_pod({"cpu": 100 * i, "memory": 1000 * i}, name=f"p{i}") for i in range(1, 6)]
    pods.append(resource_pod({}, name="besteffort"))  # one container, no requests
    info = NodeInfo(node(allocatable=allocatable(4000, 10**9, 110)), pods)
    info.remove_pod(pods[1])
    info.remove_pod(pods[3])
    info.add_pod(pods[0])  # re-adding the same pod replaces it, it is not counted twice
    fresh = NodeInfo(node(allocatable=allocatable(4000, 10**9, 110)), [pods[0], pods[2], pods[4], pods[5]])
    assert info.requested == fresh.requested
    assert info.non_zero_requested == fresh.non_zero_requested
    assert info.requested.milli_cpu == 100 + 300 + 500
    assert info.non_zero_requested.milli_cpu == 100 + 300 + 500 + 100  # best effort counts 100m when scoring
    assert len(info.pods) == 4
    assert not info.remove_pod(pods[1])
