"""Checks shared by every kind: ObjectMeta, labels, annotations, label selectors, numbers, ports, IPs."""

from __future__ import annotations

from typing import Callable

from ..field_errors import ErrorType, FieldError, GoValue, forbidden, go_quote, go_string_map, invalid, not_supported, required
from ..meta import LabelSelector, ObjectMeta
from .names import (
    IP_ERROR, is_dns1123_label, is_dns1123_subdomain, is_dns1035_label, is_qualified_name, is_valid_label_value,
    is_valid_port_name, is_valid_port_num, parse_ip,
)

NameCheck = Callable[[str], list]
NEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] if len(name) > 1 and name.endswith("-") else name


# The memos of the value checks (see names._memo_by_value): `answers.get(v, 1)` is falsy exactly when v was
# checked before and found valid; anything else is asked of the check itself (which memoises it).
_QNAME_ANSWERS = is_qualified_name.answers  # type: ignore[attr-defined]
_LABEL_VALUE_ANSWERS = is_valid_label_value.answers  # type: ignore[attr-defined]
_DNS1123_LABEL_ANSWERS = is_dns1123_label.answers  # type: ignore[attr-defined]


def _valid_name(name_check: NameCheck, value: str) -> bool:
    answers = getattr(name_check, "answers", None)
    if answers is not None and not answers.get(value, 1):
        return True
    # an object's name is usually new (every pod has its own): asked of the check itself, not its memo,
    # which would only fill up with names never asked again
    return not getattr(name_check, "__wrapped__", name_check)(value)


def _meta_valid(meta: ObjectMeta, namespaced: bool, name_check: NameCheck) -> bool:
    """Whether validate_object_meta finds nothing, decided without building any error (the common case of
    every create: name, namespace, labels and annotations valid, no generateName, owner references complete
    with at most one controller). False also when it cannot tell cheaply: the full checks then decide."""
    if meta.generate_name or not meta.name or meta.generation < 0:
        return False
    if not _valid_name(name_check, meta.name):
        return False
    namespace = meta.namespace
    if namespaced:
        if not namespace or (_DNS1123_LABEL_ANSWERS.get(namespace, 1) and is_dns1123_label(namespace)):
            return False
    elif namespace:
        return False
    if not _labels_valid(meta.labels) or not _annotations_valid(meta.annotations):
        return False
    refs = meta.owner_references
    if refs:
        controllers = 0
        for ref in refs:
            if not (ref.api_version and ref.kind and ref.name and ref.uid):
                return False
            if ref.controller:
                controllers += 1
        if controllers > 1:
            return False
    try:
        for fin in meta.finalizers:
            if _QNAME_ANSWERS.get(fin, 1) and is_qualified_name(fin):
                return False
    except TypeError:
        return False
    return True


def _labels_valid(labels: dict) -> bool:
    """Whether validate_labels finds nothing (False also when it cannot tell: an unhashable key or value)."""
    if not labels:
        return True
    qa, va = _QNAME_ANSWERS, _LABEL_VALUE_ANSWERS
    try:
        for k, v in labels.items():
            if qa.get(k, 1) and is_qualified_name(k):
                return False
            if va.get(v, 1) and is_valid_label_value(v):
                return False
    except TypeError:
        return False
    return True


def _annotations_valid(annotations: dict) -> bool:
    """Whether validate_annotations finds nothing (False also when it cannot tell)."""
    if not annotations:
        return True
    qa = _QNAME_ANSWERS
    total = 0
    try:
        for k, v in annotations.items():
            lowered = k.lower()
            if qa.get(lowered, 1) and is_qualified_name(lowered):
                return False
            total += len(k) + len(v)
    except (TypeError, AttributeError):
        return False
    return total <= TOTAL_ANNOTATION_SIZE_LIMIT


