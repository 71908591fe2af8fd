"""The StatefulSet controller (pkg/controller/statefulset, Kubernetes 1.28-1.32) as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/statefulset", service account statefulset-controller (upstream's role cut to pods,
statefulsets and events). Informers on statefulsets and pods; the work queue holds StatefulSet keys
("namespace/name"). The handlers are upstream's:

* a StatefulSet added, updated or deleted → its key;
* a pod added (one already being deleted counts as deleted), updated or deleted → its controller's key when
  it has a controller ref to a set we know; an orphan whose labels or ref changed → the keys of every set in
  its namespace whose selector matches it; a pod that just became ready of a set with minReadySeconds → the
  key again after minReadySeconds.

`sync(key)` is upstream's sync / syncStatefulSet / updateStatefulSet:

1. the set gone from the cache → nothing (a bad selector: nothing either, and no retry);
2. claim the pods of the namespace named `<set>-<ordinal>` (every phase: a Failed pod is replaced, not
   ignored) as ClaimPods does (controller_ref.py: adopt matching orphans after a live GET of the set, release
   owned pods that no longer match);
3. `plan` (statefulset_logic.py) decides the deletes and creates; they are sent step by step, each step's
   requests at once, the next step once every answer of the one before is in; an error stops the rest.
   Creates name the pod (no generateName), so the API server itself refuses a second pod of one identity
   (409 AlreadyExists) while the old object exists; the controller keeps no expectations (upstream's
   StatefulSet controller of these releases has none: the fixed names and the OrderedReady waits are what
   keep it from acting twice on a stale cache). Events: SuccessfulCreate "create Pod web-0 in StatefulSet web
   successful", FailedCreate "create Pod web-0 in StatefulSet web failed error: ...", SuccessfulDelete /
   FailedDelete likewise, RecreatingFailedPod / RecreatingTerminatedPod before a terminal pod is replaced;
4. the status (replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
   currentRevision, updateRevision, observedGeneration) is written through statefulsets/status when it
   differs from the cached one (inconsistentStatus), even after an error in step 3; a conflict re-reads the
   set from the cache and tries again, five tries in all (retry.RetryOnConflict with DefaultRetry); an error in
   step 3 or 4 fails the sync, which is retried with the rate limiter;
5. with minReadySeconds, the key again after minReadySeconds while not every replica is available.
"""

from __future__ import annotations

from typing import Any, Hashable, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import APPS, events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.client import NAMESPACE_INDEX, index_by_namespace
from kmodel.client.indexer import DeletedFinalStateUnknown, meta_namespace_key
from kmodel.component import Out
from kmodel.objects import Pod, StatefulSet, StatefulSetStatus
from kmodel.objects.fastevolve import evolve

from .base import Controller, Sync
from .controller_ref import claim, controller_of, issue_claims, new_controller_ref, owners_selecting, resolve_controller_ref
from .pod_state import is_pod_ready
from .statefulset_logic import Step, is_member_of, plan, replicas_of

NAME = "controller/statefulset"
#: retry.DefaultRetry's Steps: the tries of a status update that conflicts
STATUS_UPDATE_TRIES = 5


def _message(response: Any) -> str:
    return getattr(response.body, "message", str(response.body))


def inconsistent_status(sts: StatefulSet, status: StatefulSetStatus) -> bool:
    """inconsistentStatus: the computed status differs from the set's in a field the controller owns."""
    s = sts.status
    return (status.observed_generation > s.observed_generation or status.replicas != s.replicas
            or status.current_replicas != s.current_replicas or status.ready_replicas != s.ready_replicas
            or status.updated_replicas != s.updated_replicas or status.current_revision != s.current_revision
            or status.available_replicas != s.available_replicas or status.update_revision != s.update_revision)


