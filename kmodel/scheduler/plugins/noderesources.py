"""NodeResourcesFit (Filter and LeastAllocated Score) and NodeResourcesBalancedAllocation (Score).

A port of pkg/scheduler/framework/plugins/noderesources: fit.go, least_allocated.go, balanced_allocation.go and
resource_allocation.go.

Theory of operation
-------------------
Filter (fitsRequest) collects every insufficient resource, in this order: `Too many pods` when the pods already
on the node + 1 exceed allocatable "pods"; then, unless the pod requests nothing at all, `Insufficient cpu`,
`Insufficient memory`, `Insufficient ephemeral-storage` and `Insufficient <name>` for scalar resources whenever
allocatable < this pod's request + the requests of the pods already on the node. All reasons go into one
Unschedulable status, so a node can count towards several entries of the FitError histogram.

Score, LeastAllocated (the default strategy, cpu and memory with weight 1): per resource
(allocatable − requested) × 100 / allocatable, 0 when allocatable is 0 or requested exceeds it, then the weighted
integer mean. "requested" is the node's non-zero requests plus the pod's non-zero request (containers without a
request count 100m cpu / 200MB memory), so best-effort pods still spread.

Score, BalancedAllocation (weight 1): the fractions requested/allocatable of cpu and memory (real requests, capped
at 1, resources with allocatable 0 skipped); with two fractions std = |f1 − f2| / 2, and the score is
int((1 − std) × 100), in float64 arithmetic as upstream.

Differences from upstream: the scalar-resource test is approximate (see framework.is_scalar_resource_name);
scalar names are checked in sorted order (upstream iterates a Go map); ignoredResources is not configurable;
MostAllocated and RequestedToCapacityRatio strategies are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kmodel.objects import Pod
from kmodel.scheduler.framework import (
    RESOURCE_CPU, RESOURCE_EPHEMERAL_STORAGE, RESOURCE_MEMORY, RESOURCE_PODS, Code, NodeInfo, Resource, Status,
    pod_non_zero_requests, pod_requests,
)

NAME = "NodeResourcesFit"
BALANCED_ALLOCATION_NAME = "NodeResourcesBalancedAllocation"
MAX_NODE_SCORE = 100
ERR_TOO_MANY_PODS = "Too many pods"


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


@dataclass(frozen=True)
class InsufficientResource:
    """One resource the node lacks, with upstream's numbers (requested by the pod, used, capacity)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int


def fits_request(pod_request: Resource, node_info: NodeInfo) -> list[InsufficientResource]:
    """fitsRequest: every resource the node lacks for a pod requesting pod_request (empty list: it fits)."""
    out: list[InsufficientResource] = []
    allowed = node_info.allocatable.allowed_pod_number
    npods = len(node_info.pods)
    if npods + 1 > allowed:
        out.append(InsufficientResource(RESOURCE_PODS, ERR_TOO_MANY_PODS, 1, npods, allowed))
    if pod_request.is_zero():
        return out
    alloc = node_info.allocatable
    used = node_info.requested
    if alloc.milli_cpu < pod_request.milli_cpu + used.milli_cpu:
        out.append(InsufficientResource(
            RESOURCE_CPU, insufficient_reason(RESOURCE_CPU), pod_request.milli_cpu, used.milli_cpu, alloc.milli_cpu))
    if alloc.memory < pod_request.memory + used.memory:
        out.append(InsufficientResource(
            RESOURCE_MEMORY, insufficient_reason(RESOURCE_MEMORY), pod_request.memory, used.memory, alloc.memory))
    if alloc.ephemeral_storage < pod_request.ephemeral_storage + used.ephemeral_storage:
        out.append(InsufficientResource(
            RESOURCE_EPHEMERAL_STORAGE, insufficient_reason(RESOURCE_EPHEMERAL_STORAGE),
            pod_request.ephemeral_storage, used.ephemeral_storage, alloc.ephemeral_storage))
    for name in sorted(pod_request.scalar):
        want = pod_request.scalar[name]
        have = alloc.scalar.get(name, 0)
        held = used.scalar.get(name, 0)
        if have < want + held:
            out.append(InsufficientResource(name, insufficient_reason(name), want, held, have))
    return out


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Fits."""
    return fits_request(pod_requests(pod), node_info)


def filter(pod: Pod, node_info: NodeInfo, pod_request: Optional[Resource] = None) -> Optional[Status]:  # noqa: A001
    """Filter; pass pod_request (pod_requests(pod)) to compute it once per cycle, as PreFilter does."""
    insufficient = fits_request(pod_requests(pod) if pod_request is None else pod_request, node_info)
    if not insufficient:
        return None
    return Status(Code.UNSCHEDULABLE, *(r.reason for r in insufficient), plugin=NAME)


def least_requested_score(requested: int, capacity: int) -> int:
    """leastRequestedScore."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_allocated_score(pod: Pod, node_info: NodeInfo, pod_non0: Optional[tuple[int, int]] = None) -> int:
    """Score with the LeastAllocated strategy over cpu and memory, weight 1 each."""
    cpu, mem = pod_non_zero_requests(pod) if pod_non0 is None else pod_non0
    nz = node_info.non_zero_requested
    alloc = node_info.allocatable
    total = least_requested_score(nz.milli_cpu + cpu, alloc.milli_cpu)
    total += least_requested_score(nz.memory + mem, alloc.memory)
    return total // 2


def balanced_allocation_score(pod: Pod, node_info: NodeInfo, pod_request: Optional[Resource] = None) -> int:
    """NodeResourcesBalancedAllocation's Score over cpu and memory (real requests)."""
    req = pod_requests(pod) if pod_request is None else pod_request
    alloc = node_info.allocatable
    used = node_info.requested
    cpu, memory = alloc.milli_cpu, alloc.memory
    if cpu == 0 or memory == 0:
        return MAX_NODE_SCORE  # one fraction or none (a resource with allocatable 0 is skipped): std 0
    cpu_fraction = min((used.milli_cpu + req.milli_cpu) / cpu, 1.0)
    memory_fraction = min((used.memory + req.memory) / memory, 1.0)
    std = abs((cpu_fraction - memory_fraction) / 2)
    return int((1 - std) * MAX_NODE_SCORE)