def validate_object_meta(meta: ObjectMeta, namespaced: bool, name_check: NameCheck, path: str = "metadata") -> list[FieldError]:
    """ValidateObjectMetaAccessor."""
    if _meta_valid(meta, namespaced, name_check):
        return []
    errs: list[FieldError] = []
    if meta.generate_name:
        for msg in name_check(_mask_trailing_dash(meta.generate_name)):
            errs.append(invalid(f"{path}.generateName", meta.generate_name, msg))
    if not meta.name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        for msg in name_check(meta.name):
            errs.append(invalid(f"{path}.name", meta.name, msg))
    if namespaced:
        if not meta.namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            for msg in is_dns1123_label(meta.namespace):
                errs.append(invalid(f"{path}.namespace", meta.namespace, msg))
    elif meta.namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    errs += nonnegative(meta.generation, f"{path}.generation")
    errs += validate_labels(meta.labels, f"{path}.labels")
    errs += validate_annotations(meta.annotations, f"{path}.annotations")
    # ValidateOwnerReferences (apimachinery's objectmeta.go): each reference's errors under the list's path, with
    # no index; every controller after the first is one more error, naming the first and itself, in list order
    p = f"{path}.ownerReferences"
    first_controller = ""
    for ref in meta.owner_references:
        if not ref.api_version:
            errs.append(invalid(f"{p}.apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            errs.append(invalid(f"{p}.kind", ref.kind, "kind must not be empty"))
        if not ref.name:
            errs.append(invalid(f"{p}.name", ref.name, "name must not be empty"))
        if not ref.uid:
            errs.append(invalid(f"{p}.uid", ref.uid, "uid must not be empty"))
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(invalid(p, GoValue(_owner_refs_go(meta)), "Only one reference can have Controller set to "
                                    f"true. Found \"true\" in references for {first_controller} and {current}"))
            else:
                first_controller = current
    for i, fin in enumerate(meta.finalizers):
        for msg in is_qualified_name(fin):
            errs.append(invalid(f"{path}.finalizers[{i}]", fin, msg))
    return errs


def _owner_refs_go(meta: ObjectMeta) -> str:
    return "[]v1.OwnerReference{" + ", ".join(
        f"v1.OwnerReference{{APIVersion:{go_quote(r.api_version)}, Kind:{go_quote(r.kind)}, Name:{go_quote(r.name)}, "
        f"UID:{go_quote(r.uid)}, ...}}" for r in meta.owner_references) + "}"


def validate_object_meta_update(new: ObjectMeta, old: ObjectMeta, path: str = "metadata") -> list[FieldError]:
    """ValidateObjectMetaUpdate: name, namespace, uid, creationTimestamp and generateName are immutable."""
    if (new.name == old.name and new.namespace == old.namespace and new.uid == old.uid
            and new.creation_timestamp == old.creation_timestamp
            and (old.deletion_timestamp is None or new.deletion_timestamp == old.deletion_timestamp)
            and new.generation >= 0 and _labels_valid(new.labels) and _annotations_valid(new.annotations)):
        return []  # nothing below can object (the common case, decided without building anything)
    errs = []
    for attr, json in (("name", "name"), ("namespace", "namespace"), ("uid", "uid")):
        nv, ov = getattr(new, attr), getattr(old, attr)
        if nv != ov:
            errs.append(invalid(f"{path}.{json}", nv, IMMUTABLE))
    if new.creation_timestamp != old.creation_timestamp:
        errs.append(invalid(f"{path}.creationTimestamp", GoValue("v1.Time{...}"), IMMUTABLE))
    if old.deletion_timestamp is not None and new.deletion_timestamp != old.deletion_timestamp:
        errs.append(invalid(f"{path}.deletionTimestamp", GoValue("v1.Time{...}"), IMMUTABLE))
    errs += nonnegative(new.generation, f"{path}.generation")
    errs += validate_labels(new.labels, f"{path}.labels")
    errs += validate_annotations(new.annotations, f"{path}.annotations")
    return errs


def validate_labels(labels: dict, path: str) -> list[FieldError]:
    """ValidateLabels: keys are qualified names, values label values (checked in sorted key order)."""
    if _labels_valid(labels):
        return []
    errs = []
    for k in sorted(labels):
        for msg in is_qualified_name(k):
            errs.append(invalid(path, k, msg))
        v = labels[k]
        for msg in is_valid_label_value(v):
            errs.append(invalid(path, v, msg))
    return errs


def validate_annotations(annotations: dict, path: str) -> list[FieldError]:
    if _annotations_valid(annotations):
        return []
    errs = []
    total = 0
    for k in sorted(annotations):
        for msg in is_qualified_name(k.lower()):
            errs.append(invalid(path, k, msg))
        total += len(k) + len(annotations[k])
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError(ErrorType.TOO_LONG, path, "", f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errs


def label_selector_go(sel: LabelSelector | None) -> str:
    """%#v of a *metav1.LabelSelector as field errors print it."""
    if sel is None:
        return "null"
    ml = go_string_map(sel.match_labels) if sel.match_labels else "map[string]string(nil)"
    if sel.match_expressions:
        exprs = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{go_quote(e.key)}, Operator:{go_quote(e.operator)}, "
            f"Values:{'[]string{' + ', '.join(go_quote(v) for v in e.values) + '}' if e.values else '[]string(nil)'}}}"
            for e in sel.match_expressions)
        me = "[]v1.LabelSelectorRequirement{" + exprs + "}"
    else:
        me = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{ml}, MatchExpressions:{me}}}"


