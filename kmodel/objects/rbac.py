"""rbac.authorization.k8s.io/v1 kinds: Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from __future__ import annotations

import attrs

from .meta import LabelSelector, ObjectMeta
from .registry import api_kind
from .schema import STRING, STRINGS, fld, list_of, struct

GROUP = "rbac.authorization.k8s.io"


@attrs.frozen
class PolicyRule:
    verbs: tuple = fld(STRINGS, keep=True)
    api_groups: tuple = fld(STRINGS, "apiGroups")
    resources: tuple = fld(STRINGS)
    resource_names: tuple = fld(STRINGS)
    non_resource_urls: tuple = fld(STRINGS, "nonResourceURLs")


@attrs.frozen
class AggregationRule:
    cluster_role_selectors: tuple = fld(list_of(struct(LabelSelector)))


@attrs.frozen
class Subject:
    kind: str = fld(STRING, keep=True)
    api_group: str = fld(STRING)
    name: str = fld(STRING, keep=True)
    namespace: str = fld(STRING)


@attrs.frozen
class RoleRef:
    api_group: str = fld(STRING, keep=True)
    kind: str = fld(STRING, keep=True)
    name: str = fld(STRING, keep=True)


@api_kind("rbac.authorization.k8s.io/v1", "Role", "roles", namespaced=True)
@attrs.frozen
class Role:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    rules: tuple = fld(list_of(struct(PolicyRule)))


@api_kind("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False)
@attrs.frozen
class ClusterRole:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    rules: tuple = fld(list_of(struct(PolicyRule)))
    aggregation_rule: AggregationRule | None = fld(struct(AggregationRule), ptr=True)


@api_kind("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", namespaced=True)
@attrs.frozen
class RoleBinding:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    subjects: tuple = fld(list_of(struct(Subject)))
    role_ref: RoleRef = fld(struct(RoleRef), keep=True)


@api_kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False)
@attrs.frozen
class ClusterRoleBinding:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    subjects: tuple = fld(list_of(struct(Subject)))
    role_ref: RoleRef = fld(struct(RoleRef), keep=True)
