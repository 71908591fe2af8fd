"""The StatefulSet controller (pkg/controller/statefulset, Kubernetes 1.31) as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/statefulset", service account statefulset-controller (upstream's role cut to pods,
statefulsets, controllerrevisions and events). Informers on statefulsets, pods and controllerrevisions (a lister
only: no handlers); the work queue holds StatefulSet keys ("namespace/name"). The handlers are upstream's:

* a StatefulSet added, updated or deleted → its key;
* a pod added (one already being deleted counts as deleted), updated or deleted → its controller's key when
  it has a controller ref to a set we know; an orphan whose labels or ref changed → the keys of every set in
  its namespace whose selector matches it; a pod that just became ready of a set with minReadySeconds → the
  key again after minReadySeconds and one second more (updatePod's guard against AddAfter's skew).

`sync(key)` is upstream's sync / syncStatefulSet / UpdateStatefulSet:

1. the set gone from the cache → nothing (a bad selector: nothing either, and no retry);
2. adoptOrphanRevisions: the cached ControllerRevisions its selector matches that no controller owns are
   adopted (a live GET of the set, then a patch each: controller_ref.issue_claims); an error fails the sync;
3. claim the pods of the namespace named `<set>-<ordinal>` (every phase) as ClaimPods does (controller_ref.py:
   adopt matching orphans after a live GET of the set, release owned pods that no longer match);
4. getStatefulSetRevisions (history.py, statefulset_logic.new_revision): the update revision is the newest
   revision when its data is the set's template; an older revision of that template is renumbered to come
   last (an update retried on conflict with the cached copy: what `kubectl rollout undo` brings about); else
   a new revision is created, `<set>-<hash>`, and a name held by other data is a collision: counted
   (status.collisionCount) and tried again under the next name. The current revision is the one
   status.currentRevision names, else the update revision;
5. `plan` (statefulset_logic.py) decides the deletes and creates; they are sent step by step, each step's
   requests at once, the next step once every answer of the one before is in; an error stops the rest.
   Creates name the pod (no generateName), so the API server itself refuses a second pod of one identity
   (409 AlreadyExists) while the old object exists; the controller keeps no expectations (upstream's
   StatefulSet controller of these releases has none: the fixed names and the OrderedReady waits are what
   keep it from acting twice on a stale cache). Events: SuccessfulCreate "create Pod web-0 in StatefulSet web
   successful", FailedCreate "create Pod web-0 in StatefulSet web failed error: ...", SuccessfulDelete /
   FailedDelete likewise (a rolling update's delete answered 404 records FailedDelete and is no error);
6. the status (replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
   currentRevision, updateRevision, collisionCount, observedGeneration) is written through statefulsets/status
   when it differs from the cached one (inconsistentStatus), even after an error in step 5; a conflict re-reads
   the set from the cache and tries again, five tries in all (retry.RetryOnConflict with DefaultRetry);
7. truncateHistory, even after an error: the revisions neither the status nor a pod uses, beyond
   revisionHistoryLimit, are deleted oldest first, one after the other; an error in steps 4-7 fails the sync,
   which is retried with the rate limiter;
8. with minReadySeconds, the key again after minReadySeconds while not every replica is available.

Fixes (kmodel.fixes), off by default: statefulset-healthy-means-available counts a pod healthy only once it is
available (kubernetes/kubernetes#130909; `plan`'s healthy_means_available); statefulset-recheck-when-available
looks at the set again one second after the replica an OrderedReady sync stopped at becomes available
(`Plan.available_in_ms`), whatever availableReplicas says (kmodel's sketch: upstream has no fix).
"""

from __future__ import annotations

from typing import Any, Hashable, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import APPS, events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.client import NAMESPACE_INDEX, index_by_namespace
from kmodel.client.indexer import DeletedFinalStateUnknown, meta_namespace_key
from kmodel.fixes import STATEFULSET_HEALTHY_MEANS_AVAILABLE, STATEFULSET_RECHECK_WHEN_AVAILABLE
from kmodel.component import Out
from kmodel.objects import ControllerRevision, Pod, StatefulSet, StatefulSetStatus
from kmodel.objects.fastevolve import evolve

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .controller_ref import (
    Claims, claim, controller_of, issue_claims, new_controller_ref, owners_selecting, resolve_controller_ref,
)
from .history import equal_revision, find_equal_revisions, next_revision, owned_revisions, renamed, sort_revisions
from .pod_state import is_pod_ready
from .statefulset_logic import (
    Revisions, Step, history_to_delete, is_member_of, new_revision, plan, replicas_of,
)

