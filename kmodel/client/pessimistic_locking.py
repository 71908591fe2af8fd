"""The `pessimistic-locking` variant's lock: a Lease without expiry taken around every update.

Theory of operation
-------------------
Kubernetes takes no locks: every update carries the resourceVersion it was read at and the loser of a race
gets 409 Conflict and tries again, so a writer that crashes or is cut off holds nothing up. This variant
replaces that with the anti-pattern a newcomer often reaches for, a mutex kept in the store. The one place
that switches to it is the update path of `ApiClient.request` (kmodel/client/api_client.py), which hands
every update of a writer that `takes_locks` (the controller manager's controllers: the lock RBAC is theirs)
to `locked_update`:

1. acquire: create the Lease ``kube-system/<resource>.<namespace>.<name>`` (the object's lock; status and
   main resource share it), spec.holderIdentity ``<component>#<incarnation>`` (the process: a restarted
   component is a new holder), no leaseDurationSeconds: it never expires. 409 AlreadyExists means it is
   taken: wait `LOCK_RETRY_MS` and create again, for up to `LOCK_WAIT_MS` (the client's own request
   timeout); then the caller gets a client-built 504 and retries as it retries any failed write (a controller
   requeues the key). Nobody re-enters a lock, its holder included. Any other answer (403, a timeout, a 5xx)
   goes to the caller and the update is not sent; a create that timed out may have taken the lock anyway.
2. the update itself, as the caller built it (precondition and all: the lock is added to optimistic
   concurrency, it does not replace it, so what goes wrong is the lock's fault alone).
3. release: when the update's answer arrives, delete the Lease, once, and hand the answer to the caller. A
   release that is lost (dropped, cut off, timed out) or never sent (the holder crashed between acquire and
   release) leaves the lock held for good, and every later writer of that object waits for it forever.

The lock spans the write, not the caller's read: the caller read from its informer's cache before calling
update, as every controller here does. Not modelled: any lock library's expiry, fencing or owner checks
(that is the point).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from kmodel.apiserver.wire import Request, Response, Status
from kmodel.component import Out
from kmodel.objects.coordination import Lease, LeaseSpec
from kmodel.objects.meta import ObjectMeta

LOCK_NAMESPACE = "kube-system"
LOCK_RETRY_MS = 1_000
LOCK_WAIT_MS = 60_000

Done = Callable[[int, Response, Out], Any]
Send = Callable[[int, Out, Done], int]


def takes_locks(client: Any) -> bool:
    """Does this client's writer lock? The built-in controllers' do (the cluster says so, `ApiClient.takes_locks`:
    the bootstrap policy's kmodel:pessimistic-locking role lets their service accounts create, update and delete
    Leases); kubelets (the Node authorizer lets them touch only their own node's Lease), the scheduler and
    kube-proxy never update under a lock."""
    return client.takes_locks


def lock_name(resource: str, namespace: str, name: str) -> str:
    """The lock Lease of one object: ``<resource>.<namespace>.<name>`` (``<resource>.<name>`` when
    cluster-scoped)."""
    return ".".join(p for p in (resource, namespace, name) if p)


def holder_identity(client: Any) -> str:
    """The holder: this process of this component (a restart is a new process, a new holder)."""
    return f"{client.owner}#{client.incarnation}"


def lock_lease(client: Any, lock: str, now: int) -> Lease:
    return Lease(metadata=ObjectMeta(name=lock, namespace=LOCK_NAMESPACE),
                 spec=LeaseSpec(holder_identity=holder_identity(client), acquire_time=now))


def lock_wait_timeout(resource: str, namespace: str, name: str, lock: str) -> Response:
    """What the caller gets when the lock stayed taken for LOCK_WAIT_MS (built by the client, like its own
    request timeouts)."""
    target = "/".join(p for p in (namespace, name) if p)
    return Response(0, 504, Status(504, "Timeout", f"update {resource} {target}: timed out waiting for lock "
                                                   f"{LOCK_NAMESPACE}/{lock}"))


class LockedUpdate:
    """One update under the lock (see the module docstring)."""

    def __init__(self, client: Any, request: Request, on_done: Optional[Done], send: Send, now: int) -> None:
        self.client = client
        self.send = send
        self.resource, self.namespace, self.name = request.resource, request.namespace, request.name
        self.on_done = on_done
        self.lock = lock_name(request.resource, request.namespace, request.name)
        self.started = now
        self.incarnation = client.incarnation

    def acquire(self, now: int, out: Out) -> None:
        if self.client.incarnation != self.incarnation:
            return  # the process that wanted the lock crashed (its later timer is gone anyway)
        self.client.create(now, out, "leases", lock_lease(self.client, self.lock, now), namespace=LOCK_NAMESPACE,
                           on_done=self._acquired)

    def _acquired(self, now: int, response: Response, out: Out) -> None:
        if response.ok:
            self.send(now, out, self._written)
        elif response.code == 409 and getattr(response.body, "reason", "") == "AlreadyExists":
            if now + LOCK_RETRY_MS - self.started <= LOCK_WAIT_MS:
                self.client.call_later(now, out, LOCK_RETRY_MS, self.acquire)
            else:
                self._answer(now, lock_wait_timeout(self.resource, self.namespace, self.name, self.lock), out)
        else:
            self._answer(now, response, out)

    def _written(self, now: int, response: Response, out: Out) -> None:
        self.client.delete(now, out, "leases", self.lock, namespace=LOCK_NAMESPACE)  # once: a lost release leaks
        self._answer(now, response, out)

    def _answer(self, now: int, response: Response, out: Out) -> None:
        if self.on_done is not None:
            self.on_done(now, response, out)


def locked_update(client: Any, now: int, out: Out, request: Request, on_done: Optional[Done], send: Send) -> int:
    """Run `send(now, out, done)` (it sends `request`, the update, as the caller built it) under the lock of the
    object `request` names; `on_done` gets the update's answer. Returns 0 (no request id yet)."""
    LockedUpdate(client, request, on_done, send, now).acquire(now, out)
    return 0
