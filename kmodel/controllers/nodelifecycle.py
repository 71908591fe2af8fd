"""The node lifecycle controller (pkg/controller/nodelifecycle/node_lifecycle_controller.go).

Theory of operation
-------------------
Informers on nodes, the kube-node-lease Leases and pods (indexed by node). The decisions are
kmodel/controllers/node_lifecycle_logic.py; this module is the component around them.

Monitor pass (monitorNodeHealth), first as soon as the caches have synced, then `node_monitor_period`
(5 s) after the previous pass *ended* (wait.Until is sliding):

1. classifyNodes: a node not seen before gets the event RegisteredNode (`Registered Node X in
   Controller`) and markNodeAsReachable (its unreachable/not-ready NoExecute taints are removed, as
   upstream does for every node it first sees, also after a controller restart); a node gone gets
   RemovingNode (`Removing Node X from Controller`).
2. For each node, in name order, tryUpdateNodeHealth with the node from the cache and its Lease's
   renewTime. When it turns Ready (and the pressure conditions) Unknown, the status is written with an
   update of nodes/status carrying the cached resourceVersion; on an error the node is read again
   (consistent GET) and the whole step retried, at most 5 attempts (NodeHealthUpdateRetry); after that
   the node is skipped for this pass. The health record is stored once the write succeeded.
3. Then, for a node with a Ready condition, processTaintBaseEviction on the *observed* (pre-pass)
   condition: False/Unknown swap at once a wrong opposite taint, or mark the node for tainting (the
   NoExecute taint queue); True: markNodeAsReachable. If Ready went from True to not True in this pass:
   event NodeNotReady (`Node X status is now: NodeNotReady`) and MarkPodsNotReady (every pod on the node
   gets Ready=False through pods/status and a Warning NodeNotReady `Node is not ready` event); a failure
   there retries at the next pass while the node stays not ready (nodesToRetry).
4. When every node's step is done, handleDisruption: per zone (topology region/zone labels) the state is
   Normal, PartialDisruption (> 2 not ready and >= 55 %) or FullDisruption (none ready). If every zone is
   fully disrupted the controller enters "master disruption mode": all nodes are marked reachable and no
   NoExecute taint is added anywhere (a cluster that lost every node, e.g. to a control-plane partition,
   must not evict everything). Leaving it resets every node's probe timestamp to now. Otherwise a zone's
   tainting rate follows its state: Normal and FullDisruption taint, PartialDisruption taints only in
   zones larger than 50 nodes (secondary rate), i.e. not at all in small zones.

Work queue keys: ("noexecute", node) is doNoExecuteTaintingPass for that node: from the cache, Ready
False -> not-ready:NoExecute, Unknown -> unreachable:NoExecute (removing the other), True -> nothing; in a
zone whose tainting is stopped the key is parked until it resumes. ("noschedule", node), queued by every
node event, is doNoScheduleTaintingPass. Taints are written as SwapNodeControllerTaint does: the cached
node updated with resourceVersion, re-read and retried on conflict (RetryOnConflict, 5 steps).

Heard log (an observation record, read by the eviction-timing invariant; not used by any decision): every
time a heartbeat change of a node reaches the informers, `heard` gets (now, node): a Node added with a Ready
condition, a Node whose Ready condition's lastHeartbeatTime changed (or that gained or lost its Ready
condition), a Lease whose renewTime is newer than any this process has seen for that node. Each start of the
process appends (now, None). It lives outside the process's memory (a crash keeps it), like the audit log:
upstream's grace period runs from probeTimestamp, the controller's own clock when a pass *noticed* such a
change in its caches, so a heartbeat its informers did not receive yet does not count.

Zones come and go with their nodes: a zone is added (Initial, tainting at the healthy rate) when a pass first
sees a node of it, whether a new node or a known node whose zone was dropped (classifyNodes'
newZoneRepresentatives, addPodEvictorForNewZone, which keys on the zone states), and handleDisruption drops a
zone that had no node in the pass from the states while it looks for a zone not fully disrupted, stopping at
the first such zone. A zone left behind by that stop has no new state: as upstream reads the missing key of
a Go map, its state is "" (STATE_NONE), which changes no rate, until a later pass drops it. Upstream walks
the zone states in Go's random map order, so which zones with no nodes are dropped before the stop varies
from pass to pass; the model walks them in sorted order (deterministic runs), one of the orders upstream can
take.

Differences from upstream: the NoExecute taint queue's token bucket (0.1 node/s per zone, 0.01 in a large
partially disrupted zone) is not modelled: a zone either taints at once or not at all. A pass ends when
its status writes are answered; the taint and pod-status writes it starts are not waited for. Events are
not deduplicated by a correlator.
"""

