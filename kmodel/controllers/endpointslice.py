"""The EndpointSlice controller (pkg/controller/endpointslice/endpointslice_controller.go, release-1.31).

Theory of operation
-------------------
Informers on services, pods, nodes and endpointslices; the work queue holds Service keys ("ns/name").

* A Service added, updated or deleted enqueues its key.
* A pod enqueues the Services selecting it, as the Endpoints controller's handlers do (the shared
  GetPodServiceMemberships and GetServicesToUpdateOnPodChange, kmodel/controllers/endpoints.py).
* A slice managed by this controller (endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io)
  enqueues its Service (kubernetes.io/service-name) one second later (endpointSliceChangeMinSyncDelay) when the
  tracker says the change is not the controller's own write (`EndpointSliceTracker.should_sync`): added or
  updated by someone else, its managed-by label changed, its service-name label changed (both Services), or
  deleted when the controller did not delete it.
* Nodes are only looked up (a pod's node must be in the cache for its endpoint; its zone label is copied).

syncService(key), level-driven from the caches (the base class waits until all four informers have synced):
Service gone -> forget it in the tracker, nothing else (its slices go with it through their owner reference and
the garbage collector); ExternalName or no selector -> nothing; else the managed slices of the Service not being
deleted, and, if the tracker finds the cache behind the controller's own writes, the sync fails ("EndpointSlice
informer cache is out of date") and is retried; else the reconcile (kmodel/controllers/endpointslice_logic.py)
and its writes, one after another as upstream's finalize sends them: creates, then updates, then deletes, each
address type's writes stopping at the first failure. Each successful create or update records the written
slice's generation in the tracker, each delete the expected deletion (a 404 is fine and records nothing); a
create refused because the namespace is being terminated ends that address type's writes quietly. Any error
records a Warning event FailedToUpdateEndpointSlices ("Error updating Endpoint Slices for Service ns/name: ...")
and the key is retried with the rate limiter: 1 s x 2^n up to 1000 s, dropped after maxRetries (15) failures in
a row ("Retry budget exceeded, dropping service out of the queue"), until an event on the Service, its pods or
its slices queues it again.

Fixes (kmodel.fixes), off by default: endpointslice-compare-placeholder-owners keeps an existing placeholder slice
only when it is owned by this very Service (endpointslice_logic); endpointslice-sync-when-cache-catches-up makes a
slice event for a Service whose last sync found the cache stale queue it, its own writes included, so that the
Service is synced once the cache has caught up instead of after its back-off.

Differences from upstream: upstream also limits retries overall (a 10 qps bucket); not here, as for the other
controllers. No topology queue (hints are not modelled, so node events enqueue nothing); no
--endpoint-updates-batch-period (its default, 0, is what is modelled); the orders upstream takes from Go maps
are made stable (endpointslice_logic says how).
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable

from kmodel.apiserver.bootstrap_policy import READ, events_rule, rule
from kmodel.apiserver.wire import Response
from kmodel.client import NAMESPACE_INDEX, ItemExponentialFailureRateLimiter, index_by_namespace
from kmodel.client.indexer import meta_namespace_key
from kmodel.cluster.components import ClusterContext
from kmodel.component import Out
from kmodel.component.registry import controller
from kmodel.fixes import ENDPOINTSLICE_COMPARE_PLACEHOLDER_OWNERS, ENDPOINTSLICE_SYNC_WHEN_CACHE_CATCHES_UP
from kmodel.objects import Pod, Service
from kmodel.objects.discovery import MANAGED_BY_LABEL, SERVICE_NAME_LABEL, EndpointSlice

from . import endpointslice_logic as esl
from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .endpoints import pod_service_memberships, services_to_update_on_pod_change
from .endpointslice_tracker import EndpointSliceTracker, service_key_of
from .replicaset import NAMESPACE_TERMINATING

NAME = "controller/endpointslice"
EVENT_SOURCE = "endpoint-slice-controller"
SERVICE_INDEX = "service"
SLICE_CHANGE_MIN_SYNC_DELAY_MS = 1000  # endpointSliceChangeMinSyncDelay
SYNC_BACKOFF_MS = 1000  # defaultSyncBackOff
MAX_SYNC_BACKOFF_MS = 1_000_000  # maxSyncBackOff
STALE_CACHE = "EndpointSlice informer cache is out of date"


def managed(eps: EndpointSlice) -> bool:
    """ManagedByController: the managed-by label names this controller."""
    return eps.metadata.labels.get(MANAGED_BY_LABEL) == esl.CONTROLLER_NAME


def _index_by_service(eps: EndpointSlice) -> list[str]:
    """The managed slices of a Service, as syncService lists them (service-name and managed-by labels)."""
    name = eps.metadata.labels.get(SERVICE_NAME_LABEL)
    return [f"{eps.metadata.namespace}/{name}"] if name and managed(eps) else []


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one error as it is, several as "[a, b]"."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class EndpointSliceController(Controller):
    """See the module docstring."""

    service_account = "endpointslice-controller"
    max_retries = 15  # maxRetries in endpointslice_controller.go
    event_source = EVENT_SOURCE

    def __init__(self, endpoints: tuple[str, ...] | list[str], *, name: str = NAME,
                 switches: Switches = DEFAULT_SWITCHES,
                 max_endpoints_per_slice: int = esl.MAX_ENDPOINTS_PER_SLICE,
                 compare_placeholder_owners: bool = False, sync_when_cache_catches_up: bool = False) -> None:
        self.max_endpoints_per_slice = max_endpoints_per_slice
        #: the endpointslice-compare-placeholder-owners fix (kmodel.fixes): a placeholder slice is kept only when
        #: its owner is this very Service (endpointslice_logic._is_placeholder_of)
        self.compare_placeholder_owners = compare_placeholder_owners
        #: the endpointslice-sync-when-cache-catches-up fix (kmodel.fixes): a slice event of a Service whose last
        #: sync found the cache behind the controller's own writes queues the Service (`_sync_if_caught_up`)
        self.sync_when_cache_catches_up = sync_when_cache_catches_up
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        # a rate limiter of its own: 1 s x 2^n, up to 1000 s (a new queue comes with every life)
        self.queue.rate_limiter = ItemExponentialFailureRateLimiter(SYNC_BACKOFF_MS, MAX_SYNC_BACKOFF_MS)
        self.services = self.informer("services", indexers={NAMESPACE_INDEX: index_by_namespace})
        self.pods = self.informer("pods", indexers={NAMESPACE_INDEX: index_by_namespace},
                                  on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted)
        self.nodes = self.informer("nodes", on_add=_ignore, on_update=_ignore, on_delete=_ignore)
        self.slices = self.informer("endpointslices", indexers={SERVICE_INDEX: _index_by_service},
                                    on_add=self._slice_added, on_update=self._slice_updated,
                                    on_delete=self._slice_deleted)
        self.tracker = EndpointSliceTracker()
        self.writes = 0  # slices created, updated or deleted
        self.syncs = 0  # syncService calls
        self.stale_retries = 0  # syncs that found the cache behind the controller's own writes
        #: the Services whose last sync found the cache behind the controller's own writes
        self.stale_services: set[str] = set()

    # -- handlers --------------------------------------------------------------------------------------------

    def _enqueue(self, keys: Iterable[str]) -> None:
        for key in sorted(keys):
            self.queue.add(key)

    def _pod_added(self, now: int, pod: Pod, out: Out) -> None:
        self._enqueue(pod_service_memberships(self.services, pod))

    def _pod_deleted(self, now: int, obj: Any, out: Out) -> None:
        self._enqueue(pod_service_memberships(self.services, getattr(obj, "obj", obj)))

    def _pod_updated(self, now: int, old: Pod, new: Pod, out: Out) -> None:
        self._enqueue(services_to_update_on_pod_change(self.services, old, new))

    def _queue_for_slice(self, now: int, out: Out, eps: EndpointSlice) -> None:
        """queueServiceForEndpointSlice: the slice's Service, after endpointSliceChangeMinSyncDelay."""
        if eps.metadata.labels.get(SERVICE_NAME_LABEL):
            self.queue.add_after(now, out, service_key_of(eps), SLICE_CHANGE_MIN_SYNC_DELAY_MS)

    def _sync_if_caught_up(self, now: int, out: Out, eps: EndpointSlice) -> None:
        """With the endpointslice-sync-when-cache-catches-up fix: a slice event for a Service whose last sync
        failed on the stale cache queues it, the controller's own writes included, since it may be the one the
        cache lacked. Upstream queues a Service for no event of its own writes (`should_sync`), so that Service
        waits out its back-off (up to 1,000 s), or, dropped after maxRetries, the next other event."""
        if self.sync_when_cache_catches_up and service_key_of(eps) in self.stale_services:
            self._queue_for_slice(now, out, eps)

    def _slice_added(self, now: int, eps: EndpointSlice, out: Out) -> None:
        if managed(eps) and self.tracker.should_sync(eps):
            self._queue_for_slice(now, out, eps)
        self._sync_if_caught_up(now, out, eps)

    def _slice_updated(self, now: int, old: EndpointSlice, new: EndpointSlice, out: Out) -> None:
        if new.metadata.labels.get(SERVICE_NAME_LABEL) != old.metadata.labels.get(SERVICE_NAME_LABEL):
            self._queue_for_slice(now, out, new)
            self._queue_for_slice(now, out, old)
        elif managed(old) != managed(new) or (managed(new) and self.tracker.should_sync(new)):
            self._queue_for_slice(now, out, new)
        self._sync_if_caught_up(now, out, new)

    def _slice_deleted(self, now: int, obj: Any, out: Out) -> None:
        eps = getattr(obj, "obj", obj)
        if managed(eps) and self.tracker.has(eps) and not self.tracker.handle_deletion(eps):
            self._queue_for_slice(now, out, eps)  # not a deletion of its own: make it again
        self._sync_if_caught_up(now, out, eps)

    # -- syncService -----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        assert isinstance(key, str)
        self.syncs += 1
        namespace, _, name = key.partition("/")
        svc: Service | None = self.services.indexer.get_by_key(key)
        self.stale_services.discard(key)
        if svc is None:
            self.tracker.delete_service(key)  # its slices go with it (owner reference, garbage collector)
            return
        if svc.spec.type == "ExternalName" or not svc.spec.selector:
            return
        pods = [p for p in self.pods.by_index(NAMESPACE_INDEX, namespace)
                if all(p.metadata.labels.get(k) == v for k, v in svc.spec.selector.items())]
        slices = sorted((s for s in self.slices.by_index(SERVICE_INDEX, key) if s.metadata.deletion_timestamp is None),
                        key=lambda s: s.metadata.name)
        if self.tracker.stale_slices(key, slices):
            self.stale_retries += 1
            self.stale_services.add(key)
            sync.fail()
            return
        plans = esl.reconcile(svc, pods, slices, self.nodes.indexer.get_by_key, self.max_endpoints_per_slice,
                              compare_placeholder_owners=self.compare_placeholder_owners)
        errors: list[str] = []

        def finish(t: int, o: Out) -> None:
            if errors:
                self.event(t, o, svc, "Warning", "FailedToUpdateEndpointSlices",
                           f"Error updating Endpoint Slices for Service {namespace}/{name}: {aggregate(errors)}")
                sync.fail()

        def run(t: int, o: Out, plan_index: int) -> None:
            if plan_index == len(plans):
                finish(t, o)
                return
            plan = plans[plan_index]
            errors.extend(plan.errors)
            writes = [("create", s) for s in plan.create] + [("update", s) for s in plan.update] + \
                [("delete", s) for s in plan.delete]
            self._write(t, o, sync, svc, writes, 0, errors, lambda t2, o2: run(t2, o2, plan_index + 1),
                        stop_on_error=not plan.each_tried)

        run(now, out, 0)

    def _write(self, now: int, out: Out, sync: Sync, svc: Service, writes: list, i: int, errors: list[str],
               then: Any, *, stop_on_error: bool) -> None:
        """Send writes[i], and the next once it is answered (finalize's loop); `then` when done. A failure ends
        the writes of a plan (finalize returns), except in a plan whose writes are each tried (`Plan.each_tried`)."""
        if i == len(writes):
            then(now, out)
            return
        verb, eps = writes[i]
        ns, svc_name = svc.metadata.namespace, svc.metadata.name

        def answered(t: int, response: Response, o: Out) -> bool:
            message = getattr(response.body, "message", str(response.code))
            failed = None
            if verb == "delete":
                if response.ok:
                    self.writes += 1
                    self.tracker.expect_deletion(eps)
                elif response.code != 404:
                    failed = f"failed to delete {eps.metadata.name} EndpointSlice for Service {ns}/{svc_name}: {message}"
            elif response.ok:
                self.writes += 1
                self.tracker.update(response.body)
            elif verb == "create":
                if response.code == 403 and NAMESPACE_TERMINATING in message:
                    then(t, o)  # the namespace is going: creates will keep failing, drop the item
                    return True
                failed = f"failed to create EndpointSlice for Service {ns}/{svc_name}: {message}"
            else:
                failed = f"failed to update {eps.metadata.name} EndpointSlice for Service {ns}/{svc_name}: {message}"
            if failed is not None:
                errors.append(failed)
                if stop_on_error:
                    then(t, o)
                    return True
            self._write(t, o, sync, svc, writes, i + 1, errors, then, stop_on_error=stop_on_error)
            return True

        if verb == "create":
            sync.create(now, out, "endpointslices", eps, on_done=answered)
        elif verb == "update":
            sync.update(now, out, "endpointslices", eps, on_done=answered)
        else:
            sync.delete(now, out, "endpointslices", eps.metadata.name, namespace=eps.metadata.namespace,
                        on_done=answered)


def _ignore(*args: Any) -> None:
    return None


@controller("endpointslice", service_account="endpointslice-controller", default=True, rbac_rules=(
    rule(READ, ("services", "pods", "nodes")),
    # to set blockOwnerDeletion on the slices' owner reference to their Service
    rule(("update",), ("services/finalizers",)),
    rule(("get", "list", "create", "update", "delete"), ("endpointslices",), ("discovery.k8s.io",)),
    events_rule()))
def make(ctx: ClusterContext) -> list:
    """The EndpointSlice controller."""
    return [EndpointSliceController(
        ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
        compare_placeholder_owners=ENDPOINTSLICE_COMPARE_PLACEHOLDER_OWNERS in ctx.config.fixes,
        sync_when_cache_catches_up=ENDPOINTSLICE_SYNC_WHEN_CACHE_CATCHES_UP in ctx.config.fixes)]
