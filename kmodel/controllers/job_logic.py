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

from typing import Callable, Optional, Sequence

import attrs

from kmodel.objects import Job, JobCondition, Pod
from kmodel.objects.batch import COMPLETION_INDEX_ANNOTATION, INDEXED, JOB_TRACKING_FINALIZER, UncountedTerminatedPods

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
#: the Suspended condition's (reason, message) while a Job is suspended, and once it is resumed
SUSPENDED = "Suspended"
JOB_SUSPENDED = ("JobSuspended", "Job suspended")
JOB_RESUMED = ("JobResumed", "Job resumed")


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
    succeeded: int  # status.succeeded + new + uncounted (an Indexed Job: its succeeded indexes)
    failed: int
    #: an Indexed Job's indexes status.completedIndexes lists, and those plus the newly succeeded pods' indexes
    #: (calculateSucceededIndexes); empty for a NonIndexed Job
    prev_succeeded_indexes: frozenset = frozenset()
    succeeded_indexes: frozenset = frozenset()


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
    before: frozenset = frozenset()
    indexes: frozenset = frozenset()
    succeeded = s.succeeded + len(new_succeeded) + len(uncounted.succeeded)
    if is_indexed(job):
        before, indexes = succeeded_indexes(job, pods)
        succeeded = len(indexes)
    return Counts(active=active, ready=sum(1 for p in active if is_pod_ready(p)),
                  terminating=sum(1 for p in pods if is_terminating(p)), new_succeeded=new_succeeded,
                  new_failed=new_failed, succeeded=succeeded, failed=s.failed + len(new_failed) + len(uncounted.failed),
                  prev_succeeded_indexes=before, succeeded_indexes=indexes)


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


def ensure_condition(conditions: tuple, kind: str, status: str, reason: str, message: str,
                     now: int) -> tuple[tuple, bool]:
    """ensureJobConditionStatus: the condition of type `kind` set to (status, reason, message), replaced when any of
    them differs; a False condition is never added where there is none. Returns (conditions, changed)."""
    new = JobCondition(type=kind, status=status, last_probe_time=now, last_transition_time=now, reason=reason,
                       message=message)
    for i, c in enumerate(conditions):
        if c.type == kind:
            if (c.status, c.reason, c.message) == (status, reason, message):
                return conditions, False
            return conditions[:i] + (new,) + conditions[i + 1:], True
    if status == "False":
        return conditions, False
    return conditions + (new,), True


def with_condition(conditions: tuple, new: JobCondition) -> tuple:
    """ensureJobConditionStatus: the condition of that type set to `new` (kept as it is when already True)."""
    for i, c in enumerate(conditions):
        if c.type == new.type:
            if c.status == new.status:
                return conditions
            return conditions[:i] + (new,) + conditions[i + 1:]
    return conditions + (new,)


# -- Indexed Jobs (pkg/controller/job/indexed_job_utils.go) ------------------------------------------------------
#
# An Indexed Job's pods each carry a completion index (0 to completions-1) in the annotation and label
# batch.kubernetes.io/job-completion-index. The Job succeeds index by index: status.completedIndexes lists the
# indexes that have a succeeded pod, as intervals ("0-2,5"), and status.succeeded is their number, so a second
# pod that succeeds for an index already listed is never counted. The controller keeps one active pod per index
# that has not succeeded, creating the lowest pending indexes first, and removes active pods with no valid index,
# an index past completions, or an index another active pod holds.

#: MaxGeneratedNameLength (validation.DNS1123SubdomainMaxLength 63 - 5 random characters)
MAX_GENERATED_NAME_LENGTH = 58
UNKNOWN_INDEX = -1


def completion_index(pod: Pod) -> int:
    """getCompletionIndex: the pod's completion index annotation as a non-negative integer, else UNKNOWN_INDEX."""
    text = pod.metadata.annotations.get(COMPLETION_INDEX_ANNOTATION)
    if text is None or not text.isdigit() or not text.isascii():
        return UNKNOWN_INDEX
    return int(text)


def parse_indexes(text: str, completions: int) -> frozenset:
    """parseIndexesFromString: the indexes below `completions` in a list of intervals ("1,3-5"); a malformed
    interval is skipped (upstream logs it), and the first one starting at or past completions ends the list."""
    found: set[int] = set()
    if not text:
        return frozenset()
    for part in text.split(","):
        first, sep, last = part.partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            continue
        lo = int(first)
        if lo >= completions:
            break
        hi = min(int(last), completions - 1) if sep else lo
        found.update(range(lo, hi + 1))
    return frozenset(found)


def format_indexes(indexes: frozenset) -> str:
    """orderedIntervals.String: the indexes as sorted intervals, "0-2,5" (a pair is written "3,4")."""
    out: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j == i:
            out.append(str(ordered[i]))
        elif j == i + 1:
            out.append(f"{ordered[i]},{ordered[j]}")
        else:
            out.append(f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def succeeded_indexes(job: Job, pods: Sequence[Pod]) -> tuple[frozenset, frozenset]:
    """calculateSucceededIndexes: (the indexes status.completedIndexes lists, those plus the valid indexes of the
    succeeded pods that still hold the tracking finalizer)."""
    completions = job.spec.completions or 0
    before = parse_indexes(job.status.completed_indexes, completions)
    fresh = {completion_index(p) for p in pods if p.status.phase == "Succeeded" and has_tracking_finalizer(p)}
    return before, before | {ix for ix in fresh if 0 <= ix < completions}


def first_pending_indexes(active: Sequence[Pod], succeeded: frozenset, count: int, completions: int) -> list[int]:
    """firstPendingIndexes (podReplacementPolicy TerminatingOrFailed): the `count` lowest indexes below
    `completions` that neither succeeded nor have an active pod."""
    taken = set(succeeded) | {completion_index(p) for p in active}
    out: list[int] = []
    ix = 0
    while ix < completions and len(out) < count:
        if ix not in taken:
            out.append(ix)
        ix += 1
    return out


def indexed_pods_for_removal(active: Sequence[Pod], remove_at_least: int, completions: int,
                             order: Callable[[list, int], list]) -> list[Pod]:
    """activePodsForRemoval of an Indexed Job: every active pod with no valid index or one past completions, all
    but one of the pods sharing an index (the one kept is the last in deletion order), then more in deletion order
    until `remove_at_least` go. `order(pods, n)`: the n pods to delete first among `pods` (the controller's
    ranking)."""
    groups: dict[int, list[Pod]] = {}
    for pod in active:
        groups.setdefault(completion_index(pod), []).append(pod)
    remove: list[Pod] = []
    left: list[Pod] = []
    for ix in sorted(groups):
        group = groups[ix]
        if ix == UNKNOWN_INDEX or ix >= completions:
            remove += group
        elif len(group) == 1:
            left += group
        else:
            extra = order(group, len(group) - 1)
            remove += extra
            left += [p for p in group if p not in extra]
    if len(remove) < remove_at_least:
        remove += order(left, remove_at_least - len(remove))
    return remove


def indexed_generate_name(job_name: str, index: int) -> str:
    """podGenerateNameWithIndex: "<job>-<index>-", the job's name cut so that the prefix fits a generated name."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def is_indexed(job: Job) -> bool:
    return job.spec.completion_mode == INDEXED
