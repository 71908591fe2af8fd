"""The node lifecycle controller's health and taint decisions (pkg/controller/nodelifecycle/
node_lifecycle_controller.go: tryUpdateNodeHealth, processTaintBaseEviction, doNoExecuteTaintingPass,
doNoScheduleTaintingPass, markNodeAsReachable; controller/util/node SwapNodeControllerTaint).

Theory of operation
-------------------
The controller keeps, per node, a `NodeHealth`: when it last *heard* from the node (probe_timestamp, in
its own logical time), when Ready last changed, the Ready condition it saw last and the Lease renewTime it
saw last. Every monitor pass (5 s) `try_update_node_health`:

1. takes the node's Ready condition; a node that never posted one gets a fake Unknown one dated at its
   creation and the *startup* grace period (60 s), else the grace period (40 s here, 50 s since 1.32);
2. bumps probe_timestamp to now when the Ready condition's lastHeartbeatTime changed (and the transition
   timestamp when its lastTransitionTime changed), when the node is first seen, or when the Lease's
   renewTime moved forward;
3. if now is strictly after probe_timestamp + grace, sets Ready, MemoryPressure, DiskPressure and
   PIDPressure to Unknown (reason NodeStatusUnknown, message `Kubelet stopped posting node status.`,
   transition time now; a condition never posted is added with NodeStatusNeverUpdated /
   `Kubelet never posted node status.`) and, if Ready changed, the status is written.

It returns the *observed* Ready condition (before this pass's change), and taints follow the observed
one, so a node that goes Unknown at one pass is tainted at the next, as upstream.
`no_execute_taint_change` maps Ready False -> not-ready:NoExecute, Unknown -> unreachable:NoExecute (each
removing the other), True -> remove both; `no_schedule_taint_change` maps every condition to its
NoSchedule taint (not-ready / unreachable / memory-, disk-, pid-pressure / network-unavailable) plus
unschedulable. `swap_taints` applies a change as SwapNodeControllerTaint does (timeAdded = now).

Difference: upstream adds NoExecute taints through a per-zone rate-limited queue (0.1 node/s in a
healthy zone, less in a partially disrupted one); here the decision is immediate, and a zone's disruption
state is not modelled. Upstream stores the whole Lease; only its renewTime matters and is kept here.
"""

from __future__ import annotations

from typing import Sequence

import attrs

from kmodel.objects import Node, NodeCondition, Taint
from kmodel.objects.fastevolve import evolve

DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS = 40_000
DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS = 60_000
DEFAULT_NODE_MONITOR_PERIOD_MS = 5_000

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"

UNREACHABLE_TAINT = Taint(key=TAINT_NODE_UNREACHABLE, effect="NoExecute")
NOT_READY_TAINT = Taint(key=TAINT_NODE_NOT_READY, effect="NoExecute")

NODE_STATUS_UNKNOWN_REASON = "NodeStatusUnknown"
NODE_STATUS_UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NODE_STATUS_NEVER_UPDATED_REASON = "NodeStatusNeverUpdated"
NODE_STATUS_NEVER_UPDATED_MESSAGE = "Kubelet never posted node status."

_UNKNOWN_CONDITION_TYPES = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")

_CONDITION_TO_TAINT = {
    "Ready": {"False": TAINT_NODE_NOT_READY, "Unknown": TAINT_NODE_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_NODE_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_NODE_DISK_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NODE_NETWORK_UNAVAILABLE},
    "PIDPressure": {"True": TAINT_NODE_PID_PRESSURE},
}
_CONDITION_TAINT_KEYS = frozenset(k for m in _CONDITION_TO_TAINT.values() for k in m.values())


@attrs.frozen
class NodeHealth:
    """nodeHealthData: probe_timestamp and ready_transition_timestamp (logical ms), the Ready condition of
    the status last stored (None if it had none), the renewTime of the Lease last stored (None: no Lease)."""

    probe_timestamp: int
    ready_transition_timestamp: int
    saved_ready: NodeCondition | None = None
    lease_renew_time: int | None = None


@attrs.frozen
class HealthUpdate:
    """The outcome of one tryUpdateNodeHealth: node (with the Unknown conditions when status_changed),
    the new health record, the grace period used, the observed Ready condition (before this pass) and
    the current one (after it)."""

    node: Node
    health: NodeHealth
    grace_period_ms: int
    observed_ready: NodeCondition
    current_ready: NodeCondition | None
    status_changed: bool


def get_condition(node: Node, cond_type: str) -> NodeCondition | None:
    for c in node.status.conditions:
        if c.type == cond_type:
            return c
    return None


