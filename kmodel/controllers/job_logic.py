"""The Job controller's decisions (pkg/controller/job/job_controller.go, Kubernetes 1.31), as pure functions over
a Job and its pods: what counts as active, failed or newly finished, how many pods it wants, when it has failed
or succeeded, the pod-failure back-off, and the status bookkeeping of the tracking finalizer. The component
(job.py) applies them.

Terms, as upstream's:

* active: neither Succeeded nor Failed, and not being deleted (FilterActivePods); terminating: being deleted and
  not yet Succeeded or Failed (CountTerminatingPods);
* failed (isPodFailed, podReplacementPolicy TerminatingOrFailed): phase Failed, or being deleted without having
  succeeded (an orphan that never reaches Failed counts as a failure);
* uncounted: the uids in status.uncountedTerminatedPods, finished pods whose tracking finalizer is being removed
  and which no counter holds yet. A pod is counted exactly once: into uncounted while it keeps its finalizer,
  then into succeeded/failed once its finalizer is gone (`clean_uncounted`).
"""

from __future__ import annotations

from typing import Optional, Sequence

import attrs

from kmodel.objects import Job, JobCondition, Pod
from kmodel.objects.batch import JOB_TRACKING_FINALIZER, UncountedTerminatedPods

from .pod_state import is_pod_active, is_pod_ready

#: MaxUncountedPods: how many uids status.uncountedTerminatedPods holds before the controller flushes
MAX_UNCOUNTED_PODS = 500
#: MaxPodCreateDeletePerSync
MAX_POD_CREATE_DELETE_PER_SYNC = 500
#: DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff: the wait before a replacement after failures
POD_FAILURE_BACKOFF_MS = 10_000
MAX_POD_FAILURE_BACKOFF_MS = 600_000
COMPLETE, FAILED = "Complete", "Failed"
FAILURE_TARGET, SUCCESS_CRITERIA_MET = "FailureTarget", "SuccessCriteriaMet"
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


def condition(job: Job, kind: str) -> Optional[JobCondition]:
    for c in job.status.conditions:
        if c.type == kind:
            return c
    return None


def is_finished(job: Job) -> bool:
    """IsJobFinished: a Complete or Failed condition that is True."""
    return any(c.type in (COMPLETE, FAILED) and c.status == "True" for c in job.status.conditions)


def has_tracking_finalizer(pod: Pod) -> bool:
    return JOB_TRACKING_FINALIZER in pod.metadata.finalizers


def is_pod_failed(pod: Pod) -> bool:
    """isPodFailed with podReplacementPolicy TerminatingOrFailed (see the module docstring)."""
    phase = pod.status.phase
    if phase == "Failed":
        return True
    return pod.metadata.deletion_timestamp is not None and phase != "Succeeded"


def is_terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None and pod.status.phase not in ("Succeeded", "Failed")


@attrs.frozen
class Counts:
    """What syncJob computes from the pods before it acts."""

    active: tuple  # the active pods
    ready: int
    terminating: int
    new_succeeded: tuple  # finished pods with the finalizer, in no counter and not in uncounted
    new_failed: tuple
    succeeded: int  # status.succeeded + new + uncounted
    failed: int


def uncounted_of(job: Job) -> UncountedTerminatedPods:
    return job.status.uncounted_terminated_pods or UncountedTerminatedPods()


def count(job: Job, pods: Sequence[Pod], expected_removals: frozenset) -> Counts:
    """syncJob's counts (getNewFinishedPods: pods whose finalizer is being removed are skipped)."""
    active = tuple(p for p in pods if is_pod_active(p))
    uncounted = uncounted_of(job)
    seen = set(uncounted.succeeded) | set(uncounted.failed)
    fresh = [p for p in pods if has_tracking_finalizer(p) and p.metadata.uid not in seen
             and p.metadata.uid not in expected_removals]
    new_succeeded = tuple(p for p in fresh if p.status.phase == "Succeeded")
    new_failed = tuple(p for p in fresh if is_pod_failed(p))
    s = job.status
    return Counts(active=active, ready=sum(1 for p in active if is_pod_ready(p)),
                  terminating=sum(1 for p in pods if is_terminating(p)), new_succeeded=new_succeeded,
                  new_failed=new_failed, succeeded=s.succeeded + len(new_succeeded) + len(uncounted.succeeded),
                  failed=s.failed + len(new_failed) + len(uncounted.failed))


