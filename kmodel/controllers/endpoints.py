"""The Endpoints controller (pkg/controller/endpoint/endpoints_controller.go).

Theory of operation
-------------------
Informers on services, pods and endpoints; the work queue holds Service keys ("ns/name").

* A Service event enqueues the Service.
* A pod event enqueues the Services whose selector matches the pod (GetPodServiceMemberships); on an
  update, only when podEndpointsChanged says the pod changed in a way endpoints see (deletionTimestamp,
  readiness, pod IPs) or its labels/hostname changed (then the Services of the old and the new labels:
  all of both if the pod also changed, else those it joined or left), as
  GetServicesToUpdateOnPodChange. Keys are enqueued in sorted order.
* An Endpoints deletion enqueues the Service of that name (to recreate them); during the informer's first
  list every Endpoints enqueues its Service key (checkLeftoverEndpoints: Endpoints whose Service is gone
  are deleted at start).

syncService(key), level-driven from the caches (the base class waits until all three informers have
synced, so a restarted controller never writes Endpoints from a half-listed pod cache):
Service gone → DELETE the Endpoints (404 is fine) and forget its stale resourceVersion; ExternalName or no
selector → nothing; else the subsets from endpoints_logic.endpoint_subsets over the Service's namespace's
pods matching the selector; if the cached Endpoints carry the resourceVersion this controller already
replaced (staleEndpointsTracker, below), the sync fails and the key is retried with the rate limiter; if
the cached Endpoints exist with equal subsets and labels, nothing is written; else CREATE (no cached
Endpoints) or UPDATE (the cached one, with its resourceVersion). A failed write records a Warning event
(FailedToCreateEndpoint / FailedToUpdateEndpoint) and the key is retried with the rate limiter.

The stale-cache guard (endpoints_tracker.go, kubernetes#125675 and #127417, fixing #125638): the endpoints
informer has no update handler, so after an UPDATE the cache may still hold the Endpoints it replaced. A
pod that flips Ready→NotReady→Ready quickly gets two syncs; the second compares the fresh pods with the
stale cached Endpoints (still "all ready"), finds them equal and skips, and the NotReady Endpoints just
written stay for good, since nothing enqueues the Service again. So a successful UPDATE that changed the
resourceVersion remembers the replaced one (`_stale[key]`), and a sync that finds exactly that version
in the cache returns an error ("endpoints informer cache is out of date") to be retried once the
informer has caught up. The map lives in memory, so a crash forgets it (the restarted informer lists
afresh anyway). As upstream, an UPDATE that was applied but whose answer was lost (a 504 from the client's
deadline) marks nothing; upstream then relies on the Service informer's periodic resync (12–24 h), which
the model does not have. After maxRetries (15) failures in a row the key is dropped, as upstream; nothing syncs it again until an
event on the Service or its pods (the endpoints-retry-past-max-retries fix, kmodel.fixes, retries instead).

Differences from upstream: see endpoints_logic (port/subset order, no over-capacity truncation, no
last-change-trigger-time annotation). kube-proxy reads EndpointSlices (kmodel/controllers/endpointslice.py), not
these Endpoints: they are kept for their other readers, as upstream keeps them. The
leader-election annotation exception of checkLeftoverEndpoints is not modelled (no such Endpoints exist).
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable

from kmodel.apiserver.bootstrap_policy import READ, events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.wire import Response
from kmodel.client import NAMESPACE_INDEX, index_by_namespace
from kmodel.client.indexer import meta_namespace_key
from kmodel.cluster.components import ClusterContext
from kmodel.component import Out
from kmodel.objects import Pod, Service
from kmodel.fixes import ENDPOINTS_RETRY_PAST_MAX_RETRIES

from . import endpoints_logic as el
from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .pod_state import is_pod_ready

NAME = "controller/endpoints"
EVENT_SOURCE = "endpoint-controller"


def selector_matches(selector: Any, labels: Any) -> bool:
    """labels.Set(selector).AsSelectorPreValidated().Matches(labels)."""
    return all(labels.get(k) == v for k, v in selector.items())


def pod_endpoints_changed(old: Pod, new: Pod) -> tuple[bool, bool]:
    """podEndpointsChanged: (changed for endpoints, labels or hostname/subdomain changed).

    Upstream compares the deletionTimestamp *pointers*: two decoded objects never share one, so any pod
    with a deletionTimestamp counts as changed."""
    labels_changed = (dict(old.metadata.labels) != dict(new.metadata.labels)
                      or old.spec.hostname != new.spec.hostname or old.spec.subdomain != new.spec.subdomain)
    if old.metadata.deletion_timestamp is not None or new.metadata.deletion_timestamp is not None:
        return True, labels_changed
    if is_pod_ready(old) != is_pod_ready(new):
        return True, labels_changed
    if [p.ip for p in old.status.pod_ips] != [p.ip for p in new.status.pod_ips]:
        return True, labels_changed
    return False, labels_changed


def pod_service_memberships(services: Any, pod: Pod) -> set[str]:
    """GetPodServiceMemberships: keys of the Services in the pod's namespace (in the `services` informer's cache)
    whose selector selects it."""
    keys = set()
    for svc in services.by_index(NAMESPACE_INDEX, pod.metadata.namespace):
        if svc.spec.selector and selector_matches(svc.spec.selector, pod.metadata.labels):
            keys.add(meta_namespace_key(svc))
    return keys


def services_to_update_on_pod_change(services: Any, old: Pod, new: Pod) -> set[str]:
    """GetServicesToUpdateOnPodChange (shared by the Endpoints and EndpointSlice controllers): nothing for a
    resync (same resourceVersion) or a change endpoints do not see; else the Services of the new labels, and,
    when the labels changed, those of the old ones too (all of both if the pod also changed, else those it
    joined or left)."""
    if old.metadata.resource_version == new.metadata.resource_version:
        return set()
    changed, labels_changed = pod_endpoints_changed(old, new)
    if not changed and not labels_changed:
        return set()
    keys = pod_service_memberships(services, new)
    if labels_changed:
        before = pod_service_memberships(services, old)
        keys = (keys | before) if changed else (keys ^ before)
    return keys


class EndpointsController(Controller):
    """See the module docstring."""

    service_account = "endpoint-controller"

    max_retries = 15  # maxRetries in endpoints_controller.go

    event_source = EVENT_SOURCE

    def __init__(self, endpoints: tuple[str, ...] | list[str], *, name: str = NAME,
                 switches: Switches = DEFAULT_SWITCHES,
                 retry_past_max_retries: bool = False) -> None:
        if retry_past_max_retries:  # the endpoints-retry-past-max-retries fix (kmodel.fixes)
            self.retry_for_good()
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.services = self.informer("services", indexers={NAMESPACE_INDEX: index_by_namespace})
        self.pods = self.informer("pods", indexers={NAMESPACE_INDEX: index_by_namespace},
                                  on_add=self._pod_added, on_update=self._pod_updated,
                                  on_delete=self._pod_deleted)
        self.endpoints = self.informer("endpoints", on_add=self._endpoints_listed, on_update=_ignore)
        self.writes = 0  # Endpoints created, updated or deleted
        # staleEndpointsTracker: Service key -> resourceVersion of the Endpoints this controller replaced
        self._stale: dict[str, str] = {}
        self.stale_retries = 0  # syncs that found a replaced Endpoints in the cache (for tests and reports)

    # -- handlers --------------------------------------------------------------------------------------------

    def _memberships(self, pod: Pod) -> set[str]:
        return pod_service_memberships(self.services, pod)

    def _enqueue(self, keys: Iterable[str]) -> None:
        for key in sorted(keys):
            self.queue.add(key)

    def _pod_added(self, now: int, pod: Pod, out: Out) -> None:
        self._enqueue(self._memberships(pod))

    def _pod_deleted(self, now: int, obj: Any, out: Out) -> None:
        self._enqueue(self._memberships(getattr(obj, "obj", obj)))

    def _pod_updated(self, now: int, old: Pod, new: Pod, out: Out) -> None:
        self._enqueue(services_to_update_on_pod_change(self.services, old, new))

    def _endpoints_listed(self, now: int, ep: Any, out: Out) -> None:
        if not self.endpoints.has_synced:  # checkLeftoverEndpoints
            self.queue.add(meta_namespace_key(ep))

    # -- syncService -----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        assert isinstance(key, str)
        namespace, _, name = key.partition("/")
        svc: Service | None = self.services.indexer.get_by_key(key)
        if svc is None:
            def deleted(t: int, response: Response, o: Out) -> bool:
                if response.ok:
                    self.writes += 1
                if response.ok or response.code == 404:
                    self._stale.pop(key, None)  # staleEndpointsTracker.Delete
                    return True
                return False

            sync.delete(now, out, "endpoints", name, namespace=namespace, on_done=deleted)
            return
        if svc.spec.type == "ExternalName" or not svc.spec.selector:
            return
        pods = [p for p in self.pods.by_index(NAMESPACE_INDEX, namespace)
                if selector_matches(svc.spec.selector, p.metadata.labels)]
        current = self.endpoints.indexer.get_by_key(key)
        if current is not None and self._stale.get(key) == current.metadata.resource_version:
            # "endpoints informer cache is out of date, resource version N already processed": retry later
            self.stale_retries += 1
            sync.fail()
            return
        subsets = el.endpoint_subsets(svc, pods)
        if not el.endpoints_need_update(current, svc, subsets):
            return
        desired = el.desired_endpoints(svc, pods, current)
        create = current is None or not current.metadata.resource_version

        def written(t: int, response: Response, o: Out) -> bool:
            if response.ok:
                self.writes += 1
                written_rv = getattr(getattr(response.body, "metadata", None), "resource_version", None)
                if not create and written_rv != current.metadata.resource_version:
                    # the cache may still show `current` for a while: remember it as stale (a no-op update
                    # that kept the resourceVersion must not, or the key would be retried for ever)
                    self._stale[key] = current.metadata.resource_version
                return True
            message = getattr(response.body, "message", str(response.code))
            if create:
                self.event(t, o, desired, "Warning", "FailedToCreateEndpoint",
                           f"Failed to create endpoint for service {namespace}/{name}: {message}")
            else:
                self.event(t, o, desired, "Warning", "FailedToUpdateEndpoint",
                           f"Failed to update endpoint {namespace}/{name}: {message}")
            return False

        if create:
            sync.create(now, out, "endpoints", desired, on_done=written)
        else:
            sync.update(now, out, "endpoints", desired, on_done=written)


def _ignore(*args: Any) -> None:
    return None


@controller("endpoints", service_account="endpoint-controller", default=True, rbac_rules=(
    rule(READ, ("services", "pods")),
    rule(("get", "list", "watch", "create", "update", "delete"), ("endpoints",)),
    rule(("create",), ("endpoints/restricted",)),
    events_rule()))
def make(ctx: ClusterContext) -> list:
    """The Endpoints controller."""
    return [EndpointsController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                                retry_past_max_retries=ENDPOINTS_RETRY_PAST_MAX_RETRIES in ctx.config.fixes)]
