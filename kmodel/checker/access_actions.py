"""The access family's actions: deletion semantics, finalizers, namespaces, RBAC, and requests as other users.

Theory of operation
-------------------
Each action is what one user types, sent through kubectl (`cluster.submit`) with that user's bearer token, so
the API server authenticates, authorizes (RBAC) and admits it as any request: a user without the rights gets
403 with upstream's message, audited with its user name, and nothing changes.

* users: `USERS` are the cluster admin (system:masters), alice, bob (known to the cluster, no rights of their
  own) and the service account default/builder; every action carries the `user` it runs as (admin by
  default);
* namespaces: `CreateNamespace` (kubectl create namespace team); deleting one is a `DeleteWith` of
  namespaces; `ApplyInNamespace` puts the apps' Deployment, Service or a bare pod into a namespace;
* deletion: `DeleteWith` is kubectl delete with DeleteOptions: --grace-period=N (gracePeriodSeconds), --force
  (grace 0: the API server removes the pod at once), --cascade=orphan|foreground|background
  (propagationPolicy);
* finalizers: `AddFinalizer` / `RemoveFinalizer` edit metadata.finalizers of any object (nodes and namespaces
  too; the user's own finalizer, or for a removal any finalizer the object has) as kubectl edit does: GET the object, then a merge patch of its whole finalizers list on the
  resourceVersion read (so a change in between gets 409 and changes nothing);
* RBAC: `ApplyRole` (a Role in a namespace, a ClusterRole without one) grants a `ROLE_LEVELS` level on the
  apps' resources; applying it again with another level changes it; `ApplyBinding` binds a user or the
  service account to it (a RoleBinding in a namespace, a ClusterRoleBinding without one); deleting either is
  a `DeleteWith`.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Optional

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.admission.pod_security import ENFORCE_LABEL as POD_SECURITY_ENFORCE
from kmodel.checker.actions import HOST_PORT, Action, deployment_manifest, pod_manifest, service_manifest
from kmodel.checker.simpler import Simplest, default, earlier
from kmodel.cluster import Cluster, Delete
from kmodel.cluster.kubectl import Apply, EditFinalizers
from kmodel.apiserver.authentication import user_service_account_token
from kmodel.loop.events import at_least

ADMIN = "admin"
#: who a user action may run as: the admin first (what a draw shrinks to), then users with no rights of their
#: own until a binding grants some, and a service account of the default namespace
USERS: tuple[str, ...] = (ADMIN, "alice", "bob", "builder")
#: the service account among USERS: (namespace, name)
SERVICE_ACCOUNT = ("default", "builder")
#: the namespace the user creates and deletes (besides the immortal default)
TEAM = "team"
#: the finalizer a user puts on objects (a controller of its own would remove it; here the user does)
HOLD = "example.com/hold"
#: the role the RBAC actions write: one name, so applying it again changes it
ROLE = "app-access"
_APPS_RESOURCES = ("deployments", "replicasets")
_CORE_RESOURCES = ("pods", "services")
#: what a role grants, by level: view (read) or edit (read and write), on the apps' resources
ROLE_LEVELS: dict[str, tuple[str, ...]] = {
    "view": ("get", "list", "watch"),
    "edit": ("create", "delete", "get", "list", "patch", "update", "watch"),
}
#: the Pod Security levels CreateNamespace may enforce ("": no label, the namespace is privileged)
POD_SECURITY_LEVELS: tuple[str, ...] = ("", "baseline", "restricted")
#: what ApplyInNamespace puts in a namespace: resource -> object name
NAMESPACED_APPS: dict[str, str] = {"deployments": "shop", "services": "shop", "pods": "probe"}
#: DeleteWith's propagation policies, as kubectl --cascade spells them
CASCADE = {"Background": "background", "Foreground": "foreground", "Orphan": "orphan"}


def one_of(options: Any) -> Any:
    """An attrs validator: the value is one of `options` (a ValueError of one line naming them otherwise)."""
    known = tuple(options)

    def check(instance: Any, attribute: Any, value: Any) -> None:
        if value not in known:
            raise ValueError(f"{attribute.name} must be one of {', '.join(map(repr, known))}, not {value!r}")
    return check


_user = attrs.field(default=ADMIN, validator=one_of(USERS))
_resource = attrs.field(validator=one_of(sorted(RESOURCES)))


def token_of(user: str) -> str:
    """The bearer token kubectl sends for `user` (the admin's is the component's own)."""
    if user == ADMIN:
        return ""
    if user == SERVICE_ACCOUNT[1]:
        return user_service_account_token(*SERVICE_ACCOUNT)
    return f"{user}-token"


def _as(user: str) -> str:
    return "" if user == ADMIN else f" --as {user}"


def _kind(resource: str) -> str:
    res = RESOURCES.get(resource)
    return res.kind.lower() if res else resource


def _ns(namespace: str) -> str:
    return f" -n {namespace}" if namespace and namespace != "default" else ""


def in_namespace(manifest: dict, namespace: str) -> dict:
    out = copy.deepcopy(manifest)
    out["metadata"]["namespace"] = namespace
    return out


@attrs.frozen
class CreateNamespace(Action):
    """kubectl apply a Namespace (a new one gets the `kubernetes` finalizer and phase Active), labelled
    pod-security.kubernetes.io/enforce=`pod_security` when that is set (Pod Security admission then refuses its
    pods that use host namespaces, host ports or privileged containers); applying it again changes the label."""

    kind: ClassVar[str] = "create-namespace"
    simplest: ClassVar[Simplest] = (("user", default(ADMIN)), ("pod_security", earlier(POD_SECURITY_LEVELS)))
    namespace: str = TEAM
    user: str = _user
    pod_security: str = attrs.field(default="", validator=one_of(POD_SECURITY_LEVELS))

    @property
    def name(self) -> str:
        enforce = f" (pod-security enforce={self.pod_security})" if self.pod_security else ""
        return f"kubectl apply namespace {self.namespace}{enforce}{_as(self.user)}"

    def apply(self, cluster: Cluster) -> None:
        metadata: dict = {"name": self.namespace}
        if self.pod_security:
            metadata["labels"] = {POD_SECURITY_ENFORCE: self.pod_security}
        cluster.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}, token_of(self.user)))


@attrs.frozen
class ApplyInNamespace(Action):
    """kubectl apply the apps' Deployment (1 replica), Service or a bare pod (placed by the scheduler; with
    hostPort 8080 when `host_port`, which a namespace enforcing Pod Security baseline refuses) into a namespace
    (refused with 403 while the namespace is being terminated, 404 when it does not exist)."""

    kind: ClassVar[str] = "apply-in-namespace"
    simplest: ClassVar[Simplest] = (("user", default(ADMIN)), ("host_port", default(False)))
    namespace: str
    resource: str = attrs.field(validator=one_of(sorted(NAMESPACED_APPS)))
    user: str = _user
    host_port: bool = attrs.field(default=False)

    @host_port.validator
    def _only_pods(self, attribute: Any, value: bool) -> None:
        if value and self.resource != "pods":
            raise ValueError(f"host_port applies to pods only, not {self.resource}")

    @property
    def name(self) -> str:
        port = f" (hostPort {HOST_PORT})" if self.host_port else ""
        return (f"kubectl apply {_kind(self.resource)} {NAMESPACED_APPS[self.resource]}{_ns(self.namespace)}"
                f"{port}{_as(self.user)}")

    def manifest(self) -> dict:
        name = NAMESPACED_APPS[self.resource]
        if self.resource == "deployments":
            base = deployment_manifest(name, 1, 0, False)
        elif self.resource == "services":
            base = service_manifest(name)
        else:
            base = pod_manifest(name, "", self.host_port)
        return in_namespace(base, self.namespace)

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(self.manifest(), token_of(self.user)))


@attrs.frozen
class DeleteWith(Action):
    """kubectl delete with DeleteOptions: `grace_period_seconds` (None: the object's own; 0: --force) and
    `propagation_policy` ("": the server's default, background)."""

    kind: ClassVar[str] = "delete-with"
    simplest: ClassVar[Simplest] = (
        ("user", default(ADMIN)), ("grace_period_seconds", default(None)), ("propagation_policy", default("")))
    resource: str = _resource
    namespace: str
    object: str
    grace_period_seconds: Optional[int] = at_least(0, default=None)
    propagation_policy: str = attrs.field(default="", validator=one_of(("", *CASCADE)))
    user: str = _user

    @property
    def name(self) -> str:
        flags = ""
        if self.propagation_policy:
            flags += f" --cascade={CASCADE.get(self.propagation_policy, self.propagation_policy)}"
        if self.grace_period_seconds == 0:
            flags += " --force --grace-period=0"
        elif self.grace_period_seconds is not None:
            flags += f" --grace-period={self.grace_period_seconds}"
        return f"kubectl delete {_kind(self.resource)} {self.object}{_ns(self.namespace)}{flags}{_as(self.user)}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete(self.resource, self.namespace, self.object, token_of(self.user),
                              self.grace_period_seconds, self.propagation_policy))


