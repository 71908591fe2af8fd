"""apps/v1 validation: Deployment, ReplicaSet, StatefulSet and ControllerRevision (pkg/apis/apps/validation)."""

from __future__ import annotations

import attrs

from ..apps import ControllerRevision, Deployment, DeploymentStrategy, ReplicaSet, RollingUpdateDeployment, StatefulSet
from ..core import PodTemplateSpec
from ..field_errors import FieldError, GoValue, forbidden, invalid, not_supported, required
from ..meta import LabelSelector
from .common import (
    IMMUTABLE, label_selector_go, nonnegative, selector_converts, selector_matches, validate_label_selector,
    validate_object_meta, validate_object_meta_update,
)
from .names import is_dns1123_subdomain, is_valid_percent
from .pod import validate_pod_template


def _selector_and_template(sel: LabelSelector | None, template: PodTemplateSpec, kind_word: str,
                           kind: str = "ReplicaSet") -> list[FieldError]:
    """The selector's checks, then the template's under it, as ValidateDeploymentSpec, ValidateReplicaSetSpec and
    ValidateStatefulSetSpec order them. The template is judged only under a selector metav1.LabelSelectorAsSelector
    accepts; one it refuses is "invalid label selector" (a StatefulSet's error has no detail) and the template goes
    unchecked (a StatefulSet's restartPolicy and activeDeadlineSeconds are checked outside that branch)."""
    errs: list[FieldError] = []
    if sel is None:
        errs.append(required("spec.selector"))
    else:
        errs += validate_label_selector(sel, "spec.selector")
        if not sel.match_labels and not sel.match_expressions:
            errs.append(invalid("spec.selector", GoValue(label_selector_go(sel)), f"empty selector is invalid for {kind_word}"))
    stateful = kind == "StatefulSet"
    if sel is not None and not selector_converts(sel):
        errs.append(invalid("spec.selector", GoValue(label_selector_go(sel)), "" if stateful else "invalid label selector"))
    else:
        # an empty selector selects everything (labels.Everything(): the match is not checked); a missing one
        # selects nothing (labels.Nothing(), which is not empty: no template matches it)
        if sel is None or sel.match_labels or sel.match_expressions:
            if sel is None or not selector_matches(sel, template.metadata.labels):
                errs.append(invalid("spec.template.metadata.labels", dict(template.metadata.labels),
                                    "`selector` does not match template `labels`"))
        errs += validate_pod_template(template, "spec.template")
        if not stateful:
            errs += _template_spec_checks(template, kind)
    if stateful:
        errs += _template_spec_checks(template, kind)
    return errs


