"""The ClusterRoles and ClusterRoleBindings a cluster installs at boot, so components pass RBAC like real ones.

Cut down from kube-apiserver's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy: policy.go
and controller_policy.go) to the resources the model serves: the role names and bound subjects are upstream's,
and the rules follow upstream's, cut to the resources and verbs the model has. kube-controller-manager runs as with
--use-service-account-credentials (kubeadm's default): each controller's requests authenticate as its own
service account in kube-system and are allowed by its `system:controller:<account>` role, while the
controller manager's own identity, `system:kube-controller-manager`, lists and watches everything for the
shared informers (kmodel.controllers.base).

The user-facing roles `view`, `edit` and `admin` are upstream's with the rules of their system:aggregate-to-*
roles written in (the model runs no ClusterRole aggregation controller), cut to the resources the model serves:
view reads but never Secrets; edit also writes, reads Secrets and asks tokens for service accounts; admin also
manages Roles and RoleBindings. Nothing binds them until someone does.

One role is not upstream's: `kmodel:pessimistic-locking` lets the controllers' service accounts create, read,
update and delete the lock Leases of the pessimistic-locking variant (kmodel/client/pessimistic_locking.py);
nothing else in the model touches a Lease of theirs.

Each controller's own role is declared by its registration (kmodel.component.registry: `rbac_rules`, written
with `rule` and `events_rule` from here). The API server does not read the registrations (that would load every
component): the cluster hands `bootstrap_policy(controller_roles)` every built-in controller's account and rules,
whichever controllers it runs, as upstream's bootstrap policy installs every controller's role. It returns the
objects in install order (roles before bindings).
"""

from __future__ import annotations

from typing import Sequence

from kmodel.apiserver.authentication import KUBE_SYSTEM
from kmodel.objects.frozendict import frozen_map
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.rbac import ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete")
EVENTS = ("create", "update", "patch")
_RBAC = "rbac.authorization.k8s.io"
APPS = ("apps",)
#: upstream's eventsRule(): the core and events.k8s.io groups
_EVENTS_RULE_GROUPS = ("", "events.k8s.io")
CONTROLLER_ROLE_PREFIX = "system:controller:"
_LABELS = frozen_map({"kubernetes.io/bootstrapping": "rbac-defaults"})
_ANNOTATIONS = frozen_map({"rbac.authorization.kubernetes.io/autoupdate": "true"})


def rule(verbs: tuple, resources: tuple, groups: tuple = ("",), names: tuple = ()) -> PolicyRule:
    """A PolicyRule as upstream's rbacv1helpers.NewRule(verbs...).Groups(groups...).Resources(resources...)
    writes one (the core group unless `groups` says otherwise)."""
    return PolicyRule(verbs=verbs, api_groups=groups, resources=resources, resource_names=names)


_r = rule


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


def events_rule() -> PolicyRule:
    """Upstream's eventsRule(): create, update and patch Events in the core and events.k8s.io groups."""
    return _r(EVENTS, ("events",), _EVENTS_RULE_GROUPS)


CLUSTER_ADMIN = _role("cluster-admin", _r(("*",), ("*",), ("*",)))

KUBE_SCHEDULER = _role(
    "system:kube-scheduler",
    _r(EVENTS, ("events",)),
    _r(("create",), ("leases",), ("coordination.k8s.io",)),
    _r(("get", "update"), ("leases",), ("coordination.k8s.io",), ("kube-scheduler",)),
    _r(READ, ("nodes", "namespaces", "services")),
    _r(READ + ("delete",), ("pods",)),
    _r(("create",), ("bindings", "pods/binding")),
    _r(("patch", "update"), ("pods/status",)),
    _r(READ, ("replicasets",), ("apps",)),
)

KUBE_CONTROLLER_MANAGER = _role(
    "system:kube-controller-manager",
    events_rule(),
    # leader election (the model runs one controller manager and elects no leader: kept as upstream grants it)
    _r(("create",), ("leases",), ("coordination.k8s.io",)),
    _r(("get", "update"), ("leases",), ("coordination.k8s.io",), ("kube-controller-manager",)),
    _r(("get",), ("namespaces",)),
    # needed for all shared informers
    _r(("list", "watch"), ("*",), ("*",)),
)

#: not upstream's: the lock Leases of the pessimistic-locking variant (see the module docstring)
PESSIMISTIC_LOCKING = _role(
    "kmodel:pessimistic-locking",
    _r(("create", "get", "update", "delete"), ("leases",), ("coordination.k8s.io",)),
)

