"""The scheduling queue: activeQ, backoffQ and unschedulablePods, as upstream's PriorityQueue (sans-IO).

A port of pkg/scheduler/backend/queue/scheduling_queue.go (formerly internal/queue) with the default settings:
podInitialBackoffSeconds 1, podMaxBackoffSeconds 10, podMaxInUnschedulablePodsDuration 5 min, the backoffQ
flushed every 1 s and the unschedulable pods every 30 s.

Theory of operation
-------------------
Every pending pod the scheduler is responsible for is in exactly one of three places, keyed by namespace/name:

* activeQ: ready to be tried, popped in the order of the default QueueSort plugin (PrioritySort): higher
  `spec.priority` first, then the earlier queue timestamp; the model breaks the remaining ties by insertion
  order (a sequence number), so the order never depends on hashing.
* backoffQ: failed recently; waits until timestamp + backoff (1 s doubled per attempt, at most 10 s).
* unschedulablePods: rejected by Filter plugins (a FitError); it stays there until a *cluster event* that one
  of the plugins that rejected it registered for happens (a node added, a node's taints, labels or
  allocatable changed, an assigned pod deleted, ...), or until it has waited more than 5 minutes.

`pop` takes the head of activeQ and counts an attempt. After a failure the scheduler calls
`add_unschedulable(info, plugins, now)`: with rejecting plugins the pod goes to unschedulablePods; with none
(an API error, no nodes at all, a failed binding) to backoffQ, as determineSchedulingHintForInFlightPod does.
`move_all(event, now, hint)` moves the unschedulable pods interested in `event` to backoffQ if they are still
backing off, else to activeQ (MoveAllToActiveOrBackoffQueue).

Time. Upstream runs two loops: every 1 s (flushBackoffQCompleted) and every 30 s
(flushUnschedulablePodsLeftover), counted from the scheduler's start. The model does not tick: `next_wakeup`
says when the next tick that will actually move something falls on that same grid, and the component arms one
timer for it, so an idle scheduler causes no loop events yet pods move at the very ticks they would upstream.

Differences from upstream:
- Queueing hints are reduced to each plugin's registered events (`PLUGIN_EVENTS`), with the NodePorts hint for
  a deleted pod (its host ports must overlap the pending pod's); other hints answer Queue.
- An update of an unschedulable pod that changes more than its status moves it (upstream asks the plugins'
  hints for the UnscheduledPod update events).
- Scheduling cycles are synchronous in the model (one `work` event), so there are no in-flight pods and no
  events received during a cycle to replay; nominated pods, gated pods (schedulingGates) and the
  PopFromBackoffQ feature are not modelled.
"""

from __future__ import annotations

import enum
import heapq
from typing import Iterable, Optional

from kmodel.objects import Pod

INITIAL_BACKOFF_MS = 1_000
MAX_BACKOFF_MS = 10_000
POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS = 5 * 60_000
BACKOFF_FLUSH_PERIOD_MS = 1_000
UNSCHEDULABLE_FLUSH_PERIOD_MS = 30_000


class ClusterEvent(enum.Flag):
    """fwk.ClusterEvent, the resource and action folded into one flag."""

    NODE_ADD = enum.auto()
    NODE_TAINT = enum.auto()          # taints or spec.unschedulable changed (UpdateNodeTaint)
    NODE_LABEL = enum.auto()          # UpdateNodeLabel
    NODE_ALLOCATABLE = enum.auto()    # UpdateNodeAllocatable
    NODE_CONDITION = enum.auto()      # UpdateNodeCondition
    ASSIGNED_POD_DELETE = enum.auto()  # a pod bound to a node was deleted (or became terminal)
    UNSCHEDULED_POD_UPDATE = enum.auto()
    UNSCHEDULABLE_TIMEOUT = enum.auto()  # the 5-minute flush


