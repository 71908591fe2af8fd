"""The ClusterRoles and ClusterRoleBindings a cluster installs at boot, so components pass RBAC like real ones.

Cut down from kube-apiserver's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy: policy.go
and controller_policy.go) to the resources the model serves: the role names and bound subjects are upstream's,
and the rules follow upstream's, cut to the resources and verbs the model has. kube-controller-manager runs as with
--use-service-account-credentials (kubeadm's default): each controller's requests authenticate as its own
service account in kube-system and are allowed by its `system:controller:<account>` role, while the
controller manager's own identity, `system:kube-controller-manager`, lists and watches everything for the
shared informers (kmodel.controllers.base).

One role is not upstream's: `kmodel:pessimistic-locking` lets the controllers' service accounts create, read,
update and delete the lock Leases of the pessimistic-locking variant (kmodel/variants/pessimistic_locking.py);
nothing else in the model touches a Lease of theirs.

`bootstrap_policy()` returns the objects in install order (roles before bindings).
"""

from __future__ import annotations

from kmodel.apiserver.authentication import CONTROLLER_SERVICE_ACCOUNTS, KUBE_SYSTEM
from kmodel.objects.frozendict import frozen_map
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.rbac import ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject

_READ = ("get", "list", "watch")
_WRITE = ("create", "update", "patch", "delete")
_EVENTS = ("create", "update", "patch")
_RBAC = "rbac.authorization.k8s.io"
_APPS = ("apps",)
#: upstream's eventsRule(): the core and events.k8s.io groups
_EVENTS_RULE_GROUPS = ("", "events.k8s.io")
CONTROLLER_ROLE_PREFIX = "system:controller:"
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


def _service_accounts_binding(role: str, accounts: tuple[str, ...]) -> ClusterRoleBinding:
    """A binding of `role` to kube-system service accounts (rbacv1helpers' ...SAs("kube-system", ...))."""
    meta = ObjectMeta(name=role, labels=_LABELS, annotations=_ANNOTATIONS)
    subjects = tuple(Subject(kind="ServiceAccount", name=a, namespace=KUBE_SYSTEM) for a in accounts)
    return ClusterRoleBinding(metadata=meta, subjects=subjects,
                              role_ref=RoleRef(api_group=_RBAC, kind="ClusterRole", name=role))


def _events_rule() -> PolicyRule:
    return _r(_EVENTS, ("events",), _EVENTS_RULE_GROUPS)


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
    _events_rule(),
    # leader election (the model runs one controller manager and elects no leader: kept as upstream grants it)
    _r(("create",), ("leases",), ("coordination.k8s.io",)),
    _r(("get", "update"), ("leases",), ("coordination.k8s.io",), ("kube-controller-manager",)),
    _r(("get",), ("namespaces",)),
    # needed for all shared informers
    _r(("list", "watch"), ("*",), ("*",)),
)

