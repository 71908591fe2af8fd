"""The informer's local cache: objects by "namespace/name" plus named indexes (client-go's cache.Indexer).

Theory of operation
-------------------
`items` maps each object's key (`meta_namespace_key`: "<namespace>/<name>", or "<name>" for cluster-scoped
objects) to the object itself. Objects are the frozen values the API server sent, shared with everyone
else who holds them: never copied, never to be mutated (they cannot be).

An index is a function object -> list of index values (client-go's IndexFunc); for each index name the
indexer keeps value -> {key: None} and updates it on every add, update and delete, so `by_index` costs the
size of the answer, not of the cache. Ready-made index functions: `index_by_namespace`,
`index_by_node_name` (pods by spec.nodeName) and `index_by_owner_uid` (anything by its owners' uids).

Orders are deterministic: `list()` follows insertion order, `by_index` and `keys()` sort by key.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import attrs

IndexFunc = Callable[[Any], Iterable[str]]

NAMESPACE_INDEX = "namespace"
NODE_NAME_INDEX = "spec.nodeName"
OWNER_UID_INDEX = "ownerUID"


def meta_namespace_key(obj: Any) -> str:
    """cache.MetaNamespaceKeyFunc."""
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def index_by_namespace(obj: Any) -> list[str]:
    return [obj.metadata.namespace]


def index_by_node_name(pod: Any) -> list[str]:
    node = pod.spec.node_name
    return [node] if node else []


def index_by_owner_uid(obj: Any) -> list[str]:
    return [ref.uid for ref in obj.metadata.owner_references]


@attrs.frozen
class DeletedFinalStateUnknown:
    """Handed to a delete handler when a relist finds an object gone whose deletion was never seen: the
    last state the informer knew (client-go's cache.DeletedFinalStateUnknown)."""

    key: str
    obj: Any


class Indexer:
    """Objects by key, and named indexes over them. See the module docstring."""

    def __init__(self, indexers: Optional[dict[str, IndexFunc]] = None) -> None:
        self.indexers: dict[str, IndexFunc] = dict(indexers or {})
        self.items: dict[str, Any] = {}
        self.indices: dict[str, dict[str, dict[str, None]]] = {name: {} for name in self.indexers}

    def __len__(self) -> int:
        return len(self.items)

    def get(self, namespace: str, name: str) -> Any:
        return self.items.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, key: str) -> Any:
        return self.items.get(key)

    def list(self) -> list:
        return list(self.items.values())

    def keys(self) -> list[str]:
        return sorted(self.items)

    def by_index(self, index: str, value: str) -> list:
        keys = self.indices[index].get(value)
        if not keys:
            return []
        items = self.items
        return [items[k] for k in sorted(keys)]

    def index_keys(self, index: str, value: str) -> list[str]:
        return sorted(self.indices[index].get(value, ()))

    def upsert(self, obj: Any) -> Any:
        """Add or replace `obj`; returns the object it replaced, or None."""
        key = meta_namespace_key(obj)
        old = self.items.get(key)
        self.items[key] = obj
        if self.indexers:
            self._reindex(key, old, obj)
        return old

    def delete_key(self, key: str) -> Any:
        """Remove the object under `key`; returns it, or None."""
        old = self.items.pop(key, None)
        if old is not None and self.indexers:
            self._reindex(key, old, None)
        return old

    def _reindex(self, key: str, old: Any, new: Any) -> None:
        for name, fn in self.indexers.items():
            before = fn(old) if old is not None else ()
            after = fn(new) if new is not None else ()
            if before == after:
                continue
            index = self.indices[name]
            for value in before:
                group = index.get(value)
                if group is not None:
                    group.pop(key, None)
                    if not group:
                        del index[value]
            for value in after:
                index.setdefault(value, {})[key] = None
