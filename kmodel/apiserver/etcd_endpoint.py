"""The etcd endpoint: the one `Store` as a network component, and the handles API server replicas call it by.

Theory of operation
-------------------
kube-apiserver talks to etcd over gRPC: unary calls (Range, Put, Txn, ...) and long-lived Watch streams. The
model keeps the two apart, because they fail differently:

* Unary calls are synchronous. Each replica gets an `EtcdHandle` (``etcd.handle_for("apiserver-0")``) that
  looks like a `Store` to the request pipeline. Every call is counted on the network's communication graph
  as ``apiserver-i -> etcd``; when the replica cannot reach etcd (a partition in the network's reachability
  graph, or etcd is down), the call raises etcd's ``etcdserver: request timed out`` (a `StoreError`, gRPC
  code Unavailable) and nothing happens in the store. Reads the pipeline's authorizer and admission make
  through `Store.peek` (`kmodel.apiserver.storeview`) go to the store untouched: kube-apiserver answers
  those from its own informers, not from etcd.

* Watches are asynchronous. Each replica has (at most) one etcd watch on the whole ``/registry/`` prefix,
  opened by `EtcdHandle.watch` (itself a unary call that can time out). The store queues `WatchResponse`s
  on it as writes happen; the server pulls them into its per-replica outbox, `has_work()` says when an
  outbox is non-empty, and `work()` sends every queued response as a message etcd -> apiserver-i on that
  watch's stream (``etcd-watch/<replica>/<n>``). So the network's faults act on the watch: a delayed link
  makes that replica's watch cache lag behind etcd (how real replicas come to serve stale reads), a
  partition holds the responses back, a broken stream cancels the watch and the replica re-watches.

Waking the loop: writes reach the store during a *replica's* handler, and the loop only re-asks `has_work()`
of the component it called. The cluster wiring therefore hands the server a ``wake`` callable (normally
``lambda: loop.notify_work("etcd")``, see `attach`); the handles call it after every write. Without it
the work is still found the next time the loop asks the server.

Crash: etcd's data is its disk (the `Store` survives); its watches are memory and are cancelled. A crashed
etcd refuses every call (timed out) until it restarts.

Other clients. Real etcd has no idea who is calling: anyone who reaches its port with a client certificate
(etcdctl, an operator's script) gets the same KV API. Such a client sends an `EtcdCall` as a message to
"etcd" and gets an `EtcdReply` back (`on_message`); the call is served on the store like a replica's, and
nothing records it in any replica's handle (so a write made this way shows as one no API server made). Only
the `bypass-apiserver` variant's etcdctl (kmodel/etcdctl.py) calls etcd this way.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import attrs

from kmodel.component import Component, Out, Send
from kmodel.network import Network
from kmodel.store import Store, StoreError, prefix_end

ETCD = "etcd"
REGISTRY_PREFIX = "/registry/"
#: etcd's ReqTimeout: 5 s + 2 × the 1 s election timeout. How long a replica waits before it learns a call
#: to an unreachable etcd has timed out (the replica delays its answer by this much).
ETCD_REQUEST_TIMEOUT_MS = 7000


def request_timed_out() -> StoreError:
    """rpctypes.ErrGRPCTimeout: what a client of an unreachable etcd gets."""
    return StoreError("Unavailable", "etcdserver: request timed out")


def is_request_timed_out(error: BaseException) -> bool:
    return isinstance(error, StoreError) and error.message == "etcdserver: request timed out"


class _ReplicaWatch:
    """The one etcd watch of one replica: store watch id, the stream its responses travel on, the
    responses taken from the store but not yet sent, and the store's queue of responses not yet taken
    (read, to skip a take when it is empty)."""

    __slots__ = ("replica", "watch_id", "stream", "outbox", "queued")

    def __init__(self, replica: str, watch_id: int, stream: str, queued: Any) -> None:
        self.replica = replica
        self.watch_id = watch_id
        self.stream = stream
        self.outbox: list = []
        self.queued = queued


@attrs.frozen
class EtcdCall:
    """A unary KV call sent to etcd as a message by a client other than an API server (see the module
    docstring): `method` is "range", "put", "delete_range" or "txn", with the `Store` method's arguments."""

    id: int
    method: str
    args: tuple = ()