#: each controller's role, `system:controller:<service account>` (controller_policy.go), cut to the model's
#: resources
CONTROLLER_ROLES: tuple[ClusterRole, ...] = (
    _role(CONTROLLER_ROLE_PREFIX + "deployment-controller",
          _r(("get", "list", "watch", "update"), ("deployments",), _APPS),
          _r(("update",), ("deployments/status", "deployments/finalizers"), _APPS),
          _r(_READ + _WRITE, ("replicasets",), _APPS),
          _r(("get", "list", "watch", "update"), ("pods",)),
          _events_rule()),
    _role(CONTROLLER_ROLE_PREFIX + "endpoint-controller",
          _r(_READ, ("services", "pods")),
          _r(("get", "list", "watch", "create", "update", "delete"), ("endpoints",)),
          _r(("create",), ("endpoints/restricted",)),
          _events_rule()),
    _role(CONTROLLER_ROLE_PREFIX + "generic-garbage-collector",
          _r(("get", "list", "watch", "patch", "update", "delete"), ("*",), ("*",)),
          _events_rule()),
    _role(CONTROLLER_ROLE_PREFIX + "namespace-controller",
          _r(("get", "list", "watch", "delete"), ("namespaces",)),
          _r(("update",), ("namespaces/finalize", "namespaces/status")),
          _r(("get", "list", "delete", "deletecollection"), ("*",), ("*",))),
    _role(CONTROLLER_ROLE_PREFIX + "node-controller",  # node lifecycle, node IPAM and taint eviction
          _r(("get", "list", "watch", "update", "delete", "patch"), ("nodes",)),
          _r(("patch", "update"), ("nodes/status",)),
          _r(("patch", "update"), ("pods/status",)),
          _r(("list", "watch", "get", "delete"), ("pods",)),
          _events_rule()),
    _role(CONTROLLER_ROLE_PREFIX + "pod-garbage-collector",
          _r(("list", "watch", "delete"), ("pods",)),
          _r(_READ, ("nodes",)),
          _r(("patch",), ("pods/status",))),
    _role(CONTROLLER_ROLE_PREFIX + "replicaset-controller",
          _r(("get", "list", "watch", "update"), ("replicasets",), _APPS),
          _r(("update",), ("replicasets/status", "replicasets/finalizers"), _APPS),
          _r(("list", "watch", "patch", "create", "delete"), ("pods",)),
          _events_rule()),
    _role(CONTROLLER_ROLE_PREFIX + "statefulset-controller",  # no controllerrevisions or PVCs in the model
          _r(("list", "watch"), ("pods",)),
          _r(("get", "list", "watch"), ("statefulsets",), _APPS),
          _r(("update",), ("statefulsets/status",), _APPS),
          _r(("update",), ("statefulsets/finalizers",), _APPS),
          _r(("get", "create", "delete", "update", "patch"), ("pods",)),
          _events_rule()),
)

#: not upstream's: the lock Leases of the pessimistic-locking variant (see the module docstring)
PESSIMISTIC_LOCKING = _role(
    "kmodel:pessimistic-locking",
    _r(("create", "get", "update", "delete"), ("leases",), ("coordination.k8s.io",)),
)

NODE_PROXIER = _role(
    "system:node-proxier",
    _r(_READ, ("services", "endpoints")),
    _r(_READ, ("nodes",)),
    _r(_EVENTS, ("events",)),
)


def controller_role(service_account: str, rules: tuple[PolicyRule, ...]) -> list:
    """A controller's `system:controller:<account>` ClusterRole and its binding to the kube-system service account,
    as upstream's controller_policy.go installs them (the cluster installs one for a controller of your own that
    declares its `rbac_rules`: kmodel.controllers.base)."""
    role = _role(CONTROLLER_ROLE_PREFIX + service_account, *rules)
    return [role, _service_accounts_binding(role.metadata.name, (service_account,))]


def bootstrap_policy() -> list:
    """The bootstrap ClusterRoles then ClusterRoleBindings (cluster-admin bound to group system:masters,
    as upstream; the privileged-group authorizer lets masters through even without it)."""
    return [
        CLUSTER_ADMIN,
        KUBE_SCHEDULER,
        KUBE_CONTROLLER_MANAGER,
        *CONTROLLER_ROLES,
        PESSIMISTIC_LOCKING,
        NODE_PROXIER,
        _binding("cluster-admin", "Group", "system:masters"),
        _binding("system:kube-scheduler", "User", "system:kube-scheduler"),
        _binding("system:kube-controller-manager", "User", "system:kube-controller-manager"),
        *(_service_accounts_binding(role.metadata.name, (role.metadata.name[len(CONTROLLER_ROLE_PREFIX):],))
          for role in CONTROLLER_ROLES),
        _service_accounts_binding(PESSIMISTIC_LOCKING.metadata.name, CONTROLLER_SERVICE_ACCOUNTS),
        _binding("system:node-proxier", "User", "system:kube-proxy"),
    ]
