"""One scheduling cycle without I/O: filter every node, score the feasible ones, pick a host or explain why not.

A port of the algorithm half of pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod,
findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes, selectHost) over the default profile's
plugins that the model has.

Theory of operation
-------------------
schedule_pod(pod, node_infos) takes the node infos in the scheduler cache's order. With no node at all it answers
NoNodesAvailable (`no nodes available to schedule pods`). Otherwise it walks the nodes starting at
next_start_node_index (wrapping), runs the Filter plugins in order on each node and stops at the first plugin that
rejects it, recording that status for the node. It stops looking once it has found numFeasibleNodesToFind
feasible nodes: all nodes below 100, otherwise percentageOfNodesToScore percent of them (adaptive by default:
50 − nodes/125 percent, at least 5 %, and never fewer than 100 nodes). The index to start from next time advances
by the number of nodes processed, so successive pods look at different nodes first, as upstream. A plain pod
(no nodeName, node selector or affinity, host port or extended resource) is filtered and scored by
kmodel.scheduler.fastpath, which answers what the plugins answer without calling them per node.

No feasible node: a FitError, whose message is `0/N nodes are available: <count> <reason>, ….` (see
framework.FitError). One feasible node: it is the answer, without scoring, as upstream. Several: each score
plugin scores each node, its scores are normalised, multiplied by the plugin's weight and summed:
NodeResourcesFit/LeastAllocated ×1, NodeResourcesBalancedAllocation ×1, TaintToleration ×3, NodeAffinity ×2 (the
preferred node affinity terms).

Differences from upstream:
- Ties between the best scores: upstream picks one at random (reservoir sampling in selectHost); the model picks
  the smallest node name, so a run replays exactly.
- Filtering is sequential. Upstream filters 16 nodes at a time and may process a few more nodes than it needs
  before it notices it has enough, so its next start index can differ slightly.
- Score plugins that need data the model has not (ImageLocality, InterPodAffinity,
  PodTopologySpread's default spreading constraints, volume plugins) are left out. The default
  PodTopologySpread spreading of a ReplicaSet's pods over nodes is therefore not reproduced.
- PreFilter results, nominated nodes, preemption (PostFilter) and extenders are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

from kmodel.objects import Pod
from kmodel.scheduler.framework import Diagnosis, FitError, NodeInfo, NoNodesAvailable, Status, pod_non_zero_requests, \
    pod_requests
from kmodel.scheduler import fastpath
from kmodel.scheduler.plugins import FILTERS, nodeaffinity, noderesources, tainttoleration

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

# (plugin name, weight) of the score plugins the model runs, as in the default profile.
SCORE_WEIGHTS = (
    (noderesources.NAME, 1),
    (noderesources.BALANCED_ALLOCATION_NAME, 1),
    (tainttoleration.NAME, 3),
    (nodeaffinity.NAME, 2),
)


@dataclass(frozen=True)
class ScheduleResult:
    """The outcome of schedule_pod: a host, or the error; plus the index the next cycle starts from."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    next_start_node_index: int
    error: Union[FitError, NoNodesAvailable, None] = None


def num_feasible_nodes_to_find(num_all_nodes: int, percentage_of_nodes_to_score: int = 0) -> int:
    """numFeasibleNodesToFind."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = percentage_of_nodes_to_score
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def run_filter_plugins(pod: Pod, node_info: NodeInfo, pod_request=None) -> Optional[Status]:
    """RunFilterPlugins: None if every plugin accepts the node, else the first rejection."""
    for name, fn in FILTERS:
        if name == noderesources.NAME:
            status = fn(pod, node_info, pod_request)
        else:
            status = fn(pod, node_info)
        if status is not None:
            return status
    return None


def find_nodes_that_fit(
    pod: Pod,
    node_infos: Sequence[NodeInfo],
    next_start_node_index: int = 0,
    percentage_of_nodes_to_score: int = 0,
) -> tuple[list[NodeInfo], Diagnosis, int]:
    """findNodesThatPassFilters: (feasible nodes, diagnosis, nodes processed); a plain pod takes the fast path
    (kmodel.scheduler.fastpath), every other pod the plugins' loop."""
    pod_request = pod_requests(pod)
    if not fastpath.is_plain(pod, pod_request):
        return find_nodes_that_fit_reference(pod, node_infos, next_start_node_index, percentage_of_nodes_to_score)
    to_find = num_feasible_nodes_to_find(len(node_infos), percentage_of_nodes_to_score)
    return fastpath.find_nodes_that_fit(pod, pod_request, node_infos, next_start_node_index, to_find,
                                        run_filter_plugins)