@attrs.frozen
class _EditFinalizer(Action):
    """kubectl edit of an object's finalizer (example.com/hold unless another is named): put on (`ADD`) or taken
    off."""

    ADD: ClassVar[bool] = True
    simplest: ClassVar[Simplest] = (("user", default(ADMIN)), ("finalizer", default(HOLD)))
    resource: str = _resource
    namespace: str
    object: str
    user: str = _user
    finalizer: str = attrs.field(default=HOLD, validator=attrs.validators.min_len(1))

    @property
    def name(self) -> str:
        verb = "add" if self.ADD else "remove"
        return f"kubectl edit {_kind(self.resource)} {self.object}{_ns(self.namespace)}: {verb} finalizer " \
               f"{self.finalizer}{_as(self.user)}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(EditFinalizers(self.resource, self.namespace, self.object, self.finalizer, self.ADD,
                                      token_of(self.user)))


@attrs.frozen
class AddFinalizer(_EditFinalizer):
    """Put the finalizer on (a deleted object then stays, with its deletionTimestamp, until it is removed)."""

    kind: ClassVar[str] = "add-finalizer"


@attrs.frozen
class RemoveFinalizer(_EditFinalizer):
    """Take the finalizer off (an object being deleted goes once no finalizer is left): the user's own, or one a
    component put there (foregroundDeletion, orphan, a Job's pod tracking finalizer), as a user unsticks an object
    by hand."""

    kind: ClassVar[str] = "remove-finalizer"
    ADD: ClassVar[bool] = False


