"""The taint eviction controller (pkg/controller/tainteviction/taint_eviction.go, "taint-eviction-controller").

Theory of operation
-------------------
Informers on pods (indexed by node) and nodes. The work queue holds pod keys ("ns/name"):

* a pod event enqueues the pod when it is new, gone, or its nodeName or tolerations changed (podUpdated);
* a node event enqueues every pod on the node when the node's NoExecute taints changed (nodeUpdated /
  handleNodeUpdate), or the node appeared or went.

Syncing a pod key is handlePodUpdate/processPodOnNode over the pod's *scheduled eviction* (kept in
`scheduled`, the TimedWorkerQueue's workers, forgotten on a crash as upstream's are):

* pod gone, or its node has no NoExecute taint (or is gone) → the scheduled eviction, if any, is cancelled
  with the event TaintManagerEviction `Cancelling deletion of Pod ns/name`;
* otherwise taint_eviction_logic.process_pod_on_node decides: a taint not tolerated → evict now; else after
  the smallest tolerationSeconds among the tolerations used, counted from when this controller first saw
  the pod on the tainted node (never postponed by later updates); tolerated forever → cancelled.
* A scheduled eviction not yet due asks for the key again at fire time (`sync.requeue_after`, logical
  time). When due: event TaintManagerEviction `Marking for deletion Pod ns/name` (type Normal), then
  addConditionAndDeletePod: GET the pod, add condition DisruptionTarget=True (reason
  DeletionByTaintManager, `Taint manager: deleting due to NoExecute taint`) through pods/status, DELETE
  it; the whole step is tried up to 5 times. Success or not, the worker is done (upstream's timed worker
  does not retry either); a later pod or node change schedules again. Upstream's handlers ignore pod updates
  that keep the pod's node and tolerations and node updates that keep its NoExecute taints, so after a
  failed eviction on a node that stays tainted (a machine lost for good) nothing does: the pod is never
  evicted (the tainteviction-retry-failed-evictions fix, kmodel.fixes, retries it).

Heard log (an observation record, read by the eviction-timing invariant; not used by any decision): `heard`
gets (now, node, its NoExecute taints) each time the nodes informer delivers a node whose NoExecute taints
differ from the last it delivered of that node (a delete: no taints), and (now, None, ()) at each start of the
process. It lives outside the process's memory (a crash keeps it), as node lifecycle's: upstream evicts by
what its informer shows, so a taint removed in etcd but not yet delivered still evicts.

Differences from upstream: the timed worker fires through the work queue (the key is re-queued at the
fire time and synced by a work event), so the deletion happens at the fire time plus the time to get a
worker; the eviction's start time is the time the pod key is synced rather than the node handler's
`time.Now()`. The pod status change is an update with the GET's resourceVersion, not a patch.
"""

from __future__ import annotations

from typing import Any, Hashable, Optional

from kmodel.apiserver.wire import Preconditions, Response
from kmodel.client import NODE_NAME_INDEX, index_by_node_name
from kmodel.client.indexer import meta_namespace_key
from kmodel.component import Out
from kmodel.objects import ObjectReference, Pod, PodCondition
from kmodel.objects.fastevolve import evolve

from . import taint_eviction_logic as te
from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches

NAME = "controller/tainteviction"
EVENT_SOURCE = "taint-eviction-controller"
DELETE_RETRIES = 5
DISRUPTION_TARGET = "DisruptionTarget"
DELETION_BY_TAINT_MANAGER = "DeletionByTaintManager"
DELETION_MESSAGE = "Taint manager: deleting due to NoExecute taint"


def pod_reference(key: str) -> ObjectReference:
    namespace, _, name = key.partition("/")
    return ObjectReference(kind="Pod", namespace=namespace, name=name, api_version="v1")


