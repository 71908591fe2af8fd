"""batch/v1 Job (no podFailurePolicy, successPolicy, backoffLimitPerIndex or managedBy: a manifest with them is
refused as having unknown fields)."""

from __future__ import annotations

import attrs

from .core import PodTemplateSpec
from .meta import LabelSelector, ObjectMeta
from .registry import api_kind
from .schema import BOOL, INT32, INT64, STRING, STRINGS, TIME, enum_string, fld, list_of, struct

#: the finalizer the Job controller puts on each pod it creates, and removes once the pod is counted
#: (batch/v1 JobTrackingFinalizer)
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: the labels the API server adds to a Job's selector and pod template (generateSelector)
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
#: an Indexed Job's pod annotation (and label) with its completion index
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
NON_INDEXED = "NonIndexed"
INDEXED = "Indexed"


@attrs.frozen
class JobSpec:
    parallelism: int | None = fld(INT32, ptr=True)
    completions: int | None = fld(INT32, ptr=True)
    active_deadline_seconds: int | None = fld(INT64, ptr=True)
    backoff_limit: int | None = fld(INT32, ptr=True)
    selector: LabelSelector | None = fld(struct(LabelSelector), ptr=True)
    manual_selector: bool | None = fld(BOOL, ptr=True)
    template: PodTemplateSpec = fld(struct(PodTemplateSpec))
    ttl_seconds_after_finished: int | None = fld(INT32, ptr=True)
    completion_mode: str | None = fld(enum_string("v1.CompletionMode"), ptr=True)
    suspend: bool | None = fld(BOOL, ptr=True)
    pod_replacement_policy: str | None = fld(enum_string("v1.PodReplacementPolicy"), ptr=True)


@attrs.frozen
class JobCondition:
    type: str = fld(enum_string("v1.JobConditionType"), keep=True)
    status: str = fld(enum_string("v1.ConditionStatus"), keep=True)
    last_probe_time: int | None = fld(TIME)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class UncountedTerminatedPods:
    """The uids of finished pods counted in no counter yet (their tracking finalizer is being removed)."""

    succeeded: tuple = fld(STRINGS)
    failed: tuple = fld(STRINGS)


@attrs.frozen
class JobStatus:
    conditions: tuple = fld(list_of(struct(JobCondition)))
    start_time: int | None = fld(TIME)
    completion_time: int | None = fld(TIME)
    active: int = fld(INT32)
    succeeded: int = fld(INT32)
    failed: int = fld(INT32)
    terminating: int | None = fld(INT32, ptr=True)
    completed_indexes: str = fld(STRING)
    uncounted_terminated_pods: UncountedTerminatedPods | None = fld(struct(UncountedTerminatedPods), ptr=True)
    ready: int | None = fld(INT32, ptr=True)


@api_kind("batch/v1", "Job", "jobs", namespaced=True)
@attrs.frozen
class Job:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: JobSpec = fld(struct(JobSpec))
    status: JobStatus = fld(struct(JobStatus))
