"""The Job guarantees: each finished pod counted at most once, a pod released by the tracking finalizer only once
its Job holds it, a Complete Job backed by its successful pods, and finished Jobs letting go of their pods; for
Indexed Jobs, each completion index counted at most once and only once one of its pods succeeded, and
status.completedIndexes never losing an index.

The safety invariants read the pod and Job changes from the store's history, in revision order, keeping per Job
uid the pods it controlled that ever succeeded and those that ever failed (phase Failed, or deleted or being
deleted without having succeeded: upstream counts those as failures), the completion indexes of its pods that ever
succeeded, and a mirror of every Job as stored. They judge from those records alone: never from the Job
controller's helpers (kmodel.controllers.job_logic); the interval lists of completedIndexes are read by a parser
of their own here.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import PODS, audit_since, kept_ledger
from kmodel.invariants.inputs import writes
from kmodel.invariants.registry import LIVENESS, SAFETY, invariant

JOBS = "/registry/jobs/"
#: batch/v1 JobTrackingFinalizer, spelled here so that a rename in the model fails loudly instead of silencing
TRACKING = "batch.kubernetes.io/job-tracking"
#: batch/v1 JobCompletionIndexAnnotation: an Indexed Job's pod's completion index
INDEX = "batch.kubernetes.io/job-completion-index"
#: the Job controller's user (its service account): the one whose releases job-finalizer-after-counting judges
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"


def _indexed(job: Any) -> bool:
    return job.spec.completion_mode == "Indexed"


def _pod_index(pod: Any) -> int:
    """The pod's completion index, -1 when it has none that reads as a non-negative decimal number."""
    text = pod.metadata.annotations.get(INDEX, "")
    return int(text) if text.isascii() and text.isdigit() else -1


def _completed(job: Any) -> list[int]:
    """The indexes status.completedIndexes lists ("1,3-5": 1, 3, 4, 5), in the order written; an interval that is
    not one reads as -1 (so that it is reported, not skipped)."""
    found: list[int] = []
    for part in filter(None, job.status.completed_indexes.split(",")):
        first, sep, last = part.partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            found.append(-1)
            continue
        found.extend(range(int(first), int(last if sep else first) + 1))
    return found


def _job_uid(pod: Any) -> str:
    for ref in pod.metadata.owner_references:
        if ref.controller and ref.kind == "Job" and ref.api_version == "batch/v1":
            return ref.uid
    return ""


def _true(job: Any, kind: str) -> bool:
    return any(c.type == kind and c.status == "True" for c in job.status.conditions)


def _finished(job: Any) -> bool:
    return _true(job, "Complete") or _true(job, "Failed")


def _uncounted(job: Any) -> tuple[tuple, tuple]:
    u = job.status.uncounted_terminated_pods
    return ((), ()) if u is None else (u.succeeded, u.failed)


