"""The node Lease a kubelet renews (pkg/kubelet/nodelease, component-helpers/apimachinery/lease/controller.go).

Theory of operation
-------------------
The kubelet's heartbeat is the Lease kube-node-lease/<node>: holderIdentity <node>, leaseDurationSeconds 40,
renewTime = now, and an ownerReference to its Node (setNodeOwnerFunc), so the garbage collector deletes the
Lease with the Node. `LeaseController` renews it as upstream's lease controller does:

* a sync runs at start and then `renew_interval_ms` (25 % of the duration, 10 s) after the last one ended
  (wait.JitterUntil, sliding, without its 4 % jitter);
* a sync first updates the Lease it last wrote (`latest`; upstream keeps latestLease to skip a GET):
  retryUpdateLease, up to `MAX_UPDATE_RETRIES` updates one after the other. A conflict reads the Lease again
  first (backoffEnsureLease); any other failure after the first is a repeated heartbeat failure (the kubelet
  closes its connections, `on_repeated_failure`);
* when those fail, or nothing was written yet: backoffEnsureLease, a GET (a create on 404) repeated until it
  succeeds, 200 ms after the first failure, doubling up to 7 s; then, unless it created the Lease, one more
  retryUpdateLease. The sync ends there, whatever the outcome.

The requests go through the kubelet's heartbeat client (`heartbeat`: its timeout, no rate limit).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from kmodel.apiserver.wire import Response
from kmodel.component import Out
from kmodel.objects import Lease, LeaseSpec, ObjectMeta, OwnerReference
from kmodel.objects.fastevolve import evolve

NODE_LEASE_NAMESPACE = "kube-node-lease"
#: backoffEnsureLease's first sleep is twice its initial 100 ms; each failure doubles it, up to maxBackoff
RETRY_INITIAL_MS = 200
RETRY_MAX_MS = 7_000
#: retryUpdateLease's maxUpdateRetries
MAX_UPDATE_RETRIES = 5


def node_owner(node: str, node_uid: str) -> tuple:
    """setNodeOwnerFunc: the Lease is owned by its Node (no owner while the Node's uid is unknown)."""
    if not node_uid:
        return ()
    return (OwnerReference(api_version="v1", kind="Node", name=node, uid=node_uid),)


def new_lease(node: str, node_uid: str, now: int, duration_seconds: int) -> Lease:
    """newLease for a Lease that does not exist yet."""
    return Lease(
        metadata=ObjectMeta(name=node, namespace=NODE_LEASE_NAMESPACE, owner_references=node_owner(node, node_uid)),
        spec=LeaseSpec(holder_identity=node, lease_duration_seconds=duration_seconds, renew_time=now))


def renewed(lease: Lease, node: str, node_uid: str, now: int, duration_seconds: int) -> Lease:
    """newLease from a base Lease: same object, this holder, renewTime = now, owner set if missing."""
    meta = lease.metadata
    if not meta.owner_references and node_uid:
        meta = evolve(meta, owner_references=node_owner(node, node_uid))
    return evolve(lease, metadata=meta, spec=evolve(
        lease.spec, holder_identity=node, lease_duration_seconds=duration_seconds, renew_time=now))


def lease_holder(lease: Optional[Lease]) -> str:
    return (lease.spec.holder_identity or "") if lease is not None else ""


class LeaseController:
    """Upstream's lease controller for one node (see the module docstring). The owner forwards its timer
    `timer` to `on_timer` and calls `reset` when its process crashes."""

    def __init__(self, client: Any, node: str, node_uid: Callable[[], str], *, duration_seconds: int,
                 renew_interval_ms: int, timer: str, heartbeat: dict,
                 on_repeated_failure: Callable[[int, Out], None]) -> None:
        self.client = client
        self.node = node
        self.node_uid = node_uid
        self.duration_seconds = duration_seconds
        self.renew_interval_ms = renew_interval_ms
        self.timer = timer
        self.heartbeat = heartbeat
        self.on_repeated_failure = on_repeated_failure
        self.reset()

    def reset(self) -> None:
        #: the Lease this process last wrote or read (latestLease)
        self.latest: Optional[Lease] = None
        self.syncing = False
        self._wake: Optional[Callable[[int, Out], None]] = None  # what the timer resumes (a backoff's sleep)

    def sync(self, now: int, out: Out) -> None:
        if self.syncing:
            return
        self.syncing = True
        if self.latest is not None:
            self._retry_update(now, out, self.latest, 0, self._ensure_then_update)
        else:
            self._ensure_then_update(now, out)

    def on_timer(self, now: int, out: Out) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake(now, out)
        else:
            self.sync(now, out)

    # -- the steps of a sync ----------------------------------------------------------------------------------

    def _ensure_then_update(self, now: int, out: Out) -> None:
        def ensured(t: int, o: Out, lease: Lease, created: bool) -> None:
            self.latest = lease
            if created:
                self._done(t, o)
            else:
                self._retry_update(t, o, lease, 0, self._done)

        self._ensure(now, out, RETRY_INITIAL_MS, ensured)

    def _done(self, now: int, out: Out) -> None:
        self.syncing = False
        out.set_timer(self.timer, self.renew_interval_ms)

    def _retry_update(self, now: int, out: Out, base: Lease, attempt: int,
                      failed: Callable[[int, Out], None]) -> None:
        """retryUpdateLease's attempt `attempt` (from 0); `failed` runs once all have failed."""

        def next_attempt(t: int, o: Out, lease: Lease) -> None:
            if attempt + 1 < MAX_UPDATE_RETRIES:
                self._retry_update(t, o, lease, attempt + 1, failed)
            else:
                failed(t, o)

        def written(t: int, response: Response, o: Out) -> None:
            if response.ok:
                self.latest = response.body
                self._done(t, o)
            elif response.code == 409:  # OptimisticLockError: read the newer Lease first
                self._ensure(t, o, RETRY_INITIAL_MS, lambda t2, o2, lease, _created: next_attempt(t2, o2, lease))
            else:
                if attempt > 0:
                    self.on_repeated_failure(t, o)
                next_attempt(t, o, base)

        lease = renewed(base, self.node, self.node_uid(), now, self.duration_seconds)
        self.client.update(now, out, "leases", lease, on_done=written, **self.heartbeat)

    def _ensure(self, now: int, out: Out, sleep_ms: int,
                then: Callable[[int, Out, Lease, bool], None]) -> None:
        """backoffEnsureLease: GET the Lease (create it on 404) until that succeeds, sleeping `sleep_ms` after a
        failure, doubling up to RETRY_MAX_MS; then `then(now, out, lease, created)`."""

        def failed(t: int, o: Out) -> None:
            self._wake = lambda t2, o2: self._ensure(t2, o2, min(sleep_ms * 2, RETRY_MAX_MS), then)
            o.set_timer(self.timer, sleep_ms)

        def created(t: int, response: Response, o: Out) -> None:
            if response.ok:
                then(t, o, response.body, True)
            else:
                failed(t, o)

        def got(t: int, response: Response, o: Out) -> None:
            if response.code == 404:
                lease = new_lease(self.node, self.node_uid(), t, self.duration_seconds)
                self.client.create(t, o, "leases", lease, on_done=created, **self.heartbeat)
            elif response.ok:
                then(t, o, response.body, False)
            else:
                failed(t, o)

        self.client.get(now, out, "leases", self.node, namespace=NODE_LEASE_NAMESPACE, on_done=got,
                        **self.heartbeat)
