"""The ReplicaSet controller's decisions (pkg/controller/replicaset/replica_set.go, controller_utils.go).

Theory of operation
-------------------
syncReplicaSet lists the pods the set owns, keeps the active ones (controller.FilterActivePods) and, if
its expectations are satisfied, calls manageReplicas:

- `replicas_diff(active, replicas, burst)`: how many to create or delete this sync, capped at
  burstReplicas (500). diff = len(active) - replicas; negative means create.
- Creation runs in slow-start batches (`slow_start_batch`): 1, 2, 4, ... (each min(2*prev, remaining));
  the first batch with a failure is the last one run. The calls never attempted *and* the failed ones are
  "skipped" and their expected creations are lowered (diff - successes).
- Deletion picks `get_pods_to_delete`: if not all pods go, they are sorted by `ActivePodsWithRanks`
  (rank = number of active pods of the set's related pods on the same node) and the first diff taken.
- `calculate_status`: replicas, fullyLabeledReplicas (pod labels include the template's labels),
  readyReplicas, availableReplicas (ready for minReadySeconds) and the ReplicaFailure condition.

The `edge-triggered` variant (kmodel.variants) changes one input of manageReplicas: `desired_diff` takes
the number of active pods either from the pods the sync just listed (the model as Kubernetes builds it) or
from a running count the controller keeps from the changes it is told about: +1 for each pod its own create
made (the answer says so), and `count_delta` for each pod event (-1 when it shows an active pod stop being
active or go away).

The ranking (`less`) is upstream's Less with the LogarithmicScaleDown and PodDeletionCost gates on (their
defaults): 1 unassigned < assigned; 2 Pending < Unknown < Running (anything else first); 3 not ready <
ready; 4 lower pod-deletion-cost; 5 higher rank (more pods of the set on the node); 6 both ready: ready
more recently first, compared in log2 buckets of (now - readyTime) in nanoseconds with a UID tie-break
inside a bucket, a missing time first; 7 more container restarts; 8 newer creation, bucketed the same way.
Go's sort.Sort is not stable, so pods that compare equal come out in an unspecified order upstream; here
the sort is stable over a final tie-break on (namespace, name, uid), which is one of the orders upstream
may produce.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import attrs

from kmodel.objects import Pod, ReplicaSet, ReplicaSetCondition, ReplicaSetStatus
from kmodel.objects.fastevolve import evolve

from .pod_state import (
    filter_active_pods, is_pod_active, is_pod_available, is_pod_ready, max_container_restarts,
    pod_deletion_cost, pod_ready_time,
)

BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH_SIZE = 1
REPLICA_FAILURE = "ReplicaFailure"

__all__ = [
    "BURST_REPLICAS", "SLOW_START_INITIAL_BATCH_SIZE", "ReplicasDiff", "SlowStartResult", "replicas_diff",
    "desired_diff", "count_delta",
    "slow_start_batch", "less", "rank_pods_on_same_node", "sort_for_deletion", "get_pods_to_delete",
    "calculate_status", "filter_active_pods", "template_labels_match",
]


@attrs.frozen
class ReplicasDiff:
    """What manageReplicas does this sync: create `create` pods or delete `delete` pods (one is 0)."""

    create: int = 0
    delete: int = 0


def replicas_diff(active_pods: int, replicas: int, burst_replicas: int = BURST_REPLICAS) -> ReplicasDiff:
    """manageReplicas' diff, capped at burstReplicas."""
    diff = active_pods - replicas
    if diff < 0:
        return ReplicasDiff(create=min(-diff, burst_replicas))
    if diff > 0:
        return ReplicasDiff(delete=min(diff, burst_replicas))
    return ReplicasDiff()


def desired_diff(listed_active: int, counted_active: int, replicas: int, *, edge_triggered: bool,
                 burst_replicas: int = BURST_REPLICAS) -> ReplicasDiff:
    """What manageReplicas creates or deletes. Level-driven (Kubernetes): from `listed_active`, the active
    pods the sync has just read from the cache. `edge_triggered` (the anti-pattern): from `counted_active`,
    the running count of changes the pod events reported, which nothing ever checks against the pods."""
    return replicas_diff(counted_active if edge_triggered else listed_active, replicas, burst_replicas)


