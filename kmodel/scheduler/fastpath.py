"""The scheduling cycle's fast path for plain pods: the same answers as the plugins, without a call per plugin per node.

Theory of operation
-------------------
A scheduling cycle filters up to numFeasibleNodesToFind nodes (hundreds in a large cluster) and scores the
feasible ones; running every Filter and Score plugin as a function per node is most of the cost of a pod in a
large cluster. Most pods are *plain*: no spec.nodeName, no nodeSelector, no required or preferred node affinity,
no host port, no scalar resource. For such a pod, on a node that exists, is not cordoned and has no taint,
upstream's plugins reduce to this (each is the plugin's own rule, not an approximation):

* NodeUnschedulable, NodeName, TaintToleration, NodeAffinity and NodePorts accept the node (upstream's PreFilter
  of NodeAffinity and NodePorts even answers Skip for such a pod);
* NodeResourcesFit accepts it when one more pod is allowed and, unless the pod requests nothing, the node's
  allocatable cpu, memory and ephemeral storage each hold the pod's request on top of what is requested there;
* TaintToleration scores 0 on every untainted node, so after its reversed normalisation each gets 100 (x3);
  NodeAffinity scores 0 everywhere (x2); LeastAllocated and BalancedAllocation are computed inline with the
  plugins' own integer and float64 arithmetic, in the same order of operations.

Each NodeInfo keeps that room (`plain_room`: pods, cpu, memory and ephemeral storage left, or None for a node
that is missing, cordoned or tainted), updated with every pod and node change as upstream's NodeInfo keeps its
sums, so the check costs a tuple read and four comparisons per node.

Any other node (no Node, cordoned, tainted) or a node the inline resource check rejects goes through the
plugins themselves (`run_filters`), so its Status, and so the FitError text, are the plugins'. A pod that is not
plain, or a feasible set with a tainted node, takes the reference path (schedule_one's plugin loops) whole.
tests/scheduler/test_fastpath.py compares the two on generated clusters and pods.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from kmodel.objects import Pod
from kmodel.scheduler.framework import Diagnosis, NodeInfo, Resource, Status, pod_non_zero_requests
from kmodel.scheduler.plugins.nodeaffinity import has_preferences

MAX_NODE_SCORE = 100
#: TaintToleration's normalised score of an untainted node (100, reversed from 0) times its weight, 3
UNTAINTED_TAINT_SCORE = MAX_NODE_SCORE * 3


def is_plain(pod: Pod, pod_request: Resource) -> bool:
    """Whether the fast path applies to the pod (see the module docstring)."""
    spec = pod.spec
    if spec.node_name or spec.node_selector or pod_request.scalar:
        return False
    affinity = spec.affinity
    if affinity is not None and affinity.node_affinity is not None:
        na = affinity.node_affinity
        if na.required_during_scheduling_ignored_during_execution is not None or has_preferences(pod):
            return False
    for c in spec.containers:
        for p in c.ports:
            if p.host_port > 0:
                return False
    return True


def find_nodes_that_fit(
    pod: Pod,
    pod_request: Resource,
    node_infos: Sequence[NodeInfo],
    next_start_node_index: int,
    to_find: int,
    run_filters: Callable[[Pod, NodeInfo, Resource], Optional[Status]],
) -> tuple[list[NodeInfo], Diagnosis, int]:
    """findNodesThatPassFilters for a plain pod: (feasible nodes, diagnosis, nodes processed), as the
    reference loop answers them."""
    n = len(node_infos)
    cpu, mem, eph = pod_request.milli_cpu, pod_request.memory, pod_request.ephemeral_storage
    requests_nothing = pod_request.is_zero()
    feasible: list[NodeInfo] = []
    diagnosis = Diagnosis()
    processed = 0
    index = next_start_node_index
    for _ in range(n):
        if index >= n:
            index -= n
        info = node_infos[index]
        index += 1
        processed += 1
        # on an existing, uncordoned, untainted node (room not None) only NodeResourcesFit could object to a
        # plain pod: it fits when one more pod is allowed and, unless it requests nothing, its request is left
        room = info.plain_room
        if room is None or room[0] <= 0 or not (requests_nothing or (
                room[1] >= cpu and room[2] >= mem and room[3] >= eph)):
            status = run_filters(pod, info, pod_request)  # the plugins' own verdict and reasons
            if status is not None:
                diagnosis.record(info.name, status)
                continue
        feasible.append(info)
        if len(feasible) >= to_find:
            break
    return feasible, diagnosis, processed


def select_host(pod: Pod, pod_request: Resource, feasible: Sequence[NodeInfo]) -> Optional[str]:
    """prioritizeNodes + selectHost for a plain pod over feasible nodes: the host, or None when a node is
    tainted (its TaintToleration score needs the plugin: the caller takes the reference path)."""
    cpu0, mem0 = pod_non_zero_requests(pod)
    cpu, mem = pod_request.milli_cpu, pod_request.memory
    best_name = ""
    best_score = -1
    for info in feasible:
        if info.node.spec.taints:
            return None
        alloc = info.allocatable
        c, m = alloc.milli_cpu, alloc.memory
        # NodeResourcesFit, LeastAllocated: per resource (capacity - requested) * 100 // capacity, then the mean
        nz = info.non_zero_requested
        r = nz.milli_cpu + cpu0
        fit = 0 if c == 0 or r > c else (c - r) * MAX_NODE_SCORE // c
        r = nz.memory + mem0
        fit += 0 if m == 0 or r > m else (m - r) * MAX_NODE_SCORE // m
        score = fit // 2
        # NodeResourcesBalancedAllocation: 1 - |cpu fraction - memory fraction| / 2, in float64
        if c == 0 or m == 0:
            score += MAX_NODE_SCORE
        else:
            used = info.requested
            cf = min((used.milli_cpu + cpu) / c, 1.0)
            mf = min((used.memory + mem) / m, 1.0)
            score += int((1 - abs((cf - mf) / 2)) * MAX_NODE_SCORE)
        score += UNTAINTED_TAINT_SCORE
        name = info.node.metadata.name
        if score > best_score or (score == best_score and name < best_name):
            best_name, best_score = name, score
    return best_name