@attrs.frozen
class EtcdReply:
    """etcd's answer to an `EtcdCall`: the store's response, or the `StoreError` it refused the call with."""

    id: int
    response: Any = None
    error: Optional[StoreError] = None


ETCD_CALLS = ("range", "put", "delete_range", "txn")


class EtcdServer(Component):
    """The etcd member as a component. See the module docstring."""

    def __init__(self, store: Store, network: Network, name: str = ETCD) -> None:
        super().__init__(name)
        self.store = store
        self.network = network
        self.wake: Optional[Callable[[], None]] = None
        self._stream_seq: dict[str, int] = {}  # replica -> watch streams opened (ids never reused)
        self._watches: dict[str, _ReplicaWatch] = {}  # replica -> its watch (memory)
        self._by_stream: dict[str, _ReplicaWatch] = {}

    def attach(self, loop: Any) -> None:
        """Let writes made through the handles wake this component in `loop` (see the module docstring)."""
        self.wake = lambda: loop.notify_work(self.name)

    def handle_for(self, replica: str) -> "EtcdHandle":
        return EtcdHandle(self, replica)

    # -- what the handles use ----------------------------------------------------------------------------

    def reachable_from(self, replica: str) -> bool:
        net = self.network
        return not net.is_down(self.name) and net.can_reach(replica, self.name)

    def open_watch(self, replica: str, start_revision: int) -> str:
        """Replace `replica`'s watch by one on /registry/ from `start_revision`; returns its stream id."""
        self.cancel_watch_of(replica)
        n = self._stream_seq.get(replica, 0) + 1
        self._stream_seq[replica] = n
        stream = f"etcd-watch/{replica}/{n}"
        watch_id = self.store.watch(
            REGISTRY_PREFIX, prefix_end(REGISTRY_PREFIX), start_revision=start_revision, prev_kv=True,
            progress_notify=True,
        )
        w = _ReplicaWatch(replica, watch_id, stream, self.store.watcher(watch_id))
        # the stream exists from now on, not from its first event: if etcd crashes before sending anything,
        # the replica must still learn its watch is gone (and re-watch), as a gRPC client does
        self.network.open_stream(stream, self.name, replica)
        self._watches[replica] = w
        self._by_stream[stream] = w
        self.poke()
        return stream

    def cancel_watch_of(self, replica: str) -> None:
        w = self._watches.pop(replica, None)
        if w is not None:
            del self._by_stream[w.stream]
            self.store.cancel_watch(w.watch_id)
            self.store.take_watch_responses(w.watch_id)  # the cancel confirmation goes nowhere

    def poke(self) -> None:
        """Pull queued watch responses from the store; wake the loop if there is something to send."""
        if self._pull() and self.wake is not None:
            self.wake()

    def _pull(self) -> bool:
        pending = False
        take = self.store.take_watch_responses
        for w in self._watches.values():
            queued = w.queued
            if queued is not None and not queued.pending:
                if w.outbox:
                    pending = True
                continue  # nothing queued: a take would hand back nothing
            taken = take(w.watch_id)
            if taken:
                if w.outbox:
                    w.outbox.extend(taken)
                else:
                    w.outbox = taken  # a fresh list the store handed over: no copy
            if w.outbox:
                pending = True
        return pending

    # -- Component ----------------------------------------------------------------------------------------

    def has_work(self) -> bool:
        return self._pull()

    def work(self, now: int, out: Out) -> None:
        """etcd's watch server: send every queued response to its replica, in order."""
        for w in self._watches.values():
            if w.outbox:
                effects, replica, stream = out.effects, w.replica, w.stream
                for response in w.outbox:
                    effects.append(Send(replica, response, stream))  # out.send, without the call
                w.outbox = []

    def on_message(self, now: int, msg: Any, out: Out) -> None:
        """A unary call from any other client (an `EtcdCall`): served on the store, answered to the sender."""
        call = msg.payload
        if type(call) is not EtcdCall or call.method not in ETCD_CALLS:
            return
        try:
            reply = EtcdReply(call.id, getattr(self.store, call.method)(*call.args))
        except StoreError as error:
            reply = EtcdReply(call.id, error=error)
        self.poke()
        out.send(msg.src, reply)

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        w = self._by_stream.get(stream)
        if w is not None:
            self.cancel_watch_of(w.replica)

    def crash(self) -> None:
        for replica in list(self._watches):
            self.cancel_watch_of(replica)

    def watch_streams(self) -> dict[str, str]:
        """replica -> the stream of its current watch (for tests and reports)."""
        return {r: w.stream for r, w in self._watches.items()}


