"""The Job controller (pkg/controller/job, Kubernetes 1.31) as a sans-IO component: "controller/job".

Theory of operation
-------------------
Service account job-controller (upstream's role cut to jobs, pods and events). Informers on jobs and pods; the
work queue holds Job keys ("namespace/name") and orphan-pod keys (("pod", namespace, name)). Handlers as
upstream's: a Job added or updated queues itself; a Job deleted forgets its expectations and queues each of its
pods that still has the tracking finalizer as an orphan; a pod event queues its controller's key one second
later (syncJobBatchPeriod: events of one second are synced together), counts a create or delete it expected, and
notes a tracking finalizer it was removing as gone; a pod whose Job is gone queues itself as an orphan.

`sync` of a Job key is syncJob (job_logic.py holds the decisions):

1. the Job gone, or finished (Complete or Failed): nothing;
2. claim the pods its selector matches (controller_ref.py: adoption after a live GET of the Job);
3. count: active, ready, terminating, newly finished (job_logic.count); set startTime on the first sync;
4. the end: an interim FailureTarget (backoffLimit exceeded, or activeDeadlineSeconds past) deletes the active
   pods (they keep their finalizer until counted); otherwise, with expectations satisfied, manageJob deletes
   pods past wantActive or creates the missing ones (generateName "<job>-", the tracking finalizer, a controller
   ref; slow-start batches 1, 2, 4, ...; after pod failures, not before the back-off is over), and a Job that has
   its completions gets the interim SuccessCriteriaMet;
5. trackJobStatusAndRemoveFinalizers: finished pods go into status.uncountedTerminatedPods (a status write), then
   their finalizers are removed (strategic merge patches), then the pods whose finalizer is gone move from
   uncounted into succeeded/failed (a status write); once nothing is uncounted and nothing terminating, the
   final Complete (with completionTime) or Failed condition is written, with the event Completed "Job completed"
   or Warning <reason> <message>.

A status write is an update with the cached Job's resourceVersion: a conflict fails the sync (retried with the
rate limiter). The sync of an orphan-pod key removes the tracking finalizer of a pod whose Job is gone or
finished (syncOrphanPod).

Indexed Jobs (completionMode Indexed; job_logic.py's "Indexed Jobs"): manageJob first removes the active pods
with no valid completion index, an index past completions, or an index another active pod holds, then creates
one pod for each of the lowest pending indexes (generateName "<job>-<index>-", hostname "<job>-<index>", the
index's annotation and label); trackJobStatusAndRemoveFinalizers counts a succeeded pod by its index into
status.completedIndexes (status.succeeded is their number) before its finalizer goes, never by its uid.

Suspend (spec.suspend): manageJob deletes every active pod (its finalizer removed first) and creates none; after
manageJob the Suspended condition follows spec.suspend (True JobSuspended; once resumed, False JobResumed with
startTime restarted); a suspended Job gets no startTime and runs no activeDeadlineSeconds.

Not modelled: the JOB_COMPLETION_INDEX environment variable of an Indexed Job's containers (the model's env has
no valueFrom), podFailurePolicy, successPolicy, backoffLimitPerIndex, managedBy.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import events_rule, rule
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.apiserver.wire import PatchBody
from kmodel.client import NAMESPACE_INDEX, index_by_namespace
from kmodel.client.indexer import DeletedFinalStateUnknown, meta_namespace_key
from kmodel.component import Out
from kmodel.component.registry import controller
from kmodel.objects import Job, ObjectMeta, Pod
from kmodel.objects.batch import COMPLETION_INDEX_ANNOTATION, INDEXED, JOB_TRACKING_FINALIZER, NON_INDEXED, \
    UncountedTerminatedPods
from kmodel.objects.frozendict import frozen_map
from kmodel.objects.fastevolve import evolve

from . import job_logic as logic
from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .controller_ref import claim, controller_of, issue_claims, new_controller_ref, owners_selecting, resolve_controller_ref
from .expectations import Expectations
from .replicaset_logic import get_pods_to_delete

NAME = "controller/job"
#: syncJobBatchPeriod: pod events within this time are synced together
BATCH_PERIOD_MS = 1_000
_BATCH = ("batch",)
Then = Callable[[int, Out, Optional[str]], None]


def _message(response: Any) -> str:
    return getattr(response.body, "message", str(response.body))


def pod_from_template(job: Job, index: Optional[int] = None) -> Pod:
    """The pod manageJob creates: the template's metadata and spec, generateName "<job>-", the tracking finalizer
    and the Job as controller. For an Indexed Job's completion `index`: the index's annotation and label
    (PodIndexLabel, on by default since 1.28), generateName "<job>-<index>-" and hostname "<job>-<index>"."""
    t = job.spec.template
    generate_name, labels, annotations = f"{job.metadata.name}-", t.metadata.labels, t.metadata.annotations
    spec = t.spec
    if index is not None:
        generate_name = logic.indexed_generate_name(job.metadata.name, index)
        labels = frozen_map({**labels, COMPLETION_INDEX_ANNOTATION: str(index)})
        annotations = frozen_map({**annotations, COMPLETION_INDEX_ANNOTATION: str(index)})
        spec = evolve(spec, hostname=f"{job.metadata.name}-{index}")
    meta = ObjectMeta(generate_name=generate_name, namespace=job.metadata.namespace,
                      labels=labels, annotations=annotations,
                      finalizers=t.metadata.finalizers + (JOB_TRACKING_FINALIZER,),
                      owner_references=(new_controller_ref(job, "batch/v1", "Job"),))
    return Pod(metadata=meta, spec=spec)


def remove_finalizer_patch(pod: Pod) -> PatchBody:
    """removeTrackingFinalizerPatch: a strategic merge patch taking the finalizer out, with the pod's uid as a
    precondition."""
    return PatchBody("strategic", {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
                                                "uid": pod.metadata.uid}})


class JobController(Controller):
    """See the module docstring."""

    service_account = "job-controller"

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.expectations = Expectations()
        #: job key -> uids whose finalizer removal was sent and not yet seen (finalizerExpectations)
        self.removing: dict[str, frozenset] = {}
        self.jobs = self.informer("jobs", on_add=self._add_job, on_update=self._update_job,
                                  on_delete=self._delete_job, indexers={NAMESPACE_INDEX: index_by_namespace})
        self.pods = self.informer("pods", on_add=self._add_pod, on_update=self._update_pod,
                                  on_delete=self._delete_pod, indexers={NAMESPACE_INDEX: index_by_namespace})

    # -- handlers ----------------------------------------------------------------------------------------

    def _add_job(self, now: int, job: Job, out: Out) -> None:
        self.queue.add(meta_namespace_key(job))

    def _update_job(self, now: int, old: Job, cur: Job, out: Out) -> None:
        if cur.metadata.uid != old.metadata.uid:
            self._delete_job(now, old, out)
        self.queue.add(meta_namespace_key(cur))

    def _delete_job(self, now: int, obj: Any, out: Out) -> None:
        job = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        key = meta_namespace_key(job)
        self.expectations = self.expectations.delete(key)
        self.removing.pop(key, None)
        # cleanupPodFinalizers: the pods it leaves behind lose their finalizer as orphans
        for pod in self.pods.by_index(NAMESPACE_INDEX, job.metadata.namespace):
            ref = controller_of(pod)
            if ref is not None and ref.uid == job.metadata.uid and logic.has_tracking_finalizer(pod):
                self.queue.add(("pod", pod.metadata.namespace, pod.metadata.name))

    def _job_of(self, pod: Pod) -> Optional[Job]:
        ref = controller_of(pod)
        return None if ref is None else resolve_controller_ref(self.jobs, pod.metadata.namespace, ref, "Job")

    def _enqueue_batched(self, now: int, out: Out, job: Job) -> None:
        self.queue.add_after(now, out, meta_namespace_key(job), BATCH_PERIOD_MS)

    def _add_pod(self, now: int, pod: Pod, out: Out) -> None:
        if pod.metadata.deletion_timestamp is not None:
            self._pod_gone(now, pod, out, final=False)
            return
        job = self._job_of(pod)
        if job is not None:
            self.expectations = self.expectations.creation_observed(meta_namespace_key(job))
            self._enqueue_batched(now, out, job)
            return
        if controller_of(pod) is not None:
            self._orphan(pod)
            return
        for job in owners_selecting(self.jobs, pod):
            self._enqueue_batched(now, out, job)

    def _update_pod(self, now: int, old: Pod, cur: Pod, out: Out) -> None:
        if cur.metadata.resource_version == old.metadata.resource_version:
            return
        if cur.metadata.deletion_timestamp is not None:
            self._pod_gone(now, cur, out, final=False)
        job = self._job_of(cur)
        if job is None:
            self._orphan(cur)
            if controller_of(cur) is None:
                for job in owners_selecting(self.jobs, cur):
                    self._enqueue_batched(now, out, job)
            return
        key = meta_namespace_key(job)
        if logic.has_tracking_finalizer(old) and not logic.has_tracking_finalizer(cur):
            self._finalizer_removed(key, cur.metadata.uid)
        self._enqueue_batched(now, out, job)

    def _delete_pod(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self._pod_gone(now, pod, out, final=True)

    def _pod_gone(self, now: int, pod: Pod, out: Out, *, final: bool) -> None:
        job = self._job_of(pod)
        if job is None:
            if logic.has_tracking_finalizer(pod) and not final:
                self._orphan(pod)
            return
        key = meta_namespace_key(job)
        self.expectations = self.expectations.deletion_observed(key, meta_namespace_key(pod))
        if final:
            self._finalizer_removed(key, pod.metadata.uid)  # a pod gone has no finalizer left
        self._enqueue_batched(now, out, job)

    def _orphan(self, pod: Pod) -> None:
        if logic.has_tracking_finalizer(pod):
            self.queue.add(("pod", pod.metadata.namespace, pod.metadata.name))

    def _finalizer_removed(self, key: str, uid: str) -> None:
        expected = self.removing.get(key)
        if expected is not None and uid in expected:
            self.removing[key] = expected - {uid}

    # -- the sync ----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        if isinstance(key, tuple):
            self._sync_orphan(key, sync, now, out)
            return
        namespace, _, name = str(key).partition("/")
        job = self.jobs.get(namespace, name)
        if job is None or logic.is_finished(job):
            return
        if (job.spec.completion_mode or NON_INDEXED) not in (NON_INDEXED, INDEXED):
            self.event(now, out, job, "Warning", "UnknownCompletionMode",
                       "Skipped Job sync because completion mode is unknown")
            return
        try:
            selector = label_selector_from_object(job.spec.selector)
        except SelectorError:
            return
        satisfied = self.expectations.satisfied(str(key), now)
        members = self.pods.by_index(NAMESPACE_INDEX, namespace)

        def claimed(t: int, o: Out, pods: list, error: Optional[str]) -> None:
            if error is not None:
                sync.fail()
                return
            pods.sort(key=lambda p: p.metadata.name)
            self._reconcile(str(key), job, pods, satisfied, sync, t, o)

        issue_claims(sync, now, out, owner_resource="jobs", owner=job, dependent_resource="pods",
                     dependent_kind="Pod", claims=claim(job, selector, members),
                     controller_ref=new_controller_ref(job, "batch/v1", "Job"), then=claimed)

    def _reconcile(self, key: str, job: Job, pods: list, satisfied: bool, sync: Sync, now: int, out: Out) -> None:
        expected = self.removing.get(key, frozenset())
        counts = logic.count(job, pods, expected)
        status = job.status
        suspended = bool(job.spec.suspend)
        if status.start_time is None and not suspended:  # a suspended Job has not started
            status = evolve(status, start_time=now)
            job = evolve(job, status=status)
        finished = None  # the condition the Job is finishing with, once decided
        success = logic.condition(job, logic.SUCCESS_CRITERIA_MET)
        target = logic.condition(job, logic.FAILURE_TARGET)
        if success is not None and success.status == "True":
            finished = success
        elif target is not None and target.status == "True":
            finished = logic.new_condition(logic.FAILED, target.reason, target.message, now)
        else:
            failure = logic.failure(job, pods, counts, now)
            if failure is not None:
                finished = logic.new_condition(logic.FAILURE_TARGET, failure[0], failure[1], now)
            elif job.spec.active_deadline_seconds is not None and status.start_time is not None and not suspended:
                sync.requeue_after(max(1, status.start_time + job.spec.active_deadline_seconds * 1000 - now))
        state = {"active": len(counts.active), "terminating": counts.terminating, "ready": counts.ready}

        def tracked(t: int, o: Out, error: Optional[str]) -> None:
            self._track(key, job, pods, counts, finished_now[0], state, sync, t, o, error)

        finished_now = [finished]
        if finished is not None:
            def deleted(t: int, o: Out, removed: int, error: Optional[str]) -> None:
                if removed != len(counts.active) or not satisfied:
                    finished_now[0] = None  # pods or finalizers may still be on their way: not finished yet
                state["active"] -= removed
                state["terminating"] += removed
                tracked(t, o, error)
            self._delete_pods(key, job, list(counts.active), sync, now, out, deleted, keep_finalizers=True)
            return

        def managed(t: int, o: Out, active: int, error: Optional[str], called: bool = True) -> None:
            nonlocal job
            state["active"] = active
            if logic.is_complete(job, counts.succeeded, active):
                finished_now[0] = logic.new_condition(logic.SUCCESS_CRITERIA_MET, "", "", t)
            elif called:  # the Suspended condition follows spec.suspend only after manageJob ran
                job = self._suspended_condition(job, suspended, state, t, o)
            tracked(t, o, error)

        if satisfied and job.metadata.deletion_timestamp is None:
            self._manage(key, job, pods, counts, sync, now, out, managed)
        else:
            managed(now, out, len(counts.active), None, called=False)

    def _suspended_condition(self, job: Job, suspended: bool, state: dict, now: int, out: Out) -> Job:
        """syncJob's Suspended condition: True (JobSuspended, event Suspended) while spec.suspend is set; once it
        is not, an existing one turns False (JobResumed, event Resumed) and startTime restarts now, so that
        activeDeadlineSeconds counts the time the Job is continuously active."""
        reason, message = logic.JOB_SUSPENDED if suspended else logic.JOB_RESUMED
        conditions, changed = logic.ensure_condition(job.status.conditions, logic.SUSPENDED,
                                                     "True" if suspended else "False", reason, message, now)
        if not changed:
            return job
        state["suspend_changed"] = True
        status = evolve(job.status, conditions=conditions)
        if suspended:
            self.event(now, out, job, "Normal", "Suspended", "Job suspended")
        else:
            self.event(now, out, job, "Normal", "Resumed", "Job resumed")
            status = evolve(status, start_time=now)
        return evolve(job, status=status)

    # manageJob ---------------------------------------------------------------------------------------------

    def _manage(self, key: str, job: Job, pods: list, counts: logic.Counts, sync: Sync, now: int, out: Out,
                then: Callable[[int, Out, int, Optional[str]], None]) -> None:
        active = len(counts.active)
        want = logic.want_active(job, active, counts.succeeded)
        indexed = logic.is_indexed(job)
        completions = job.spec.completions or 0
        everyone = list(counts.active)
        victims: list = []
        if job.spec.suspend:  # a suspended Job's active pods all go (each loses its finalizer first)
            victims = everyone
        elif indexed:  # duplicated and out-of-range indexes go even when no pod is one too many
            victims = logic.indexed_pods_for_removal(
                everyone, active - want, completions, lambda some, n: get_pods_to_delete(some, everyone, n, now))
        elif active > want:
            victims = get_pods_to_delete(everyone, everyone, active - want, now)
        if victims:
            victims = victims[:logic.MAX_POD_CREATE_DELETE_PER_SYNC]

            def deleted(t: int, o: Out, removed: int, error: Optional[str]) -> None:
                then(t, o, active - removed, error)
            self._delete_pods(key, job, victims, sync, now, out, deleted, keep_finalizers=False)
            return
        if active >= want or job.spec.suspend:
            then(now, out, active, None)
            return
        wait = logic.pod_backoff_remaining(job, pods, now)
        if wait > 0:
            sync.requeue_after(wait)
            then(now, out, active, None)
            return
        missing = min(want - active, logic.MAX_POD_CREATE_DELETE_PER_SYNC)
        if indexed:
            indexes = logic.first_pending_indexes(everyone, counts.succeeded_indexes, missing, completions)
            templates = [pod_from_template(job, ix) for ix in indexes]
            missing = len(templates)
            if missing == 0:
                then(now, out, active, None)
                return
        else:
            templates = [pod_from_template(job)]
        self.expectations = self.expectations.expect_creations(key, missing, now)
        state = {"created": 0, "left": missing, "error": None, "next": 0}

        def batch(t: int, o: Out, size: int) -> None:
            answers = {"left": size, "failed": 0}

            def created(t2: int, response: Any, o2: Out) -> Optional[bool]:
                answers["left"] -= 1
                if response.ok:
                    state["created"] += 1
                    self.event(t2, o2, job, "Normal", "SuccessfulCreate", f"Created pod: {response.body.metadata.name}")
                else:
                    answers["failed"] += 1
                    self.expectations = self.expectations.lower(key, 1, 0)
                    msg = _message(response)
                    self.event(t2, o2, job, "Warning", "FailedCreate", f"Error creating: {msg}")
                    if state["error"] is None:
                        state["error"] = msg
                if answers["left"] == 0:
                    state["left"] -= size
                    if answers["failed"] == 0 and state["left"] > 0:
                        batch(t2, o2, min(2 * size, state["left"]))
                    else:
                        skipped = state["left"] if answers["failed"] else 0
                        if skipped:
                            self.expectations = self.expectations.lower(key, skipped, 0)
                        then(t2, o2, active + state["created"], state["error"])
                return True

            for _ in range(size):
                template = templates[state["next"] % len(templates)]  # an Indexed Job's: one per index
                state["next"] += 1
                sync.create(t, o, "pods", template, on_done=created)

        batch(now, out, 1)

    def _delete_pods(self, key: str, job: Job, victims: list, sync: Sync, now: int, out: Out,
                     then: Callable[[int, Out, int, Optional[str]], None], *, keep_finalizers: bool) -> None:
        """deleteActivePods (keep_finalizers: the Job is failing, its pods are counted before their finalizer
        goes) or deleteJobPods (the finalizer removed first, then the pod deleted)."""
        if not victims:
            then(now, out, 0, None)
            return
        if not keep_finalizers:
            self.expectations = self.expectations.expect_deletions(
                key, [meta_namespace_key(p) for p in victims], now)
        state = {"left": len(victims), "removed": len(victims), "error": None}

        def one_done(t: int, o: Out, pod: Pod, response: Any) -> bool:
            if not response.ok and response.code != 404:
                state["removed"] -= 1
                if not keep_finalizers:
                    self.expectations = self.expectations.deletion_observed(key, meta_namespace_key(pod))
                if state["error"] is None:
                    state["error"] = _message(response)
            elif response.ok:
                self.event(t, o, job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")
            state["left"] -= 1
            if state["left"] == 0:
                then(t, o, state["removed"], state["error"])
            return True

        ns = job.metadata.namespace
        for pod in victims:
            def delete(t: int, o: Out, pod: Pod = pod) -> None:
                sync.delete(t, o, "pods", pod.metadata.name, namespace=ns,
                            on_done=lambda t2, r, o2, pod=pod: one_done(t2, o2, pod, r))

            if keep_finalizers or not logic.has_tracking_finalizer(pod):
                delete(now, out)
                continue

            def unfinalized(t: int, response: Any, o: Out, pod: Pod = pod, delete: Any = delete) -> bool:
                if response.ok or response.code == 404:
                    delete(t, o)
                    return True
                return one_done(t, o, pod, response)

            sync.patch(now, out, "pods", pod.metadata.name, remove_finalizer_patch(pod), namespace=ns,
                       on_done=unfinalized)

    # trackJobStatusAndRemoveFinalizers --------------------------------------------------------------------

    def _track(self, key: str, job: Job, pods: list, counts: logic.Counts, finished: Any, state: dict,
               sync: Sync, now: int, out: Out, manage_error: Optional[str]) -> None:
        expected = self.removing.get(key, frozenset())
        status = job.status
        needs_flush = (state["active"] != status.active or status.ready != state["ready"]
                       or status.terminating != state["terminating"] or state.get("suspend_changed", False))
        status = evolve(status, active=state["active"], ready=state["ready"], terminating=state["terminating"],
                        uncounted_terminated_pods=logic.uncounted_of(job))
        with_finalizer = {p.metadata.uid for p in pods
                          if logic.has_tracking_finalizer(p) and p.metadata.uid not in expected}
        status, changed = logic.clean_uncounted(status, with_finalizer)
        needs_flush = needs_flush or changed
        uncounted = status.uncounted_terminated_pods
        succeeded, failed = list(uncounted.succeeded), list(uncounted.failed)
        to_remove: list[Pod] = []
        reached_max = False
        indexed = logic.is_indexed(job)
        completions = job.spec.completions or 0
        for pod in pods:
            uid = pod.metadata.uid
            if not logic.has_tracking_finalizer(pod) or uid in expected:
                continue
            considered_failed = logic.is_pod_failed(pod)
            if not (job.metadata.deletion_timestamp is not None or finished is not None
                    or pod.status.phase == "Succeeded" or considered_failed):
                continue
            to_remove.append(pod)
            if pod.status.phase == "Succeeded" and uid not in failed:
                if indexed:  # the completion index is counted, never the pod's uid
                    ix = logic.completion_index(pod)
                    if 0 <= ix < completions and ix not in counts.prev_succeeded_indexes:
                        needs_flush = True
                elif uid not in succeeded:
                    succeeded.append(uid)
                    needs_flush = True
            elif considered_failed or (finished is not None and finished.type != logic.SUCCESS_CRITERIA_MET):
                if uid not in failed:
                    failed.append(uid)
                    needs_flush = True
            if len(succeeded) + len(failed) >= logic.MAX_UNCOUNTED_PODS:
                reached_max = True
                break
        status = evolve(status, uncounted_terminated_pods=UncountedTerminatedPods(
            succeeded=tuple(succeeded), failed=tuple(failed)))
        if indexed:
            completed = logic.format_indexes(counts.succeeded_indexes)
            needs_flush = needs_flush or completed != status.completed_indexes
            status = evolve(status, completed_indexes=completed, succeeded=len(counts.succeeded_indexes))
        if finished is not None and finished.type == logic.FAILURE_TARGET:
            status = evolve(status, conditions=status.conditions + (finished,))
            needs_flush = True
            finished = logic.new_condition(logic.FAILED, finished.reason, finished.message, now)
        elif finished is not None and finished.type == logic.SUCCESS_CRITERIA_MET:
            if logic.condition(job, logic.SUCCESS_CRITERIA_MET) is None:
                status = evolve(status, conditions=status.conditions + (finished,))
                needs_flush = True
            finished = logic.new_condition(logic.COMPLETE, finished.reason, finished.message, now)
        job = evolve(job, status=status)

        def finish(t: int, o: Out, job: Job, flush: bool, error: Optional[str]) -> None:
            done = not reached_max and self._enact_finished(job, finished, state["terminating"])
            if done:
                job = evolve(job, status=evolve(job.status, conditions=logic.with_condition(
                    job.status.conditions, finished), completion_time=(
                        finished.last_transition_time if finished.type == logic.COMPLETE else
                        job.status.completion_time)))
                flush = True
            if not flush:
                self._end(sync, error or manage_error)
                return

            def written(t2: int, response: Any, o2: Out) -> Optional[bool]:
                if not response.ok:
                    return None
                if done:
                    self._record_finished(t2, o2, response.body, finished)
                self._end(sync, error or manage_error)
                return True

            sync.update_status(t, o, "jobs", job, on_done=written)

        self._flush_and_remove(key, job, to_remove, with_finalizer, needs_flush, sync, now, out, finish)

    def _flush_and_remove(self, key: str, job: Job, to_remove: list, with_finalizer: set, needs_flush: bool,
                          sync: Sync, now: int, out: Out, then: Callable) -> None:
        """flushUncountedAndRemoveFinalizers: write the status with the new uncounted uids, remove the finalizers,
        then move the pods whose finalizer is gone into the counters (written at once only after an error)."""
        def removed_all(t: int, o: Out, job: Job, error: Optional[str]) -> None:
            status, changed = logic.clean_uncounted(job.status, with_finalizer)
            job = evolve(job, status=status)
            if error is not None and changed:
                def written(t2: int, response: Any, o2: Out) -> Optional[bool]:
                    then(t2, o2, response.body if response.ok else job, False, error)
                    return True
                sync.update_status(t, o, "jobs", job, on_done=written)
                return
            then(t, o, job, changed, error)

        def remove(t: int, o: Out, job: Job) -> None:
            if not to_remove:
                removed_all(t, o, job, None)
                return
            uids = frozenset(p.metadata.uid for p in to_remove)
            self.removing[key] = self.removing.get(key, frozenset()) | uids
            state = {"left": len(to_remove), "error": None}
            for pod in to_remove:
                def patched(t2: int, response: Any, o2: Out, pod: Pod = pod) -> bool:
                    uid = pod.metadata.uid
                    if response.ok or response.code == 404:
                        with_finalizer.discard(uid)
                    if not response.ok:
                        self._finalizer_removed(key, uid)  # no update of the pod is coming
                        if response.code != 404 and state["error"] is None:
                            state["error"] = _message(response)
                    state["left"] -= 1
                    if state["left"] == 0:
                        removed_all(t2, o2, job, state["error"])
                    return True
                sync.patch(t, o, "pods", pod.metadata.name, remove_finalizer_patch(pod),
                           namespace=pod.metadata.namespace, on_done=patched)

        if not needs_flush:
            remove(now, out, job)
            return

        def flushed(t: int, response: Any, o: Out) -> Optional[bool]:
            if not response.ok:
                return None  # the sync fails and is retried
            remove(t, o, response.body)
            return True

        sync.update_status(now, out, "jobs", job, on_done=flushed)

    @staticmethod
    def _enact_finished(job: Job, finished: Any, terminating: int) -> bool:
        """enactJobFinished: the final condition only once nothing is uncounted and no pod is terminating."""
        if finished is None:
            return False
        uncounted = job.status.uncounted_terminated_pods
        if uncounted is not None and (uncounted.succeeded or uncounted.failed):
            return False
        return terminating == 0

    def _record_finished(self, now: int, out: Out, job: Job, finished: Any) -> None:
        if finished.type == logic.COMPLETE:
            if job.spec.completions is not None and job.status.succeeded > job.spec.completions:
                self.event(now, out, job, "Warning", "TooManySucceededPods",
                           "Too many succeeded pods running after completion count reached")
            self.event(now, out, job, "Normal", "Completed", "Job completed")
        else:
            self.event(now, out, job, "Warning", finished.reason, finished.message)

    @staticmethod
    def _end(sync: Sync, error: Optional[str]) -> None:
        if error is not None:
            sync.fail()

    # syncOrphanPod -----------------------------------------------------------------------------------------

    def _sync_orphan(self, key: tuple, sync: Sync, now: int, out: Out) -> None:
        _, namespace, name = key
        pod = self.pods.get(namespace, name)
        if pod is None or not logic.has_tracking_finalizer(pod):
            return
        job = self._job_of(pod)
        if job is not None and not logic.is_finished(job):
            return  # its Job will count it
        sync.patch(now, out, "pods", name, remove_finalizer_patch(pod), namespace=namespace,
                   on_done=lambda t, r, o: True if r.code == 404 else None)


@controller("job", service_account="job-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "update", "patch"), ("jobs",), _BATCH),
    rule(("update", "patch"), ("jobs/status",), _BATCH),
    rule(("update",), ("jobs/finalizers",), _BATCH),
    rule(("list", "watch", "create", "delete", "patch"), ("pods",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The Job controller."""
    return [JobController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches)]
