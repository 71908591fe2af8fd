"""The garbage collector (pkg/controller/garbagecollector), simplified, as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/garbagecollector", service account generic-garbage-collector. Upstream keeps a graph of every
object's ownerReferences (GraphBuilder) fed by informers on every resource, and runs attemptToDelete on a
dependent when one of its owners is gone. The model keeps the same decisions with the same monitors: an
informer on every resource the API can list, watch and delete, but events (upstream's DefaultIgnoredResources),
owners and dependents alike, each indexed by owner uid, and `observed`: the uids the caches hold now (upstream's
graph nodes). Upstream's monitors are metadata-only informers; the model's share the controller manager's
informers of full objects, whose metadata is the same.

Triggers (the work queue holds `Item(resource, namespace, name, uid)` of dependents):

* an object is deleted (or vanishes in a relist) → each cached dependent that names its uid as an owner;
* an object is added or updated with an owner whose uid the caches do not hold (upstream: a "virtual"
  owner node, which it verifies) → that object.

`sync(item)` is attemptToDeleteItem:

1. the dependent gone from the cache (or a different uid) → nothing; being deleted → nothing, unless it is
   deleting its dependents (deletionTimestamp and the `foregroundDeletion` finalizer: step 5);
2. if every owner is in the caches and none of them is deleting its dependents, the owners exist as far as
   the GC knows: nothing (a later deletion event will bring the dependent back);
3. otherwise a live GET of the dependent (gone or re-created with another uid → nothing), then a live GET
   of every owner the `absent` cache does not already know to be gone (upstream's isDangling with its
   absentOwnerCache): 404 or another uid → dangling; found being deleted with `foregroundDeletion` →
   waiting for its dependents; found otherwise → solid. The GC never deletes on the word of its own cache:
   an owner the cache has not seen yet is found by the GET, and the dependent stays;
4. some owners solid → a merge patch keeping only the solid ones (with the dependent's resourceVersion as
   precondition) when others are dangling or waiting; none solid and some waiting, with dependents of its
   own → DELETE it with propagationPolicy Foreground (its blocking dependents go first; first unblocking its
   own ownerReferences when one of its dependents is itself deleting dependents: upstream's circle
   detection); otherwise → DELETE it with the policy its finalizers ask for (orphan → Orphan,
   foregroundDeletion → Foreground, neither → Background, the kubectl default: its own dependents are
   collected when their turn comes). An error fails the sync and it is retried with the rate limiter;
5. an owner deleting its dependents (processDeletingDependentsItem): after a live GET, if no dependent in the
   caches names it with blockOwnerDeletion, the `foregroundDeletion` finalizer is removed (a merge patch with
   its resourceVersion; the API server then removes the owner, its last finalizer gone); else each blocking
   dependent not itself deleting dependents is queued.

`sync(Orphan(owner))` is attemptToOrphanWorker: an owner being deleted with the `orphan` finalizer has its
ownerReference removed from every dependent in the caches (a merge patch of the dependent's remaining
ownerReferences with its cached resourceVersion as precondition: a stale cache gets 409 and the sync is
retried), then the `orphan` finalizer removed from the owner.

The graph builder's transitions (processTransitions, addUnblockedOwnersToDeleteQueue): an object that starts
being deleted with `orphan` queues Orphan(it); with `foregroundDeletion`, every dependent and itself. A
dependent deleted, or one that drops a blocking ownerReference (or its blockOwnerDeletion), queues each of
those owners that is deleting its dependents (upstream queues such an owner whatever its state; one not
deleting its dependents has nothing to do then).

Kubernetes 1.28-1.32 (pkg/controller/garbagecollector: garbagecollector.go, graph_builder.go).

Custom resources: the GC watches CustomResourceDefinitions and, as soon as one is Established, starts a monitor
(informer) for the resource it declares, so custom objects are owners and dependents like the built-in kinds.
Upstream's GarbageCollector.Sync re-reads discovery every 30 s and starts monitors for new resources: the model
learns of them at once instead (a periodic timer would add a due time every 30 s to every run). A resource whose
CRD is gone is no longer monitored, at once too: its cached objects are taken for deleted and the kind stays
mapped, so their dependents are collected as upstream's are within its 30 s (`_undiscovered`).
`custom_resources=False` (ClusterConfig.gc_monitors_custom_resources) runs the GC without any of this, as traces
recorded before the model served CRDs did; `every_resource=False` (ClusterConfig.gc_monitors_every_resource)
monitors only deployments, replicasets, statefulsets and pods (`WORKLOADS`), as traces recorded before the GC
monitored every resource did.

Not modelled: the delete's UID precondition (the GET just before stands in for it).
"""