class EtcdHandle:
    """A replica's synchronous connection to etcd: the `Store` API, failing when etcd is unreachable."""

    #: what invariants may read of it (kmodel.invariants.records): the revisions of the writes it made
    RECORDS: frozenset[str] = frozenset({"written"})
    __slots__ = ("server", "store", "replica", "calls", "timeouts", "written", "_counts", "_count_key", "_down",
                 "_reach", "peek")

    def __init__(self, server: EtcdServer, replica: str) -> None:
        self.server = server
        self.store = server.store
        #: the store's read that is not a request (`Store.peek`), for storeview's reads: kube-apiserver answers
        #: those from its informers, not from etcd, so they neither fail nor count as calls (bound here, not
        #: forwarded by __getattr__, whose cost every admission and authorization read would pay)
        self.peek = server.store.peek
        self.replica = replica
        self.calls = 0
        self.timeouts = 0  # calls that failed because etcd was unreachable
        # the store revisions this handle's writes created (for invariants: a write that bypassed every API
        # server's handle shows as a revision no handle wrote)
        self.written: list[int] = []
        # The network counts messages only when they are sent; a synchronous call is counted here on the same
        # table so the communication graph shows apiserver-i -> etcd. (Network has no public hook for it.)
        self._counts = getattr(server.network, "_counts", None)
        self._count_key = (replica, server.name)
        # For the per-call fast path: with no endpoint down and no partition, every call reaches etcd (the
        # network's own tables, read, never written; otherwise the full `reachable_from` check).
        self._down = getattr(server.network, "_down", None)
        self._reach = getattr(getattr(server.network, "reachability", None), "_side", None)

    def _call(self) -> None:
        self.calls += 1
        counts = self._counts
        if counts is not None:
            key = self._count_key
            counts[key] = counts.get(key, 0) + 1
        if self._down or self._reach or self._down is None or self._reach is None:
            if not self.server.reachable_from(self.replica):
                self.timeouts += 1
                raise request_timed_out()

    # -- the KV API ---------------------------------------------------------------------------------------

    def range(self, key: str, range_end: Optional[str] = None, **options: Any):
        self._call()
        return self.store.range(key, range_end, **options)

    def put(self, key: str, value: Any, *, prev_kv: bool = False):
        self._call()
        before = self.store.revision
        response = self.store.put(key, value, prev_kv=prev_kv)
        self._wrote(before)
        return response

    def delete_range(self, key: str, range_end: Optional[str] = None, *, prev_kv: bool = False):
        self._call()
        before = self.store.revision
        response = self.store.delete_range(key, range_end, prev_kv=prev_kv)
        self._wrote(before)
        return response

    def txn(self, compare, success, failure):
        self._call()
        before = self.store.revision
        response = self.store.txn(compare, success, failure)
        self._wrote(before)
        return response

    def _wrote(self, before: int) -> None:
        """After a write request made at store revision `before`: note the revision it created, if any, and
        let etcd's watch server pull what the write queued for the watches."""
        after = self.store.revision
        if after != before:
            self.written.append(after)
        self.server.poke()

    def compact(self, revision: int):
        self._call()
        return self.store.compact(revision)

    def watch(self, start_revision: int) -> str:
        """Open (or replace) this replica's watch on /registry/; returns the stream its responses come on."""
        self._call()
        return self.server.open_watch(self.replica, start_revision)

    @property
    def revision(self) -> int:
        return self.store.revision

    def __getattr__(self, name: str) -> Any:
        # Everything else (history, compact_revision, ...) is the store's own.
        return getattr(self.store, name)