def past_backoff_limit_on_failure(job: Job, pods: Sequence[Pod]) -> bool:
    """pastBackoffLimitOnFailure: with restartPolicy OnFailure, the container restarts of the running and pending
    pods reach backoffLimit (any restart when it is 0)."""
    if job.spec.template.spec.restart_policy != "OnFailure":
        return False
    restarts = sum(cs.restart_count for p in pods if p.status.phase in ("Running", "Pending")
                   for cs in p.status.init_container_statuses + p.status.container_statuses)
    limit = job.spec.backoff_limit or 0
    return restarts > 0 if limit == 0 else restarts >= limit


def past_active_deadline(job: Job, now: int) -> bool:
    """pastActiveDeadline: activeDeadlineSeconds since status.startTime (never while suspended)."""
    s = job.spec
    if s.active_deadline_seconds is None or job.status.start_time is None or s.suspend:
        return False
    return now - job.status.start_time >= s.active_deadline_seconds * 1000


def failure(job: Job, pods: Sequence[Pod], counts: Counts, now: int) -> Optional[tuple[str, str]]:
    """The (reason, message) the Job fails with now, or None: the backoff limit (pod failures past it, or
    OnFailure restarts reaching it), then the active deadline."""
    if counts.failed > (job.spec.backoff_limit or 0) or past_backoff_limit_on_failure(job, pods):
        return BACKOFF_LIMIT_EXCEEDED
    if past_active_deadline(job, now):
        return DEADLINE_EXCEEDED
    return None


def want_active(job: Job, active: int, succeeded: int) -> int:
    """manageJob's wantActive: without completions, parallelism until one pod succeeds, then only those running;
    with completions, the completions still missing, at most parallelism."""
    parallelism = job.spec.parallelism or 0
    if job.spec.completions is None:
        return active if succeeded > 0 else parallelism
    return max(0, min(job.spec.completions - succeeded, parallelism))


def is_complete(job: Job, succeeded: int, active: int) -> bool:
    """Without completions: a pod succeeded and none is active; with: completions reached and none active."""
    if job.spec.completions is None:
        return succeeded > 0 and active == 0
    return succeeded >= job.spec.completions and active == 0


def finished_time(pod: Pod) -> Optional[int]:
    """getFinishedTime: the latest container finishedAt, else the Ready condition's transition."""
    times = [cs.state.terminated.finished_at for cs in pod.status.container_statuses
             if cs.state.terminated is not None and cs.state.terminated.finished_at is not None]
    if times:
        return max(times)
    for c in pod.status.conditions:
        if c.type == "Ready":
            return c.last_transition_time
    return None


def pod_backoff_remaining(job: Job, pods: Sequence[Pod], now: int) -> int:
    """The ms to wait before creating a replacement (backoffRecord.getRemainingTime): after n failures since the
    last success, 10 s · 2^(n-1) (at most 10 min) from the last failure."""
    failures: list[int] = []
    last_success: Optional[int] = None
    for p in pods:
        t = finished_time(p)
        if t is None:
            continue
        if p.status.phase == "Succeeded":
            last_success = t if last_success is None else max(last_success, t)
        elif p.status.phase == "Failed":
            failures.append(t)
    if last_success is not None:
        failures = [t for t in failures if t > last_success]
    if not failures:
        return 0
    delay = min(POD_FAILURE_BACKOFF_MS * 2 ** (len(failures) - 1), MAX_POD_FAILURE_BACKOFF_MS)
    return max(0, max(failures) + delay - now)


def new_condition(kind: str, reason: str, message: str, now: int) -> JobCondition:
    return JobCondition(type=kind, status="True", last_probe_time=now, last_transition_time=now, reason=reason,
                        message=message)


def clean_uncounted(status, with_finalizer: set) -> tuple:
    """cleanUncountedPodsWithoutFinalizers: the uids of uncounted pods whose finalizer is gone move into the
    counters. Returns (status, changed)."""
    uncounted = status.uncounted_terminated_pods or UncountedTerminatedPods()
    succeeded = tuple(u for u in uncounted.succeeded if u in with_finalizer)
    failed = tuple(u for u in uncounted.failed if u in with_finalizer)
    if len(succeeded) == len(uncounted.succeeded) and len(failed) == len(uncounted.failed):
        return status, False
    return attrs.evolve(
        status, succeeded=status.succeeded + len(uncounted.succeeded) - len(succeeded),
        failed=status.failed + len(uncounted.failed) - len(failed),
        uncounted_terminated_pods=UncountedTerminatedPods(succeeded=succeeded, failed=failed)), True


def with_condition(conditions: tuple, new: JobCondition) -> tuple:
    """ensureJobConditionStatus: the condition of that type set to `new` (kept as it is when already True)."""
    for i, c in enumerate(conditions):
        if c.type == new.type:
            if c.status == new.status:
                return conditions
            return conditions[:i] + (new,) + conditions[i + 1:]
    return conditions + (new,)