def find_nodes_that_fit_reference(
    pod: Pod,
    node_infos: Sequence[NodeInfo],
    next_start_node_index: int = 0,
    percentage_of_nodes_to_score: int = 0,
) -> tuple[list[NodeInfo], Diagnosis, int]:
    """findNodesThatPassFilters over the Filter plugins, node by node (the reference of the fast path)."""
    n = len(node_infos)
    to_find = num_feasible_nodes_to_find(n, percentage_of_nodes_to_score)
    pod_request = pod_requests(pod)
    feasible: list[NodeInfo] = []
    diagnosis = Diagnosis()
    processed = 0
    for i in range(n):
        info = node_infos[(next_start_node_index + i) % n]
        processed += 1
        status = run_filter_plugins(pod, info, pod_request)
        if status is None:
            feasible.append(info)
            if len(feasible) >= to_find:
                break
        else:
            diagnosis.record(info.name, status)
    return feasible, diagnosis, processed


def prioritize_nodes(pod: Pod, feasible: Sequence[NodeInfo]) -> list[tuple[str, int]]:
    """prioritizeNodes: (node name, weighted total score) for each feasible node, in the given order."""
    pod_request = pod_requests(pod)
    pod_non0 = pod_non_zero_requests(pod)
    fit = [noderesources.least_allocated_score(pod, ni, pod_non0) for ni in feasible]
    balanced = [noderesources.balanced_allocation_score(pod, ni, pod_request) for ni in feasible]
    tolerations = tainttoleration.pre_score(pod)
    taints = tainttoleration.normalize_score([tainttoleration.score(pod, ni, tolerations) for ni in feasible])
    # without preferred terms every node scores 0 and normalises to 0: nothing to add
    affinity = (nodeaffinity.normalize_score([nodeaffinity.score(pod, ni) for ni in feasible])
                if nodeaffinity.has_preferences(pod) else [0] * len(feasible))
    weights = dict(SCORE_WEIGHTS)
    return [
        (
            ni.name,
            fit[i] * weights[noderesources.NAME]
            + balanced[i] * weights[noderesources.BALANCED_ALLOCATION_NAME]
            + taints[i] * weights[tainttoleration.NAME]
            + affinity[i] * weights[nodeaffinity.NAME],
        )
        for i, ni in enumerate(feasible)
    ]


def select_host(scores: Sequence[tuple[str, int]]) -> str:
    """selectHost, deterministic: the highest score; among equals, the smallest node name (upstream: random)."""
    best_name, best_score = scores[0]
    for name, s in scores[1:]:
        if s > best_score or (s == best_score and name < best_name):
            best_name, best_score = name, s
    return best_name


def schedule_pod(
    pod: Pod,
    node_infos: Sequence[NodeInfo],
    next_start_node_index: int = 0,
    percentage_of_nodes_to_score: int = 0,
) -> ScheduleResult:
    """schedulePod: the chosen node or the error, with the bookkeeping a scheduler component keeps."""
    n = len(node_infos)
    if n == 0:
        return ScheduleResult("", 0, 0, next_start_node_index, NoNodesAvailable())
    feasible, diagnosis, processed = find_nodes_that_fit(
        pod, node_infos, next_start_node_index, percentage_of_nodes_to_score
    )
    next_index = (next_start_node_index + processed) % n
    evaluated = len(feasible) + len(diagnosis.node_to_status)
    if not feasible:
        return ScheduleResult("", evaluated, 0, next_index, FitError(pod, n, diagnosis))
    if len(feasible) == 1:
        return ScheduleResult(feasible[0].name, evaluated, 1, next_index)
    return ScheduleResult(choose_host(pod, feasible), evaluated, len(feasible), next_index)


def choose_host(pod: Pod, feasible: Sequence[NodeInfo]) -> str:
    """prioritizeNodes then selectHost: inline for a plain pod on untainted nodes (kmodel.scheduler.fastpath),
    else over the Score plugins."""
    pod_request = pod_requests(pod)
    if fastpath.is_plain(pod, pod_request):
        host = fastpath.select_host(pod, pod_request, feasible)
        if host is not None:
            return host
    return select_host(prioritize_nodes(pod, feasible))


def schedule_one(pod: Pod, node_infos: Sequence[NodeInfo]) -> Union[str, FitError, NoNodesAvailable]:
    """The node the pod goes to, or why it cannot go anywhere (FitError, or NoNodesAvailable for no nodes)."""
    result = schedule_pod(pod, node_infos)
    return result.error if result.error is not None else result.suggested_host