def _template_spec_checks(template: PodTemplateSpec, kind: str) -> list[FieldError]:
    """What a workload's pods may not have: a restartPolicy other than Always, an activeDeadlineSeconds."""
    errs: list[FieldError] = []
    if template.spec.restart_policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", template.spec.restart_policy, ("Always",)))
    if template.spec.active_deadline_seconds is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def _int_or_percent_go(v: int | str | None) -> GoValue:
    if isinstance(v, str):
        return GoValue(f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{v}"}}')
    return GoValue(f'intstr.IntOrString{{Type:0, IntVal:{v or 0}, StrVal:""}}')


def _positive_int_or_percent(v: int | str | None, path: str) -> list[FieldError]:
    if isinstance(v, str):
        return [invalid(path, _int_or_percent_go(v), m) for m in is_valid_percent(v)]
    return nonnegative(v or 0, path)


def _int_or_percent_value(v: int | str | None) -> int:
    if isinstance(v, str):
        try:
            return int(v.rstrip("%"))
        except ValueError:
            return 0
    return v or 0


def _strategy(s: DeploymentStrategy) -> list[FieldError]:
    path = "spec.strategy"
    if s.type == "Recreate":
        if s.rolling_update is not None:
            return [forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if s.type == "RollingUpdate":
        ru: RollingUpdateDeployment | None = s.rolling_update
        if ru is None:
            return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        p = f"{path}.rollingUpdate"
        errs = _positive_int_or_percent(ru.max_unavailable, f"{p}.maxUnavailable")
        errs += _positive_int_or_percent(ru.max_surge, f"{p}.maxSurge")
        if _int_or_percent_value(ru.max_unavailable) == 0 and _int_or_percent_value(ru.max_surge) == 0:
            errs.append(invalid(f"{p}.maxUnavailable", _int_or_percent_go(ru.max_unavailable),
                                "may not be 0 when `maxSurge` is 0"))
        if isinstance(ru.max_unavailable, str) and _int_or_percent_value(ru.max_unavailable) > 100:
            errs.append(invalid(f"{p}.maxUnavailable", _int_or_percent_go(ru.max_unavailable), "must not be greater than 100%"))
        return errs
    return [not_supported(path, GoValue(f'apps.DeploymentStrategy{{Type:"{s.type}", RollingUpdate:...}}'),
                          ("Recreate", "RollingUpdate"))]


def validate_deployment(d: Deployment) -> list[FieldError]:
    errs = validate_object_meta(d.metadata, True, is_dns1123_subdomain)
    s = d.spec
    errs += nonnegative(s.replicas if s.replicas is not None else 0, "spec.replicas")
    errs += _selector_and_template(s.selector, s.template, "deployment")
    errs += _strategy(s.strategy)
    errs += nonnegative(s.min_ready_seconds, "spec.minReadySeconds")
    if s.revision_history_limit is not None:
        errs += nonnegative(s.revision_history_limit, "spec.revisionHistoryLimit")
    if s.progress_deadline_seconds is not None:
        errs += nonnegative(s.progress_deadline_seconds, "spec.progressDeadlineSeconds")
        if s.progress_deadline_seconds <= s.min_ready_seconds:
            errs.append(invalid("spec.progressDeadlineSeconds", s.progress_deadline_seconds,
                                "must be greater than minReadySeconds"))
    return errs


def validate_replicaset(rs: ReplicaSet) -> list[FieldError]:
    errs = validate_object_meta(rs.metadata, True, is_dns1123_subdomain)
    s = rs.spec
    errs += nonnegative(s.replicas if s.replicas is not None else 0, "spec.replicas")
    errs += nonnegative(s.min_ready_seconds, "spec.minReadySeconds")
    errs += _selector_and_template(s.selector, s.template, "deployment")
    return errs


def validate_workload_update(new: Deployment | ReplicaSet, old: Deployment | ReplicaSet) -> list[FieldError]:
    """apps/v1: the selector is immutable."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    errs += validate_deployment(new) if isinstance(new, Deployment) else validate_replicaset(new)
    if new.spec.selector != old.spec.selector:
        errs.append(invalid("spec.selector", GoValue(label_selector_go(new.spec.selector)), IMMUTABLE))
    return errs


_POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
_STATEFULSET_STRATEGIES = ("OnDelete", "RollingUpdate")


def validate_statefulset(sts: StatefulSet) -> list[FieldError]:
    """ValidateStatefulSet (ValidateStatefulSetSpec), for the fields the model has."""
    errs = validate_object_meta(sts.metadata, True, is_dns1123_subdomain)
    s = sts.spec
    if not s.pod_management_policy:
        errs.append(required("spec.podManagementPolicy"))
    elif s.pod_management_policy not in _POD_MANAGEMENT_POLICIES:
        errs.append(not_supported("spec.podManagementPolicy", s.pod_management_policy, _POD_MANAGEMENT_POLICIES))
    strategy = s.update_strategy
    if not strategy.type:
        errs.append(required("spec.updateStrategy"))
    elif strategy.type == "OnDelete":
        if strategy.rolling_update is not None:
            errs.append(invalid("spec.updateStrategy.rollingUpdate", GoValue("..."),
                                "only allowed for updateStrategy 'RollingUpdate'"))
    elif strategy.type == "RollingUpdate":
        if strategy.rolling_update is not None and strategy.rolling_update.partition is not None:
            errs += nonnegative(strategy.rolling_update.partition, "spec.updateStrategy.rollingUpdate.partition")
    else:
        errs.append(not_supported("spec.updateStrategy", strategy.type, _STATEFULSET_STRATEGIES))
    errs += nonnegative(s.replicas if s.replicas is not None else 0, "spec.replicas")
    errs += nonnegative(s.min_ready_seconds, "spec.minReadySeconds")
    errs += _selector_and_template(s.selector, s.template, "statefulset", "StatefulSet")
    return errs


#: ValidateStatefulSetUpdate's message for a change of any other spec field
STATEFULSET_SPEC_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                              "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                              "forbidden")


def validate_statefulset_update(new: StatefulSet, old: StatefulSet) -> list[FieldError]:
    """ValidateStatefulSetUpdate: the spec but replicas, template, updateStrategy and minReadySeconds is immutable."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    kept = attrs.evolve(new.spec, replicas=old.spec.replicas, template=old.spec.template,
                        update_strategy=old.spec.update_strategy, min_ready_seconds=old.spec.min_ready_seconds)
    if kept != old.spec:
        errs.append(forbidden("spec", STATEFULSET_SPEC_FORBIDDEN))
    return errs + validate_statefulset(new)


def validate_controller_revision(revision: ControllerRevision) -> list[FieldError]:
    """ValidateControllerRevisionCreate: a DNS subdomain name, data given, a revision number not negative."""
    errs = validate_object_meta(revision.metadata, True, is_dns1123_subdomain)
    if revision.data is None:
        errs.append(required("data", "data is mandatory"))
    return errs + nonnegative(revision.revision, "revision")


def validate_controller_revision_update(new: ControllerRevision, old: ControllerRevision) -> list[FieldError]:
    """ValidateControllerRevisionUpdate: data is immutable (a controller changes only the revision number)."""
    errs = validate_object_meta_update(new.metadata, old.metadata) + validate_controller_revision(new)
    if new.data != old.data:
        errs.append(invalid("data", GoValue("runtime.Object"), IMMUTABLE))
    return errs