# The events each Filter plugin registers (EventsToRegister in pkg/scheduler/framework/plugins/*).
PLUGIN_EVENTS: dict[str, ClusterEvent] = {
    "NodeUnschedulable": ClusterEvent.NODE_ADD | ClusterEvent.NODE_TAINT | ClusterEvent.UNSCHEDULED_POD_UPDATE,
    "NodeName": ClusterEvent.NODE_ADD,
    "TaintToleration": ClusterEvent.NODE_ADD | ClusterEvent.NODE_TAINT | ClusterEvent.UNSCHEDULED_POD_UPDATE,
    "NodeAffinity": ClusterEvent.NODE_ADD | ClusterEvent.NODE_LABEL | ClusterEvent.UNSCHEDULED_POD_UPDATE,
    "NodePorts": ClusterEvent.NODE_ADD | ClusterEvent.NODE_TAINT | ClusterEvent.ASSIGNED_POD_DELETE,
    "NodeResourcesFit": (ClusterEvent.NODE_ADD | ClusterEvent.NODE_ALLOCATABLE | ClusterEvent.NODE_TAINT
                         | ClusterEvent.NODE_LABEL | ClusterEvent.ASSIGNED_POD_DELETE
                         | ClusterEvent.UNSCHEDULED_POD_UPDATE),
}


def pod_priority(pod: Pod) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return pod.spec.priority or 0


def backoff_duration(attempts: int) -> int:
    """calculateBackoffDuration: 1 s doubled for every attempt after the first, at most 10 s."""
    duration = INITIAL_BACKOFF_MS
    for _ in range(1, attempts):
        if duration > MAX_BACKOFF_MS - duration:
            return MAX_BACKOFF_MS
        duration += duration
    return duration


def _next_tick(start: int, period: int, at_least: int) -> int:
    """The first tick start + k·period (k ≥ 1) that is ≥ at_least."""
    k = max(1, -(-(at_least - start) // period))
    return start + k * period


class QueuedPodInfo:
    """framework.QueuedPodInfo: the pod, its queue timestamp, attempts and the plugins that rejected it."""

    __slots__ = ("pod", "timestamp", "attempts", "initial_attempt_timestamp", "unschedulable_plugins", "seq")

    def __init__(self, pod: Pod, now: int) -> None:
        self.pod = pod
        self.timestamp = now
        self.attempts = 0
        self.initial_attempt_timestamp: Optional[int] = None
        self.unschedulable_plugins: frozenset[str] = frozenset()
        self.seq = 0

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    def backoff_expiry(self) -> int:
        return self.timestamp + backoff_duration(self.attempts)

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.key}, attempts={self.attempts}, t={self.timestamp})"


