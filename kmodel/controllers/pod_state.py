"""Small facts about a pod that several controllers decide on (pkg/api/v1/pod/util.go, controller_utils.go).

- `is_pod_active`: not Succeeded, not Failed, no deletionTimestamp (controller.IsPodActive).
- `is_pod_ready`: the Ready condition is True (podutil.IsPodReady).
- `is_pod_available`: ready, and minReadySeconds == 0 or the Ready condition's lastTransitionTime plus
  minReadySeconds is strictly before now (podutil.IsPodAvailable). Times are logical milliseconds; an unset
  time (None) plays the part of Go's zero time.
- `pod_ready_time`, `max_container_restarts`, `pod_deletion_cost`: inputs of the scale-down ranking.
"""

from __future__ import annotations

from kmodel.objects import Pod, PodCondition
from kmodel.objects.deletion_cost import deletion_cost


def is_pod_active(pod: Pod) -> bool:
    """controller.IsPodActive."""
    phase = pod.status.phase
    return phase != "Succeeded" and phase != "Failed" and pod.metadata.deletion_timestamp is None


def is_pod_terminal(pod: Pod) -> bool:
    """Succeeded or Failed (podutil.IsPodTerminal)."""
    return pod.status.phase in ("Succeeded", "Failed")


def pod_ready_condition(pod: Pod) -> PodCondition | None:
    """The pod's Ready condition, if any (podutil.GetPodReadyCondition)."""
    for c in pod.status.conditions:
        if c.type == "Ready":
            return c
    return None


def is_pod_ready(pod: Pod) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    c = pod_ready_condition(pod)
    return c is not None and c.status == "True"


def is_pod_available(pod: Pod, min_ready_seconds: int, now_ms: int) -> bool:
    """podutil.IsPodAvailable: ready for at least minReadySeconds (strictly: transition + min < now)."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    c = pod_ready_condition(pod)
    ltt = c.last_transition_time if c is not None else None
    return ltt is not None and ltt + min_ready_seconds * 1000 < now_ms


def pod_ready_time(pod: Pod) -> int | None:
    """lastTransitionTime of a True Ready condition; None (Go's zero time) when not ready or unset."""
    if is_pod_ready(pod):
        for c in pod.status.conditions:
            if c.type == "Ready" and c.status == "True":
                return c.last_transition_time
    return None


def max_container_restarts(pod: Pod) -> int:
    """The highest restartCount among the pod's containers (0 when none)."""
    return max((cs.restart_count for cs in pod.status.container_statuses), default=0)


def pod_deletion_cost(pod: Pod) -> int:
    """helper.GetDeletionCostFromPodAnnotations; an absent or invalid value counts as 0 (upstream ignores
    the parse error in the ranking)."""
    return deletion_cost(pod.metadata.annotations) or 0


def filter_active_pods(pods: "list[Pod] | tuple[Pod, ...]") -> list[Pod]:
    """controller.FilterActivePods, keeping order."""
    return [p for p in pods if is_pod_active(p)]
