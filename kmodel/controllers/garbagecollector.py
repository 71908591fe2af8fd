"""The garbage collector (pkg/controller/garbagecollector), simplified, as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/garbagecollector", service account generic-garbage-collector. Upstream keeps a graph of every
object's ownerReferences (GraphBuilder) fed by informers on every resource, and runs attemptToDelete on a
dependent when one of its owners is gone. The model keeps the same decisions over the kinds the
workload controllers use: informers on deployments, replicasets and pods (owners and dependents), each
indexed by owner uid, and `observed`: the uids the caches hold now (upstream's graph nodes).

Triggers (the work queue holds `Item(resource, namespace, name, uid)` of dependents):

* an object is deleted (or vanishes in a relist) → each cached dependent that names its uid as an owner;
* an object is added or updated with an owner whose uid the caches do not hold (upstream: a "virtual"
  owner node, which it verifies) → that object.

`sync(item)` is attemptToDeleteItem:

1. the dependent gone from the cache (or a different uid), or being deleted → nothing;
2. if every owner is in the caches, the owners exist as far as the GC knows: nothing (a later deletion
   event will bring the dependent back);
3. otherwise a live GET of the dependent (gone or re-created with another uid → nothing), then a live GET
   of every owner the `absent` cache does not already know to be gone (upstream's isDangling with its
   absentOwnerCache): 404 or another uid → dangling; found → solid. The GC never deletes on the word of its
   own cache: an owner the cache has not seen yet is found by the GET, and the dependent stays;
4. some owners solid and some dangling → a merge patch keeping only the solid ones (with the dependent's
   resourceVersion as precondition); all dangling → DELETE the dependent (background propagation, the
   kubectl default: its own dependents are collected when their turn comes). An error fails the sync and it
   is retried with the rate limiter.

Not modelled: foreground deletion (the foregroundDeletion finalizer and blockOwnerDeletion), orphan
propagation (the orphan finalizer), owners of kinds the GC does not watch being deleted (a dependent of
such an owner is verified only when it is added or updated), the delete's UID precondition (the API server
model ignores DeleteOptions; the GET just before stands in for it).
"""

from __future__ import annotations

from typing import Any, Hashable, Optional, Sequence

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.client import OWNER_UID_INDEX, index_by_owner_uid
from kmodel.client.indexer import DeletedFinalStateUnknown
from kmodel.component import Out
from kmodel.objects import dump_struct

from .base import Controller, Sync

NAME = "controller/garbagecollector"
#: what the GC watches: owners and dependents alike
WATCHED = ("deployments", "replicasets", "pods")


@attrs.frozen
class Item:
    """A dependent to look at (upstream's objectReference of a graph node)."""

    resource: str
    namespace: str
    name: str
    uid: str


def owner_resource(api_version: str, kind: str) -> Any:
    """The Resource an ownerReference's apiVersion/kind names (None if the API does not know it)."""
    for res in RESOURCES.values():
        if res.api_version == api_version and res.kind == kind:
            return res
    return None