from __future__ import annotations

from typing import Any, Hashable, Optional

from kmodel.apiserver.bootstrap_policy import events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.wire import Response
from kmodel.client import NODE_NAME_INDEX, index_by_node_name, retry_on_conflict
from kmodel.cluster.components import ClusterContext
from kmodel.component import Out
from kmodel.objects import Node, ObjectReference, Pod
from kmodel.objects.fastevolve import evolve
from kmodel.memo import identity_memo
from kmodel.fixes import TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD, TAINTEVICTION_RETRY_FAILED_EVICTIONS

from . import node_lifecycle_logic as nl
from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .nodeipam import status_change_message
from .tainteviction import NAME as TAINT_EVICTION_NAME, TaintEvictionController

NAME = "controller/nodelifecycle"
EVENT_SOURCE = "node-controller"
MONITOR_TIMER = "nodelifecycle/monitor"
LEASE_NAMESPACE = "kube-node-lease"
NODE_HEALTH_UPDATE_RETRY = 5
UNHEALTHY_ZONE_THRESHOLD = 0.55
LARGE_CLUSTER_THRESHOLD = 50
EVICTION_LIMITER_QPS = 0.1
SECONDARY_EVICTION_LIMITER_QPS = 0.01
LABEL_EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"
LABEL_ZONE = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
LABEL_REGION = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")

STATE_INITIAL = "Initial"
STATE_NORMAL = "Normal"
STATE_FULL_DISRUPTION = "FullDisruption"
STATE_PARTIAL_DISRUPTION = "PartialDisruption"
#: the state of a zone with no node in the pass (Go's zero ZoneState, the missing key of newZoneStates)
STATE_NONE = ""


def zone_key(node: Node) -> str:
    """nodetopology.GetZoneKey: "" when the node has neither region nor zone labels."""
    labels = node.metadata.labels
    return _zone_key_of(labels) if type(labels) is dict else _zone_of_labels(labels)


