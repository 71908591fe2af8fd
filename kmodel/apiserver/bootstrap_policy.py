"""The ClusterRoles and ClusterRoleBindings a cluster installs at boot, so components pass RBAC like real ones.

Simplified from kube-apiserver's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
the role names and bound users are upstream's; the rules are cut down to the resources the model serves and
to what the model's components do (least privilege). One difference on purpose: upstream's
kube-controller-manager runs each controller under its own service account
(--use-service-account-credentials) with roles such as system:controller:deployment-controller; the model's
controller manager has one identity, so `system:kube-controller-manager` here holds the union of what the
model's controllers need.

`bootstrap_policy()` returns the objects in install order (roles before bindings).
"""

from __future__ import annotations

from kmodel.objects.frozendict import frozen_map
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.rbac import ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject

_READ = ("get", "list", "watch")
_WRITE = ("create", "update", "patch", "delete")
_EVENTS = ("create", "update", "patch")
_RBAC = "rbac.authorization.k8s.io"
_LABELS = frozen_map({"kubernetes.io/bootstrapping": "rbac-defaults"})
_ANNOTATIONS = frozen_map({"rbac.authorization.kubernetes.io/autoupdate": "true"})


def _r(verbs: tuple, resources: tuple, groups: tuple = ("",), names: tuple = ()) -> PolicyRule:
    return PolicyRule(verbs=verbs, api_groups=groups, resources=resources, resource_names=names)


def _role(name: str, *rules: PolicyRule) -> ClusterRole:
    meta = ObjectMeta(name=name, labels=_LABELS, annotations=_ANNOTATIONS)
    return ClusterRole(metadata=meta, rules=tuple(rules))


def _binding(role: str, kind: str, subject: str) -> ClusterRoleBinding:
    meta = ObjectMeta(name=role, labels=_LABELS, annotations=_ANNOTATIONS)
    return ClusterRoleBinding(metadata=meta, subjects=(Subject(kind=kind, api_group=_RBAC, name=subject),),
                              role_ref=RoleRef(api_group=_RBAC, kind="ClusterRole", name=role))


CLUSTER_ADMIN = _role("cluster-admin", _r(("*",), ("*",), ("*",)))

KUBE_SCHEDULER = _role(
    "system:kube-scheduler",
    _r(_EVENTS, ("events",)),
    _r(("create",), ("leases",), ("coordination.k8s.io",)),
    _r(("get", "update"), ("leases",), ("coordination.k8s.io",), ("kube-scheduler",)),
    _r(_READ, ("nodes", "namespaces", "services")),
    _r(_READ + ("delete",), ("pods",)),
    _r(("create",), ("bindings", "pods/binding")),
    _r(("patch", "update"), ("pods/status",)),
    _r(_READ, ("replicasets",), ("apps",)),
)

KUBE_CONTROLLER_MANAGER = _role(
    "system:kube-controller-manager",
    _r(_EVENTS, ("events",)),
    _r(("create",), ("leases",), ("coordination.k8s.io",)),
    _r(("get", "update"), ("leases",), ("coordination.k8s.io",), ("kube-controller-manager",)),
    _r(_READ + _WRITE, ("pods", "endpoints")),
    _r(("update", "patch"), ("pods/status",)),
    _r(_READ + ("update", "patch", "delete"), ("nodes", "namespaces")),
    _r(("update", "patch"), ("nodes/status", "namespaces/status", "namespaces/finalize")),
    _r(_READ, ("services",)),
    _r(("update", "patch"), ("services/status",)),
    _r(_READ + _WRITE, ("deployments", "replicasets"), ("apps",)),
    _r(("update", "patch"), ("deployments/status", "replicasets/status"), ("apps",)),
    _r(_READ, ("leases",), ("coordination.k8s.io",)),
    # not upstream's: the lock Leases of the pessimistic-locking variant (kmodel/variants/pessimistic_locking.py)
    # are released by deleting them; nothing deletes a Lease in the model as Kubernetes builds it
    _r(("delete",), ("leases",), ("coordination.k8s.io",)),
)

NODE_PROXIER = _role(
    "system:node-proxier",
    _r(_READ, ("services", "endpoints")),
    _r(_READ, ("nodes",)),
    _r(_EVENTS, ("events",)),
)


def bootstrap_policy() -> list:
    """The bootstrap ClusterRoles then ClusterRoleBindings (cluster-admin bound to group system:masters,
    as upstream; the privileged-group authorizer lets masters through even without it)."""
    return [
        CLUSTER_ADMIN,
        KUBE_SCHEDULER,
        KUBE_CONTROLLER_MANAGER,
        NODE_PROXIER,
        _binding("cluster-admin", "Group", "system:masters"),
        _binding("system:kube-scheduler", "User", "system:kube-scheduler"),
        _binding("system:kube-controller-manager", "User", "system:kube-controller-manager"),
        _binding("system:node-proxier", "User", "system:kube-proxy"),
    ]
