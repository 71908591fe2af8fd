"""Reads of the store's current state that do not go on the store's request history.

kube-apiserver's authorizers and admission plugins (RBAC, NamespaceLifecycle, PodSecurity) read from the
API server's own informer caches, not from etcd: those reads are not etcd requests. The model reads the
store's current state instead (as if those caches were never behind) without recording a Range in
`Store.history`, so a rejected request leaves the store's history exactly as it was.

These are `Store.peek`, the store's read that is not a request. The functions take a `Store` or an etcd
handle (kmodel/apiserver/etcd_endpoint.py), which has the store's `peek` as its own.
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
    kvs = store.peek(key)
    return kvs[0] if kvs else None


def current_value(store: Store, key: str) -> Any:
    kvs = store.peek(key)
    return kvs[0].value if kvs else None


def current_prefix(store: Store, prefix: str) -> list[KeyValue]:
    """The live KeyValues under `prefix`, in key order."""
    return store.peek(prefix, prefix_end(prefix))
