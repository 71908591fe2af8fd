"""Pod and pod template validation (pkg/apis/core/validation: ValidatePodSpec and what it calls)."""

from __future__ import annotations

from typing import Mapping

import attrs

from ..core import (
    Container, NodeAffinity, NodeSelectorTerm, Pod, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Toleration,
)
from ..deletion_cost import POD_DELETION_COST, deletion_cost
from ..field_errors import (
    FieldError, duplicate, forbidden, go_quote, invalid, not_supported, required,
)
from kmodel.memo import POD_SPEC_MEMO_SIZE, identity_memo
from ..quantity import Quantity
from .common import (
    NEGATIVE, dns1123_label, nonnegative, port_num_or_name, protocol, validate_labels, validate_object_meta,
    validate_object_meta_update,
)
from .names import is_dns1123_subdomain, is_qualified_name, is_valid_label_value, is_valid_port_name, is_valid_port_num

STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
INTEGER_RESOURCES = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                     "configmaps", "persistentvolumeclaims")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
POD_UPDATE_FIELDS = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                     "`spec.tolerations` (only additions to existing tolerations),"
                     "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


#: core.MirrorPodAnnotationKey: the kubelet's mirror of a static pod
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def validate_pod_annotations(annotations: Mapping[str, str], spec: PodSpec, path: str = "metadata.annotations", *,
                             allow_invalid_deletion_cost: bool = False) -> list[FieldError]:
    """ValidatePodSpecificAnnotations, for the annotations the model reads: a mirror pod names its node, and
    pod-deletion-cost is a 32-bit integer (unless the pod being updated already had an invalid one:
    AllowInvalidPodDeletionCost)."""
    errs: list[FieldError] = []
    if MIRROR_POD_ANNOTATION in annotations and not spec.node_name:
        errs.append(invalid(f"{path}[{MIRROR_POD_ANNOTATION}]", annotations[MIRROR_POD_ANNOTATION],
                            "must set spec.nodeName if mirror pod annotation is set"))
    if not allow_invalid_deletion_cost and deletion_cost(annotations) is None:
        errs.append(invalid(f"{path}[{POD_DELETION_COST}]", annotations[POD_DELETION_COST], "must be a 32bit integer"))
    return errs