def role_manifest(namespace: str, level: str) -> dict:
    """Role `ROLE` in `namespace` (a ClusterRole when ""), granting `level` on the apps' resources."""
    verbs = list(ROLE_LEVELS[level])
    kind = "Role" if namespace else "ClusterRole"
    meta: dict[str, Any] = {"name": ROLE, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": list(_CORE_RESOURCES), "verbs": verbs},
                      {"apiGroups": ["apps"], "resources": list(_APPS_RESOURCES), "verbs": verbs}]}


def binding_name(subject: str) -> str:
    return f"{subject}-{ROLE}"


def binding_manifest(namespace: str, subject: str, cluster_role: bool) -> dict:
    """A RoleBinding in `namespace` (a ClusterRoleBinding when "") of `subject` to `ROLE`: the namespace's Role,
    or the ClusterRole when `cluster_role` (a ClusterRoleBinding always binds the ClusterRole)."""
    if subject == SERVICE_ACCOUNT[1]:
        who = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT[1], "namespace": SERVICE_ACCOUNT[0]}
    else:
        who = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": subject}
    role_kind = "ClusterRole" if cluster_role or not namespace else "Role"
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta: dict[str, Any] = {"name": binding_name(subject), **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "subjects": [who],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": ROLE}}


@attrs.frozen
class ApplyRole(Action):
    """kubectl apply Role app-access in `namespace` (a ClusterRole when ""), granting `level`."""

    kind: ClassVar[str] = "apply-role"
    simplest: ClassVar[Simplest] = (("user", default(ADMIN)), ("level", default("view")))
    namespace: str
    level: str = attrs.field(default="view", validator=one_of(sorted(ROLE_LEVELS)))
    user: str = _user

    @property
    def name(self) -> str:
        what = f"role {ROLE}{_ns(self.namespace) or ' -n default'}" if self.namespace else f"clusterrole {ROLE}"
        return f"kubectl apply {what} ({self.level}: {', '.join(ROLE_LEVELS[self.level])}){_as(self.user)}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(role_manifest(self.namespace, self.level), token_of(self.user)))


@attrs.frozen
class ApplyBinding(Action):
    """kubectl apply a RoleBinding in `namespace` (a ClusterRoleBinding when "") of `subject` (a user, or the
    builder service account) to app-access (the ClusterRole when `cluster_role`)."""

    kind: ClassVar[str] = "apply-binding"
    simplest: ClassVar[Simplest] = (("user", default(ADMIN)), ("cluster_role", default(False)))
    namespace: str
    subject: str = attrs.field(validator=one_of(USERS[1:]))
    cluster_role: bool = False
    user: str = _user

    @property
    def name(self) -> str:
        kind = "rolebinding" if self.namespace else "clusterrolebinding"
        role = "clusterrole" if self.cluster_role or not self.namespace else "role"
        where = (_ns(self.namespace) or " -n default") if self.namespace else ""
        return (f"kubectl apply {kind} {binding_name(self.subject)}{where} ({self.subject} -> {role} {ROLE})"
                f"{_as(self.user)}")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(binding_manifest(self.namespace, self.subject, self.cluster_role), token_of(self.user)))