from __future__ import annotations

from typing import Any, Hashable, Optional, Sequence

import attrs

from kmodel.apiserver.bootstrap_policy import events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.deletion import BACKGROUND, FOREGROUND, FOREGROUND_FINALIZER, ORPHAN, ORPHAN_FINALIZER
from kmodel.apiserver.resources import RESOURCES
from kmodel.client import OWNER_UID_INDEX, index_by_owner_uid
from kmodel.client.indexer import DeletedFinalStateUnknown
from kmodel.component import Out
from kmodel.objects import dump_struct

from .base import Controller, Sync

NAME = "controller/garbagecollector"
#: what the GC monitored before it monitored every resource (`monitored(every_resource=False)`)
WORKLOADS = ("deployments", "replicasets", "statefulsets", "pods")
#: built-in resources the GC never monitors: upstream's DefaultIgnoredResources (events, which nothing owns and
#: which are the most written kind), and bindings, which the API can only create (no list, watch or delete)
UNMONITORED = ("bindings", "events")


def monitored(every_resource: bool = True) -> tuple[str, ...]:
    """The built-in resources the GC monitors from its start, owners and dependents alike, in name order (custom
    resources join as their CRDs are established): every one the API can list, watch and delete but events,
    as upstream's GraphBuilder monitors every deletable resource discovery lists; `every_resource=False`, only
    `WORKLOADS` (ClusterConfig.gc_monitors_every_resource)."""
    if not every_resource:
        return WORKLOADS
    return tuple(sorted(name for name in RESOURCES if name not in UNMONITORED))



@attrs.frozen
class Item:
    """A dependent to look at (upstream's objectReference of a graph node)."""

    resource: str
    namespace: str
    name: str
    uid: str


@attrs.frozen
class Orphan:
    """An owner being deleted with the `orphan` finalizer (upstream's attemptToOrphan queue)."""

    resource: str
    namespace: str
    name: str
    uid: str


def deleting_dependents(obj: Any) -> bool:
    """Being deleted in the foreground: deletionTimestamp set and the `foregroundDeletion` finalizer."""
    m = obj.metadata
    return m.deletion_timestamp is not None and FOREGROUND_FINALIZER in m.finalizers


def _starts_deletion_with(old: Any, cur: Any, finalizer: str) -> bool:
    """deletionStartsWithFinalizer: `cur` is being deleted with `finalizer` and `old` (None for an add) was not."""
    m = cur.metadata
    if m.deletion_timestamp is None or finalizer not in m.finalizers:
        return False
    return old is None or old.metadata.deletion_timestamp is None or finalizer not in old.metadata.finalizers


def owner_resource(api_version: str, kind: str) -> Any:
    """The Resource an ownerReference's apiVersion/kind names (None if the API does not know it)."""
    for res in RESOURCES.values():
        if res.api_version == api_version and res.kind == kind:
            return res
    return None