class StatefulSetController(Controller):
    """See the module docstring."""

    service_account = "statefulset-controller"

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME) -> None:
        super().__init__(name, endpoints)

    def setup(self) -> None:
        self.sts_informer = self.informer("statefulsets", on_add=self._add_set, on_update=self._update_set,
                                          on_delete=self._add_set, indexers={NAMESPACE_INDEX: index_by_namespace})
        self.pod_informer = self.informer("pods", on_add=self._add_pod, on_update=self._update_pod,
                                          on_delete=self._delete_pod, indexers={NAMESPACE_INDEX: index_by_namespace})

    # -- handlers ----------------------------------------------------------------------------------------

    def _add_set(self, now: int, obj: Any, out: Out) -> None:
        sts = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self.queue.add(meta_namespace_key(sts))

    def _update_set(self, now: int, old: Any, cur: Any, out: Out) -> None:
        self.queue.add(meta_namespace_key(cur))

    def _resolve(self, namespace: str, ref: Any) -> Optional[StatefulSet]:
        return resolve_controller_ref(self.sts_informer, namespace, ref, "StatefulSet")

    def _sets_for_pod(self, pod: Pod) -> list[StatefulSet]:
        """GetPodStatefulSets."""
        return owners_selecting(self.sts_informer, pod)

    def _add_pod(self, now: int, pod: Pod, out: Out) -> None:
        if pod.metadata.deletion_timestamp is not None:
            self._delete_pod(now, pod, out)
            return
        ref = controller_of(pod)
        if ref is not None:
            sts = self._resolve(pod.metadata.namespace, ref)
            if sts is not None:
                self.queue.add(meta_namespace_key(sts))
            return
        for sts in self._sets_for_pod(pod):
            self.queue.add(meta_namespace_key(sts))

    def _update_pod(self, now: int, old: Pod, cur: Pod, out: Out) -> None:
        if cur.metadata.resource_version == old.metadata.resource_version:
            return
        label_changed = cur.metadata.labels != old.metadata.labels
        cur_ref, old_ref = controller_of(cur), controller_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            sts = self._resolve(old.metadata.namespace, old_ref)
            if sts is not None:
                self.queue.add(meta_namespace_key(sts))
        if cur_ref is not None:
            sts = self._resolve(cur.metadata.namespace, cur_ref)
            if sts is None:
                return
            key = meta_namespace_key(sts)
            self.queue.add(key)
            if not is_pod_ready(old) and is_pod_ready(cur) and sts.spec.min_ready_seconds > 0:
                self.queue.add_after(now, out, key, sts.spec.min_ready_seconds * 1000)
            return
        if label_changed or ref_changed:
            for sts in self._sets_for_pod(cur):
                self.queue.add(meta_namespace_key(sts))

    def _delete_pod(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_of(pod)
        if ref is None:
            return
        sts = self._resolve(pod.metadata.namespace, ref)
        if sts is not None:
            self.queue.add(meta_namespace_key(sts))

    # -- the sync ----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace, _, name = str(key).partition("/")
        sts = self.sts_informer.get(namespace, name)
        if sts is None:
            return
        try:
            selector = label_selector_from_object(sts.spec.selector)
        except SelectorError:
            return  # upstream logs the bad selector and does not retry
        members = [p for p in self.pod_informer.by_index(NAMESPACE_INDEX, namespace) if is_member_of(sts, p)]
        claims = claim(sts, selector, members)

        def claimed(t: int, o: Out, pods: list, error: Optional[str]) -> None:
            if error is not None:
                sync.fail()
                return
            decided = plan(sts, sorted(pods, key=lambda p: p.metadata.name), t)
            self._run_steps(sts, list(decided.steps), sync, t, o,
                            lambda t2, o2, err: self._write_status(sts, decided.status, err, sync, t2, o2))

        issue_claims(sync, now, out, owner_resource="statefulsets", owner=sts, dependent_resource="pods",
                     dependent_kind="Pod", claims=claims,
                     controller_ref=new_controller_ref(sts, "apps/v1", "StatefulSet"), then=claimed)

    def _run_steps(self, sts: StatefulSet, steps: list[Step], sync: Sync, now: int, out: Out, then: Any) -> None:
        if not steps:
            then(now, out, None)
            return
        step, rest = steps[0], steps[1:]
        state: dict[str, Any] = {"left": len(step.deletes) + len(step.creates), "error": None}

        def answered(t: int, o: Out, error: Optional[str]) -> None:
            if error is not None and state["error"] is None:
                state["error"] = error
            state["left"] -= 1
            if state["left"] == 0:
                if state["error"] is None:
                    self._run_steps(sts, rest, sync, t, o, then)
                else:
                    then(t, o, state["error"])

        ns, set_name = sts.metadata.namespace, sts.metadata.name
        for pod_name, type_, reason in step.reasons:
            what = "failed" if reason == "RecreatingFailedPod" else "terminated"
            self.event(now, out, sts, type_, reason, f"StatefulSet {ns}/{set_name} is recreating {what} Pod {pod_name}")
        for pod in step.deletes:
            def deleted(t: int, response: Any, o: Out, pod_name: str = pod.metadata.name) -> Optional[bool]:
                if response.ok:
                    self.event(t, o, sts, "Normal", "SuccessfulDelete",
                               f"delete Pod {pod_name} in StatefulSet {set_name} successful")
                    answered(t, o, None)
                    return True
                msg = _message(response)
                self.event(t, o, sts, "Warning", "FailedDelete",
                           f"delete Pod {pod_name} in StatefulSet {set_name} failed error: {msg}")
                answered(t, o, msg)
                return True  # the sync fails after its status is written (`_write_status`)
            sync.delete(now, out, "pods", pod.metadata.name, namespace=ns, on_done=deleted)
        for pod in step.creates:
            def created(t: int, response: Any, o: Out, pod_name: str = pod.metadata.name) -> Optional[bool]:
                if response.ok:
                    self.event(t, o, sts, "Normal", "SuccessfulCreate",
                               f"create Pod {pod_name} in StatefulSet {set_name} successful")
                    answered(t, o, None)
                    return True
                msg = _message(response)
                if response.code != 409:  # AlreadyExists: returned without an event
                    self.event(t, o, sts, "Warning", "FailedCreate",
                               f"create Pod {pod_name} in StatefulSet {set_name} failed error: {msg}")
                answered(t, o, msg)
                return True
            sync.create(now, out, "pods", pod, on_done=created)

    # status ------------------------------------------------------------------------------------------------

    def _write_status(self, sts: StatefulSet, status: StatefulSetStatus, error: Optional[str], sync: Sync,
                      now: int, out: Out) -> None:
        if not inconsistent_status(sts, status):
            self._after_status(sts, status, error, sync)
            return

        def attempt(t: int, o: Out, current: StatefulSet, tries: int) -> None:
            def updated(t2: int, response: Any, o2: Out) -> Optional[bool]:
                if response.ok:
                    self._after_status(sts, status, error, sync)
                    return True
                if response.code != 409 or tries + 1 >= STATUS_UPDATE_TRIES:
                    return None
                cached = self.sts_informer.get(sts.metadata.namespace, sts.metadata.name)
                attempt(t2, o2, cached if cached is not None else current, tries + 1)
                return True

            sync.update_status(t, o, "statefulsets", evolve(current, status=status), on_done=updated)

        attempt(now, out, sts, 0)

    def _after_status(self, sts: StatefulSet, status: StatefulSetStatus, error: Optional[str], sync: Sync) -> None:
        if error is not None:
            sync.fail()
            return
        if sts.spec.min_ready_seconds > 0 and status.available_replicas != replicas_of(sts):
            sync.requeue_after(sts.spec.min_ready_seconds * 1000)


@controller("statefulset", service_account="statefulset-controller", default=True, rbac_rules=(  # no
    # controllerrevisions or PVCs in the model
    rule(("list", "watch"), ("pods",)),
    rule(("get", "list", "watch"), ("statefulsets",), APPS),
    rule(("update",), ("statefulsets/status",), APPS),
    rule(("update",), ("statefulsets/finalizers",), APPS),
    rule(("get", "create", "delete", "update", "patch"), ("pods",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one StatefulSet controller talking to the API servers in order."""
    return [StatefulSetController(ctx.apiservers, name=ctx.named(NAME))]