#: upstream's ReadWrite and its verbs for edit (everything but read, which view grants)
READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_EDIT_VERBS = ("create", "delete", "deletecollection", "patch", "update")
_BATCH = ("batch",)
#: system:aggregate-to-view, cut to the model's resources (no Secrets: view must not read credentials)
_VIEW_RULES = (
    _r(READ, ("pods", "pods/status", "services", "services/status", "endpoints", "configmaps", "serviceaccounts",
              "bindings", "events", "namespaces", "namespaces/status")),
    _r(READ, ("deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
              "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"), APPS),
    _r(READ, ("jobs", "jobs/status"), _BATCH),
)
#: system:aggregate-to-edit, cut likewise
_EDIT_RULES = (
    _r(("impersonate",), ("serviceaccounts",)),
    _r(_EDIT_VERBS, ("pods",)),
    _r(_EDIT_VERBS, ("services", "endpoints", "configmaps", "secrets", "events", "serviceaccounts")),
    _r(("create",), ("serviceaccounts/token",)),
    _r(_EDIT_VERBS, ("deployments", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets",
                     "statefulsets/scale"), APPS),
    _r(_EDIT_VERBS, ("jobs",), _BATCH),
    _r(READ, ("secrets",)),
)
#: system:aggregate-to-admin, cut likewise (no localsubjectaccessreviews)
_ADMIN_RULES = (
    _r(READ_WRITE, ("rolebindings", "roles"), (_RBAC,)),
)
VIEW = _role("view", *_VIEW_RULES)
EDIT = _role("edit", *_EDIT_RULES, *_VIEW_RULES)
ADMIN = _role("admin", *_ADMIN_RULES, *_EDIT_RULES, *_VIEW_RULES)

#: upstream's system:basic-user, bound to every authenticated user: review who one is and one's own access
BASIC_USER = _role(
    "system:basic-user",
    _r(("create",), ("selfsubjectreviews",), ("authentication.k8s.io",)),
    _r(("create",), ("selfsubjectaccessreviews", "selfsubjectrulesreviews"), ("authorization.k8s.io",)),
)

NODE_PROXIER = _role(
    "system:node-proxier",
    _r(READ, ("services", "endpoints")),
    _r(READ, ("nodes",)),
    _r(EVENTS, ("events",)),
    _r(("list", "watch"), ("endpointslices",), ("discovery.k8s.io",)),
)


def controller_role(service_account: str, rules: tuple[PolicyRule, ...]) -> list:
    """A controller's `system:controller:<account>` ClusterRole and its binding to the kube-system service account,
    as upstream's controller_policy.go installs them (the cluster installs one for a controller of your own that
    declares its `rbac_rules`: kmodel.component.registry)."""
    role = _role(CONTROLLER_ROLE_PREFIX + service_account, *rules)
    return [role, _service_accounts_binding(role.metadata.name, (service_account,))]


#: (service account, its rules) of each controller whose role the bootstrap policy installs, sorted by account
ControllerRoles = Sequence[tuple[str, tuple[PolicyRule, ...]]]


def controller_roles(accounts: ControllerRoles) -> list[ClusterRole]:
    """Each controller's role, `system:controller:<service account>` (controller_policy.go), cut to the model's
    resources, in the order of `accounts`."""
    return [_role(CONTROLLER_ROLE_PREFIX + account, *rules) for account, rules in accounts]


def bootstrap_policy(controllers: ControllerRoles) -> list:
    """The bootstrap ClusterRoles then ClusterRoleBindings (cluster-admin bound to group system:masters,
    as upstream; the privileged-group authorizer lets masters through even without it). `controllers`: every
    built-in controller's service account and rules, by account (the cluster reads them from the registrations:
    kmodel.component.registry.builtin_controller_roles); the pessimistic-locking role is bound to those
    accounts."""
    roles = controller_roles(controllers)
    return [
        CLUSTER_ADMIN,
        KUBE_SCHEDULER,
        KUBE_CONTROLLER_MANAGER,
        *roles,
        PESSIMISTIC_LOCKING,
        NODE_PROXIER,
        ADMIN,
        EDIT,
        VIEW,
        BASIC_USER,
        _binding("cluster-admin", "Group", "system:masters"),
        _binding("system:kube-scheduler", "User", "system:kube-scheduler"),
        _binding("system:kube-controller-manager", "User", "system:kube-controller-manager"),
        *(_service_accounts_binding(role.metadata.name, (role.metadata.name[len(CONTROLLER_ROLE_PREFIX):],))
          for role in roles),
        _service_accounts_binding(PESSIMISTIC_LOCKING.metadata.name, tuple(account for account, _ in controllers)),
        _binding("system:node-proxier", "User", "system:kube-proxy"),
        _binding("system:basic-user", "Group", "system:authenticated"),
    ]