def count_delta(old: Pod | None, new: Pod | None) -> int:
    """How one pod event moves an edge-triggered count of active pods: `old` is the pod before the event
    (None: it appeared), `new` after it (None: it went away). -1 when an active pod stopped being active
    (deletionTimestamp set, Succeeded/Failed, or gone), 0 otherwise: a pod appearing is not counted here,
    because the controller counted it when its own create was answered."""
    return -1 if old is not None and is_pod_active(old) and (new is None or not is_pod_active(new)) else 0


@attrs.frozen
class SlowStartResult:
    """batches: the sizes of the batches that ran; successes: calls that succeeded; failed: a batch had an
    error (so later batches were skipped); skipped: count - successes (expectations to lower)."""

    batches: tuple
    successes: int
    failed: bool
    skipped: int


def slow_start_batch(count: int, outcomes: Sequence[bool] = (),
                     initial_batch_size: int = SLOW_START_INITIAL_BATCH_SIZE) -> SlowStartResult:
    """slowStartBatch: outcomes[i] is whether the i-th call succeeds (calls beyond the sequence succeed).
    Within a batch every call runs (upstream runs them concurrently); a batch with any failure is the last."""
    remaining = count
    successes = 0
    call = 0
    batches: list[int] = []
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        batches.append(batch)
        errors = 0
        for _ in range(batch):
            ok = outcomes[call] if call < len(outcomes) else True
            call += 1
            if not ok:
                errors += 1
        successes += batch - errors
        if errors:
            return SlowStartResult(tuple(batches), successes, True, count - successes)
        remaining -= batch
        batch = min(2 * batch, remaining)
    return SlowStartResult(tuple(batches), successes, False, count - successes)


# --- the scale-down ranking ------------------------------------------------------------------------------

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _ns(ms: int) -> int:
    return ms * 1_000_000