def with_disruption_target(pod: Pod, now: int) -> Optional[Pod]:
    """UpdatePodCondition with DisruptionTarget=True; None when the pod already has exactly that."""
    cond = PodCondition(type=DISRUPTION_TARGET, status="True", reason=DELETION_BY_TAINT_MANAGER,
                        message=DELETION_MESSAGE, last_transition_time=now)
    conds = pod.status.conditions
    for i, c in enumerate(conds):
        if c.type == DISRUPTION_TARGET:
            if c.status == cond.status:
                cond = evolve(cond, last_transition_time=c.last_transition_time)
            if c == cond:
                return None
            conds = conds[:i] + (cond,) + conds[i + 1:]
            break
    else:
        conds = conds + (cond,)
    return evolve(pod, status=evolve(pod.status, conditions=conds))


class TaintEvictionController(Controller):
    """See the module docstring."""

    service_account = "node-controller"
    #: what invariants may read of it (kmodel.invariants.records): the log of what it heard, `heard`
    RECORDS = Controller.RECORDS | {"heard"}

    event_source = EVENT_SOURCE

    def __init__(self, endpoints: tuple[str, ...] | list[str], *, name: str = NAME,
                 switches: Switches = DEFAULT_SWITCHES,
                 retry_failed_evictions: bool = False, evict_only_the_scheduled_pod: bool = False) -> None:
        #: (time, node, NoExecute taints) as the informer delivered them; (time, None, ()) at each start
        self.heard: list[tuple[int, Optional[str], tuple]] = []
        #: the tainteviction-retry-failed-evictions fix (kmodel.fixes): an eviction whose 5 tries all failed
        #: stays scheduled and its pod key is requeued with the rate limiter, instead of the worker being done
        self.retry_failed_evictions = retry_failed_evictions
        #: the tainteviction-evict-only-the-scheduled-pod fix (kmodel.fixes): the eviction reads and deletes the
        #: pod it was scheduled for (its uid), not whichever pod has its name now
        self.evict_only_the_scheduled_pod = evict_only_the_scheduled_pod
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.scheduled: dict[str, te.ScheduledEviction] = {}
        self.evictions = 0  # pods whose deletion succeeded
        self._heard_taints: dict[str, tuple] = {}  # node -> its NoExecute taints last put on the heard log
        self.pods = self.informer("pods", indexers={NODE_NAME_INDEX: index_by_node_name},
                                  on_update=self._pod_updated)
        self.nodes = self.informer("nodes", on_add=self._node_added, on_update=self._node_updated,
                                   on_delete=self._node_deleted)

    def on_started(self, now: int, out: Out) -> None:
        self.heard.append((now, None, ()))

    def _hear(self, now: int, name: str, taints: tuple) -> None:
        if self._heard_taints.get(name) != taints:
            self._heard_taints[name] = taints
            self.heard.append((now, name, taints))

    # -- handlers --------------------------------------------------------------------------------------------

    def _node_added(self, now: int, node: Any, out: Out) -> None:
        self._hear(now, node.metadata.name, te.no_execute_taints(node.spec.taints))
        self._node_changed_to(now, node, out)

    def _node_deleted(self, now: int, node: Any, out: Out) -> None:
        self._hear(now, getattr(node, "obj", node).metadata.name, ())
        self._node_changed_to(now, node, out)

    def _pod_updated(self, now: int, old: Pod, new: Pod, out: Out) -> None:
        if old.spec.node_name == new.spec.node_name and old.spec.tolerations == new.spec.tolerations:
            return
        self.queue.add(meta_namespace_key(new))

    def _node_updated(self, now: int, old: Any, new: Any, out: Out) -> None:
        taints = te.no_execute_taints(new.spec.taints)
        if te.no_execute_taints(old.spec.taints) != taints:
            self._hear(now, new.metadata.name, taints)
            self._node_changed_to(now, new, out)

    def _node_changed_to(self, now: int, node: Any, out: Out) -> None:
        node = getattr(node, "obj", node)
        for key in self.pods.indexer.index_keys(NODE_NAME_INDEX, node.metadata.name):
            self.queue.add(key)

    # -- sync ------------------------------------------------------------------------------------------------

    def _cancel(self, now: int, out: Out, key: str) -> None:
        if self.scheduled.pop(key, None) is not None:
            self.event(now, out, pod_reference(key), "Normal", "TaintManagerEviction",
                       f"Cancelling deletion of Pod {key}")

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        assert isinstance(key, str)
        pod = self.pods.indexer.get_by_key(key)
        if pod is None:
            self._cancel(now, out, key)
            return
        node_name = pod.spec.node_name
        if not node_name:
            return
        node = self.nodes.get("", node_name)
        taints = te.no_execute_taints(node.spec.taints) if node is not None else ()
        if not taints:
            self._cancel(now, out, key)
            return
        existing = self.scheduled.get(key)
        sched = te.process_pod_on_node(existing, pod.spec.tolerations, taints, now)
        if sched is None:
            self._cancel(now, out, key)
            return
        if existing is not None and sched != existing:
            self._cancel(now, out, key)
        self.scheduled[key] = sched
        if te.eviction_due(sched, now):
            self._evict(now, out, sync, key, pod)
        else:
            sync.requeue_after(sched.fire_at - now)

    def _evict(self, now: int, out: Out, sync: Sync, key: str, pod: Pod) -> None:
        """deletePodHandler: the event, then addConditionAndDeletePod up to 5 times."""
        self.event(now, out, pod_reference(key), "Normal", "TaintManagerEviction", f"Marking for deletion Pod {key}")
        namespace, name = pod.metadata.namespace, pod.metadata.name
        sched = self.scheduled[key]

        def finish(t: int, o: Out, ok: bool) -> bool:
            if not ok and self.retry_failed_evictions:
                sync.fail()  # requeued with the rate limiter; still scheduled, so still due when synced again
                return True
            if self.scheduled.get(key) is sched:
                del self.scheduled[key]  # the worker is done, whatever the outcome
            if ok:
                self.evictions += 1
            return True

        def attempt(t: int, o: Out, tries: int) -> None:
            def failed(t2: int, o2: Out) -> bool:
                if tries < DELETE_RETRIES:
                    attempt(t2, o2, tries + 1)
                    return True
                return finish(t2, o2, False)

            def deleted(t2: int, response: Response, o2: Out) -> bool:
                return finish(t2, o2, True) if response.ok else failed(t2, o2)

            def delete(t2: int, o2: Out) -> None:
                if self.evict_only_the_scheduled_pod:  # a UID precondition: 409 for another pod of its name
                    sync.request(t2, o2, "delete", "pods", namespace=namespace, name=name,
                                 body=Preconditions(pod.metadata.uid, ""), on_done=deleted)
                    return
                sync.delete(t2, o2, "pods", name, namespace=namespace, on_done=deleted)

            def status_written(t2: int, response: Response, o2: Out) -> bool:
                if not response.ok:
                    return failed(t2, o2)
                delete(t2, o2)
                return True

            def got(t2: int, response: Response, o2: Out) -> bool:
                if not response.ok:
                    return failed(t2, o2)
                if self.evict_only_the_scheduled_pod and response.body.metadata.uid != pod.metadata.uid:
                    # upstream's addConditionAndDeletePod GETs and deletes by name: a pod made again under the
                    # name (a StatefulSet's) since the eviction was scheduled would be marked and deleted in its
                    # stead. The scheduled pod is gone: nothing to evict
                    if self.scheduled.get(key) is sched:
                        del self.scheduled[key]
                    return True
                new = with_disruption_target(response.body, t2)
                if new is None:
                    delete(t2, o2)
                else:
                    sync.update_status(t2, o2, "pods", new, on_done=status_written)
                return True

            sync.request(t, o, "get", "pods", namespace=namespace, name=name, on_done=got)

        attempt(now, out, 1)
