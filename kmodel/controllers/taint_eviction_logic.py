"""Taint-based eviction (pkg/controller/tainteviction/taint_eviction.go, v1helper.GetMatchingTolerations).

Theory of operation
-------------------
For a pod bound to a node with NoExecute taints, each taint is matched with the *first* toleration that
tolerates it (`get_matching_tolerations`). If some taint is not tolerated the pod is evicted at once. Else
the pod may stay for the minimum tolerationSeconds among the used tolerations (`get_min_toleration_time_ms`:
no tolerations -> 0; any <= 0 -> 0; none with tolerationSeconds -> forever, -1).

`process_pod_on_node` is processPodOnNode over a scheduled eviction (created_at, fire_at): the work is
created at `now` (when the controller saw the pod on the tainted node, not the taint's timeAdded) and fires
at now + minTolerationTime. When work already exists upstream compares existing.created_at + min with
now + min and keeps the existing work when the former is earlier (`if startTime.Add(min).Before(
triggerTime) return`); so an update never postpones an eviction, and a shortened toleration does not bring
it forward either (faithfully reproduced). Taints removed -> cancelled.
A pod is evicted when now >= fire_at (`eviction_due`), as the timed worker fires then.
"""

from __future__ import annotations

from typing import Sequence

import attrs

from kmodel.objects import Taint, Toleration

FOREVER = -1


def tolerates_taint(tol: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator in ("", "Equal"):
        return tol.value == taint.value
    if tol.operator == "Exists":
        return True
    return False


def get_matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration]
                             ) -> tuple[bool, tuple]:
    """GetMatchingTolerations: (all tolerated, the first matching toleration per taint)."""
    if not taints:
        return True, ()
    if not tolerations:
        return False, ()
    used = []
    for taint in taints:
        for tol in tolerations:
            if tolerates_taint(tol, taint):
                used.append(tol)
                break
        else:
            return False, ()
    return True, tuple(used)


def get_min_toleration_time_ms(tolerations: Sequence[Toleration]) -> int:
    """getMinTolerationTime in ms: 0 for none or any <= 0 seconds, FOREVER (-1) when none is bounded."""
    if not tolerations:
        return 0
    best = None
    for t in tolerations:
        if t.toleration_seconds is not None:
            if t.toleration_seconds <= 0:
                return 0
            if best is None or t.toleration_seconds < best:
                best = t.toleration_seconds
    return FOREVER if best is None else best * 1000


def no_execute_taints(taints: Sequence[Taint]) -> tuple:
    return tuple(t for t in taints if t.effect == "NoExecute")


@attrs.frozen
class ScheduledEviction:
    created_at: int
    fire_at: int


def process_pod_on_node(existing: ScheduledEviction | None, tolerations: Sequence[Toleration],
                        taints: Sequence[Taint], now_ms: int) -> ScheduledEviction | None:
    """processPodOnNode: the pod's scheduled eviction after this update (None: none / cancelled).
    taints are the node's taints (only NoExecute ones count)."""
    taints = no_execute_taints(taints)
    if not taints:
        return None
    all_tolerated, used = get_matching_tolerations(taints, tolerations)
    if not all_tolerated:
        return ScheduledEviction(now_ms, now_ms)
    m = get_min_toleration_time_ms(used)
    if m < 0:
        return None
    trigger = now_ms + m
    start = now_ms
    if existing is not None:
        start = existing.created_at
        if start + m < trigger:
            return existing
    return ScheduledEviction(start, trigger)


def eviction_due(sched: ScheduledEviction | None, now_ms: int) -> bool:
    return sched is not None and now_ms >= sched.fire_at


def eviction_time_ms(tolerations: Sequence[Toleration], taints: Sequence[Taint], since_ms: int) -> int | None:
    """When a pod first seen on the tainted node at since_ms is evicted (None: never)."""
    s = process_pod_on_node(None, tolerations, taints, since_ms)
    return None if s is None else s.fire_at