class _Ledger:
    """Per run: the pods each Job (by uid) had that succeeded and that failed, the Jobs as stored (by uid), and the
    violations of job-finalizer-after-counting found so far."""

    def __init__(self) -> None:
        self.succeeded: dict[str, set] = {}
        self.failed: dict[str, set] = {}
        self.jobs: dict[str, Any] = {}  # job uid -> the Job now (absent: gone)
        #: releases that break the rule if the Job controller made them: (revision, message), until
        #: job-finalizer-after-counting reads who did (`releases_by_the_controller`)
        self.released: list[tuple[int, str]] = []
        #: job uid -> the completion indexes of its pods that ever succeeded (Indexed Jobs)
        self.succeeded_indexes: dict[str, set] = {}
        #: violations of job-completed-indexes-kept found so far
        self.lost_indexes: list[str] = []

    def read(self, feed: Any, store: Any) -> None:
        for ch in feed.read(store):
            if ch.key.startswith(JOBS):
                job = ch.value if ch.value is not None else ch.prev
                if ch.value is None:
                    self.jobs.pop(job.metadata.uid, None)
                else:
                    before = self.jobs.get(job.metadata.uid)
                    if before is not None and _indexed(job):
                        self._judge_kept(ch.rev, before, job)
                    self.jobs[job.metadata.uid] = job
                continue
            pod = ch.value if ch.value is not None else ch.prev
            uid = _job_uid(pod) if pod is not None else ""
            if not uid:
                continue
            now = ch.value
            if now is not None and now.status.phase == "Succeeded":
                self.succeeded.setdefault(uid, set()).add(pod.metadata.uid)
                self.succeeded_indexes.setdefault(uid, set()).add(_pod_index(now))
            elif now is None or now.status.phase == "Failed" or now.metadata.deletion_timestamp is not None:
                if pod.status.phase != "Succeeded":
                    self.failed.setdefault(uid, set()).add(pod.metadata.uid)
            if ch.prev is not None and now is not None and TRACKING in ch.prev.metadata.finalizers \
                    and TRACKING not in now.metadata.finalizers:
                self._judge_release(ch.rev, now, uid)

    def _judge_release(self, rev: int, pod: Any, job_uid: str) -> None:
        if pod.status.phase not in ("Succeeded", "Failed"):
            return  # an active pod deleted as one too many is not counted: its finalizer goes first
        job = self.jobs.get(job_uid)
        if job is None or job.metadata.deletion_timestamp is not None or _finished(job):
            return  # an orphan, or a finished Job's: released without counting, as upstream
        if pod.metadata.uid in {uid for listed in _uncounted(job) for uid in listed}:
            return
        if _indexed(job) and pod.status.phase == "Succeeded":
            index = _pod_index(pod)
            if index in _completed(job) or not 0 <= index < (job.spec.completions or 0):
                return  # counted by its index in completedIndexes, or a pod with no index to count, never counted
        where = f"revision {rev}: pod {pod.metadata.namespace}/{pod.metadata.name} ({pod.status.phase})"
        self.released.append((rev, f"{where} lost its {TRACKING} finalizer while Job {job.metadata.namespace}/"
                                   f"{job.metadata.name} did not list it in status.uncountedTerminatedPods: a finished "
                                   f"pod may be deleted before it is counted"))

    def _judge_kept(self, rev: int, before: Any, job: Any) -> None:
        lost = sorted(set(_completed(before)) - set(_completed(job)))
        if lost:
            self.lost_indexes.append(
                f"revision {rev}: Job {job.metadata.namespace}/{job.metadata.name}'s status.completedIndexes went from "
                f"{before.status.completed_indexes!r} to {job.status.completed_indexes!r}, losing "
                f"{', '.join(map(str, lost))}")


def _ledger(cluster: Any, memo: dict) -> _Ledger:
    ledger, feed = kept_ledger(memo, (PODS, JOBS), _Ledger)
    ledger.read(feed, cluster.store)
    return ledger


@invariant("job-pods-counted-once", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, JOBS),))
def job_pods_counted_once(cluster: Any, memo: dict) -> Iterator[str]:
    """A Job never counts more pods than it had: status.succeeded plus the uids in
    uncountedTerminatedPods.succeeded are at most the distinct pods of the Job that ever succeeded, and likewise
    for failed (a pod that failed, or was deleted without having succeeded)."""
    ledger = _ledger(cluster, memo)
    for uid, job in sorted(ledger.jobs.items()):
        succeeded, failed = _uncounted(job)
        s = job.status
        for what, counted, seen in (("succeeded", s.succeeded + len(succeeded), ledger.succeeded.get(uid, ())),
                                    ("failed", s.failed + len(failed), ledger.failed.get(uid, ()))):
            if counted > len(seen):
                yield (f"Job {job.metadata.namespace}/{job.metadata.name} counts {counted} {what} pods "
                       f"(status.{what} {getattr(s, what)} + {len(succeeded if what == 'succeeded' else failed)} "
                       f"uncounted) but only {len(seen)} of its pods ever {what}")


