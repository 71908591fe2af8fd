"""kube-scheduler as a sans-IO component: informers → scheduling queue → one pod per `work` → bind.

Theory of operation
-------------------
The scheduler reaches the API only through its `ApiClient` (token "scheduler-token", user
system:kube-scheduler). Two informers feed it, as upstream's eventhandlers.go:

* pods, with upstream's field selector `status.phase!=Succeeded,status.phase!=Failed` (a pod that finishes
  looks deleted). A pod bound to a node goes to the cache (SchedulerCache: NodeInfos, assumed pods); a pending
  pod (no spec.nodeName, schedulerName default-scheduler, not being deleted) goes to the SchedulingQueue. A
  bound pod's deletion frees its resources: the unschedulable pods interested in AssignedPodDelete move.
* nodes: added, updated and removed in the cache; an added node, or a change of its taints, labels,
  allocatable or conditions, moves the unschedulable pods interested in that event.

`has_work()` is true once both informers have synced and activeQ is not empty. `work()` is one scheduling
cycle (ScheduleOne): pop the head of activeQ, take the newest version of the pod from the informer (skip it
if gone, bound, being deleted or already assumed), run schedule_pod over the cache's NodeInfos and then:

* a node fits: assume the pod there, POST pods/<name>/binding. On 201 the `Scheduled` event
  `Successfully assigned <ns>/<pod> to <node>`; the informer then confirms the assumption. On an error the
  assumption is forgotten, the unschedulable pods move (AssignedPodDelete, as handleBindingCycleError does)
  and the failure is handled with reason SchedulerError;
* no node fits (FitError): the DefaultPreemption PostFilter message is appended (kmodel.scheduler.preemption),
  the pod goes to unschedulablePods with the plugins that rejected it, a `FailedScheduling` Warning event
  carries the message (truncated to 1024 bytes) and the PodScheduled condition becomes False / Unschedulable
  / message — written (a merge patch of status.conditions through pods/status) only when it changed, as
  updatePod/UpdatePodCondition do;
* no node at all: `no nodes available to schedule pods`, reason Unschedulable, the pod backs off.

Time: the queue's 1 s and 30 s flush loops run on a grid that starts when the scheduler (re)starts; one timer
("scheduler/flush") is armed for the next tick that moves a pod (see kmodel.scheduler.queue).

Variant direct-calls (kmodel.variants; the switch is `direct_calls`, set by `make` from the cluster's variant,
read in `_bind` only): instead of POSTing the Binding, the scheduler sends the assumed pod (spec.nodeName set)
straight to kubelet/<node>, a message that has no API server at either end.

Crash: everything in memory is lost (queue, cache, assumptions); on restart the informers list again and
every pending pod is queued anew, as a restarted kube-scheduler does. A binding sent before the crash may
still land; the new process sees it in its list.

Leader election (kmodel.client.leaderelection), on by default as upstream's --leader-elect: each kube-scheduler,
a lone one too, embeds a `LeaderElector` on the Lease kube-system/kube-scheduler (`elector`; None:
--leader-elect=false). As upstream's server.go, a
standby starts its informers and fills its cache and queue (they are started before the election), but schedules
nothing: `has_work` is false until it leads (OnStartedLeading runs sched.Run). OnStoppedLeading ("leaderelection
lost") makes the process exit (`ExitProcess`), to start again RESTART_DELAY_MS later.

Differences from upstream:
- Ties between equally good nodes go to the smallest name (upstream: random); see schedule_one.
- Binding is a separate goroutine upstream and here an asynchronous request: the next cycle may run
  before the answer, as upstream. Permit/Reserve/PreBind plugins (volumes) are not modelled.
- The PodScheduled condition is written with a JSON merge patch of the whole conditions list computed from
  the cached pod (upstream: a strategic merge patch keyed by condition type); only the scheduler writes the
  conditions of a pending pod, so the outcome is the same.
- Events are core/v1 Events created each time (no correlator aggregating repeats into a count); source
  component "default-scheduler".
- Leader election unless --leader-elect=false (`ClusterConfig.leader_elect`; see below); no preemption (see preemption.py), no extenders, one profile.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kmodel.component.registry import KUBE_SCHEDULER, component
from kmodel.apiserver.events import EventRecorder
from kmodel.apiserver.wire import Response
from kmodel.client import ApiClient, Informer
from kmodel.client.leaderelection import (
    RESTART_DELAY_MS, SCHEDULER_LEASE, ElectionConfig, LeaderElector, Leadership,
)
from kmodel.client.indexer import DeletedFinalStateUnknown
from kmodel.client.component import ClientComponent
from kmodel.client.rate_limiter import SCHEDULER_LIMIT
from kmodel.component import Component, Out
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.objects import Node, Pod, PodCondition
from kmodel.objects.codec import dump_struct
from kmodel.scheduler.cache import SchedulerCache
from kmodel.scheduler.framework import FitError, NoNodesAvailable, pod_host_ports
from kmodel.scheduler.preemption import post_filter_message
from kmodel.scheduler.queue import ClusterEvent, QueuedPodInfo, SchedulingQueue
from kmodel.scheduler.schedule_one import schedule_pod
from kmodel.objects.fastevolve import evolve
from kmodel.fixes import LEADERELECTION_FENCE_WRITES, SCHEDULER_COUNT_HOST_PORT_HOLDERS
from kmodel.variants import DIRECT_CALLS

DEFAULT_SCHEDULER_NAME = "default-scheduler"
SCHEDULER_TOKEN = "scheduler-token"
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
FLUSH_TIMER = "scheduler/flush"
ELECTION_TIMER = "leaderelection"
NOTE_LENGTH_LIMIT = 1024  # validation.NoteLengthLimit: an Event's message

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def truncate_message(message: str) -> str:
    """truncateMessage: an event message longer than 1024 bytes ends with " ..."."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