def _zone_key_of(labels: Any) -> str:
    region = next((labels[k] for k in LABEL_REGION if labels.get(k)), "")
    zone = next((labels[k] for k in LABEL_ZONE if labels.get(k)), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


# a node's labels are one frozen map shared by its versions: its zone is read once per map, not at each of the
# several looks of every monitor pass (a plain dict, which could change, is read every time)
_zone_of_labels = identity_memo(_zone_key_of)


def compute_zone_state(ready_conditions: list) -> tuple[int, str]:
    """ComputeZoneState: (not ready count, state) from the zone's current Ready conditions."""
    ready = sum(1 for c in ready_conditions if c is not None and c.status == "True")
    not_ready = len(ready_conditions) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, STATE_FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= UNHEALTHY_ZONE_THRESHOLD:
        return not_ready, STATE_PARTIAL_DISRUPTION
    return not_ready, STATE_NORMAL


def zone_qps(state: str, zone_size: int) -> Optional[float]:
    """setLimiterInZone's rate: healthy for Normal and FullDisruption, ReducedQPSFunc for Partial; None (the
    rate stays) for any other state (STATE_NONE: a zone with no node in the pass)."""
    if state == STATE_PARTIAL_DISRUPTION:
        return SECONDARY_EVICTION_LIMITER_QPS if zone_size > LARGE_CLUSTER_THRESHOLD else 0.0
    if state in (STATE_NORMAL, STATE_FULL_DISRUPTION):
        return EVICTION_LIMITER_QPS
    return None


def mark_pod_not_ready(pod: Pod, now: int) -> Optional[Pod]:
    """MarkPodsNotReady for one pod: its Ready condition set False (UpdatePodCondition); None when the
    pod has no Ready condition or it is already False."""
    conds = pod.status.conditions
    for i, c in enumerate(conds):
        if c.type != "Ready":
            continue
        if c.status == "False":
            return None
        new = evolve(c, status="False", last_transition_time=now)
        status = evolve(pod.status, conditions=conds[:i] + (new,) + conds[i + 1:])
        return evolve(pod, status=status)
    return None


class _Pass:
    """One monitor pass in progress: nodes whose step is not done, and the zones' Ready conditions."""

    __slots__ = ("remaining", "nodes", "zones")

    def __init__(self, nodes: list) -> None:
        self.remaining = len(nodes)
        self.nodes = nodes
        self.zones: dict[str, list] = {}


class NodeLifecycleController(Controller):
    """See the module docstring."""

    service_account = "node-controller"
    #: what invariants may read of it (kmodel.invariants.records): the log of what it heard, `heard`
    RECORDS = Controller.RECORDS | {"heard"}

    event_source = EVENT_SOURCE

    def __init__(self, endpoints: tuple[str, ...] | list[str], *, monitor_period_ms: int = nl.DEFAULT_NODE_MONITOR_PERIOD_MS,
                 grace_period_ms: int = nl.DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
                 startup_grace_period_ms: int = nl.DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS, name: str = NAME,
                 switches: Switches = DEFAULT_SWITCHES) -> None:
        self.monitor_period_ms = monitor_period_ms
        self.grace_period_ms = grace_period_ms
        self.startup_grace_period_ms = startup_grace_period_ms
        #: (time, node) when a heartbeat change of node reached the informers; (time, None) at each start
        self.heard: list[tuple[int, Optional[str]]] = []
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.health: dict[str, nl.NodeHealth] = {}
        self.known: dict[str, Node] = {}
        self.zone_states: dict[str, str] = {}
        self.zone_qps: dict[str, float] = {}
        self.parked: dict[str, dict[str, None]] = {}  # zone -> nodes waiting for tainting to resume
        self.nodes_to_retry: dict[str, None] = {}
        self.pass_due = True
        self.passes = 0
        self._pass: Optional[_Pass] = None
        self._renewals_seen: dict[str, int] = {}  # node -> the newest Lease renewTime seen by this process
        self.nodes = self.informer("nodes", key=lambda node: ("noschedule", node.metadata.name),
                                   on_add=self._node_added, on_update=self._node_updated)
        self.leases = self.informer("leases", namespace=LEASE_NAMESPACE, on_add=self._lease_seen,
                                    on_update=lambda now, old, new, out: self._lease_seen(now, new, out),
                                    on_delete=_ignore)
        self.pods = self.informer("pods", indexers={NODE_NAME_INDEX: index_by_node_name}, on_add=_ignore,
                                  on_update=_ignore, on_delete=_ignore)

    # -- the component ---------------------------------------------------------------------------------------

    def on_started(self, now: int, out: Out) -> None:
        self.heard.append((now, None))

    def _node_added(self, now: int, node: Node, out: Out) -> None:
        self.queue.add(("noschedule", node.metadata.name))
        if nl.get_condition(node, "Ready") is not None:
            self.heard.append((now, node.metadata.name))

    def _node_updated(self, now: int, old: Node, new: Node, out: Out) -> None:
        self.queue.add(("noschedule", new.metadata.name))
        before, after = nl.get_condition(old, "Ready"), nl.get_condition(new, "Ready")
        if (before is None) != (after is None) or (
                before is not None and after is not None and before.last_heartbeat_time != after.last_heartbeat_time):
            self.heard.append((now, new.metadata.name))

    def _lease_seen(self, now: int, lease: Any, out: Out) -> None:
        name, renew = lease.metadata.name, lease.spec.renew_time
        if renew is not None and renew > self._renewals_seen.get(name, -1):
            self._renewals_seen[name] = renew
            self.heard.append((now, name))

    def has_work(self) -> bool:
        return (self.pass_due and self.synced()) or super().has_work()

    def work(self, now: int, out: Out) -> None:
        if self.pass_due and self.synced():
            self.pass_due = False
            self._monitor(now, out)
        else:
            super().work(now, out)

    def on_own_timer(self, now: int, name: str, out: Out) -> None:
        if name == MONITOR_TIMER:
            self.pass_due = True

    # -- monitorNodeHealth -----------------------------------------------------------------------------------

    def _monitor(self, now: int, out: Out) -> None:
        self.passes += 1
        nodes = sorted(self.nodes.list(), key=lambda n: n.metadata.name)
        current = {n.metadata.name: n for n in nodes}
        for node in nodes:
            name = node.metadata.name
            if name not in self.known:
                self._node_event(now, out, node, "RegisteredNode", f"Registered Node {name} in Controller")
                self.known[name] = node
                self._zone_seen(zone_key(node))
                self._mark_reachable(now, out, node)
            else:
                self._zone_seen(zone_key(node))  # newZoneRepresentatives: its zone was dropped meanwhile
        for name in [n for n in self.known if n not in current]:
            node = self.known.pop(name)
            self._node_event(now, out, node, "RemovingNode", f"Removing Node {name} from Controller")
        self._pass = p = _Pass(nodes)
        if not nodes:
            self._end_pass(now, out, p)
        for node in nodes:
            self._update_health(now, out, p, node, 1)

    def _zone_seen(self, zone: str) -> None:
        """addPodEvictorForNewZone: a zone not in the states starts Initial, with a new taint queue at the
        healthy rate."""
        if zone not in self.zone_states:
            self.zone_states[zone] = STATE_INITIAL
            self.zone_qps[zone] = EVICTION_LIMITER_QPS
            self.parked.pop(zone, None)  # the old queue is gone; a pass marks its nodes again while not ready

    def _update_health(self, now: int, out: Out, p: _Pass, node: Node, attempt: int) -> None:
        name = node.metadata.name
        lease = self.leases.get(LEASE_NAMESPACE, name)
        renew = lease.spec.renew_time if lease is not None else None
        upd = nl.try_update_node_health(node, renew, self.health.get(name), now, self.grace_period_ms,
                                        self.startup_grace_period_ms)
        if not upd.status_changed:
            self.health[name] = upd.health
            self._after_health(now, out, p, upd)
            return

        def written(t: int, response: Response, o: Out) -> None:
            if response.ok:
                self.health[name] = upd.health
                self._after_health(t, o, p, evolve(upd, node=response.body))
            elif attempt < NODE_HEALTH_UPDATE_RETRY:
                self.client.get(t, o, "nodes", name, on_done=reread)
            else:
                self._step_done(t, o, p)  # "Skipping - no pods will be evicted"

        def reread(t: int, response: Response, o: Out) -> None:
            if response.ok:
                self._update_health(t, o, p, response.body, attempt + 1)
            else:
                self._step_done(t, o, p)

        self.client.update_status(now, out, "nodes", upd.node, on_done=written)

    def _after_health(self, now: int, out: Out, p: _Pass, upd: nl.HealthUpdate) -> None:
        node = upd.node
        name = node.metadata.name
        current, observed = upd.current_ready, upd.observed_ready
        if node.metadata.labels.get(LABEL_EXCLUDE_DISRUPTION) is None:
            p.zones.setdefault(zone_key(node), []).append(current)
        if current is not None:
            self._process_taint_base_eviction(now, out, node, observed.status)
            retry = name in self.nodes_to_retry
            if current.status != "True" and observed.status == "True":
                self._node_event(now, out, node, "NodeNotReady", status_change_message(name, "NodeNotReady"),
                                 uid=node.metadata.uid)
                self._mark_pods_not_ready(now, out, name)
            elif retry and observed.status != "True":
                self._mark_pods_not_ready(now, out, name)
            else:
                self.nodes_to_retry.pop(name, None)
        else:
            self.nodes_to_retry.pop(name, None)
        self._step_done(now, out, p)

    def _step_done(self, now: int, out: Out, p: _Pass) -> None:
        p.remaining -= 1
        if p.remaining == 0:
            self._end_pass(now, out, p)

    def _end_pass(self, now: int, out: Out, p: _Pass) -> None:
        if self._pass is not p:
            return
        self._pass = None
        self._handle_disruption(now, out, p)
        out.set_timer(MONITOR_TIMER, at=now + self.monitor_period_ms)

    # -- taints ----------------------------------------------------------------------------------------------

    def _process_taint_base_eviction(self, now: int, out: Out, node: Node, observed: str) -> None:
        taints = node.spec.taints
        if observed == "False":
            if nl.taint_exists(taints, nl.UNREACHABLE_TAINT):
                self._swap(now, out, node, lambda n: nl.no_execute_taint_change(n, "False"))
            else:
                self._mark_for_tainting(node)
        elif observed == "Unknown":
            if nl.taint_exists(taints, nl.NOT_READY_TAINT):
                self._swap(now, out, node, lambda n: nl.no_execute_taint_change(n, "Unknown"))
            else:
                self._mark_for_tainting(node)
        elif observed == "True":
            self._mark_reachable(now, out, node)

    def _mark_for_tainting(self, node: Node) -> None:
        self.queue.add(("noexecute", node.metadata.name))

    def _mark_reachable(self, now: int, out: Out, node: Node) -> None:
        """markNodeAsReachable: remove both NoExecute taints and take the node out of the taint queue."""
        self.parked.get(zone_key(node), {}).pop(node.metadata.name, None)
        if nl.no_execute_taint_change(node, "True"):
            self._swap(now, out, node, lambda n: nl.no_execute_taint_change(n, "True"))

    def _swap(self, now: int, out: Out, node: Node, change_of: Any, sync: Optional[Sync] = None) -> None:
        """SwapNodeControllerTaint from the cached node; re-read and retried on conflict."""
        def mutate(n: Node) -> Optional[Node]:
            new = nl.swap_taints(n, change_of(n), now)
            return None if new is n else new

        if sync is not None:
            sync.pending += 1

        def done(t: int, response: Optional[Response], o: Out) -> None:
            if sync is not None:
                if response is not None and response.code >= 400 and response.code != 404:
                    sync.fail()
                sync.pending -= 1
                sync.maybe_finish(t, o)

        retry_on_conflict(self.client, now, out, resource="nodes", namespace="", name=node.metadata.name,
                          mutate=mutate, on_done=done, current=node)

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        kind, name = key
        node = self.nodes.get("", name)
        if node is None:
            return
        if kind == "noschedule":
            if nl.no_schedule_taint_change(node):
                self._swap(now, out, node, nl.no_schedule_taint_change, sync)
            return
        # doNoExecuteTaintingPass for one node
        zone = zone_key(node)
        if self.zone_qps.get(zone, EVICTION_LIMITER_QPS) <= 0:
            self.parked.setdefault(zone, {})[name] = None
            return
        ready = nl.get_condition(node, "Ready")
        if ready is None:
            sync.requeue_after(50)
            return
        if ready.status in ("False", "Unknown") and nl.no_execute_taint_change(node, ready.status):
            status = ready.status
            self._swap(now, out, node, lambda n: nl.no_execute_taint_change(n, status), sync)

    # -- handleDisruption ------------------------------------------------------------------------------------

    def _handle_disruption(self, now: int, out: Out, p: _Pass) -> None:
        new_states: dict[str, str] = {}
        all_are_full = True
        for zone in sorted(p.zones):
            _, state = compute_zone_state(p.zones[zone])
            if state != STATE_FULL_DISRUPTION:
                all_are_full = False
            new_states[zone] = state
            self.zone_states.setdefault(zone, STATE_INITIAL)
        all_were_full = True
        for zone in sorted(self.zone_states):
            if zone not in p.zones:
                del self.zone_states[zone]
                continue
            if self.zone_states[zone] != STATE_FULL_DISRUPTION:
                all_were_full = False
                break
        if all_are_full and all_were_full:
            return
        if all_are_full:  # entering master disruption mode: stop all evictions
            for node in p.nodes:
                self._mark_reachable(now, out, node)
            for zone in self.zone_states:
                self._set_qps(zone, 0.0)
                self.zone_states[zone] = STATE_FULL_DISRUPTION
            return
        if all_were_full:  # exiting it
            for node in p.nodes:
                h = self.health.get(node.metadata.name)
                if h is not None:
                    self.health[node.metadata.name] = evolve(h, probe_timestamp=now,
                                                                   ready_transition_timestamp=now)
            for zone in sorted(self.zone_states):
                state = new_states.get(zone, STATE_NONE)
                self._set_limiter(zone, len(p.zones.get(zone, ())), state)
                self.zone_states[zone] = state
            return
        for zone in sorted(self.zone_states):
            state = new_states.get(zone, STATE_NONE)
            if self.zone_states[zone] != state:
                self._set_limiter(zone, len(p.zones.get(zone, ())), state)
                self.zone_states[zone] = state

    def _set_limiter(self, zone: str, size: int, state: str) -> None:
        """setLimiterInZone: the rate of the zone's state; a state with none (STATE_NONE) leaves it."""
        qps = zone_qps(state, size)
        if qps is not None:
            self._set_qps(zone, qps)

    def _set_qps(self, zone: str, qps: float) -> None:
        self.zone_qps[zone] = qps
        if qps > 0:
            for name in self.parked.pop(zone, {}):
                self.queue.add(("noexecute", name))

    # -- pods and events -------------------------------------------------------------------------------------

    def _mark_pods_not_ready(self, now: int, out: Out, node_name: str) -> None:
        for pod in self.pods.by_index(NODE_NAME_INDEX, node_name):
            new = mark_pod_not_ready(pod, now)
            if new is None:
                continue

            def done(t: int, response: Response, o: Out, pod: Pod = pod) -> None:
                if response.ok:
                    self.event(t, o, pod, "Warning", "NodeNotReady", "Node is not ready")
                elif response.code != 404:
                    self.nodes_to_retry[node_name] = None

            self.client.update_status(now, out, "pods", new, on_done=done)

    def _node_event(self, now: int, out: Out, node: Node, reason: str, message: str, uid: str = "") -> None:
        ref = ObjectReference(kind="Node", name=node.metadata.name, uid=uid or node.metadata.uid, api_version="v1")
        self.event(now, out, ref, "Normal", reason, message)


def _ignore(*args: Any) -> None:
    return None


#: node lifecycle and taint eviction run as node-controller, and so does node IPAM (its registration shares these)
@controller("nodelifecycle", service_account="node-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "update", "delete", "patch"), ("nodes",)),
    rule(("patch", "update"), ("nodes/status",)),
    rule(("patch", "update"), ("pods/status",)),
    rule(("list", "watch", "get", "delete"), ("pods",)),
    events_rule()))
def make(ctx: ClusterContext) -> list:
    """The node lifecycle controller and the taint eviction controller (both in kube-controller-manager)."""
    c = ctx.config
    return [
        NodeLifecycleController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                                monitor_period_ms=c.node_monitor_period_ms,
                                grace_period_ms=c.node_monitor_grace_period_ms,
                                startup_grace_period_ms=c.node_startup_grace_period_ms),
        TaintEvictionController(ctx.apiservers, name=ctx.named(TAINT_EVICTION_NAME), switches=ctx.switches,
                                retry_failed_evictions=TAINTEVICTION_RETRY_FAILED_EVICTIONS in c.fixes,
                                evict_only_the_scheduled_pod=TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD in c.fixes),
    ]