def _after_or_zero(t1: int | None, t2: int | None) -> bool:
    """afterOrZero: a zero (None) time counts as after any other."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank_diff(t1: int, t2: int, now: int) -> int:
    """logarithmicRankDiff over Go durations (nanoseconds)."""
    d1, d2 = _ns(now - t1), _ns(now - t2)
    r1 = int(math.log2(d1)) if d1 > 0 else -1
    r2 = int(math.log2(d2)) if d2 > 0 else -1
    return r1 - r2


def _time_less(t1: int | None, t2: int | None, now: int | None, uid1: str, uid2: str,
               logarithmic: bool) -> bool:
    if not logarithmic or now is None or t1 is None or t2 is None:
        return _after_or_zero(t1, t2)
    diff = _log_rank_diff(t1, t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def less(a: Pod, b: Pod, rank_a: int, rank_b: int, now_ms: int | None, *,
         logarithmic_scale_down: bool = True, pod_deletion_cost_enabled: bool = True) -> bool:
    """ActivePodsWithRanks.Less: True when a should be deleted before b."""
    na, nb = a.spec.node_name, b.spec.node_name
    if na != nb and (not na or not nb):
        return not na
    pa, pb = _PHASE_ORDINAL.get(a.status.phase, 0), _PHASE_ORDINAL.get(b.status.phase, 0)
    # Go's map lookup yields 0 for phases outside the map (Succeeded/Failed/""), the same as Pending.
    if pa != pb:
        return pa < pb
    ra, rb = is_pod_ready(a), is_pod_ready(b)
    if ra != rb:
        return not ra
    if pod_deletion_cost_enabled:
        ca, cb = pod_deletion_cost(a), pod_deletion_cost(b)
        if ca != cb:
            return ca < cb
    if rank_a != rank_b:
        return rank_a > rank_b
    if ra and rb:
        ta, tb = pod_ready_time(a), pod_ready_time(b)
        if ta != tb:
            return _time_less(ta, tb, now_ms, a.metadata.uid, b.metadata.uid, logarithmic_scale_down)
    xa, xb = max_container_restarts(a), max_container_restarts(b)
    if xa != xb:
        return xa > xb
    ca_, cb_ = a.metadata.creation_timestamp, b.metadata.creation_timestamp
    if ca_ != cb_:
        return _time_less(ca_, cb_, now_ms, a.metadata.uid, b.metadata.uid, logarithmic_scale_down)
    return False


def rank_pods_on_same_node(pods_to_rank: Sequence[Pod], related_pods: Sequence[Pod]) -> list[int]:
    """getPodsRankedByRelatedPodsOnSameNode: each pod's rank is the number of active related pods on its
    node (unassigned pods share the "" node, as upstream)."""
    on_node: dict[str, int] = {}
    for p in related_pods:
        if is_pod_active(p):
            on_node[p.spec.node_name] = on_node.get(p.spec.node_name, 0) + 1
    return [on_node.get(p.spec.node_name, 0) for p in pods_to_rank]


def sort_for_deletion(pods: Sequence[Pod], ranks: Sequence[int], now_ms: int | None, *,
                      logarithmic_scale_down: bool = True) -> list[Pod]:
    """Pods in deletion-preference order (ActivePodsWithRanks sorted), stable with a name tie-break."""
    items = list(zip(pods, ranks))

    def cmp(x: tuple[Pod, int], y: tuple[Pod, int]) -> int:
        if less(x[0], y[0], x[1], y[1], now_ms, logarithmic_scale_down=logarithmic_scale_down):
            return -1
        if less(y[0], x[0], y[1], x[1], now_ms, logarithmic_scale_down=logarithmic_scale_down):
            return 1
        kx = (x[0].metadata.namespace, x[0].metadata.name, x[0].metadata.uid)
        ky = (y[0].metadata.namespace, y[0].metadata.name, y[0].metadata.uid)
        return (kx > ky) - (kx < ky)

    items.sort(key=functools.cmp_to_key(cmp))
    return [p for p, _ in items]


def get_pods_to_delete(filtered_pods: Sequence[Pod], related_pods: Sequence[Pod], diff: int,
                       now_ms: int | None, *, logarithmic_scale_down: bool = True) -> list[Pod]:
    """getPodsToDelete: the diff pods to delete (no sort when all of them go)."""
    pods = list(filtered_pods)
    if diff < len(pods):
        ranks = rank_pods_on_same_node(pods, related_pods)
        pods = sort_for_deletion(pods, ranks, now_ms, logarithmic_scale_down=logarithmic_scale_down)
    return pods[:diff]


# --- status ----------------------------------------------------------------------------------------------

def template_labels_match(template_labels: dict, pod_labels: dict) -> bool:
    """labels.Set(template.Labels).AsSelector().Matches(pod.Labels): every template label is on the pod."""
    return all(pod_labels.get(k) == v for k, v in template_labels.items())


def _set_condition(conditions: tuple, cond: ReplicaSetCondition) -> tuple:
    for c in conditions:
        if c.type == cond.type and c.status == cond.status and c.reason == cond.reason:
            return conditions
    return tuple(c for c in conditions if c.type != cond.type) + (cond,)


def calculate_status(rs: ReplicaSet, filtered_pods: Sequence[Pod], manage_replicas_error: str | None,
                     now_ms: int) -> ReplicaSetStatus:
    """calculateStatus, plus observedGeneration = metadata.generation as updateReplicaSetStatus sets it.
    manage_replicas_error is the error text of this sync's manageReplicas (None when it succeeded)."""
    template_labels = rs.spec.template.metadata.labels
    fully = ready = available = 0
    for pod in filtered_pods:
        if template_labels_match(template_labels, pod.metadata.labels):
            fully += 1
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, rs.spec.min_ready_seconds, now_ms):
                available += 1
    conditions = rs.status.conditions
    failure = next((c for c in conditions if c.type == REPLICA_FAILURE), None)
    if manage_replicas_error is not None and failure is None:
        diff = len(filtered_pods) - (rs.spec.replicas if rs.spec.replicas is not None else 1)
        reason = "FailedCreate" if diff < 0 else ("FailedDelete" if diff > 0 else "")
        cond = ReplicaSetCondition(type=REPLICA_FAILURE, status="True", last_transition_time=now_ms,
                                   reason=reason, message=manage_replicas_error)
        conditions = _set_condition(conditions, cond)
    elif manage_replicas_error is None and failure is not None:
        conditions = tuple(c for c in conditions if c.type != REPLICA_FAILURE)
    return evolve(rs.status, replicas=len(filtered_pods), fully_labeled_replicas=fully,
                        ready_replicas=ready, available_replicas=available,
                        observed_generation=rs.metadata.generation, conditions=conditions)
