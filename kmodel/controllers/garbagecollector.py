"""The garbage collector (pkg/controller/garbagecollector), simplified, as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/garbagecollector", service account generic-garbage-collector. Upstream keeps a graph of every
object's ownerReferences (GraphBuilder) fed by informers on every resource, and runs attemptToDelete on a
dependent when one of its owners is gone. The model keeps the same decisions with the same monitors: an
informer on every resource the API can list, watch and delete, but events (upstream's DefaultIgnoredResources),
owners and dependents alike, each indexed by owner uid, and `observed`: the identity (apiVersion, kind,
namespace, name, uid: kmodel.controllers.gc_identity) of every object seen and not seen deleted, by uid
(upstream's observed graph nodes). Upstream's monitors are metadata-only informers; the model's share the
controller manager's informers of full objects, whose metadata is the same.

An owner is who its dependent's ownerReference says: the object of the reference's apiVersion and kind, in the
dependent's namespace (or cluster-scoped, for a cluster-scoped kind), of the reference's name, and with its
uid. A reference that names a uid at other coordinates is dangling, and its dependent is collected.

Triggers (the work queue holds `Item(resource, namespace, name, uid)` of dependents):

* an object seen deleted (or vanished in a relist) → each cached dependent that names its uid as an owner (and
  the identity it was seen by is known absent);
* an object added (or updated with an ownerReference it did not have) that names an owner not seen yet
  (upstream: a "virtual" owner node, which it verifies), or an owner seen at other coordinates → that object;
  an owner seen in another namespace (a namespaced one) also records the warning event OwnerRefInvalidNamespace
  on it (addDependentToOwners);
* an owner seen for the first time, after dependents that name it at other coordinates → those dependents, with
  the same event for those of another namespace (upstream's virtual node replaced by the observed one).

An object re-created under its name while a watch was down is seen after the relist as one update of a new uid:
the old uid stays `observed`, as upstream's graph keeps its node, so the old object's dependents are not queued
and stay until something else queues them or the GC restarts (upstream's behaviour: no delete event comes for
the old uid). The garbagecollector-forget-replaced-owner fix (kmodel.fixes, off by default; kmodel's sketch,
upstream has none) takes such an update as the old object's deletion and the new one's addition.

`sync(item)` is attemptToDeleteItem:

1. the dependent gone from the cache (or a different uid) → nothing; being deleted → nothing, unless it is
   deleting its dependents (deletionTimestamp and the `foregroundDeletion` finalizer: step 5);
2. if every owner is observed where its reference names it and none of them is deleting its dependents, the
   owners exist as far as the GC knows: nothing (a later deletion event will bring the dependent back);
3. otherwise a live GET of the dependent (gone or re-created with another uid → nothing), then classify its
   references (upstream's classifyReferences and isDangling, `_classify`): known absent → dangling; a kind
   the API does not serve at the reference's apiVersion → the sync fails, retried for ever; a namespaced
   owner of a cluster-scoped dependent → nothing, for good; else a live GET of the owner where the reference
   names it: 404 or another uid → dangling; found being deleted with `foregroundDeletion` → waiting for its
   dependents; found otherwise → solid. The GC never deletes on the word of its own cache: an owner the
   cache has not seen yet is found by the GET, and the dependent stays;
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
from kmodel.fixes import GARBAGECOLLECTOR_FORGET_REPLACED_OWNER

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .gc_identity import INVALID_NAMESPACE_REASON, Identity, invalid_namespace_message

NAME = "controller/garbagecollector"
#: the source of the events it records (NewDependencyGraphBuilder's recorder)
EVENT_SOURCE = "garbage-collector-controller"
#: what the GC monitored before it monitored every resource (`monitored(every_resource=False)`)
WORKLOADS = ("deployments", "replicasets", "statefulsets", "pods")
#: built-in resources the GC never monitors: upstream's DefaultIgnoredResources (events, which nothing owns and
#: which are the most written kind), and bindings, selfsubjectaccessreviews and selfsubjectreviews, which the API
#: can only create (no list, watch or delete)
UNMONITORED = ("bindings", "events", "selfsubjectaccessreviews", "selfsubjectreviews")


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
    event_source = EVENT_SOURCE

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES,
                 custom_resources: bool = True,
                 every_resource: bool = True, forget_replaced_owner: bool = False) -> None:
        #: the garbagecollector-forget-replaced-owner fix (kmodel.fixes): the one place that reads it is _on_update
        self.forget_replaced_owner = forget_replaced_owner
        #: watch CRDs and monitor the custom resources they declare (ClusterConfig.gc_monitors_custom_resources)
        self.custom_resources = custom_resources
        #: the built-in resources monitored from the start (ClusterConfig.gc_monitors_every_resource)
        self.builtin = monitored(every_resource)
        super().__init__(name, endpoints, switches)

    def _init_memory(self) -> None:
        #: uid -> identity of every object its monitors have seen and not seen deleted (upstream's observed graph
        #: nodes): an object re-created under its name and seen as an update after a relist leaves the old one
        self.observed: dict[str, Identity] = {}
        #: uid -> identity an owner not seen yet is known by (upstream's virtual node: the first dependent's
        #: reference and namespace), until it is seen or found gone
        self.virtual: dict[str, Identity] = {}
        #: identities of owners verified gone (upstream's absentOwnerCache, without its 500-entry LRU bound)
        self.absent: set[Identity] = set()
        super()._init_memory()

    def setup(self) -> None:
        self.caches: dict[str, Any] = {}
        #: what each monitored resource's objects are known by: resource -> (apiVersion, kind) of its monitor
        self.monitored_as: dict[str, tuple[str, str]] = {}
        #: custom resources discovered: (apiVersion, kind) of each served version -> their Resource-like facts
        self.custom: dict[tuple[str, str], Any] = {}
        for resource in self.builtin:
            self._monitor(resource, RESOURCES[resource].api_version, RESOURCES[resource].kind)
        if not self.custom_resources:
            return
        self.informer("customresourcedefinitions", on_add=lambda now, crd, out: self._discovered(now, crd, out),
                      on_update=lambda now, old, crd, out: self._discovered(now, crd, out),
                      on_delete=lambda now, crd, out: self._undiscovered(getattr(crd, "obj", crd)))

    def _monitor(self, resource: str, api_version: str, kind: str) -> Any:
        self.monitored_as[resource] = (api_version, kind)
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
        for api_version in res.served:
            self.custom[(api_version, res.kind)] = res
        if res.name not in self.caches:
            monitor = self._monitor(res.name, res.api_version, res.kind)
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
        """The resource an ownerReference names, as upstream's RESTMapper maps its kind at its exact version: a
        built-in one, or a served version of a custom one discovered (None: the API serves no such kind)."""
        return owner_resource(api_version, kind) or self.custom.get((api_version, kind))

    # -- the graph builder's part ----------------------------------------------------------------------

    def _item(self, resource: str, obj: Any) -> Item:
        m = obj.metadata
        return Item(resource, m.namespace, m.name, m.uid)

    def _identity(self, resource: str, obj: Any) -> Identity:
        """identityFromEvent: the object as its monitor sees it."""
        api_version, kind = self.monitored_as[resource]
        m = obj.metadata
        return Identity(api_version, kind, m.namespace, m.name, m.uid)

    def _add_dependent_to_owners(self, resource: str, obj: Any, refs: Sequence[Any], now: int, out: Out) -> None:
        """addDependentToOwners: an owner not seen yet gets a virtual node; an owner seen in another namespace
        (a namespaced one: a cluster-scoped owner may be named from anywhere) gets the OwnerRefInvalidNamespace
        warning on the dependent; an owner seen at other coordinates (name, kind, apiVersion) makes the reference
        suspect. Upstream checks no owner after the first suspect one. A dependent with a suspect reference is
        queued, and attemptToDelete looks its owners up where its references say.

        Upstream queues the virtual node itself (a GET of the owner where the reference says: found, nothing; gone,
        a virtual delete event that queues its dependents). The model queues the dependent instead, whose sync
        makes the same GET."""
        suspect = unseen = False
        m = obj.metadata
        for ref in refs:
            owner = self.observed.get(ref.uid)
            if owner is None:
                self.virtual.setdefault(ref.uid, Identity.of_reference(ref, m.namespace))
                unseen = True
            elif not suspect:
                if owner.namespace and owner.namespace != m.namespace:
                    self.event(now, out, obj, "Warning", INVALID_NAMESPACE_REASON,
                               invalid_namespace_message(ref, m.namespace))
                    suspect = True
                elif not owner.matches(ref):
                    suspect = True
        if suspect or unseen:
            self.queue.add(self._item(resource, obj))

    def _observe(self, resource: str, obj: Any, now: int, out: Out) -> None:
        """An object seen with a uid the graph has no observed node for: the node its dependents gave it (a
        virtual one) takes the identity seen, and each cached dependent whose reference does not match it is
        queued, with the OwnerRefInvalidNamespace warning when it lives in another namespace than a namespaced
        owner (processGraphChanges, "replacing virtual item with observed item")."""
        seen = self.observed[obj.metadata.uid] = self._identity(resource, obj)
        virtual = self.virtual.pop(seen.uid, None)
        if virtual is None or virtual == seen:
            return
        for dep_resource, dep in self._dependents(seen.uid):
            dm = dep.metadata
            if seen.namespace and dm.namespace != seen.namespace:
                ref = next(r for r in dm.owner_references if r.uid == seen.uid)
                self.event(now, out, dep, "Warning", INVALID_NAMESPACE_REASON,
                           invalid_namespace_message(ref, dm.namespace))
            elif all(seen.matches(r) for r in dm.owner_references if r.uid == seen.uid):
                continue
            self.queue.add(self._item(dep_resource, dep))

    def _on_add(self, resource: str) -> Any:
        def handler(now: int, obj: Any, out: Out) -> None:
            if obj.metadata.uid not in self.observed:
                self._observe(resource, obj, now, out)
            self._add_dependent_to_owners(resource, obj, obj.metadata.owner_references, now, out)
            self._transitions(resource, None, obj)
        return handler

    def _on_update(self, resource: str) -> Any:
        def handler(now: int, old: Any, cur: Any, out: Out) -> None:
            refs = cur.metadata.owner_references
            if self.forget_replaced_owner and old.metadata.uid != cur.metadata.uid:
                self._gone(old)  # the fix: the old object is gone, whatever a relist made of it
            if cur.metadata.uid not in self.observed:
                # a uid the graph has no node for: a new node, as for an add. An update whose old object has
                # another uid (re-created under its name while the watch was down, seen as one update after the
                # relist) leaves the old uid's node in the graph: its dependents are not queued, and stay until
                # some other event queues them or the GC restarts (upstream's behaviour)
                self._observe(resource, cur, now, out)
                self._add_dependent_to_owners(resource, cur, refs, now, out)
            elif refs != old.metadata.owner_references:
                before = {r.uid for r in old.metadata.owner_references}
                self._add_dependent_to_owners(resource, cur, [r for r in refs if r.uid not in before], now, out)
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
        """An object seen deleted: its node goes, the identity it was seen by is known absent if it had
        dependents, and they are queued."""
        uid = obj.metadata.uid
        seen = self.observed.pop(uid, None)
        dependents = self._dependents(uid)
        if seen is not None and dependents:
            self.absent.add(seen)
        for resource, dep in dependents:
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
        if all(self._seen_where_named(item.namespace, ref) and not self._waits_for_dependents(item.namespace, ref)
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

    def _seen_where_named(self, namespace: str, ref: Any) -> bool:
        """The graph has an observed node for the reference's uid, at its coordinates, in the dependent's
        `namespace` or cluster-scoped: an owner that exists as far as the GC knows (its deletion will queue the
        dependent again). Anything else is looked up where the reference says."""
        owner = self.observed.get(ref.uid)
        return owner is not None and owner.matches(ref) and owner.namespace in ("", namespace)

    def _known_absent(self, namespace: str, ref: Any) -> bool:
        """isDangling's absentOwnerCache look-up: the reference's coordinates verified gone cluster-wide, or in the
        dependent's `namespace`."""
        return (Identity.of_reference(ref, "") in self.absent
                or Identity.of_reference(ref, namespace) in self.absent)

    def _waits_for_dependents(self, namespace: str, ref: Any) -> bool:
        owner = self._cached_owner(namespace, ref)
        return owner is not None and deleting_dependents(owner)

    def _classify(self, item: Item, latest: Any, sync: Sync, now: int, out: Out) -> None:
        """classifyReferences with isDangling, then attemptToDeleteItem's decision (see the module docstring).

        Each reference in order: known absent → dangling; its kind not mapped at its apiVersion (a kind the API
        does not serve) → the sync fails and is retried with the rate limiter, for ever (upstream's
        restMappingError: it cannot tell an unknown kind from one discovery will list later); a namespaced owner
        of a cluster-scoped dependent → nothing, and the item is forgotten (namespacedOwnerOfClusterScopedObjectErr:
        such a reference never resolves, so the dependent is never collected); else a GET of the owner in the
        dependent's namespace (or cluster-wide for a cluster-scoped kind) by the reference's name: 404 or another
        uid → dangling, known absent from now on. Upstream classifies the references one after another and stops
        at the first error; the model GETs the owners before that one at once, and decides when all have
        answered."""
        refs = latest.metadata.owner_references
        verdict: dict[str, Optional[str]] = {}  # uid -> "solid" | "dangling" | "waiting" | None (a failed GET)
        to_check: list[tuple[Any, Any]] = []
        stop = ""  # "retry" | "forget": a reference that ends the classification
        for ref in refs:
            if self._known_absent(item.namespace, ref):
                verdict[ref.uid] = "dangling"
                continue
            res = self.owner_resource(ref.api_version, ref.kind)
            if res is None:
                stop = "retry"
                break
            if res.namespaced and not item.namespace:
                stop = "forget"
                break
            to_check.append((ref, res))
        pending = [len(to_check)]

        def decided(t: int, o: Out) -> None:
            if stop == "retry" or any(v is None for v in verdict.values()):
                sync.fail()
                return
            if stop == "forget":
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
        for ref, res in to_check:
            namespace = item.namespace if res.namespaced else ""

            def got_owner(t: int, response: Any, o: Out, ref: Any = ref, namespace: str = namespace) -> bool:
                if response.code == 404 or (response.ok and response.body.metadata.uid != ref.uid):
                    verdict[ref.uid] = "dangling"
                    self.absent.add(Identity.of_reference(ref, namespace))
                    self.virtual.pop(ref.uid, None)  # upstream's virtual delete event removes the virtual node
                elif response.ok:
                    verdict[ref.uid] = "waiting" if deleting_dependents(response.body) else "solid"
                else:
                    verdict[ref.uid] = None
                pending[0] -= 1
                if pending[0] == 0:
                    decided(t, o)
                return True

            sync.request(now, out, "get", res.name, namespace=namespace, name=ref.name, on_done=got_owner)

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
    """What the GC needs of a discovered custom resource: its plural, apiVersion (the storage version's), kind,
    scope, and the apiVersions of its served versions (what the RESTMapper maps the kind at)."""

    name: str
    api_version: str
    kind: str
    namespaced: bool
    served: tuple[str, ...]

    @classmethod
    def of(cls, crd: Any) -> "_CustomResource":
        storage = crd.storage_version()
        names = crd.status.accepted_names
        group = crd.spec.group
        return cls(names.plural, f"{group}/{storage.name if storage else ''}", names.kind,
                   crd.spec.scope == "Namespaced", tuple(f"{group}/{v.name}" for v in crd.spec.versions if v.served))


@controller("garbagecollector", service_account="generic-garbage-collector", default=True, rbac_rules=(
    rule(("get", "list", "watch", "patch", "update", "delete"), ("*",), ("*",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one garbage collector talking to the API servers in order."""
    return [GarbageCollector(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                             custom_resources=ctx.config.gc_monitors_custom_resources,
                             every_resource=ctx.config.gc_monitors_every_resource,
                             forget_replaced_owner=GARBAGECOLLECTOR_FORGET_REPLACED_OWNER in ctx.config.fixes)]