def is_pending_for_us(pod: Pod) -> bool:
    """An unassigned pod of the default scheduler that is not being deleted."""
    return (not pod.spec.node_name and pod.spec.scheduler_name == DEFAULT_SCHEDULER_NAME
            and pod.metadata.deletion_timestamp is None)


def updated_conditions(conditions: tuple, condition: PodCondition, now: int) -> Optional[tuple]:
    """podutil.UpdatePodCondition: the new conditions list, or None if nothing changed. lastTransitionTime
    moves only when the status changes."""
    for i, old in enumerate(conditions):
        if old.type != condition.type:
            continue
        if condition.status == old.status:
            condition = evolve(condition, last_transition_time=old.last_transition_time)
        else:
            condition = evolve(condition, last_transition_time=now)
        if (condition.status, condition.reason, condition.message, condition.last_probe_time,
                condition.last_transition_time) == (old.status, old.reason, old.message, old.last_probe_time,
                                                    old.last_transition_time):
            return None
        return conditions[:i] + (condition,) + conditions[i + 1:]
    return conditions + (evolve(condition, last_transition_time=now),)


def node_update_event(old: Node, new: Node) -> ClusterEvent:
    """nodeSchedulingPropertiesChange: which scheduling-relevant parts of a node changed."""
    event = ClusterEvent(0)
    if old.spec.unschedulable != new.spec.unschedulable or old.spec.taints != new.spec.taints:
        event |= ClusterEvent.NODE_TAINT
    if old.metadata.labels != new.metadata.labels:
        event |= ClusterEvent.NODE_LABEL
    if old.status.allocatable != new.status.allocatable:
        event |= ClusterEvent.NODE_ALLOCATABLE
    if _conditions_sans_heartbeats(old) != _conditions_sans_heartbeats(new):
        event |= ClusterEvent.NODE_CONDITION
    return event


def _conditions_sans_heartbeats(node: Node) -> tuple:
    return tuple((c.type, c.status, c.reason, c.message) for c in node.status.conditions)


def _ports_overlap(deleted: Pod, pending: Pod) -> bool:
    """NodePorts' isSchedulableAfterPodDeleted: the deleted pod held a host port the pending pod wants."""
    wanted = {(proto or "TCP", port) for _, proto, port in pod_host_ports(pending) if port > 0}
    return any((proto or "TCP", port) in wanted for _, proto, port in pod_host_ports(deleted) if port > 0)