def try_update_node_health(node: Node, lease_renew_time: int | None, health: NodeHealth | None, now_ms: int,
                           grace_period_ms: int = DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
                           startup_grace_period_ms: int = DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS) -> HealthUpdate:
    """tryUpdateNodeHealth. lease_renew_time: the node's Lease spec.renewTime (None: no Lease)."""
    created = node.metadata.creation_timestamp or 0
    current_ready = get_condition(node, "Ready")
    if current_ready is None:
        observed = NodeCondition(type="Ready", status="Unknown", last_heartbeat_time=node.metadata.creation_timestamp,
                                 last_transition_time=node.metadata.creation_timestamp)
        grace = startup_grace_period_ms
        if health is not None:
            health = evolve(health, saved_ready=None)
        else:
            health = NodeHealth(created, created, None, None)
    else:
        observed = current_ready
        grace = grace_period_ms

    saved = health.saved_ready if health is not None else None
    saved_lease = health.lease_renew_time if health is not None else None
    if health is None:
        health = NodeHealth(now_ms, now_ms, current_ready, None)
    elif saved is None and current_ready is not None:
        health = NodeHealth(now_ms, now_ms, current_ready, None)
    elif saved is not None and current_ready is None:
        health = NodeHealth(now_ms, now_ms, None, None)
    elif saved is not None and current_ready is not None and saved.last_heartbeat_time != current_ready.last_heartbeat_time:
        if saved.last_transition_time != current_ready.last_transition_time:
            transition = now_ms
        else:
            transition = health.ready_transition_timestamp
        health = NodeHealth(now_ms, transition, current_ready, None)
    else:
        health = evolve(health, saved_ready=current_ready)
    # The lease is carried over unless a branch above rebuilt the record (upstream drops it there too).
    if lease_renew_time is not None and (saved_lease is None or saved_lease < lease_renew_time):
        health = evolve(health, lease_renew_time=lease_renew_time, probe_timestamp=now_ms)

    status_changed = False
    if now_ms > health.probe_timestamp + grace:
        conditions = list(node.status.conditions)
        for ctype in _UNKNOWN_CONDITION_TYPES:
            idx = next((i for i, c in enumerate(conditions) if c.type == ctype), None)
            if idx is None:
                conditions.append(NodeCondition(
                    type=ctype, status="Unknown", reason=NODE_STATUS_NEVER_UPDATED_REASON,
                    message=NODE_STATUS_NEVER_UPDATED_MESSAGE, last_heartbeat_time=node.metadata.creation_timestamp,
                    last_transition_time=now_ms))
            elif conditions[idx].status != "Unknown":
                conditions[idx] = evolve(conditions[idx], status="Unknown", reason=NODE_STATUS_UNKNOWN_REASON,
                                               message=NODE_STATUS_UNKNOWN_MESSAGE, last_transition_time=now_ms)
        new_node = evolve(node, status=evolve(node.status, conditions=tuple(conditions)))
        new_ready = get_condition(new_node, "Ready")
        if new_ready != observed:
            status_changed = True
            node = new_node
            current_ready = new_ready
            health = NodeHealth(health.probe_timestamp, now_ms, new_ready,
                                lease_renew_time if lease_renew_time is not None else health.lease_renew_time)
    return HealthUpdate(node, health, grace, observed, current_ready, status_changed)


# --- taints ----------------------------------------------------------------------------------------------

def match_taint(a: Taint, b: Taint) -> bool:
    """Taint.MatchTaint: same key and effect."""
    return a.key == b.key and a.effect == b.effect


def taint_exists(taints: Sequence[Taint], t: Taint) -> bool:
    return any(match_taint(x, t) for x in taints)


@attrs.frozen
class TaintChange:
    add: tuple = ()
    remove: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.add or self.remove)


def no_execute_taint_change(node: Node, observed_ready_status: str) -> TaintChange:
    """processTaintBaseEviction + doNoExecuteTaintingPass: the NoExecute taints for a Ready status.
    Empty when the node already carries the right taint."""
    taints = node.spec.taints
    if observed_ready_status == "False":
        want, opposite = NOT_READY_TAINT, UNREACHABLE_TAINT
    elif observed_ready_status == "Unknown":
        want, opposite = UNREACHABLE_TAINT, NOT_READY_TAINT
    else:
        # markNodeAsReachable: remove both.
        return TaintChange(remove=tuple(t for t in (UNREACHABLE_TAINT, NOT_READY_TAINT) if taint_exists(taints, t)))
    add = () if taint_exists(taints, want) else (want,)
    remove = (opposite,) if taint_exists(taints, opposite) else ()
    return TaintChange(add, remove)


def no_schedule_taint_change(node: Node) -> TaintChange:
    """doNoScheduleTaintingPass: NoSchedule taints from the conditions and spec.unschedulable."""
    wanted = []
    for c in node.status.conditions:
        key = _CONDITION_TO_TAINT.get(c.type, {}).get(c.status)
        if key is not None:
            wanted.append(Taint(key=key, effect="NoSchedule"))
    if node.spec.unschedulable:
        wanted.append(Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule"))
    present = [t for t in node.spec.taints if t.effect == "NoSchedule"
               and (t.key == TAINT_NODE_UNSCHEDULABLE or t.key in _CONDITION_TAINT_KEYS)]
    add = tuple(t for t in wanted if not taint_exists(present, t))
    remove = tuple(t for t in present if not taint_exists(wanted, t))
    return TaintChange(add, remove)


def swap_taints(node: Node, change: TaintChange, now_ms: int) -> Node:
    """SwapNodeControllerTaint: add (timeAdded = now, replacing a matching one) then remove."""
    taints = list(node.spec.taints)
    for t in change.add:
        t = evolve(t, time_added=now_ms)
        for i, old in enumerate(taints):
            if match_taint(old, t):
                if old != t:
                    taints[i] = t
                break
        else:
            taints.append(t)
    taints = [t for t in taints if not any(match_taint(t, r) for r in change.remove)]
    if tuple(taints) == node.spec.taints:
        return node
    return evolve(node, spec=evolve(node.spec, taints=tuple(taints)))
