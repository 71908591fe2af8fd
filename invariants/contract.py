"""Contract invariants: everything stored went through admission, everything accepted was authorized.

Both are written independently of the pipeline's own code (they re-derive the rule from the objects), so a
pipeline that skipped a stage, or an authorizer that said yes too easily, shows here.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator, NamedTuple, Optional

from kmodel.invariants._crds import established
from kmodel.invariants._history import NAMESPACES, audit_since, change_feed, name_of
from kmodel.invariants._rbac import NODE_RULES, rules_allow, subject_applies
from kmodel.invariants.records import record
from kmodel.invariants.inputs import AUDIT, writes
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.apiserver.authentication import ANONYMOUS, ANONYMOUS_USER, MASTERS, NODE_PREFIX, NODES, UserInfo, user
from kmodel.apiserver.authorization import NODE_LEASE_NAMESPACE, RBAC_PREFIXES
from kmodel.apiserver.resources import RESOURCES
from kmodel.store import prefix_end
from kmodel.apiserver.customresources import crds

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def baseline_violations(spec: Any) -> list[str]:
    """Pod Security baseline's host checks, re-derived: host namespaces, host ports, privileged containers."""
    found = []
    for field in ("host_network", "host_pid", "host_ipc"):
        if getattr(spec, field, False):
            found.append(field.replace("_network", "Network").replace("_pid", "PID").replace("_ipc", "IPC"))
    for c in tuple(spec.containers) + tuple(spec.init_containers):
        if any(p.host_port for p in c.ports):
            found.append(f"hostPort in container {c.name}")
        sc = getattr(c, "security_context", None)
        if sc is not None and getattr(sc, "privileged", None):
            found.append(f"privileged container {c.name}")
    return found


def _tolerates(tolerations: tuple, key: str) -> bool:
    return any((t.key == key or (not t.key and t.operator == "Exists")) and t.effect in ("NoExecute", "")
               for t in tolerations)


PRIORITY_CLASSES = "/registry/priorityclasses/"


def _owed_priority(class_name: str, classes: dict) -> Optional[int]:
    """The priority the Priority plugin gives a pod naming `class_name` ("": none), or None for a class that does
    not exist. Without a name: the global default class's value (of several, the lowest), else 0. Its own
    reading of the plugin's rule, from the recorded classes."""
    if class_name:
        found = classes.get(class_name)
        return None if found is None else found[0]
    defaults = [value for value, global_default in classes.values() if global_default]
    return min(defaults) if defaults else 0


@invariant("admission-enforced", kind=SAFETY, principle="the API as the single contract",
           reads=(writes("/registry/"),))