class Scheduler(ClientComponent):
    """The kube-scheduler (see the module docstring)."""

    reconciles = True
    #: what invariants may read of it (kmodel.invariants.records): its elector and election (None unless it elects)
    RECORDS = ClientComponent.RECORDS | {"elector", "leadership"}

    event_source = DEFAULT_SCHEDULER_NAME

    def __init__(self, name: str, endpoints: Sequence[str], *, token: str = SCHEDULER_TOKEN,
                 direct_calls: bool = False, count_port_holders: bool = False, elect_on_host: str = "",
                 fence_writes: bool = False, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name)
        #: the direct-calls variant (kmodel.variants): bind by telling the kubelet, not by writing the Binding
        self.direct_calls = direct_calls
        #: the `scheduler-count-host-port-holders` fix (kmodel.fixes), passed on to the cache
        self.count_port_holders = count_port_holders
        self.client = ApiClient(name, endpoints, token=token, rate_limit=SCHEDULER_LIMIT, switches=switches)
        self.recorder = EventRecorder(self.event_source, instance=name)
        #: its leader election unless --leader-elect=false (`elect_on_host`: the host its identity names)
        self.elector: Optional[LeaderElector] = None
        #: its process's election, for the observer's record of its writes (Leadership.note_write)
        self.leadership: Optional[Leadership] = None
        if elect_on_host:
            self.elector = LeaderElector(
                self.client, ElectionConfig(SCHEDULER_LEASE), host=elect_on_host, timer=ELECTION_TIMER,
                event_source=self.event_source, on_started_leading=lambda now, out: None,
                on_stopped_leading=lambda now, out: out.exit_process((self.name,), RESTART_DELAY_MS))
            self.leadership = Leadership(members=(name,), elector=self.elector, fence=fence_writes)
            self.client.write_guard = self.leadership.guard
        self._init_memory(0)

    def _init_memory(self, now: int) -> None:
        self.cache = SchedulerCache(count_port_holders=self.count_port_holders)
        self.queue = SchedulingQueue(start=now)
        self.next_start_node_index = 0
        self._flush_armed: Optional[int] = None
        self.pods = Informer(self.client, "pods", field_selector=POD_FIELD_SELECTOR,
                             on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted)
        self.nodes = Informer(self.client, "nodes", on_add=self._node_added, on_update=self._node_updated,
                              on_delete=self._node_deleted)

    # -- informer handlers (eventhandlers.go) --------------------------------------------------------------

    def _pod_added(self, now: int, pod: Pod, out: Out) -> None:
        if pod.spec.node_name:
            self.cache.add_pod(pod)
        elif is_pending_for_us(pod) and not self.cache.is_assumed(pod):
            self.queue.add(pod, now)
        self._arm(now, out)

    def _pod_updated(self, now: int, old: Pod, new: Pod, out: Out) -> None:
        key = f"{new.metadata.namespace}/{new.metadata.name}"
        if new.spec.node_name:
            self.queue.delete(key)  # leaving the unscheduled pods' informer: a delete there
            self.cache.update_pod(new)
        elif not is_pending_for_us(new):
            self.queue.delete(key)
        elif not self.cache.is_assumed(new):
            self.queue.update(new, now)
        self._arm(now, out)

    def _pod_deleted(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if pod.spec.node_name or self.cache.node_of(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all(ClusterEvent.ASSIGNED_POD_DELETE, now,
                                hint=lambda info: self._after_pod_deleted(pod, info))
        self.queue.delete(f"{pod.metadata.namespace}/{pod.metadata.name}")
        self._arm(now, out)

    @staticmethod
    def _after_pod_deleted(deleted: Pod, info: QueuedPodInfo) -> bool:
        """The queueing hints for AssignedPod/Delete: NodePorts queues only on an overlapping port, the others
        (NodeResourcesFit) always."""
        plugins = info.unschedulable_plugins
        if "NodeResourcesFit" in plugins:
            return True
        return "NodePorts" in plugins and _ports_overlap(deleted, info.pod)

    def _node_added(self, now: int, node: Node, out: Out) -> None:
        self.cache.add_node(node)
        self.queue.move_all(ClusterEvent.NODE_ADD, now)
        self._arm(now, out)

    def _node_updated(self, now: int, old: Node, new: Node, out: Out) -> None:
        self.cache.update_node(new)
        event = node_update_event(old, new)
        if event:
            self.queue.move_all(event, now)
        self._arm(now, out)

    def _node_deleted(self, now: int, obj: Any, out: Out) -> None:
        node = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self.cache.remove_node(node.metadata.name)

    # -- the queue's flush loops ---------------------------------------------------------------------------

    def _arm(self, now: int, out: Out) -> None:
        at = self.queue.next_wakeup(now)
        if at is None or (self._flush_armed is not None and self._flush_armed <= at):
            return  # nothing to move, or an earlier tick is armed (it re-arms when it fires)
        self._flush_armed = at
        out.set_timer(FLUSH_TIMER, at=at)

    # -- one scheduling cycle (schedule_one.go) -------------------------------------------------------------

    def work(self, now: int, out: Out) -> None:
        info = self.queue.pop(now)
        if info is None:
            return
        pod = self.pods.indexer.get(info.pod.metadata.namespace, info.pod.metadata.name)
        if pod is None or not is_pending_for_us(pod) or self.cache.is_assumed(pod):
            return  # skipPodSchedule
        info.pod = pod
        result = schedule_pod(pod, self.cache.node_infos(), self.next_start_node_index)
        self.next_start_node_index = result.next_start_node_index
        error = result.error
        if isinstance(error, FitError):
            error.diagnosis.post_filter_msg = post_filter_message(pod, self.cache.node_infos(), error.diagnosis)
            self._failed(now, out, info, error.diagnosis.unschedulable_plugins, REASON_UNSCHEDULABLE, error.error())
        elif isinstance(error, NoNodesAvailable):
            self._failed(now, out, info, (), REASON_UNSCHEDULABLE, error.error())
        else:
            self._bind(now, out, info, result.suggested_host)
        self._arm(now, out)

    def _bind(self, now: int, out: Out, info: QueuedPodInfo, host: str) -> None:
        pod = info.pod
        assumed = evolve(pod, spec=evolve(pod.spec, node_name=host))
        self.cache.assume(assumed, host)
        m = pod.metadata
        if self.direct_calls:
            # Variant direct-calls, the anti-pattern: the scheduler calls the chosen node's kubelet ("kubelet/<node>",
            # named here since no component imports another) with the pod to run. No Binding is written: the
            # store keeps the pod unbound, and the pod stays assumed here for good.
            out.send(f"kubelet/{host}", assumed)
            return

        def answered(t: int, response: Response, o: Out) -> None:
            if response.ok:
                self.event(t, o, pod, "Normal", "Scheduled", f"Successfully assigned {m.namespace}/{m.name} to {host}")
                return
            self.cache.forget(assumed)
            self.queue.move_all(ClusterEvent.ASSIGNED_POD_DELETE, t)
            message = getattr(response.body, "message", "") or f"binding failed with code {response.code}"
            self._failed(t, o, info, (), REASON_SCHEDULER_ERROR, message)
            self._arm(t, o)

        self.client.bind(now, out, m.namespace, m.name, host, on_done=answered)

    def _failed(self, now: int, out: Out, info: QueuedPodInfo, plugins, reason: str, message: str) -> None:
        """handleSchedulingFailure: requeue (unless the pod is gone or bound), event, PodScheduled condition."""
        pod = info.pod
        cached = self.pods.indexer.get(pod.metadata.namespace, pod.metadata.name)
        if cached is not None and not cached.spec.node_name:
            info.pod = cached
            self.queue.add_unschedulable(info, sorted(plugins), now)
        self.event(now, out, pod, "Warning", "FailedScheduling", truncate_message(message))
        condition = PodCondition(type="PodScheduled", status="False", reason=reason, message=message)
        conditions = updated_conditions(pod.status.conditions, condition, now)
        if conditions is not None:
            body = {"status": {"conditions": [dump_struct(c) for c in conditions]}}
            self.client.patch(now, out, "pods", pod.metadata.name, body, namespace=pod.metadata.namespace,
                              subresource="status")

    def event(self, now: int, out: Out, obj: Any, type_: str, reason: str, message: str) -> None:
        self.recorder.record(self.client, now, out, obj, reason, message, type=type_)

    # -- the component protocol ------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        self.queue.start = now
        self.pods.start(now, out)
        self.nodes.start(now, out)
        if self.elector is not None:
            self.elector.start(now, out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if self.client.on_timer(now, name, out):
            return
        if self.elector is not None and self.elector.on_timer(now, name, out):
            return
        if name == FLUSH_TIMER:
            self._flush_armed = None
            self.queue.flush(now)
            self._arm(now, out)

    def has_work(self) -> bool:
        return self.queue.has_active() and self.pods.has_synced and self.nodes.has_synced and (
            self.elector is None or self.elector.leading)

    def latest_deadline(self, now: int) -> Optional[int]:
        dues = [d for d in (super().latest_deadline(now), self.queue.latest_wakeup(now)) if d is not None]
        return max(dues, default=None)

    def crash(self) -> None:
        self.client.reset()
        self.recorder.restart()
        if self.elector is not None:
            self.elector.reset()
        self._init_memory(0)


@component("scheduler", process=KUBE_SCHEDULER, default=True)  # one per kube-scheduler
def make(ctx: Any) -> list[Component]:
    """The cluster's factory: one kube-scheduler."""
    elect = ctx.config.leader_elect
    return [Scheduler(ctx.named("scheduler"), ctx.apiservers, direct_calls=ctx.config.variant == DIRECT_CALLS,
                      count_port_holders=SCHEDULER_COUNT_HOST_PORT_HOLDERS in ctx.config.fixes,
                      elect_on_host=ctx.host if elect else "",
                      fence_writes=LEADERELECTION_FENCE_WRITES in ctx.config.fixes, switches=ctx.switches)]
