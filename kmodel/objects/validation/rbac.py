"""rbac.authorization.k8s.io/v1 validation (pkg/apis/rbac/validation)."""

from __future__ import annotations

from ..field_errors import FieldError, invalid, not_supported, required
from ..rbac import GROUP, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject
from .common import validate_object_meta
from .names import is_dns1123_subdomain, is_valid_path_segment_name


def _rule(rule: PolicyRule, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.verbs:
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    if rule.non_resource_urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", tuple(rule.non_resource_urls),
                                "namespaced rules cannot apply to non-resource URLs"))
        if rule.api_groups or rule.resources or rule.resource_names:
            errs.append(invalid(f"{path}.nonResourceURLs", tuple(rule.non_resource_urls),
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.api_groups:
        errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.resources:
        errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errs


def validate_role(role: Role | ClusterRole) -> list[FieldError]:
    namespaced = isinstance(role, Role)
    errs = validate_object_meta(role.metadata, namespaced, is_valid_path_segment_name)
    for i, rule in enumerate(role.rules):
        errs += _rule(rule, namespaced, f"rules[{i}]")
    return errs


def _subject(s: Subject, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not s.name:
        errs.append(required(f"{path}.name"))
    if s.kind == "ServiceAccount":
        if s.name:
            errs += [invalid(f"{path}.name", s.name, m) for m in is_dns1123_subdomain(s.name)]
        if s.api_group:
            errs.append(not_supported(f"{path}.apiGroup", s.api_group, ("",)))
        if not namespaced and not s.namespace:
            errs.append(required(f"{path}.namespace"))
    elif s.kind in ("User", "Group"):
        if s.api_group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", s.api_group, (GROUP,)))
    else:
        errs.append(not_supported(f"{path}.kind", s.kind, ("ServiceAccount", "User", "Group")))
    return errs


def validate_role_binding(b: RoleBinding | ClusterRoleBinding) -> list[FieldError]:
    namespaced = isinstance(b, RoleBinding)
    errs = validate_object_meta(b.metadata, namespaced, is_valid_path_segment_name)
    ref = b.role_ref
    if ref.api_group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.api_group, (GROUP,)))
    allowed = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.kind not in allowed:
        errs.append(not_supported("roleRef.kind", ref.kind, allowed))
    if not ref.name:
        errs.append(required("roleRef.name"))
    else:
        errs += [invalid("roleRef.name", ref.name, m) for m in is_valid_path_segment_name(ref.name)]
    for i, s in enumerate(b.subjects):
        errs += _subject(s, namespaced, f"subjects[{i}]")
    return errs


def validate_role_binding_update(new: RoleBinding | ClusterRoleBinding, old: RoleBinding | ClusterRoleBinding) -> list[FieldError]:
    errs = validate_role_binding(new)
    if new.role_ref != old.role_ref:
        errs.append(invalid("roleRef", _role_ref_go(new), "cannot change roleRef"))
    return errs


def _role_ref_go(b):
    from ..field_errors import GoValue, go_quote

    r = b.role_ref
    return GoValue(f"rbac.RoleRef{{APIGroup:{go_quote(r.api_group)}, Kind:{go_quote(r.kind)}, Name:{go_quote(r.name)}}}")