class SchedulingQueue:
    """PriorityQueue (see the module docstring). `start` is when the flush loops started (the grid origin)."""

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._active: dict[str, QueuedPodInfo] = {}
        self._heap: list[tuple[int, int, int, str]] = []
        self.backoff: dict[str, QueuedPodInfo] = {}
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self._seq = 0

    # -- views ---------------------------------------------------------------------------------------------

    def has_active(self) -> bool:
        return bool(self._active)

    @property
    def active(self) -> list[str]:
        """activeQ's keys in pop order (a view for tests)."""
        return [k for _, _, seq, k in sorted(self._heap) if k in self._active and self._active[k].seq == seq]

    def where(self, key: str) -> str:
        """'active', 'backoff', 'unschedulable' or '' (not queued)."""
        if key in self._active:
            return "active"
        if key in self.backoff:
            return "backoff"
        if key in self.unschedulable:
            return "unschedulable"
        return ""

    def __contains__(self, key: str) -> bool:
        return bool(self.where(key))

    def __len__(self) -> int:
        return len(self._active) + len(self.backoff) + len(self.unschedulable)

    # -- moving pods ---------------------------------------------------------------------------------------

    def _push_active(self, info: QueuedPodInfo) -> None:
        self._seq += 1
        info.seq = self._seq
        self._active[info.key] = info
        heapq.heappush(self._heap, (-pod_priority(info.pod), info.timestamp, info.seq, info.key))

    def add(self, pod: Pod, now: int) -> None:
        """Add: a new pending pod goes to activeQ (an already queued one is updated in place instead)."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if key in self:
            self.update(pod, now)
            return
        self._push_active(QueuedPodInfo(pod, now))

    def update(self, pod: Pod, now: int) -> None:
        """Update: keep the newest pod; an unschedulable pod whose spec or metadata changed is moved."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        for where in (self._active, self.backoff):
            info = where.get(key)
            if info is not None:
                info.pod = pod
                return
        info = self.unschedulable.get(key)
        if info is None:
            self._push_active(QueuedPodInfo(pod, now))
            return
        old = info.pod
        info.pod = pod
        if (old.spec != pod.spec or old.metadata.labels != pod.metadata.labels
                or old.metadata.annotations != pod.metadata.annotations):
            if any(PLUGIN_EVENTS.get(p, ClusterEvent(0)) & ClusterEvent.UNSCHEDULED_POD_UPDATE
                   for p in info.unschedulable_plugins):
                self._requeue(info, now)

    def delete(self, key: str) -> None:
        self._active.pop(key, None)
        self.backoff.pop(key, None)
        self.unschedulable.pop(key, None)

    def pop(self, now: int) -> Optional[QueuedPodInfo]:
        """Pop: the head of activeQ, with one more attempt counted."""
        while self._heap:
            _, _, seq, key = heapq.heappop(self._heap)
            info = self._active.get(key)
            if info is None or info.seq != seq:
                continue  # a stale heap entry
            del self._active[key]
            info.attempts += 1
            if info.initial_attempt_timestamp is None:
                info.initial_attempt_timestamp = now
            return info
        return None

    def add_unschedulable(self, info: QueuedPodInfo, plugins: Iterable[str], now: int) -> None:
        """AddUnschedulableIfNotPresent after a failed attempt: unschedulablePods if plugins rejected the pod,
        else backoffQ."""
        if info.key in self:
            return
        info.timestamp = now
        info.unschedulable_plugins = frozenset(plugins)
        if info.unschedulable_plugins:
            self.unschedulable[info.key] = info
        else:
            self.backoff[info.key] = info

    def _requeue(self, info: QueuedPodInfo, now: int) -> None:
        self.unschedulable.pop(info.key, None)
        if info.backoff_expiry() > now:
            self.backoff[info.key] = info
        else:
            self._push_active(info)

    def move_all(self, event: ClusterEvent, now: int, hint=None) -> int:
        """MoveAllToActiveOrBackoffQueue: move the unschedulable pods whose rejecting plugins registered
        `event` (and whose hint, `hint(info) -> bool`, if given, says Queue). Returns how many moved."""
        moved = 0
        for info in sorted(self.unschedulable.values(), key=lambda i: (i.timestamp, i.key)):
            if not any(PLUGIN_EVENTS.get(p, ClusterEvent(0)) & event for p in info.unschedulable_plugins):
                continue
            if hint is not None and not hint(info):
                continue
            self._requeue(info, now)
            moved += 1
        return moved

    # -- the flush loops ------------------------------------------------------------------------------------

    def flush(self, now: int) -> None:
        """What the 1 s and 30 s loops would have done by `now` (call it at the ticks next_wakeup names)."""
        if (now - self.start) % BACKOFF_FLUSH_PERIOD_MS == 0:
            for info in sorted(self.backoff.values(), key=lambda i: (i.backoff_expiry(), i.key)):
                if info.backoff_expiry() <= now:
                    del self.backoff[info.key]
                    self._push_active(info)
        if (now - self.start) % UNSCHEDULABLE_FLUSH_PERIOD_MS == 0:
            for info in sorted(self.unschedulable.values(), key=lambda i: (i.timestamp, i.key)):
                if now - info.timestamp > POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS:
                    self._requeue(info, now)

    def latest_wakeup(self, now: int) -> Optional[int]:
        """The last tick (at or after `now`) at which `flush` would move a pod queued now, or None."""
        times = []
        if self.backoff:
            expiry = max(i.backoff_expiry() for i in self.backoff.values())
            times.append(_next_tick(self.start, BACKOFF_FLUSH_PERIOD_MS, max(expiry, now)))
        if self.unschedulable:
            newest = max(i.timestamp for i in self.unschedulable.values())
            times.append(_next_tick(self.start, UNSCHEDULABLE_FLUSH_PERIOD_MS,
                                    max(newest + POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS + 1, now)))
        return max(times) if times else None

    def next_wakeup(self, now: int) -> Optional[int]:
        """The next tick (at or after `now`) at which `flush` would move some pod, or None."""
        times = []
        if self.backoff:
            expiry = min(i.backoff_expiry() for i in self.backoff.values())
            times.append(_next_tick(self.start, BACKOFF_FLUSH_PERIOD_MS, max(expiry, now)))
        if self.unschedulable:
            oldest = min(i.timestamp for i in self.unschedulable.values())
            times.append(_next_tick(self.start, UNSCHEDULABLE_FLUSH_PERIOD_MS,
                                    max(oldest + POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS + 1, now)))
        return min(times) if times else None
