"""The EndpointSlice controller's expectations of its own writes (staging/src/k8s.io/endpointslice/util
endpointslice_tracker.go, release-1.31).

Theory of operation
-------------------
For each Service ("namespace/name", from a slice's kubernetes.io/service-name label) the tracker remembers the
generation of every slice the controller created or updated, and DELETION_EXPECTED for every slice it deleted.

* `stale_slices(service, slices)` (syncService, before reconciling): the informer cache is behind the
  controller's own writes when a cached slice has an older generation than the one written, when a slice the
  controller deleted is still cached, or when a slice it wrote is not cached yet. The sync then fails
  ("EndpointSlice informer cache is out of date") and is retried with the rate limiter, so the controller never
  reconciles from a cache that would make it write duplicates or stale updates.
* `should_sync(slice)` (slice add/update handlers): a slice event queues its Service only when the tracker has
  no generation for it, or the slice's is newer (someone else changed it): the controller's own writes do
  not queue a sync of their own.
* `handle_deletion(slice)` (slice delete handler): forgets the slice, and says whether the deletion was the
  controller's own (expected); one it did not expect queues the Service so the slice is made again.

The map lives in memory: a crash forgets it, as the process's would. Release 1.31 keys it by Service name only;
kubernetes#141593 (later) also clears it when a Service of that name gets a new UID.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmodel.objects.discovery import SERVICE_NAME_LABEL

DELETION_EXPECTED = -1


def service_key_of(eps: Any) -> str:
    """getServiceNN: "namespace/<the slice's kubernetes.io/service-name label>"."""
    return f"{eps.metadata.namespace}/{eps.metadata.labels.get(SERVICE_NAME_LABEL, '')}"


class EndpointSliceTracker:
    """See the module docstring."""

    def __init__(self) -> None:
        #: Service key -> {slice uid: generation written, or DELETION_EXPECTED}
        self.generations: dict[str, dict[str, int]] = {}

    def has(self, eps: Any) -> bool:
        return eps.metadata.uid in self.generations.get(service_key_of(eps), {})

    def should_sync(self, eps: Any) -> bool:
        tracked = self.generations.get(service_key_of(eps))
        if tracked is None:
            return True
        g = tracked.get(eps.metadata.uid)
        return g is None or eps.metadata.generation > g

    def stale_slices(self, service_key: str, slices: Sequence[Any]) -> bool:
        tracked = self.generations.get(service_key)
        if tracked is None:
            return False
        provided = set()
        for eps in slices:
            uid = eps.metadata.uid
            provided.add(uid)
            g = tracked.get(uid)
            if g is not None and (g == DELETION_EXPECTED or g > eps.metadata.generation):
                return True
        return any(g != DELETION_EXPECTED and uid not in provided for uid, g in tracked.items())

    def update(self, eps: Any) -> None:
        self.generations.setdefault(service_key_of(eps), {})[eps.metadata.uid] = eps.metadata.generation

    def expect_deletion(self, eps: Any) -> None:
        self.generations.setdefault(service_key_of(eps), {})[eps.metadata.uid] = DELETION_EXPECTED

    def handle_deletion(self, eps: Any) -> bool:
        tracked = self.generations.get(service_key_of(eps))
        if tracked is not None:
            g = tracked.pop(eps.metadata.uid, None)
            if g is not None and g != DELETION_EXPECTED:
                return False
        return True

    def delete_service(self, service_key: str) -> None:
        self.generations.pop(service_key, None)
