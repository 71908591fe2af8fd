"""One scheduling cycle: FitError's message (types_test.go TestFitError_Error), numFeasibleNodesToFind
(schedule_one_test.go TestNumFeasibleNodesToFind), filter order, scoring and the deterministic tie-break."""

from __future__ import annotations

import pytest

from kmodel.scheduler import (
    Code, Diagnosis, FitError, NodeInfo, NoNodesAvailable, Status, num_feasible_nodes_to_find, schedule_one,
    schedule_pod,
)

from .helpers import allocatable, node, pod, port_pod, resource_pod, taint, toleration


def diagnosis(statuses: dict[str, tuple[str, ...]], pre: str = "", post: str = "") -> Diagnosis:
    d = Diagnosis()
    for name, reasons in statuses.items():
        d.node_to_status[name] = Status(Code.UNSCHEDULABLE, *reasons)
    d.pre_filter_msg = pre
    d.post_filter_msg = post
    return d


F = "Node(s) failed Filter plugin FalseFilter"
FIT_ERRORS = [
    ("nodes failed Prefilter plugin", 3, diagnosis({n: ("Node(s) failed PreFilter plugin FalsePreFilter",)
     for n in ("node1", "node2", "node3")}, pre="Node(s) failed PreFilter plugin FalsePreFilter"),
     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter."),
    ("nodes failed one Filter plugin", 3, diagnosis({n: (F,) for n in ("node1", "node2", "node3")}),
     f"0/3 nodes are available: 3 {F}."),
    ("nodes failed one Filter plugin with a postFilter msg", 3,
     diagnosis({n: (F,) for n in ("node1", "node2", "node3")}, post="Error running PostFilter plugin FailedPostFilter"),
     f"0/3 nodes are available: 3 {F}. Error running PostFilter plugin FailedPostFilter"),
    ("nodes failed two Filter plugins", 3,
     diagnosis({"node1": (F,), "node2": (F,), "node3": ("Node(s) failed Filter plugin FalseFilter-2",)}),
     f"0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, 2 {F}."),
    ("one node reports several reasons", 2,
     diagnosis({"a": ("Insufficient cpu", "Insufficient memory"), "b": ("Insufficient memory",)}),
     "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."),
    ("counts sort as strings, as Go's sort.Strings does", 12,
     diagnosis({**{f"t{i}": ("node(s) had untolerated taint {a: }",) for i in range(10)},
                "x": ("Too many pods",), "y": ("Too many pods",)}),
     "0/12 nodes are available: 10 node(s) had untolerated taint {a: }, 2 Too many pods."),
]


@pytest.mark.parametrize("name,n,diag,want", FIT_ERRORS, ids=[c[0] for c in FIT_ERRORS])
def test_fit_error_message(name, n, diag, want):
    assert FitError(pod(), n, diag).error() == want
    assert str(FitError(pod(), n, diag)) == want


@pytest.mark.parametrize("nodes,percentage,want", [
    (10, 0, 10), (10, 40, 10), (1000, 0, 420), (1000, 40, 400), (6000, 0, 300), (6000, 40, 2400),
])
def test_num_feasible_nodes_to_find(nodes, percentage, want):
    assert num_feasible_nodes_to_find(nodes, percentage) == want


def ready(name: str, **kw) -> NodeInfo:
    return NodeInfo(node(name, allocatable=allocatable(1000, 10**9, 110), **kw))


def test_no_nodes():
    assert schedule_one(pod(), []) == NoNodesAvailable()
    assert str(schedule_one(pod(), [])) == "no nodes available to schedule pods"


def test_the_seeds_unschedulable_message():
    """One reason per node, from the first plugin that rejects it, in the default filter order."""
    nodes = [
        ready("cordoned", unschedulable=True, taints=[taint("node.kubernetes.io/unschedulable")]),
        ready("master", taints=[taint("node-role.kubernetes.io/control-plane")]),
        ready("notready", taints=[taint("node.kubernetes.io/not-ready")]),
        ready("full"),
    ]
    nodes[3].add_pod(resource_pod({"cpu": 900}, name="hog"))
    p = resource_pod({"cpu": 500}, name="web")
    result = schedule_one(p, nodes)
    assert isinstance(result, FitError)
    assert result.error() == (
        "0/4 nodes are available: 1 Insufficient cpu, "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) were unschedulable."
    )
    assert result.diagnosis.unschedulable_plugins == {
        "NodeUnschedulable", "TaintToleration", "NodeResourcesFit"}
    # A node that fits takes the pod.
    assert schedule_one(p, nodes + [ready("spare")]) == "spare"


def test_single_feasible_node_is_chosen():
    nodes = [ready("a", labels={"disk": "ssd"}), ready("b")]
    assert schedule_one(pod(node_selector={"disk": "ssd"}), nodes) == "a"
    err = schedule_one(pod(node_selector={"disk": "hdd"}), nodes)
    assert err.error() == "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."


def test_host_port_conflict_message():
    nodes = [ready("a"), ready("b")]
    for n in nodes:
        n.add_pod(port_pod("TCP/0.0.0.0/80", name=f"old-{n.name}"))
    err = schedule_one(port_pod("TCP//80", name="new"), nodes)
    assert err.error() == "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."


def test_least_allocated_prefers_the_emptier_node():
    nodes = [ready("a"), ready("b"), ready("c")]
    nodes[0].add_pod(resource_pod({"cpu": 500, "memory": 10**8}, name="x"))
    nodes[2].add_pod(resource_pod({"cpu": 200, "memory": 10**8}, name="y"))
    assert schedule_one(resource_pod({"cpu": 100, "memory": 10**7}), nodes) == "b"


def test_ties_break_by_smallest_node_name_whatever_the_order():
    names = ["node-3", "node-1", "node-2"]
    assert schedule_one(pod(), [ready(n) for n in names]) == "node-1"
    assert schedule_one(pod(), [ready(n) for n in reversed(names)]) == "node-1"


def test_prefer_no_schedule_taint_lowers_the_score():
    nodes = [ready("a", taints=[taint("soft", "x", "PreferNoSchedule")]), ready("b")]
    assert schedule_one(pod(), nodes) == "b"
    tolerating = pod(tolerations=[toleration("soft", "Exists")])
    assert schedule_one(tolerating, nodes) == "a"  # equal scores: smallest name


def test_filling_a_cluster_then_too_many_pods():
    nodes = [NodeInfo(node(f"n{i}", allocatable=allocatable(1000, 10**9, 2))) for i in range(3)]
    placed = []
    for i in range(6):
        p = pod(name=f"p{i}")
        host = schedule_one(p, nodes)
        assert isinstance(host, str)
        next(n for n in nodes if n.name == host).add_pod(p)
        placed.append(host)
    assert sorted(placed) == ["n0", "n0", "n1", "n1", "n2", "n2"]  # least allocated spreads them
    assert schedule_one(pod(name="p6"), nodes).error() == "0/3 nodes are available: 3 Too many pods."


def test_next_start_index_advances_by_nodes_processed():
    nodes = [ready(f"n{i:03d}") for i in range(200)]
    r = schedule_pod(pod(), nodes, next_start_node_index=150)
    # 200 nodes: 50 - 200/125 = 49 % -> 98 -> at least 100 feasible nodes are looked for.
    assert r.feasible_nodes == 100 and r.evaluated_nodes == 100
    assert r.next_start_node_index == 50
    assert r.suggested_host == "n000"  # all tie; n150..n199 and n000..n049 were considered