def admission_enforced(cluster: Any, memo: dict) -> Iterator[str]:
    """Every stored object went through the API server's admission: it has a uid and a creationTimestamp,
    every pod tolerates node.kubernetes.io/not-ready and unreachable (DefaultTolerationSeconds), every pod's
    priority is its PriorityClass's value, or the global default class's, or 0 when there is none (Priority), and
    no pod in a namespace enforcing Pod Security baseline uses host namespaces, host ports or privileged
    containers.

    Checked on each object when it is created (and on each pod write), from the store's history; the classes are
    those stored when the pod was."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, ("/registry/",))
        memo["bad"] = []
        memo["classes"] = {}
    bad: list = memo["bad"]
    classes: dict = memo["classes"]  # PriorityClass name -> (value, globalDefault), as of the change read
    for ch in reader.read(cluster.store):
        obj = ch.value
        if ch.key.startswith(PRIORITY_CLASSES):
            if obj is None:
                classes.pop(name_of(ch.key), None)
            else:
                classes[name_of(ch.key)] = (obj.value, obj.global_default)
        if obj is None:
            continue
        meta = getattr(obj, "metadata", None)
        if meta is None:
            continue
        what = f"{ch.key} (revision {ch.rev})"
        if ch.prev is None:
            if not meta.uid:
                bad.append(f"{what} has no uid: it was stored without going through the API server")
            if meta.creation_timestamp is None:
                bad.append(f"{what} has no creationTimestamp: it was stored without going through the API server")
        if not ch.key.startswith("/registry/pods/") or ch.prev is not None:
            continue
        spec = obj.spec
        missing = [k for k in (NOT_READY, UNREACHABLE) if not _tolerates(spec.tolerations, k)]
        if missing:
            bad.append(f"pod {name_of(ch.key)} does not tolerate {', '.join(missing)}: DefaultTolerationSeconds "
                       f"admission did not run")
        owed = _owed_priority(spec.priority_class_name, classes)
        if owed is None:
            bad.append(f"pod {name_of(ch.key)} names PriorityClass {spec.priority_class_name}, which did not exist: "
                       f"Priority admission did not run")
        elif spec.priority != owed:
            bad.append(f"pod {name_of(ch.key)} has priority {spec.priority}, not {owed} (PriorityClass "
                       f"{spec.priority_class_name or '(none)'}): Priority admission did not run")
        ns = reader.value(NAMESPACES + meta.namespace)
        if ns is not None and ns.metadata.labels.get(ENFORCE_LABEL) in ("baseline", "restricted"):
            violations = baseline_violations(spec)
            if violations:
                bad.append(f"pod {name_of(ch.key)} in namespace {meta.namespace} (enforce="
                           f"{ns.metadata.labels.get(ENFORCE_LABEL)}) violates Pod Security baseline: "
                           f"{', '.join(violations)}")
    yield from bad


# -- RBAC -------------------------------------------------------------------------------------------------


class _RbacView:
    """The RBAC objects as of one revision, read without touching the store's request history."""

    def __init__(self, store: Any, revision: Optional[int]) -> None:
        self.kvs: dict[str, list] = {}
        for prefix in RBAC_PREFIXES:
            # Store.peek: a read that does not go on the store's history (revision 0: before the first write)
            if revision is None:
                self.kvs[prefix] = store.peek(prefix, prefix_end(prefix))
            else:
                self.kvs[prefix] = store.peek(prefix, prefix_end(prefix), revision=revision) if revision > 0 else []
        self.by_key = {kv.key: kv.value for kvs in self.kvs.values() for kv in kvs}
        self.decisions: dict[tuple, bool] = {}  # (user, groups, attributes) -> allowed: the view never changes

    def allowed(self, who: UserInfo, a: Any) -> bool:
        key = (who.name, who.groups, a)
        decision = self.decisions.get(key)
        if decision is None:
            decision = self.decisions[key] = self._allowed(who, a)
        return decision

    def _allowed(self, who: UserInfo, a: Any) -> bool:
        for kv in self.kvs["/registry/clusterrolebindings/"]:
            if self._binding_allows(kv.value, who, a, ""):
                return True
        if a.namespace:
            for kv in self.kvs["/registry/rolebindings/"]:
                if kv.key.startswith(f"/registry/rolebindings/{a.namespace}/") and \
                        self._binding_allows(kv.value, who, a, a.namespace):
                    return True
        return False

    def _binding_allows(self, binding: Any, who: UserInfo, a: Any, namespace: str) -> bool:
        if not any(subject_applies(s, who.name, who.groups, namespace) for s in binding.subjects):
            return False
        ref = binding.role_ref
        if ref.kind == "ClusterRole":
            role = self.by_key.get(f"/registry/clusterroles/{ref.name}")
        elif ref.kind == "Role" and namespace:
            role = self.by_key.get(f"/registry/roles/{namespace}/{ref.name}")
        else:
            role = None
        return role is not None and rules_allow(role.rules, a)


class _Attributes(NamedTuple):
    """A request's authorization attributes (authorizer.Attributes' fields), as rbac-enforced derives them."""

    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str
    api_group: str


@functools.lru_cache(maxsize=1 << 16)
def _attributes(verb: str, resource: str, namespace: str, name: str, subresource: str) -> _Attributes:
    """The attributes of a request, its API group as the URL names it (upstream: /api/v1 is the core group "",
    /apis/<group>/<version> that group): a Request here names another group version of a stored resource as
    `<plural>.<group>`, and a built-in resource by its plural alone (its group from the table of built-in kinds);
    any other plural gets "" here and its CRD's group from `_custom_resource_attributes`. Built once per distinct
    request shape: the audit trail repeats shapes at every step (heartbeats, status writes)."""
    plural, _, group = resource.partition(".")
    if not group:
        builtin = RESOURCES.get(resource)
        group = builtin.group if builtin is not None else ""
    return _Attributes(verb, plural, namespace, name, subresource, group)