@invariant("job-finalizer-after-counting", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, JOBS),))
def job_finalizer_after_counting(cluster: Any, memo: dict) -> Iterator[str]:
    """The Job controller releases a finished pod of a running Job from its tracking finalizer only once the Job's
    stored status lists it in uncountedTerminatedPods, or for a succeeded pod of an Indexed Job its index in
    completedIndexes (the finalizer keeps the pod until it is counted; a pod of a Job gone, being deleted or
    finished, or an Indexed Job's pod with no valid index, is released without counting). Who released it is read
    from the audit trail: a user who removes the finalizer by hand takes the pod's count on themselves."""
    ledger = _ledger(cluster, memo)
    bad: list = memo.setdefault("bad", [])
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    if ledger.released:
        audited = audit_since(cluster, memo, start, end)
        for rev, message in ledger.released:
            # the request that made the revision: the first audit record at or after it (requests are handled
            # one at a time); a user's or another component's removal is theirs, not the Job controller's
            by = next((r for r in audited if r.revision >= rev), None)
            if by is None or by.user == JOB_CONTROLLER:
                bad.append(message)
        ledger.released.clear()
    yield from bad


@invariant("job-complete-has-its-completions", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, JOBS),))
def job_complete_has_its_completions(cluster: Any, memo: dict) -> Iterator[str]:
    """A Complete Job has status.succeeded at least its completions (one without completions), that many of its
    pods ever succeeded, and it is never Failed too."""
    ledger = _ledger(cluster, memo)
    for uid, job in sorted(ledger.jobs.items()):
        if not _true(job, "Complete"):
            continue
        name = f"{job.metadata.namespace}/{job.metadata.name}"
        wanted = job.spec.completions if job.spec.completions is not None else 1
        seen = len(ledger.succeeded.get(uid, ()))
        if job.status.succeeded < wanted or seen < wanted:
            yield (f"Job {name} is Complete with status.succeeded {job.status.succeeded} and {seen} pods that ever "
                   f"succeeded, wanting {wanted}")
        if _true(job, "Failed"):
            yield f"Job {name} is both Complete and Failed"


@invariant("job-indexes-counted-once", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, JOBS),))
def job_indexes_counted_once(cluster: Any, memo: dict) -> Iterator[str]:
    """An Indexed Job counts each completion index at most once and only once one of its pods with that index
    succeeded: status.completedIndexes lists distinct indexes below completions, in increasing order,
    status.succeeded is their number, and each of them is the index of a pod of the Job that ever succeeded."""
    ledger = _ledger(cluster, memo)
    for uid, job in sorted(ledger.jobs.items()):
        if not _indexed(job) or not job.status.completed_indexes:
            continue
        name = f"Job {job.metadata.namespace}/{job.metadata.name}"
        listed = _completed(job)
        completions = job.spec.completions or 0
        if listed != sorted(set(listed)) or any(not 0 <= ix < completions for ix in listed):
            yield (f"{name}'s status.completedIndexes {job.status.completed_indexes!r} is not a list of increasing "
                   f"distinct indexes below completions {completions}")
        if job.status.succeeded != len(set(listed)):
            yield (f"{name} has status.succeeded {job.status.succeeded} but status.completedIndexes "
                   f"{job.status.completed_indexes!r} lists {len(set(listed))} indexes")
        missing = sorted(set(listed) - ledger.succeeded_indexes.get(uid, set()))
        if missing:
            yield (f"{name} lists index {', '.join(map(str, missing))} in status.completedIndexes, but no pod of "
                   f"the Job with that index ever succeeded")


@invariant("job-completed-indexes-kept", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, JOBS),))
def job_completed_indexes_kept(cluster: Any, memo: dict) -> Iterator[str]:
    """An Indexed Job's status.completedIndexes never loses an index: each stored version of the Job lists every
    index the version before it listed."""
    yield from _ledger(cluster, memo).lost_indexes


@invariant("finished-jobs-release-pods", kind=LIVENESS, principle="level-driven reconciliation")
def finished_jobs_release_pods(cluster: Any, memo: dict) -> Iterator[str]:
    """Once the cluster settles, no pod of a finished Job, or of a Job that is gone, still holds the tracking
    finalizer."""
    jobs = {j.metadata.uid: j for j in cluster.objects("jobs")}
    for pod in cluster.objects("pods"):
        uid = _job_uid(pod)
        if not uid or TRACKING not in pod.metadata.finalizers:
            continue
        job = jobs.get(uid)
        if job is None or _finished(job):
            state = "is gone" if job is None else "has finished"
            yield (f"pod {pod.metadata.namespace}/{pod.metadata.name} still holds {TRACKING} though its Job "
                   f"{state}")