class GarbageCollector(Controller):
    """See the module docstring."""

    service_account = "generic-garbage-collector"

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME) -> None:
        super().__init__(name, endpoints)

    def _init_memory(self) -> None:
        self.observed: dict[str, str] = {}   # uid -> resource, for every object the caches hold
        self.absent: set[str] = set()         # owner uids verified gone (absentOwnerCache); only tested
        super()._init_memory()

    def setup(self) -> None:
        self.caches: dict[str, Any] = {}
        for resource in WATCHED:
            self.caches[resource] = self.informer(
                resource, indexers={OWNER_UID_INDEX: index_by_owner_uid},
                on_add=self._on_add(resource), on_update=self._on_update(resource),
                on_delete=self._on_delete(resource))

    # -- the graph builder's part ----------------------------------------------------------------------

    def _item(self, resource: str, obj: Any) -> Item:
        m = obj.metadata
        return Item(resource, m.namespace, m.name, m.uid)

    def _check_owners(self, resource: str, obj: Any) -> None:
        for ref in obj.metadata.owner_references:
            if ref.uid not in self.observed:
                self.queue.add(self._item(resource, obj))
                return

    def _on_add(self, resource: str) -> Any:
        def handler(now: int, obj: Any, out: Out) -> None:
            self.observed[obj.metadata.uid] = resource
            self._check_owners(resource, obj)
        return handler

    def _on_update(self, resource: str) -> Any:
        def handler(now: int, old: Any, cur: Any, out: Out) -> None:
            if old.metadata.uid != cur.metadata.uid:
                self._gone(old)
            self.observed[cur.metadata.uid] = resource
            if cur.metadata.owner_references != old.metadata.owner_references or old.metadata.uid != cur.metadata.uid:
                self._check_owners(resource, cur)
        return handler

    def _on_delete(self, resource: str) -> Any:
        def handler(now: int, obj: Any, out: Out) -> None:
            self._gone(obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj)
        return handler

    def _gone(self, obj: Any) -> None:
        uid = obj.metadata.uid
        self.observed.pop(uid, None)
        for resource in WATCHED:
            for dep in self.caches[resource].by_index(OWNER_UID_INDEX, uid):
                self.queue.add(self._item(resource, dep))

    # -- attemptToDeleteItem -----------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        item: Item = key  # type: ignore[assignment]
        cached = self.caches[item.resource].get(item.namespace, item.name)
        if cached is None or cached.metadata.uid != item.uid or cached.metadata.deletion_timestamp is not None:
            return
        if all(ref.uid in self.observed for ref in cached.metadata.owner_references):
            return

        def got_item(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.code == 404:
                return True
            if not response.ok:
                return None
            latest = response.body
            if latest.metadata.uid != item.uid or not latest.metadata.owner_references:
                return True
            if latest.metadata.deletion_timestamp is not None:
                return True
            self._classify(item, latest, sync, t, o)
            return True

        sync.request(now, out, "get", item.resource, namespace=item.namespace, name=item.name, on_done=got_item)

    def _classify(self, item: Item, latest: Any, sync: Sync, now: int, out: Out) -> None:
        refs = latest.metadata.owner_references
        verdict: dict[str, str] = {}  # uid -> "solid" | "dangling"
        to_check = []
        for ref in refs:
            if ref.uid in self.absent:
                verdict[ref.uid] = "dangling"
            else:
                to_check.append(ref)
        pending = [len(to_check)]

        def decided(t: int, o: Out) -> None:
            if any(v is None for v in verdict.values()):
                sync.fail()
                return
            solid = [r for r in refs if verdict[r.uid] == "solid"]
            dangling = [r for r in refs if verdict[r.uid] == "dangling"]
            if solid:
                if dangling:
                    patch = {"metadata": {"resourceVersion": latest.metadata.resource_version,
                                          "ownerReferences": [dump_struct(r) for r in solid]}}
                    sync.patch(t, o, item.resource, item.name, patch, namespace=item.namespace,
                               on_done=lambda t2, r2, o2: True if r2.code == 404 else None)
                return
            sync.delete(t, o, item.resource, item.name, namespace=item.namespace,
                        on_done=lambda t2, r2, o2: True if r2.code == 404 else None)

        if not to_check:
            decided(now, out)
            return
        for ref in to_check:
            res = owner_resource(ref.api_version, ref.kind)
            if res is None:
                verdict[ref.uid] = "solid"  # a kind the API does not know: never collect on a guess
                pending[0] -= 1
                if pending[0] == 0:
                    decided(now, out)
                continue

            def got_owner(t: int, response: Any, o: Out, ref: Any = ref) -> bool:
                if response.code == 404 or (response.ok and response.body.metadata.uid != ref.uid):
                    verdict[ref.uid] = "dangling"
                    self.absent.add(ref.uid)
                elif response.ok:
                    verdict[ref.uid] = "solid"
                else:
                    verdict[ref.uid] = None  # type: ignore[assignment]
                pending[0] -= 1
                if pending[0] == 0:
                    decided(t, o)
                return True

            sync.request(now, out, "get", res.name, namespace=item.namespace if res.namespaced else "",
                         name=ref.name, on_done=got_owner)


def make(ctx: Any) -> list:
    """The cluster factory: one garbage collector talking to the API servers in order."""
    return [GarbageCollector(ctx.apiservers)]
