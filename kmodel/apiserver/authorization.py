"""Authorization: kube-apiserver's `--authorization-mode=Node,RBAC` behind the system:masters shortcut.

Theory of operation
-------------------
`Authorizer.authorize(user, attrs)` runs, as upstream's union authorizer does, in order:

1. privileged groups: a member of `system:masters` is allowed everything;
2. the Node authorizer (plugin/pkg/auth/authorizer/node): applies only to users named `system:node:<n>` in
   group `system:nodes`. Leases: only get/create/update/patch/delete, only in `kube-node-lease`, only the
   lease named after the node (create excepted); everything else against the static node rules (read
   nodes/pods/services/endpoints/namespaces, create/update/patch nodes and nodes/status, create/delete pods
   (mirror pods), update/patch pods/status, create/update/patch events). Which node and which pod is
   NodeRestriction's job (admission), as upstream;
3. RBAC (plugin/pkg/auth/authorizer/rbac): ClusterRoleBindings, then RoleBindings of the request's
   namespace, read from the store's current state at the request's time (storeview); a binding whose role
   is missing contributes an error to the reason (`RBAC: role.rbac.authorization.k8s.io "x" not found`).

No opinion from everyone is a deny: 403 with upstream's message (endpoints/handlers/responsewriters):
`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "shop"`,
`... at the cluster scope` for cluster-scoped requests, with `: <reason>` appended when an authorizer gave one.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

import attrs

from kmodel.apiserver import errors
from kmodel.apiserver.authentication import MASTERS, UserInfo
from kmodel.apiserver.resources import resource as served_resource
from kmodel.apiserver.storeview import current_prefix, current_value
from kmodel.objects.rbac import PolicyRule
from kmodel.store import Store

NODE_LEASE_NAMESPACE = "kube-node-lease"
_RBAC_GROUP = "rbac.authorization.k8s.io"


@attrs.frozen
class Attributes:
    """authorizer.Attributes of a resource request."""

    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    api_group: str = ""


def _rule(verbs: Iterable[str], resources: Iterable[str], groups: Iterable[str] = ("",)) -> PolicyRule:
    return PolicyRule(verbs=tuple(verbs), api_groups=tuple(groups), resources=tuple(resources))


_READ = ("get", "list", "watch")

# bootstrappolicy.NodeRules() of 1.31, reduced to the resources the model serves whose access the Node authorizer
# does not subdivide by its graph (secrets, configmaps and serviceaccounts/token are decided by the graph upstream,
# which the model does not keep: docs/differences.md; leases are decided in `_node`). Endpoints are "get" only
# (glusterfs volumes); namespaces are not in the table at all.
NODE_RULES: tuple = (  # no rule names resources (Authorizer.allows relies on it)
    _rule(_READ, ("services",)),
    _rule(("create", "get", "list", "watch", "update", "patch"), ("nodes",)),
    _rule(("update", "patch"), ("nodes/status",)),
    _rule(("create", "update", "patch"), ("events",)),
    _rule(("get", "list", "watch", "create", "delete"), ("pods",)),
    _rule(("update", "patch"), ("pods/status",)),
    _rule(("create",), ("pods/eviction",)),
    _rule(("get",), ("endpoints",)),
)


def verb_matches(rule: PolicyRule, verb: str) -> bool:
    return "*" in rule.verbs or verb in rule.verbs


def api_group_matches(rule: PolicyRule, group: str) -> bool:
    return "*" in rule.api_groups or group in rule.api_groups


def resource_matches(rule: PolicyRule, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule.resources:
        if r == "*" or r == combined:
            return True
        if subresource and r.startswith("*/") and r[2:] == subresource:
            return True
    return False


def rule_allows(attrs_: Attributes, rule: PolicyRule) -> bool:
    """rbac.RuleAllows for a resource request."""
    return (verb_matches(rule, attrs_.verb)
            and api_group_matches(rule, attrs_.api_group)
            and resource_matches(rule, attrs_.resource, attrs_.subresource)
            and (not rule.resource_names or attrs_.name in rule.resource_names))


def rules_allow(attrs_: Attributes, rules: Iterable[PolicyRule]) -> bool:
    return any(rule_allows(attrs_, r) for r in rules)


def subject_applies(subject: Any, user: UserInfo, binding_namespace: str) -> bool:
    kind = subject.kind
    if kind == "User":
        return subject.name == user.name
    if kind == "Group":
        return subject.name in user.groups
    if kind == "ServiceAccount":
        ns = subject.namespace or binding_namespace
        return user.name == f"system:serviceaccount:{ns}:{subject.name}"
    return False


def forbidden_message(user: UserInfo, a: Attributes) -> str:
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    if a.namespace:
        return (f'User "{user.name}" cannot {a.verb} resource "{resource}" in API group "{a.api_group}" '
                f'in the namespace "{a.namespace}"')
    return f'User "{user.name}" cannot {a.verb} resource "{resource}" in API group "{a.api_group}" at the cluster scope'


# Where RBAC's inputs live: a write under any of these may change an RBAC decision.
RBAC_PREFIXES = ("/registry/clusterrolebindings/", "/registry/rolebindings/", "/registry/clusterroles/",
                 "/registry/roles/")
_ALLOWED_CACHE_MAX = 65_536


class Authorizer:
    """Node,RBAC authorization over one store. `node_authorizer=False` leaves nodes to RBAC alone.

    Allowed decisions are cached by (user, attributes): the Node authorizer is a pure function of them, and
    RBAC's answer a function of them and of the RBAC objects, so the cache is dropped whenever the store's
    tracker of the RBAC prefixes moves. Denials are not cached (they are rare, and carry a message built
    from the objects). With or without the cache, every answer is the same."""

    def __init__(self, store: Store, *, node_authorizer: bool = True) -> None:
        self.store = store
        self.node_authorizer = node_authorizer
        self._rbac_changes = store.track(RBAC_PREFIXES)
        self._allowed: dict[tuple, None] = {}  # membership only
        self._allowed_at = self._rbac_changes.revision
        self._node_rules_allow: dict[tuple, bool] = {}
        self._names_matter: Optional[bool] = None  # does any RBAC rule name resources? (None: not known yet)

    def _any_resource_names(self) -> bool:
        for prefix in ("/registry/clusterroles/", "/registry/roles/"):
            for kv in current_prefix(self.store, prefix):
                if any(rule.resource_names for rule in kv.value.rules):
                    return True
        return False

    def allows(self, user: UserInfo, verb: str, resource: str, namespace: str, name: str, subresource: str,
               api_group: str) -> None:
        """`authorize` for a request's parts; builds the Attributes only when the cache cannot answer."""
        if MASTERS in user.groups:
            return
        if self.node_authorizer and resource != "leases" and user.is_node():
            # the Node authorizer's static rules: a pure function of these four (no rule names resources)
            node_key = (verb, resource, subresource, api_group)
            allowed = self._node_rules_allow.get(node_key)
            if allowed is None:
                allowed = self._node_rules_allow[node_key] = rules_allow(
                    Attributes(verb, resource, namespace, name, subresource, api_group), NODE_RULES)
            if allowed:
                return
        revision = self._rbac_changes.revision
        if revision != self._allowed_at:
            self._allowed = {}
            self._allowed_at = revision
            self._names_matter = None
        names_matter = self._names_matter
        if names_matter is None:
            names_matter = self._names_matter = self._any_resource_names()
        # the name is part of the question only for leases (Node authorizer) and RBAC rules with resourceNames
        # the user by its parts: hashing the frozen attrs UserInfo runs Python code on every request
        key = (user.name, user.groups, verb, resource, namespace,
               name if names_matter or resource == "leases" else "", subresource, api_group)
        if key in self._allowed:
            return
        self._decide(user, Attributes(verb, resource, namespace, name, subresource, api_group))
        if len(self._allowed) >= _ALLOWED_CACHE_MAX:
            self._allowed = {}
        self._allowed[key] = None

    def authorize(self, user: UserInfo, a: Attributes) -> None:
        """Return when allowed; raise APIError(403) with upstream's message otherwise."""
        self.allows(user, a.verb, a.resource, a.namespace, a.name, a.subresource, a.api_group)

    def _decide(self, user: UserInfo, a: Attributes) -> None:
        if MASTERS in user.groups:
            return
        reasons: list[str] = []
        if self.node_authorizer and user.is_node():
            allowed, reason = self._node(user.node_name, a)
            if allowed:
                return
            if reason:
                reasons.append(reason)
        allowed, reason = self._rbac(user, a)
        if allowed:
            return
        if reason:
            reasons.append(reason)
        message = forbidden_message(user, a)
        if reasons:
            message += ": " + "\n".join(reasons)
        raise errors.forbidden(a.api_group, a.resource, a.name, message)

    # --- Node authorizer -----------------------------------------------------------------------------

    def _node(self, node: str, a: Attributes) -> tuple[bool, str]:
        if a.resource == "leases" and a.api_group == "coordination.k8s.io":
            if a.verb not in ("get", "create", "update", "patch", "delete"):
                return False, "can only get, create, update, patch, or delete a node lease"
            if a.namespace != NODE_LEASE_NAMESPACE:
                return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
            if a.verb != "create" and a.name != node:
                return False, "can only access node lease with the same name as the requesting node"
            return True, ""
        return rules_allow(a, NODE_RULES), ""

    # --- RBAC ------------------------------------------------------------------------------------------

    def _rbac(self, user: UserInfo, a: Attributes) -> tuple[bool, str]:
        store = self.store
        missing: list[str] = []
        for kv in current_prefix(store, "/registry/clusterrolebindings/"):
            binding = kv.value
            if not any(subject_applies(s, user, "") for s in binding.subjects):
                continue
            rules = self._role_rules(binding.role_ref, "", missing)
            if rules is not None and rules_allow(a, rules):
                return True, ""
        if a.namespace:
            for kv in current_prefix(store, f"/registry/rolebindings/{a.namespace}/"):
                binding = kv.value
                if not any(subject_applies(s, user, a.namespace) for s in binding.subjects):
                    continue
                rules = self._role_rules(binding.role_ref, a.namespace, missing)
                if rules is not None and rules_allow(a, rules):
                    return True, ""
        if missing:
            return False, "RBAC: " + (missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]")
        return False, ""

    def _role_rules(self, ref: Any, namespace: str, missing: list[str]) -> Optional[tuple]:
        if ref.kind == "ClusterRole":
            role = current_value(self.store, f"/registry/clusterroles/{ref.name}")
            if role is None:
                missing.append(f'clusterrole.{_RBAC_GROUP} "{ref.name}" not found')
                return None
            return role.rules
        if ref.kind == "Role" and namespace:
            role = current_value(self.store, f"/registry/roles/{namespace}/{ref.name}")
            if role is None:
                missing.append(f'role.{_RBAC_GROUP} "{ref.name}" not found')
                return None
            return role.rules
        return None


def attributes_for(verb: str, resource: str, namespace: str, name: str, subresource: str) -> Attributes:
    """The attributes of a request, with the API group looked up from the resource table (a Request names another
    group version of a stored resource by its group-qualified name: `events.events.k8s.io` is resource `events` of
    group `events.k8s.io`)."""
    res = served_resource(resource)
    if res is None:
        return Attributes(verb, resource, namespace, name, subresource, "")
    return Attributes(verb, res.name, namespace, name, subresource, res.group)
