"""batch/v1 Job validation (pkg/apis/batch/validation: ValidateJob, ValidateJobUpdate), for the fields the model
has."""

from __future__ import annotations

from ..batch import INDEXED, NON_INDEXED, Job
from ..field_errors import FieldError, GoValue, invalid, not_supported, required
from .common import (
    IMMUTABLE, label_selector_go, nonnegative, selector_matches, validate_label_selector, validate_object_meta,
    validate_object_meta_update,
)
from .names import is_dns1123_subdomain
from .pod import validate_pod_template

#: the restart policies a Job's pods may have: a pod of a Job runs to completion
_RESTART_POLICIES = ("OnFailure", "Never")
_COMPLETION_MODES = (NON_INDEXED, INDEXED)


def validate_job(job: Job) -> list[FieldError]:
    """ValidateJob / validateJobSpec: counts not negative, a selector that matches the template's labels, a
    completion mode upstream knows (Indexed needs completions), and a template whose pods run to completion."""
    errs = validate_object_meta(job.metadata, True, is_dns1123_subdomain)
    s = job.spec
    for value, path in ((s.parallelism, "spec.parallelism"), (s.completions, "spec.completions"),
                        (s.active_deadline_seconds, "spec.activeDeadlineSeconds"),
                        (s.backoff_limit, "spec.backoffLimit"),
                        (s.ttl_seconds_after_finished, "spec.ttlSecondsAfterFinished")):
        if value is not None:
            errs += nonnegative(value, path)
    if s.completion_mode is not None:
        if s.completion_mode not in _COMPLETION_MODES:
            errs.append(not_supported("spec.completionMode", s.completion_mode, _COMPLETION_MODES))
        elif s.completion_mode == INDEXED and s.completions is None:
            errs.append(required("spec.completions", f"when completion mode is {INDEXED}"))
    sel = s.selector
    if sel is None:
        errs.append(required("spec.selector"))
    else:
        errs += validate_label_selector(sel, "spec.selector")
        if not selector_matches(sel, s.template.metadata.labels):
            errs.append(invalid("spec.template.metadata.labels", dict(s.template.metadata.labels),
                                "`selector` does not match template `labels`"))
    errs += validate_pod_template(s.template, "spec.template")
    if s.template.spec.restart_policy not in _RESTART_POLICIES:
        errs.append(not_supported("spec.template.spec.restartPolicy", s.template.spec.restart_policy,
                                  _RESTART_POLICIES))
    return errs


def validate_job_update(new: Job, old: Job) -> list[FieldError]:
    """ValidateJobUpdate: completions, selector, template and completionMode are immutable (upstream lets a
    suspended Job's scheduling directives and an Indexed Job's completions with parallelism change: not
    modelled)."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    n, o = new.spec, old.spec
    if n.completions != o.completions:
        errs.append(invalid("spec.completions", n.completions if n.completions is not None else GoValue("null"),
                            IMMUTABLE))
    if n.selector != o.selector:
        errs.append(invalid("spec.selector", GoValue(label_selector_go(n.selector)), IMMUTABLE))
    if n.template != o.template:
        errs.append(invalid("spec.template", GoValue("core.PodTemplateSpec{...}"), IMMUTABLE))
    if n.completion_mode != o.completion_mode:
        errs.append(invalid("spec.completionMode", n.completion_mode, IMMUTABLE))
    return errs + validate_job(new)
