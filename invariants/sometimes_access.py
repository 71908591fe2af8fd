"""Sometimes properties of deletion, finalizers, namespaces and RBAC (registered with invariants/sometimes.py's
registry; see its docstring for what a sometimes property is).

Each reads incrementally, as the others do: the audit trail from where it last looked, or the store's changes
(`kmodel.invariants._history.change_feed`) in revision order.
"""

from __future__ import annotations

from typing import Any

from kmodel.invariants._history import NAMESPACES, change_feed
from kmodel.invariants.readers import audited
from kmodel.invariants.registry import sometimes
from kmodel.apiserver.audit import FORBID
from kmodel.apiserver.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

#: the keys of what a user puts in a namespace (what the namespace controller has to delete)
CONTENT = ("/registry/pods/", "/registry/deployments/", "/registry/replicasets/", "/registry/services/specs/")


def _feed(cluster: Any, memo: dict, prefixes: tuple[str, ...]) -> list:
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, prefixes)
    return feed.read(cluster.store)


def _starts_deleting(change: Any) -> bool:
    """The change gave the object a deletionTimestamp."""
    value, prev = change.value, change.prev
    return (value is not None and value.metadata.deletion_timestamp is not None
            and (prev is None or prev.metadata.deletion_timestamp is None))


def _meta(value: Any) -> Any:
    """The object's metadata (None for a deletion, or a value without any)."""
    return getattr(value, "metadata", None)


@sometimes("refused-by-rbac", principle="the API as the single contract")
def refused_by_rbac(cluster: Any, memo: dict) -> bool:
    """Authorization refused a request with 403 (RBAC found no rule granting it to its user): a user or
    service account asked for what no binding gave it."""
    return audited(cluster, memo, lambda r: r.code == 403 and r.decision == FORBID)


@sometimes("namespace-terminated-with-content", principle="level-driven reconciliation")
def namespace_terminated_with_content(cluster: Any, memo: dict) -> bool:
    """A namespace deleted while it held pods, workloads or services was emptied by the namespace controller
    and then removed."""
    live: dict[str, int] = memo.setdefault("live", {})  # namespace -> objects of CONTENT in it
    held: dict[str, bool] = memo.setdefault("held", {})  # namespace being deleted -> it held content then
    for change in _feed(cluster, memo, (NAMESPACES, *CONTENT)):
        key = change.key
        if key.startswith(NAMESPACES):
            name = key[len(NAMESPACES):]
            if change.value is None:
                if held.pop(name, False):
                    return True
            elif _starts_deleting(change):
                held[name] = live.get(name, 0) > 0
            continue
        namespace = key.split("/")[-2]
        if change.value is None and change.prev is not None:
            live[namespace] = live.get(namespace, 0) - 1
        elif change.value is not None and change.prev is None:
            live[namespace] = live.get(namespace, 0) + 1
    return False


@sometimes("finalizer-held-then-released", principle="level-driven reconciliation")
def finalizer_held_then_released(cluster: Any, memo: dict) -> bool:
    """An object deleted while it had a finalizer stayed, with its deletionTimestamp, until its last finalizer
    was removed, and was then removed itself."""
    held: dict[str, None] = memo.setdefault("held", {})
    for change in _feed(cluster, memo, ("",)):
        m = _meta(change.value)
        if change.value is None:
            if change.key in held:
                return True
        elif m is not None and m.deletion_timestamp is not None and m.finalizers:
            held[change.key] = None
    return False


@sometimes("foreground-deletion-completed", principle="level-driven reconciliation")
def foreground_deletion_completed(cluster: Any, memo: dict) -> bool:
    """An owner deleted in the foreground (the foregroundDeletion finalizer) waited for its blocking
    dependents to go, then went itself."""
    waiting: dict[str, None] = memo.setdefault("waiting", {})
    for change in _feed(cluster, memo, ("",)):
        m = _meta(change.value)
        if change.value is None:
            if change.key in waiting:
                return True
        elif m is not None and m.deletion_timestamp is not None and FOREGROUND_FINALIZER in m.finalizers:
            waiting[change.key] = None
    return False


@sometimes("dependent-orphaned", principle="level-driven reconciliation")
def dependent_orphaned(cluster: Any, memo: dict) -> bool:
    """A dependent lost its ownerReference to an owner deleted with the orphan propagation policy, and lives
    on without it."""
    orphaning: dict[str, None] = memo.setdefault("orphaning", {})  # uids of owners being deleted with orphan
    for change in _feed(cluster, memo, ("",)):
        m, before = _meta(change.value), _meta(change.prev)
        if m is None:
            continue
        if m.deletion_timestamp is not None and ORPHAN_FINALIZER in m.finalizers:
            orphaning[m.uid] = None
        if before is not None and before.owner_references != m.owner_references:
            kept = {ref.uid for ref in m.owner_references}
            if any(ref.uid in orphaning and ref.uid not in kept for ref in before.owner_references):
                return True
    return False