class GarbageCollector(Controller):
    """See the module docstring."""

    service_account = "generic-garbage-collector"

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, custom_resources: bool = True,
                 every_resource: bool = True) -> None:
        #: watch CRDs and monitor the custom resources they declare (ClusterConfig.gc_monitors_custom_resources)
        self.custom_resources = custom_resources
        #: the built-in resources monitored from the start (ClusterConfig.gc_monitors_every_resource)
        self.builtin = monitored(every_resource)
        super().__init__(name, endpoints)

    def _init_memory(self) -> None:
        self.observed: dict[str, str] = {}   # uid -> resource, for every object the caches hold
        self.absent: set[str] = set()         # owner uids verified gone (absentOwnerCache); only tested
        super()._init_memory()

    def setup(self) -> None:
        self.caches: dict[str, Any] = {}
        #: custom resources discovered: (apiVersion, kind) -> their Resource-like facts (name, namespaced)
        self.custom: dict[tuple[str, str], Any] = {}
        for resource in self.builtin:
            self._monitor(resource)
        if not self.custom_resources:
            return
        self.informer("customresourcedefinitions", on_add=lambda now, crd, out: self._discovered(now, crd, out),
                      on_update=lambda now, old, crd, out: self._discovered(now, crd, out),
                      on_delete=lambda now, crd, out: self._undiscovered(getattr(crd, "obj", crd)))

    def _monitor(self, resource: str) -> Any:
        inf = self.caches[resource] = self.informer(
            resource, indexers={OWNER_UID_INDEX: index_by_owner_uid},
            on_add=self._on_add(resource), on_update=self._on_update(resource),
            on_delete=self._on_delete(resource))
        return inf

    # -- discovery of custom resources -------------------------------------------------------------------

    def _discovered(self, now: int, crd: Any, out: Out) -> None:
        """A CRD seen Established: monitor its resource from now on."""
        if not crd.status.is_true("Established"):
            return
        res = _CustomResource.of(crd)
        self.custom[(res.api_version, res.kind)] = res
        if res.name not in self.caches:
            monitor = self._monitor(res.name)
            if self.informer_factory.client.owner == self.name:  # its own factory (built outside a cluster)
                monitor.start(now, out)  # its CRD informer has started: so has the GC
            # else the process's shared informers start it once this handler returns (kmodel.client.shared_informer)

    def _undiscovered(self, crd: Any) -> None:
        """A CRD gone: stop monitoring its resource, as the graph builder's syncMonitors removes the monitors of
        resources discovery no longer lists. Its informer can no longer list, and a cache that never syncs would
        keep the GC from working at all (it works only once every cache it uses has synced).

        The API server removes a CRD only once every object of its kind is deleted, and upstream's monitor, which
        lives until the next discovery sync (up to 30 s), sees those deletes. The model drops the monitor at
        once, so it first takes every object its cache still holds for deleted (the delete events may still be
        on their way), queueing their dependents; and it keeps the kind's mapping, so that those dependents'
        owners are looked up (a GET: 404) and found gone. Upstream's RESTMapper forgets the kind at that next
        discovery sync, after which a dependent of such an owner is retried until the kind is served again."""
        names = crd.status.accepted_names
        monitor = self.caches.pop(names.plural, None) if names.plural not in self.builtin else None
        if monitor is None:
            return
        for obj in monitor.list():
            self._gone(obj)
        self.informers.remove(monitor)
        monitor.remove_listeners(self.name)

    def owner_resource(self, api_version: str, kind: str) -> Any:
        """The resource an ownerReference names: a built-in one, or a custom one discovered (None: unknown)."""
        res = owner_resource(api_version, kind)
        if res is None:
            group = api_version.rpartition("/")[0]
            for (av, k), custom in self.custom.items():
                if k == kind and av.rpartition("/")[0] == group:
                    return custom  # any version of the group: objects are stored at one version
        return res

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
            self._transitions(resource, None, obj)
        return handler

    def _on_update(self, resource: str) -> Any:
        def handler(now: int, old: Any, cur: Any, out: Out) -> None:
            if old.metadata.uid != cur.metadata.uid:
                self._gone(old)
                old = None
            self.observed[cur.metadata.uid] = resource
            if old is None or cur.metadata.owner_references != old.metadata.owner_references:
                self._check_owners(resource, cur)
                if old is not None:
                    self._unblocked_owners(old, cur)
            self._transitions(resource, old, cur)
        return handler

    def _on_delete(self, resource: str) -> Any:
        def handler(now: int, obj: Any, out: Out) -> None:
            obj = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            self._gone(obj)
            for ref in obj.metadata.owner_references:  # an owner waiting for its dependents looks again
                self._queue_if_deleting_dependents(obj.metadata.namespace, ref)
        return handler

    def _gone(self, obj: Any) -> None:
        uid = obj.metadata.uid
        self.observed.pop(uid, None)
        for resource, dep in self._dependents(uid):
            self.queue.add(self._item(resource, dep))

    def _dependents(self, uid: str) -> list[tuple[str, Any]]:
        """(resource, object) of every cached object that names `uid` as an owner."""
        return [(resource, dep) for resource in self.caches
                for dep in self.caches[resource].by_index(OWNER_UID_INDEX, uid)]

    def _cached_owner(self, namespace: str, ref: Any) -> Any:
        """The owner an ownerReference names, as the caches hold it (None if they do not, or hold another uid)."""
        res = self.owner_resource(ref.api_version, ref.kind)
        if res is None or res.name not in self.caches:
            return None
        owner = self.caches[res.name].get(namespace if res.namespaced else "", ref.name)
        return owner if owner is not None and owner.metadata.uid == ref.uid else None

    def _queue_if_deleting_dependents(self, namespace: str, ref: Any) -> None:
        owner = self._cached_owner(namespace, ref)
        if owner is not None and deleting_dependents(owner):
            self.queue.add(self._item(self.owner_resource(ref.api_version, ref.kind).name, owner))

    def _transitions(self, resource: str, old: Any, cur: Any) -> None:
        """processTransitions: an object that starts being deleted with the orphan finalizer is queued to orphan
        its dependents; with foregroundDeletion, its dependents and itself are queued for attemptToDelete."""
        if _starts_deletion_with(old, cur, ORPHAN_FINALIZER):
            m = cur.metadata
            self.queue.add(Orphan(resource, m.namespace, m.name, m.uid))
        elif _starts_deletion_with(old, cur, FOREGROUND_FINALIZER):
            for dep_resource, dep in self._dependents(cur.metadata.uid):
                self.queue.add(self._item(dep_resource, dep))
            self.queue.add(self._item(resource, cur))

    def _unblocked_owners(self, old: Any, cur: Any) -> None:
        """addUnblockedOwnersToDeleteQueue: an ownerReference with blockOwnerDeletion removed, or its
        blockOwnerDeletion turned off, lets that owner (if deleting its dependents) look again."""
        now_refs = {r.uid: r for r in cur.metadata.owner_references}
        for ref in old.metadata.owner_references:
            if not ref.block_owner_deletion:
                continue
            new_ref = now_refs.get(ref.uid)
            if new_ref is None or not new_ref.block_owner_deletion:
                self._queue_if_deleting_dependents(cur.metadata.namespace, ref)

    # -- attemptToDeleteItem -----------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        if isinstance(key, Orphan):
            self._orphan(key, sync, now, out)
            return
        item: Item = key  # type: ignore[assignment]
        cached = self.caches[item.resource].get(item.namespace, item.name)
        if cached is None or cached.metadata.uid != item.uid:
            return
        if cached.metadata.deletion_timestamp is not None:
            if deleting_dependents(cached):
                self._deleting_dependents(item, sync, now, out)
            return
        if all(ref.uid in self.observed and not self._waits_for_dependents(item.namespace, ref)
               for ref in cached.metadata.owner_references):
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

    def _waits_for_dependents(self, namespace: str, ref: Any) -> bool:
        owner = self._cached_owner(namespace, ref)
        return owner is not None and deleting_dependents(owner)

    def _classify(self, item: Item, latest: Any, sync: Sync, now: int, out: Out) -> None:
        refs = latest.metadata.owner_references
        verdict: dict[str, str] = {}  # uid -> "solid" | "dangling" | "waiting"
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
            if solid:
                if len(solid) < len(refs):  # dangling owners, or owners waiting for their dependents
                    patch = {"metadata": {"resourceVersion": latest.metadata.resource_version,
                                          "ownerReferences": [dump_struct(r) for r in solid]}}
                    sync.patch(t, o, item.resource, item.name, patch, namespace=item.namespace,
                               on_done=lambda t2, r2, o2: True if r2.code == 404 else None)
                return
            waiting = any(verdict[r.uid] == "waiting" for r in refs)
            if waiting and self._dependents(item.uid):
                if any(deleting_dependents(dep) for _, dep in self._dependents(item.uid)):
                    self._unblock_then_delete(item, latest, sync, t, o)
                else:
                    self._delete(item, FOREGROUND, sync, t, o)
                return
            finalizers = latest.metadata.finalizers
            policy = ORPHAN if ORPHAN_FINALIZER in finalizers else (
                FOREGROUND if FOREGROUND_FINALIZER in finalizers else BACKGROUND)
            self._delete(item, policy, sync, t, o)

        if not to_check:
            decided(now, out)
            return
        for ref in to_check:
            res = self.owner_resource(ref.api_version, ref.kind)
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
                    verdict[ref.uid] = "waiting" if deleting_dependents(response.body) else "solid"
                else:
                    verdict[ref.uid] = None  # type: ignore[assignment]
                pending[0] -= 1
                if pending[0] == 0:
                    decided(t, o)
                return True

            sync.request(now, out, "get", res.name, namespace=item.namespace if res.namespaced else "",
                         name=ref.name, on_done=got_owner)


    def _delete(self, item: Item, policy: str, sync: Sync, now: int, out: Out) -> None:
        sync.request(now, out, "delete", item.resource, namespace=item.namespace, name=item.name,
                     propagation_policy=policy, on_done=lambda t, r, o: True if r.code == 404 else None)

    def _unblock_then_delete(self, item: Item, latest: Any, sync: Sync, now: int, out: Out) -> None:
        """A dependent of this item is itself deleting its dependents (maybe a circle): unblock this item's own
        ownerReferences first (blockOwnerDeletion false), then delete it in the foreground."""
        refs = [dump_struct(attrs.evolve(r, block_owner_deletion=False) if r.block_owner_deletion else r)
                for r in latest.metadata.owner_references]
        patch = {"metadata": {"resourceVersion": latest.metadata.resource_version, "ownerReferences": refs}}

        def unblocked(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.ok:
                self._delete(item, FOREGROUND, sync, t, o)
                return True
            return True if response.code == 404 else None

        sync.patch(now, out, item.resource, item.name, patch, namespace=item.namespace, on_done=unblocked)

    # -- processDeletingDependentsItem -------------------------------------------------------------------

    def _deleting_dependents(self, item: Item, sync: Sync, now: int, out: Out) -> None:
        def got_owner(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.code == 404:
                return True
            if not response.ok:
                return None
            latest = response.body
            if latest.metadata.uid != item.uid or not deleting_dependents(latest):
                return True
            blocking = [(resource, dep) for resource, dep in self._dependents(item.uid)
                        if any(r.uid == item.uid and r.block_owner_deletion for r in dep.metadata.owner_references)]
            if not blocking:
                self._remove_finalizer(item.resource, item.namespace, item.name, latest, FOREGROUND_FINALIZER,
                                       sync, t, o)
            for resource, dep in blocking:
                if not deleting_dependents(dep):
                    self.queue.add(self._item(resource, dep))
            return True

        sync.request(now, out, "get", item.resource, namespace=item.namespace, name=item.name, on_done=got_owner)

    def _remove_finalizer(self, resource: str, namespace: str, name: str, latest: Any, finalizer: str, sync: Sync,
                          now: int, out: Out) -> None:
        """removeFinalizer: a merge patch of the owner's finalizers without `finalizer`, on its resourceVersion
        (a conflict fails the sync, which is retried)."""
        m = latest.metadata
        if finalizer not in m.finalizers:
            return
        patch = {"metadata": {"resourceVersion": m.resource_version,
                              "finalizers": [f for f in m.finalizers if f != finalizer]}}
        sync.patch(now, out, resource, name, patch, namespace=namespace,
                   on_done=lambda t, r, o: True if r.code == 404 else None)

    # -- attemptToOrphanWorker ---------------------------------------------------------------------------

    def _orphan(self, owner: Orphan, sync: Sync, now: int, out: Out) -> None:
        dependents = self._dependents(owner.uid)
        pending = [len(dependents)]
        failed = [False]

        def finalize(t: int, o: Out) -> None:
            def got_owner(t2: int, response: Any, o2: Out) -> Optional[bool]:
                if response.code == 404:
                    return True
                if not response.ok:
                    return None
                if response.body.metadata.uid == owner.uid:
                    self._remove_finalizer(owner.resource, owner.namespace, owner.name, response.body,
                                           ORPHAN_FINALIZER, sync, t2, o2)
                return True

            sync.request(t, o, "get", owner.resource, namespace=owner.namespace, name=owner.name, on_done=got_owner)

        def patched(t: int, response: Any, o: Out) -> Optional[bool]:
            handled = True if response.ok or response.code == 404 else None
            if handled is None:
                failed[0] = True
            pending[0] -= 1
            if pending[0] == 0 and not failed[0]:
                finalize(t, o)
            return handled

        if not dependents:
            finalize(now, out)
            return
        for resource, dep in dependents:
            m = dep.metadata
            refs = [dump_struct(r) for r in m.owner_references if r.uid != owner.uid]
            patch = {"metadata": {"resourceVersion": m.resource_version, "ownerReferences": refs}}
            sync.patch(now, out, resource, m.name, patch, namespace=m.namespace, on_done=patched)


@attrs.frozen
class _CustomResource:
    """What the GC needs of a discovered custom resource: its plural, apiVersion, kind and scope."""

    name: str
    api_version: str
    kind: str
    namespaced: bool

    @classmethod
    def of(cls, crd: Any) -> "_CustomResource":
        storage = crd.storage_version()
        names = crd.status.accepted_names
        return cls(names.plural, f"{crd.spec.group}/{storage.name if storage else ''}", names.kind,
                   crd.spec.scope == "Namespaced")


@controller("garbagecollector", service_account="generic-garbage-collector", default=True, rbac_rules=(
    rule(("get", "list", "watch", "patch", "update", "delete"), ("*",), ("*",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one garbage collector talking to the API servers in order."""
    return [GarbageCollector(ctx.apiservers, name=ctx.named(NAME),
                             custom_resources=ctx.config.gc_monitors_custom_resources,
                             every_resource=ctx.config.gc_monitors_every_resource)]
