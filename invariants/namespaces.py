"""Namespace invariants: what deleting a namespace guarantees about the objects in it.

    namespace-content-removed  (safety) no namespace leaves the store while objects of a namespaced resource
                               (built-in or custom) still live in it, and none is created while objects of an
                               earlier namespace of that name do

Read from the store's history (`change_feed`), so each step costs what it wrote: the feed's changes keep, per
namespace name, the keys of the namespaced objects stored in it (an object is namespaced when its metadata
names a namespace: the API server stores cluster-scoped objects without one), and whether the namespace
exists. A namespace's removal or creation is then judged against the objects its name holds at that revision.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import NAMESPACES, change_feed, name_of
from kmodel.invariants.inputs import writes
from kmodel.invariants.registry import SAFETY, invariant

#: how many of the keys left behind a message names
SHOWN = 3


def _namespace_of(obj: Any) -> str:
    return getattr(getattr(obj, "metadata", None), "namespace", "") or ""


def _left(keys: dict[str, int]) -> str:
    names = sorted(keys)
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


@invariant("namespace-content-removed", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes("/registry/"),))
def namespace_content_removed(cluster: Any, memo: dict) -> Iterator[str]:
    """No namespace is removed from the store while objects of a namespaced resource, built-in or custom, still
    live in it, and none is created while objects of an earlier namespace of that name still do.

    Deleting a namespace only marks it: the namespace controller deletes every namespaced resource discovery
    lists (the custom resources of Established CRDs included) and only then removes the `kubernetes` finalizer,
    whereupon the API server removes the namespace; NamespaceLifecycle admission refuses new content meanwhile.
    An object that outlives its namespace comes back with the next namespace of that name."""
    bad: list = memo.setdefault("bad", [])
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, ("/registry/",))
    content: dict[str, dict[str, int]] = memo.setdefault("content", {})  # namespace -> {key: revision created}
    for ch in feed.read(cluster.store):
        if ch.key.startswith(NAMESPACES):
            name = name_of(ch.key)
            left = content.get(name)
            if ch.value is None and left:
                bad.append(f"revision {ch.rev} removed namespace {name} while {len(left)} object(s) still live in "
                           f"it: {_left(left)}")
            elif ch.prev is None and ch.value is not None and left:
                bad.append(f"revision {ch.rev} created namespace {name} while {len(left)} object(s) of an earlier "
                           f"namespace {name} still live in it: {_left(left)}")
            continue
        if ch.value is None:
            namespace = _namespace_of(ch.prev)
            if namespace:
                keys = content.get(namespace)
                if keys is not None:
                    keys.pop(ch.key, None)
        elif ch.prev is None:
            namespace = _namespace_of(ch.value)
            if namespace:
                content.setdefault(namespace, {})[ch.key] = ch.rev
    yield from bad
