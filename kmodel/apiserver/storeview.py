"""Reads of the store's current state that do not go on the store's request history.

kube-apiserver's authorizers and admission plugins (RBAC, NamespaceLifecycle, PodSecurity) read from the
API server's own informer caches, not from etcd: those reads are not etcd requests. The model reads the
store's current state instead (as if those caches were never behind) without recording a Range in
`Store.history`, so a rejected request leaves the store's history exactly as it was.

The store has no public non-recording read yet, so this module reaches into its keyspace; it is the only
place that does (if `Store` grows a `peek`, switch here). The functions take a `Store` or an etcd handle:
a handle carries the keyspace of its store as its own `_keys` (kmodel/apiserver/etcd_endpoint.py), so these
reads do not go through the handle's attribute forwarding.
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.store import KeyValue, Store, prefix_end


def backing_store(store: Any) -> Store:
    """The `Store` itself behind `store`: the store, or an etcd handle's store (reads of its revision, which
    are not etcd requests, skip the handle's forwarding)."""
    return store if isinstance(store, Store) else store.store


def current(store: Store, key: str) -> Optional[KeyValue]:
    """The live KeyValue of `key`, or None."""
    return store._keys.latest.get(key)  # noqa: SLF001 (see the module docstring)


def current_value(store: Store, key: str) -> Any:
    kv = store._keys.latest.get(key)  # noqa: SLF001
    return None if kv is None else kv.value


def current_prefix(store: Store, prefix: str) -> list[KeyValue]:
    """The live KeyValues under `prefix`, in key order."""
    return store._keys.current(prefix, prefix_end(prefix))[0]  # noqa: SLF001