NAME = "controller/statefulset"
#: retry.DefaultRetry's Steps: the tries of a status update that conflicts
STATUS_UPDATE_TRIES = 5
#: what updatePod adds to minReadySeconds before it looks at a pod that just became ready again
MIN_READY_SKEW_MS = 1000
#: retry.DefaultBackoff's Steps: the tries of a revision's renumbering that conflicts
REVISION_UPDATE_TRIES = 4


def _ignore(now: int, obj: Any, out: Out) -> None:
    pass


def _ignore_update(now: int, old: Any, cur: Any, out: Out) -> None:
    pass


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

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES,
                 healthy_means_available: bool = False, recheck_when_available: bool = False) -> None:
        #: the statefulset-healthy-means-available fix (kmodel.fixes): a pod is healthy only once it is available
        #: (statefulset_logic.plan)
        self.healthy_means_available = healthy_means_available
        #: the statefulset-recheck-when-available fix (kmodel.fixes): the key again once the replica the sync
        #: stopped at is available (`_after_status`)
        self.recheck_when_available = recheck_when_available
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.sts_informer = self.informer("statefulsets", on_add=self._add_set, on_update=self._update_set,
                                          on_delete=self._add_set, indexers={NAMESPACE_INDEX: index_by_namespace})
        self.pod_informer = self.informer("pods", on_add=self._add_pod, on_update=self._update_pod,
                                          on_delete=self._delete_pod, indexers={NAMESPACE_INDEX: index_by_namespace})
        # a lister only: upstream registers no handlers on the revisions
        self.revision_informer = self.informer("controllerrevisions", on_add=_ignore, on_update=_ignore_update,
                                               on_delete=_ignore, indexers={NAMESPACE_INDEX: index_by_namespace})

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
                # a second more than minReadySeconds, "to avoid milliseconds skew in AddAfter" (updatePod)
                self.queue.add_after(now, out, key, sts.spec.min_ready_seconds * 1000 + MIN_READY_SKEW_MS)
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
        controller_ref = new_controller_ref(sts, "apps/v1", "StatefulSet")
        orphans = tuple(r for r in self._revisions(sts, selector) if controller_of(r) is None)

        def adopted(t: int, o: Out, _revisions: list, error: Optional[str]) -> None:
            if error is not None:  # adoptOrphanRevisions failed: the sync fails before it looks at the pods
                sync.fail()
                return
            members = [p for p in self.pod_informer.by_index(NAMESPACE_INDEX, namespace) if is_member_of(sts, p)]
            issue_claims(sync, t, o, owner_resource="statefulsets", owner=sts, dependent_resource="pods",
                         dependent_kind="Pod", claims=claim(sts, selector, members), controller_ref=controller_ref,
                         then=claimed)

        def claimed(t: int, o: Out, pods: list, error: Optional[str]) -> None:
            if error is not None:
                sync.fail()
                return
            pods = sorted(pods, key=lambda p: p.metadata.name)
            revisions = sort_revisions(self._revisions(sts, selector))
            self._set_revisions(sts, revisions, sync, t, o,
                                lambda t2, o2, got, err: self._update(sts, pods, revisions, got, err, sync, t2, o2))

        # adoptOrphanRevisions: the orphaned revisions the selector matches, adopted after a live GET of the set
        issue_claims(sync, now, out, owner_resource="statefulsets", owner=sts, dependent_resource="controllerrevisions",
                     dependent_kind="ControllerRevision", claims=Claims(adopt=orphans), controller_ref=controller_ref,
                     then=adopted)

    def _revisions(self, sts: StatefulSet, selector: Any) -> list[ControllerRevision]:
        """ListRevisions: the cached revisions of the set's namespace its selector matches, the set's or orphans."""
        in_namespace = self.revision_informer.by_index(NAMESPACE_INDEX, sts.metadata.namespace)
        return owned_revisions(in_namespace, selector, sts.metadata.uid)

    def _update(self, sts: StatefulSet, pods: list, revisions: list, got: Optional[Revisions], error: Optional[str],
                sync: Sync, now: int, out: Out) -> None:
        """performUpdate (the pods, then the status), then truncateHistory even after an error, as
        UpdateStatefulSet does; the sync fails with the first error."""
        def truncate(t: int, o: Out, err: Optional[str]) -> None:
            current = got.current if got is not None else None
            update = got.update if got is not None else None
            doomed = history_to_delete(sts, pods, revisions, current, update)
            self._delete_revisions(doomed, sync, t, o, lambda t2, o2, err2: self._after_status(
                sts, status, err if err is not None else err2, sync, available_in))

        available_in: Optional[int] = None
        if got is None:
            status = sts.status
            truncate(now, out, error)
            return
        decided = plan(sts, pods, now, got, healthy_means_available=self.healthy_means_available)
        status, available_in = decided.status, decided.available_in_ms
        self._run_steps(sts, list(decided.steps), sync, now, out,
                        lambda t, o, err: self._write_status(
                            sts, decided.status, sync, t, o,
                            lambda t2, o2, status_err: truncate(t2, o2, err if err is not None else status_err)))

    # revisions -------------------------------------------------------------------------------------------------

    def _set_revisions(self, sts: StatefulSet, revisions: list, sync: Sync, now: int, out: Out, then: Any) -> None:
        """getStatefulSetRevisions: the update revision is the last one when it holds the set's template, an
        older one holding it renumbered to come last (a rollback), or a new one created; the current revision is
        the one status.currentRevision names, else the update revision."""
        count = sts.status.collision_count or 0
        wanted = new_revision(sts, next_revision(revisions), count)
        equal = find_equal_revisions(revisions, wanted)

        def found(t: int, o: Out, update: Optional[ControllerRevision], collisions: int, error: Optional[str]) -> None:
            if update is None:
                then(t, o, None, error)
                return
            current = next((r for r in revisions if r.metadata.name == sts.status.current_revision), update)
            then(t, o, Revisions(current, update, collisions), None)

        if equal and equal_revision(revisions[-1], equal[-1]):
            found(now, out, revisions[-1], count, None)
        elif equal:
            self._renumber(equal[-1], wanted.revision, 0, sync, now, out,
                           lambda t, o, got, err: found(t, o, got, count, err))
        else:
            self._create_revision(sts, wanted, count, sync, now, out, found)

    def _create_revision(self, sts: StatefulSet, revision: ControllerRevision, count: int, sync: Sync, now: int,
                         out: Out, then: Any) -> None:
        """CreateControllerRevision: a name taken by a revision of other data is a collision, counted, and the
        create is tried again under the next name; taken by one of the same data, that one is the revision."""
        attempt = renamed(revision, sts.metadata.name, count)
        ns, name = sts.metadata.namespace, attempt.metadata.name

        def got(t: int, response: Any, o: Out) -> bool:
            if not response.ok:
                then(t, o, None, count, _message(response))
            elif response.body.data == attempt.data:
                then(t, o, response.body, count, None)
            else:
                self._create_revision(sts, revision, count + 1, sync, t, o, then)
            return True

        def created(t: int, response: Any, o: Out) -> bool:
            if response.ok:
                then(t, o, response.body, count, None)
            elif response.code == 409:
                sync.request(t, o, "get", "controllerrevisions", namespace=ns, name=name, on_done=got)
            else:
                then(t, o, None, count, _message(response))
            return True

        sync.create(now, out, "controllerrevisions", attempt, on_done=created)

    def _renumber(self, revision: ControllerRevision, number: int, tries: int, sync: Sync, now: int, out: Out,
                  then: Any) -> None:
        """UpdateControllerRevision: the revision's number set to `number`, retried on a conflict with the cached
        copy (retry.RetryOnConflict with DefaultBackoff: four tries)."""
        if revision.revision == number:
            then(now, out, revision, None)
            return

        def updated(t: int, response: Any, o: Out) -> bool:
            if response.ok:
                then(t, o, response.body, None)
            elif response.code == 409 and tries + 1 < REVISION_UPDATE_TRIES:
                m = revision.metadata
                cached = self.revision_informer.get(m.namespace, m.name)
                self._renumber(cached if cached is not None else revision, number, tries + 1, sync, t, o, then)
            else:
                then(t, o, None, _message(response))
            return True

        sync.update(now, out, "controllerrevisions", evolve(revision, revision=number), on_done=updated)

    def _delete_revisions(self, doomed: list, sync: Sync, now: int, out: Out, then: Any) -> None:
        """truncateHistory's deletes, one after the other; the first error stops them."""
        if not doomed:
            then(now, out, None)
            return
        m = doomed[0].metadata

        def deleted(t: int, response: Any, o: Out) -> bool:
            if response.ok:
                self._delete_revisions(doomed[1:], sync, t, o, then)
            else:
                then(t, o, _message(response))
            return True

        sync.delete(now, out, "controllerrevisions", m.name, namespace=m.namespace, on_done=deleted)

    # pods ------------------------------------------------------------------------------------------------------

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

        set_name = sts.metadata.name
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
                # the rolling update ignores NotFound (the pod is gone already); any other error fails the sync
                # after its status is written (`_write_status`)
                answered(t, o, None if step.gone_is_done and response.code == 404 else msg)
                return True
            sync.delete(now, out, "pods", pod.metadata.name, namespace=pod.metadata.namespace, on_done=deleted)
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

    def _write_status(self, sts: StatefulSet, status: StatefulSetStatus, sync: Sync, now: int, out: Out,
                      then: Any) -> None:
        """updateStatefulSetStatus: written when it differs, retried on a conflict with the cached set;
        then(now, out, error)."""
        if not inconsistent_status(sts, status):
            then(now, out, None)
            return

        def attempt(t: int, o: Out, current: StatefulSet, tries: int) -> None:
            def updated(t2: int, response: Any, o2: Out) -> Optional[bool]:
                if response.ok:
                    then(t2, o2, None)
                elif response.code == 409 and tries + 1 < STATUS_UPDATE_TRIES:
                    cached = self.sts_informer.get(sts.metadata.namespace, sts.metadata.name)
                    attempt(t2, o2, cached if cached is not None else current, tries + 1)
                else:
                    then(t2, o2, _message(response))
                return True

            sync.update_status(t, o, "statefulsets", evolve(current, status=status), on_done=updated)

        attempt(now, out, sts, 0)

    def _after_status(self, sts: StatefulSet, status: StatefulSetStatus, error: Optional[str], sync: Sync,
                      available_in: Optional[int]) -> None:
        if error is not None:
            sync.fail()
            return
        if sts.spec.min_ready_seconds > 0 and status.available_replicas != replicas_of(sts):
            sync.requeue_after(sts.spec.min_ready_seconds * 1000)
        if self.recheck_when_available and available_in is not None:
            # the fix: a condemned pod counted available can leave availableReplicas equal to replicas while the
            # sync waits for a replica, so look again once that replica is available (a second more, as updatePod)
            sync.requeue_after(available_in + MIN_READY_SKEW_MS)


@controller("statefulset", service_account="statefulset-controller", default=True, rbac_rules=(  # no PVCs
    # in the model
    rule(("list", "watch"), ("pods",)),
    rule(("get", "list", "watch"), ("statefulsets",), APPS),
    rule(("update",), ("statefulsets/status",), APPS),
    rule(("update",), ("statefulsets/finalizers",), APPS),
    rule(("get", "create", "delete", "update", "patch"), ("pods",)),
    rule(("get", "create", "delete", "update", "patch", "list", "watch"), ("controllerrevisions",), APPS),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one StatefulSet controller talking to the API servers in order."""
    return [StatefulSetController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                                  healthy_means_available=STATEFULSET_HEALTHY_MEANS_AVAILABLE in ctx.config.fixes,
                                  recheck_when_available=STATEFULSET_RECHECK_WHEN_AVAILABLE in ctx.config.fixes)]