def _node_allows(who: UserInfo, a: Any) -> bool:
    node = who.name[len(NODE_PREFIX):]
    if a.resource == "leases" and a.api_group == "coordination.k8s.io":
        return (a.verb in ("get", "create", "update", "patch", "delete") and a.namespace == NODE_LEASE_NAMESPACE
                and (a.verb == "create" or a.name == node))
    return rules_allow(NODE_RULES, a)


def _tokens(cluster: Any) -> dict:
    return record(cluster.replicas[0].pipeline.authenticator, "tokens") if cluster.replicas else {}


def _users(cluster: Any) -> dict[str, UserInfo]:
    return {u.name: u for u in _tokens(cluster).values()}


def _custom_resource_attributes(store: Any, a: _Attributes) -> _Attributes:
    """A custom resource's request attributes with the API group of the Established CRD that accepted its plural
    (the table of built-in kinds knows the built-in resources only)."""
    group = next((crd.spec.group for crd in crds(store)
                  if crd.status.accepted_names.plural == a.resource and established(crd)), None)
    return a._replace(api_group=group) if group is not None else a


@invariant("rbac-enforced", kind=SAFETY, principle="the API as the single contract",
           reads=(AUDIT,))
def rbac_enforced(cluster: Any, memo: dict) -> Iterator[str]:
    """Every request the API servers accepted (the audit trail's records that got past authorization) was
    allowed for its user by the Node authorizer or by RBAC as the RBAC objects stood when it was handled.

    Reads the audit trail incrementally; RBAC is re-derived from the stored roles and bindings."""
    bad: list = memo.setdefault("bad", [])
    records = cluster.audit.records
    start = memo.get("pos", 0)
    if start == len(records):
        yield from bad
        return
    memo["pos"] = len(records)
    users = memo.get("users")
    tokens = len(_tokens(cluster))
    if users is None or memo.get("tokens") != tokens:
        users = memo["users"] = _users(cluster)
        memo["tokens"] = tokens
    store = cluster.store
    tracker = record(store, "trackers").get(RBAC_PREFIXES)
    views: dict = memo.setdefault("views", {})
    prev_revision = records[start - 1].revision if start else 0
    for r in audit_since(cluster, memo, start, len(records)):
        written = r.revision != prev_revision
        prev_revision = r.revision
        if not r.user or r.code in (401, 403):
            continue
        who = users.get(r.user)
        if who is None:
            if r.user.startswith(NODE_PREFIX):
                who = user(r.user, NODES)
            elif r.user == ANONYMOUS:
                who = ANONYMOUS_USER
            else:
                who = user(r.user)
        if MASTERS in who.groups:
            continue
        name = r.name if (r.verb != "create" or r.subresource) else ""
        a = _attributes(r.verb, r.resource, r.namespace, name, r.subresource)
        if not a.api_group and r.resource not in RESOURCES:
            a = _custom_resource_attributes(store, a)
        if who.is_node() and _node_allows(who, a):
            continue
        # RBAC as it stood before the request (its own write, if any, is at r.revision)
        at = r.revision - 1 if written else r.revision
        if tracker is not None and tracker.revision <= at:
            view_key = ("current", tracker.revision)
            revision = None
        else:
            view_key = ("past", at)
            revision = at
        view = views.get(view_key)
        if view is None:
            if len(views) > 64:
                views.clear()
            view = views[view_key] = _RbacView(store, revision)
        if not view.allowed(who, a):
            target = "/".join(p for p in (r.namespace, r.resource, r.name, r.subresource) if p)
            bad.append(f"{r.replica} accepted {r.verb} {target} (code {r.code}) at {r.time} ms from {r.user}, "
                       f"whom neither the Node authorizer nor RBAC allows it")
    yield from bad