def _validate_pod_annotation_updates(new: Pod, old: Pod, path: str, *,
                                     allow_invalid_deletion_cost: bool) -> list[FieldError]:
    """ValidatePodSpecificAnnotationUpdates: the mirror annotation can be neither changed, removed nor added; then
    the new annotations' own checks again, as upstream runs them a second time."""
    errs: list[FieldError] = []
    new_annotations, old_annotations = new.metadata.annotations, old.metadata.annotations
    if MIRROR_POD_ANNOTATION in old_annotations and \
            new_annotations.get(MIRROR_POD_ANNOTATION) != old_annotations[MIRROR_POD_ANNOTATION]:
        errs.append(forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not remove or update mirror pod annotation"))
    if MIRROR_POD_ANNOTATION in new_annotations and MIRROR_POD_ANNOTATION not in old_annotations:
        errs.append(forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not add mirror pod annotation"))
    return errs + validate_pod_annotations(new_annotations, new.spec, path,
                                           allow_invalid_deletion_cost=allow_invalid_deletion_cost)


def validate_pod(pod: Pod) -> list[FieldError]:
    """ValidatePodCreate: the metadata, the pod's own annotations, then the spec."""
    errs = validate_object_meta(pod.metadata, True, is_dns1123_subdomain)
    if pod.metadata.annotations:
        errs += validate_pod_annotations(pod.metadata.annotations, pod.spec)
    errs += _validate_pod_spec_memo(pod.spec, "spec")  # validate_pod_spec, without copying the memo's tuple
    return errs


def validate_pod_template(t: PodTemplateSpec, path: str) -> list[FieldError]:
    """ValidatePodTemplateSpec: template labels/annotations and the spec. Upstream lets an update keep an invalid
    pod-deletion-cost its old template had (GetValidationOptionsFromPodTemplate); no template the model stores
    has one, as every one was checked here when it was written."""
    errs = validate_labels(t.metadata.labels, f"{path}.metadata.labels")
    errs += validate_pod_annotations(t.metadata.annotations, t.spec, f"{path}.metadata.annotations")
    errs += validate_pod_spec(t.spec, f"{path}.spec")
    return errs


def validate_pod_spec(spec: PodSpec, path: str) -> list[FieldError]:
    """ValidatePodSpec (memoised per spec object and path: pods of one template share their spec)."""
    return list(_validate_pod_spec_memo(spec, path))


def _validate_pod_spec(spec: PodSpec, path: str) -> tuple[FieldError, ...]:
    return tuple(_validate_pod_spec_uncached(spec, path))


_validate_pod_spec_memo = identity_memo(_validate_pod_spec, maxsize=POD_SPEC_MEMO_SIZE, extra=True)


def _validate_pod_spec_uncached(spec: PodSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    errs += _containers(spec.containers, f"{path}.containers", required_nonempty=True)
    if spec.init_containers:
        errs += _containers(spec.init_containers, f"{path}.initContainers", required_nonempty=False,
                            other_names={c.name for c in spec.containers})
    if spec.host_network:
        for i, c in enumerate(spec.containers):
            for j, p in enumerate(c.ports):
                if p.host_port != p.container_port:
                    errs.append(invalid(f"{path}.containers[{i}].ports[{j}].containerPort", p.container_port,
                                        "must match `hostPort` when `hostNetwork` is true"))
    errs += _one_of(spec.restart_policy, RESTART_POLICIES, f"{path}.restartPolicy")
    errs += _one_of(spec.dns_policy, DNS_POLICIES, f"{path}.dnsPolicy")
    errs += validate_labels(spec.node_selector, f"{path}.nodeSelector")
    if spec.service_account_name:
        errs += [invalid(f"{path}.serviceAccountName", spec.service_account_name, m)
                 for m in is_dns1123_subdomain(spec.service_account_name)]
    if spec.node_name:
        errs += [invalid(f"{path}.nodeName", spec.node_name, m) for m in is_dns1123_subdomain(spec.node_name)]
    if spec.active_deadline_seconds is not None and spec.active_deadline_seconds <= 0:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", spec.active_deadline_seconds,
                            "must be between 1 and 2147483647, inclusive"))
    if spec.hostname:
        errs += dns1123_label(spec.hostname, f"{path}.hostname")
    if spec.subdomain:
        errs += dns1123_label(spec.subdomain, f"{path}.subdomain")
    errs += validate_tolerations(spec.tolerations, f"{path}.tolerations")
    if spec.affinity is not None and spec.affinity.node_affinity is not None:
        errs += validate_node_affinity(spec.affinity.node_affinity, f"{path}.affinity.nodeAffinity")
    if spec.priority_class_name:
        errs += [invalid(f"{path}.priorityClassName", spec.priority_class_name, m)
                 for m in is_dns1123_subdomain(spec.priority_class_name)]
    return errs


def _one_of(value: str, allowed: tuple[str, ...], path: str) -> list[FieldError]:
    if not value:
        return [required(path)]
    if value not in allowed:
        return [not_supported(path, value, allowed)]
    return []


def _containers(containers: tuple[Container, ...], path: str, *, required_nonempty: bool,
                other_names: set[str] | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    if required_nonempty and not containers:
        errs.append(required(path))
    seen: set[str] = set(other_names or ())
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        # upstream's order (validateContainers, release-1.31): what validateContainerCommon checks (name, image,
        # terminationMessagePolicy, ports, imagePullPolicy, resources), then the name's uniqueness, then the
        # probes; a 422 lists its field errors in that order
        if not c.name:
            errs.append(required(f"{p}.name"))
        else:
            errs += dns1123_label(c.name, f"{p}.name")
        if not c.image:
            errs.append(required(f"{p}.image"))
        elif c.image != c.image.strip():
            errs.append(invalid(f"{p}.image", c.image, "must not have leading or trailing whitespace"))
        if c.termination_message_policy and c.termination_message_policy not in ("File", "FallbackToLogsOnError"):
            errs.append(not_supported(f"{p}.terminationMessagePolicy", c.termination_message_policy,
                                      ("File", "FallbackToLogsOnError")))
        errs += _container_ports(c, f"{p}.ports")
        errs += _one_of(c.image_pull_policy, ("Always", "IfNotPresent", "Never"), f"{p}.imagePullPolicy")
        errs += validate_resources(c.resources, f"{p}.resources")
        if c.name in seen:  # two regular containers without a name are a duplicate too, as upstream
            errs.append(duplicate(f"{p}.name", c.name))
        elif c.name or other_names is None:  # an init container's empty name is not remembered
            seen.add(c.name)
        for attr, json in (("liveness_probe", "livenessProbe"), ("readiness_probe", "readinessProbe"),
                           ("startup_probe", "startupProbe")):
            probe = getattr(c, attr)
            if probe is not None:
                errs += _probe(probe, f"{p}.{json}", liveness_like=attr != "readiness_probe")
    errs += _host_port_conflicts(containers, path)
    return errs


def _container_ports(c: Container, path: str) -> list[FieldError]:
    """validateContainerPorts: a repeated port name is rejected (only a valid one is looked for among the others,
    as upstream); a repeated containerPort is not."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(c.ports):
        p = f"{path}[{i}]"
        if port.name:
            msgs = is_valid_port_name(port.name)
            if msgs:
                errs += [invalid(f"{p}.name", port.name, msg) for msg in msgs]
            elif port.name in names:
                errs.append(duplicate(f"{p}.name", port.name))
            else:
                names.add(port.name)
        if port.container_port == 0:
            errs.append(required(f"{p}.containerPort"))
        else:
            errs += [invalid(f"{p}.containerPort", port.container_port, m) for m in is_valid_port_num(port.container_port)]
        if port.host_port != 0:
            errs += [invalid(f"{p}.hostPort", port.host_port, m) for m in is_valid_port_num(port.host_port)]
        errs += protocol(port.protocol, f"{p}.protocol")
    return errs


def _host_port_conflicts(containers: tuple[Container, ...], path: str) -> list[FieldError]:
    """AccumulateUniqueHostPorts: one protocol/hostIP/hostPort per pod."""
    errs = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        for j, port in enumerate(c.ports):
            if port.host_port == 0:
                continue
            key = f"{port.protocol}/{port.host_ip}/{port.host_port}"
            if key in seen:
                errs.append(duplicate(f"{path}[{i}].ports[{j}].hostPort", key))
            seen.add(key)
    return errs


def _probe(probe: Probe, path: str, *, liveness_like: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    handlers = [(n, h) for n, h in (("exec", probe.exec), ("httpGet", probe.http_get), ("tcpSocket", probe.tcp_socket))
                if h is not None]
    if not handlers:
        errs.append(required(path, "must specify a handler type"))
    for name, _ in handlers[1:]:
        errs.append(forbidden(f"{path}.{name}", "may not specify more than 1 handler type"))
    for name, h in handlers[:1]:
        if name == "exec" and not h.command:
            errs.append(required(f"{path}.exec.command"))
        elif name == "httpGet":
            if not h.path:
                errs.append(required(f"{path}.httpGet.path"))
            errs += port_num_or_name(h.port, f"{path}.httpGet.port")
            if h.scheme not in ("HTTP", "HTTPS"):
                errs.append(not_supported(f"{path}.httpGet.scheme", h.scheme, ("HTTP", "HTTPS")))
        elif name == "tcpSocket":
            errs += port_num_or_name(h.port, f"{path}.tcpSocket.port")
    for attr, json in (("initial_delay_seconds", "initialDelaySeconds"), ("timeout_seconds", "timeoutSeconds"),
                       ("period_seconds", "periodSeconds"), ("success_threshold", "successThreshold"),
                       ("failure_threshold", "failureThreshold")):
        errs += nonnegative(getattr(probe, attr), f"{path}.{json}")
    if liveness_like and probe.success_threshold != 1:
        errs.append(invalid(f"{path}.successThreshold", probe.success_threshold, "must be 1"))
    return errs


def validate_resources(r: ResourceRequirements, path: str) -> list[FieldError]:
    """ValidateResourceRequirements (container resources)."""
    errs: list[FieldError] = []
    for name in sorted(r.limits):
        p = f"{path}.limits[{name}]"
        errs += _resource_name(name, p)
        errs += _quantity_value(name, r.limits[name], p)
    for name in sorted(r.requests):
        p = f"{path}.requests[{name}]"
        q: Quantity = r.requests[name]
        errs += _resource_name(name, p)
        errs += _quantity_value(name, q, p)
        limit = r.limits.get(name)
        overcommit = _overcommit_allowed(name)
        if limit is not None:
            if q != limit and not overcommit:
                errs.append(invalid(f"{path}.requests", str(q), f"must be equal to {name} limit of {limit}"))
            elif q > limit:
                errs.append(invalid(f"{path}.requests", str(q), f"must be less than or equal to {name} limit of {limit}"))
        elif not overcommit:
            # an extended resource (a device) or hugepages cannot be overcommitted, so its limit is the amount
            # the container gets: a request without one is refused (a Pod's limit alone defaults its request)
            errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    return errs


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource (no domain, or one of kubernetes.io) that is not hugepages."""
    return not (name.startswith("hugepages-") or "/" in name and not name.startswith("kubernetes.io/"))


def _resource_name(name: str, path: str) -> list[FieldError]:
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if "/" not in name and name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
        errs.append(invalid(path, name, "must be a standard resource for containers"))
    return errs


def _quantity_value(name: str, q: Quantity, path: str) -> list[FieldError]:
    errs = []
    if q.nano < 0:
        errs.append(invalid(path, str(q), NEGATIVE))
    if name in INTEGER_RESOURCES and q.milli_value() % 1000:
        errs.append(invalid(path, q, "must be an integer"))
    return errs


def validate_tolerations(tolerations: tuple[Toleration, ...], path: str) -> list[FieldError]:
    """ValidateTolerations."""
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if t.key:
            errs += [invalid(f"{p}.key", t.key, m) for m in is_qualified_name(t.key)]
        if not t.key and t.operator != "Exists":
            errs.append(invalid(f"{p}.operator", t.operator,
                                'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(invalid(f"{p}.effect", t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if t.operator in ("Equal", ""):
            msgs = is_valid_label_value(t.value)
            if msgs:
                errs.append(invalid(f"{p}.operator", t.value, ";".join(msgs)))
        elif t.operator == "Exists":
            if t.value:
                errs.append(invalid(f"{p}.operator", _toleration_go(t), "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", t.operator, ("Equal", "Exists")))
        if t.effect:
            errs += validate_taint_effect(t.effect, f"{p}.effect")
    return errs


def validate_node_affinity(na: NodeAffinity, path: str) -> list[FieldError]:
    """validateNodeAffinity: the required selector (at least one term) and the preferred terms (weight 1-100)."""
    errs: list[FieldError] = []
    required_selector = na.required_during_scheduling_ignored_during_execution
    if required_selector is not None:
        terms_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        if not required_selector.node_selector_terms:
            errs.append(required(terms_path, "must have at least one node selector term"))
        for i, term in enumerate(required_selector.node_selector_terms):
            errs += _node_selector_term(term, f"{terms_path}[{i}]")
    for i, term in enumerate(na.preferred_during_scheduling_ignored_during_execution):
        p = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        if term.weight <= 0 or term.weight > 100:
            errs.append(invalid(f"{p}.weight", term.weight, "must be in the range 1-100"))
        errs += _node_selector_term(term.preference, f"{p}.preference")
    return errs


def _node_selector_term(term: NodeSelectorTerm, path: str) -> list[FieldError]:
    """ValidateNodeSelectorTerm: each expression (ValidateNodeSelectorRequirement) and field
    (ValidateNodeFieldSelectorRequirement)."""
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        p = f"{path}.matchExpressions[{j}]"
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or "
                                                     "'DoesNotExist'"))
        elif req.operator in ("Gt", "Lt"):
            if len(req.values) != 1:
                errs.append(required(f"{p}.values", "must be specified single value when `operator` is 'Lt' or "
                                                    "'Gt'"))
        else:
            errs.append(invalid(f"{p}.operator", req.operator, "not a valid selector operator"))
        errs += [invalid(f"{p}.key", req.key, m) for m in is_qualified_name(req.key)]
    for j, req in enumerate(term.match_fields):
        p = f"{path}.matchFields[{j}]"
        if req.operator in ("In", "NotIn"):
            if len(req.values) != 1:
                errs.append(required(f"{p}.values", "must be only one value when `operator` is 'In' or 'NotIn' "
                                                    "for node field selector"))
        else:
            errs.append(invalid(f"{p}.operator", req.operator, "not a valid selector operator"))
        if req.key != "metadata.name":
            errs.append(invalid(f"{p}.key", req.key, "not a valid field selector key"))
        else:
            errs += [invalid(f"{p}.values[{k}]", v, m) for k, v in enumerate(req.values)
                     for m in is_dns1123_subdomain(v)]
    return errs


def _toleration_go(t: Toleration):
    from ..field_errors import GoValue

    secs = "(*int64)(nil)" if t.toleration_seconds is None else f"(*int64)({t.toleration_seconds})"
    return GoValue(f"core.Toleration{{Key:{go_quote(t.key)}, Operator:{go_quote(t.operator)}, "
                   f"Value:{go_quote(t.value)}, Effect:{go_quote(t.effect)}, TolerationSeconds:{secs}}}")


def validate_taint_effect(effect: str, path: str) -> list[FieldError]:
    if effect not in TAINT_EFFECTS:
        return [not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_pod_update(new: Pod, old: Pod) -> list[FieldError]:
    """ValidatePodUpdate: metadata rules, and a spec that may change only images, activeDeadlineSeconds,
    added tolerations and a negative terminationGracePeriodSeconds."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    annotated = bool(new.metadata.annotations or old.metadata.annotations)
    # GetValidationOptionsFromPodSpecAndMeta: an update may keep a deletion cost the old pod already had wrong
    allow_cost = annotated and deletion_cost(old.metadata.annotations) is None
    if annotated:
        errs += validate_pod_annotations(new.metadata.annotations, new.spec, allow_invalid_deletion_cost=allow_cost)
    errs += _validate_pod_spec_memo(new.spec, "spec")  # validate_pod_spec, without copying the memo's tuple
    if annotated:
        errs += _validate_pod_annotation_updates(new, old, "metadata.annotations",
                                                 allow_invalid_deletion_cost=allow_cost)
    old_spec = old.spec
    new_spec = new.spec
    if new_spec is old_spec:
        return errs  # the spec did not move (a status or metadata update): nothing below can object
    if len(new_spec.containers) != len(old_spec.containers) or len(new_spec.init_containers) != len(old_spec.init_containers):
        errs.append(forbidden("spec", f"pod updates may not change fields other than {POD_UPDATE_FIELDS}"))
        return errs
    # Copy the mutable fields from new onto old; anything else that differs is forbidden.
    munged = attrs.evolve(
        old_spec,
        containers=tuple(attrs.evolve(o, image=n.image) for o, n in zip(old_spec.containers, new_spec.containers)),
        init_containers=tuple(attrs.evolve(o, image=n.image)
                              for o, n in zip(old_spec.init_containers, new_spec.init_containers)),
        active_deadline_seconds=new_spec.active_deadline_seconds,
        tolerations=new_spec.tolerations,
    )
    if (old_spec.termination_grace_period_seconds is not None and old_spec.termination_grace_period_seconds < 0
            and new_spec.termination_grace_period_seconds == 1):
        munged = attrs.evolve(munged, termination_grace_period_seconds=1)
    if old_spec.active_deadline_seconds is not None and (
            new_spec.active_deadline_seconds is None or new_spec.active_deadline_seconds > old_spec.active_deadline_seconds):
        errs.append(invalid("spec.activeDeadlineSeconds", new_spec.active_deadline_seconds,
                            "must be less than or equal to previous value"))
    if munged != new_spec:
        errs.append(forbidden("spec", f"pod updates may not change fields other than {POD_UPDATE_FIELDS}"))
    old_tols = set(old_spec.tolerations)
    if not old_tols.issubset(set(new_spec.tolerations)):
        errs.append(forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"))
    return errs