def validate_label_selector(sel: LabelSelector, path: str) -> list[FieldError]:
    """ValidateLabelSelector (metav1 validation)."""
    errs = []
    for i, req in enumerate(sel.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{p}.operator", req.operator, "not a valid selector operator"))
        for msg in is_qualified_name(req.key):
            errs.append(invalid(f"{p}.key", req.key, msg))
    errs += validate_labels(sel.match_labels, f"{path}.matchLabels")
    return errs


#: the operators metav1.LabelSelectorAsSelector turns into label requirements
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def selector_converts(sel: LabelSelector) -> bool:
    """Whether metav1.LabelSelectorAsSelector accepts `sel`: every matchLabels entry and every expression makes a
    labels.NewRequirement (a known operator; a qualified key; values for In and NotIn, none for Exists and
    DoesNotExist; each value a valid label value). A workload's validation checks its template only under a
    selector that converts."""
    for key, value in sel.match_labels.items():
        if is_qualified_name(key) or is_valid_label_value(value):
            return False
    for req in sel.match_expressions:
        if req.operator not in SELECTOR_OPERATORS or is_qualified_name(req.key):
            return False
        if (req.operator in ("In", "NotIn")) != bool(req.values):
            return False
        if any(is_valid_label_value(v) for v in req.values):
            return False
    return True


def selector_matches(sel: LabelSelector, labels: dict) -> bool:
    """LabelSelectorAsSelector(sel).Matches(labels)."""
    for k, v in sel.match_labels.items():
        if labels.get(k) != v:
            return False
    for req in sel.match_expressions:
        has = req.key in labels
        if req.operator == "In" and not (has and labels[req.key] in req.values):
            return False
        if req.operator == "NotIn" and has and labels[req.key] in req.values:
            return False
        if req.operator == "Exists" and not has:
            return False
        if req.operator == "DoesNotExist" and has:
            return False
    return True


def nonnegative(value: int, path: str) -> list[FieldError]:
    return [invalid(path, value, NEGATIVE)] if value < 0 else []


def dns1123_label(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def port_num_or_name(port: int | str | None, path: str) -> list[FieldError]:
    """ValidatePortNumOrName."""
    if isinstance(port, str):
        return [invalid(path, port, msg) for msg in is_valid_port_name(port)]
    n = port or 0
    return [invalid(path, n, msg) for msg in is_valid_port_num(n)]


def valid_ip(value: str, path: str) -> list[FieldError]:
    return [] if parse_ip(value) is not None else [invalid(path, value, IP_ERROR)]


def protocol(value: str, path: str) -> list[FieldError]:
    if not value:
        return [required(path)]
    if value not in ("SCTP", "TCP", "UDP"):
        return [not_supported(path, value, ("SCTP", "TCP", "UDP"))]
    return []


NAME_CHECKS = {
    "subdomain": is_dns1123_subdomain,
    "label": is_dns1123_label,
    "dns1035": is_dns1035_label,
}
