"""RBAC's rule and subject matching, as `rbac-enforced` computes it for itself (never the API server's
authorizer, kmodel.apiserver.authorization, so a mistake there cannot move the oracle with it).

Kubernetes' pkg/apis/rbac/v1/evaluation_helpers.go and pkg/registry/rbac/validation/rule.go (1.30-1.32):

* a rule allows a resource request when its verbs, API groups and resources match, and it names no resources
  or names the requested one; "*" matches any verb, group or resource;
* a resource matches the rule's `<resource>` (no subresource), `<resource>/<subresource>`, or
  `*/<subresource>` for a request of that subresource;
* a binding's subject applies to a User by name, a Group the user is in, and a ServiceAccount by the username
  `system:serviceaccount:<namespace>:<name>`, its namespace the subject's or else the binding's (none: it
  applies to nobody).
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

ALL = "*"


class NodeRule(NamedTuple):
    """A rule of the Node authorizer's static table, in PolicyRule's field names (rule_allows reads it)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...] = ()


_READ = ("get", "list", "watch")

#: What a node (user system:node:<name>, group system:nodes) may do without RBAC, besides its own Lease:
#: Kubernetes 1.31's plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go NodeRules(), copied from upstream,
#: not from the model's authorizer. The rules for what the Node authorizer decides by its graph of pods and what
#: they reference (secrets, configmaps, persistent volumes and claims, volume attachments, service account tokens,
#: CSINodes, resource claims) are left out: the model keeps no graph, so a node gets none of those without RBAC.
NODE_RULES: tuple[NodeRule, ...] = (
    NodeRule(("create",), ("authentication.k8s.io",), ("tokenreviews",)),
    NodeRule(("create",), ("authorization.k8s.io",), ("subjectaccessreviews", "localsubjectaccessreviews")),
    NodeRule(_READ, ("",), ("services",)),
    NodeRule(("create", "get", "list", "watch"), ("",), ("nodes",)),
    NodeRule(("update", "patch"), ("",), ("nodes/status",)),
    NodeRule(("update", "patch"), ("",), ("nodes",)),
    NodeRule(("create", "update", "patch"), ("",), ("events",)),
    NodeRule(_READ, ("",), ("pods",)),
    NodeRule(("create", "delete"), ("",), ("pods",)),
    NodeRule(("update", "patch"), ("",), ("pods/status",)),
    NodeRule(("create",), ("",), ("pods/eviction",)),
    NodeRule(("get",), ("",), ("endpoints",)),
    NodeRule(("create", "get", "list", "watch"), ("certificates.k8s.io",), ("certificatesigningrequests",)),
    NodeRule(("get", "watch", "list"), ("storage.k8s.io",), ("csidrivers",)),
    NodeRule(_READ, ("node.k8s.io",), ("runtimeclasses",)),
)


def rule_allows(rule: Any, verb: str, group: str, resource: str, subresource: str, name: str) -> bool:
    """A PolicyRule allows this resource request."""
    if ALL not in rule.verbs and verb not in rule.verbs:
        return False
    if ALL not in rule.api_groups and group not in rule.api_groups:
        return False
    if rule.resource_names and name not in rule.resource_names:
        return False
    wanted = f"{resource}/{subresource}" if subresource else resource
    return any(r == ALL or r == wanted or (subresource and r == f"*/{subresource}") for r in rule.resources)


def rules_allow(rules: Iterable[Any], a: Any) -> bool:
    """Some rule allows the request whose authorization attributes are `a`."""
    return any(rule_allows(r, a.verb, a.api_group, a.resource, a.subresource, a.name) for r in rules)


def subject_applies(subject: Any, user_name: str, groups: Iterable[str], binding_namespace: str) -> bool:
    """A binding's subject names this user."""
    if subject.kind == "User":
        return subject.name == user_name
    if subject.kind == "Group":
        return subject.name in groups
    if subject.kind == "ServiceAccount":
        namespace = subject.namespace or binding_namespace
        return bool(namespace) and user_name == f"system:serviceaccount:{namespace}:{subject.name}"
    return False
