"""An API server replica: the request pipeline in front, a watch cache fed by etcd behind.

Theory of operation
-------------------
`APIServerReplica` is a component named "apiserver-<i>". It owns a `WatchCache` (memory) and reaches etcd
through an `EtcdHandle` (synchronous calls) and the etcd watch stream (asynchronous `WatchResponse`
messages from "etcd"). What it does with each input:

* start (and restart): list ``/registry/`` from etcd, `WatchCache.replace` with it, watch from the list's
  revision + 1 (the cacher's reflector). If etcd cannot be reached, retry every `etcd_retry_ms`.
* a `WatchResponse` on the current etcd stream: `WatchCache.apply` (which fans out to the client watches),
  then serve the reads that were waiting for the cache to catch up. A cancelled response with a
  compact revision means the cache's resourceVersion was compacted away: relist, which terminates every
  client watch (cacher.terminateAllWatchers). The etcd stream breaking: re-watch from the cache's
  resourceVersion + 1.
* a `Request`:
  - ``watch`` (on a stream): authn/authz (`Pipeline.admit_read`), then `WatchCache.start_watch`. Watches
    with resourceVersion "" or "0" start with the current state; N > 0 replays from the window or gets 410.
    While the cache has never been filled the answer is 429 ``storage is (re)initializing`` (upstream's
    ResilientWatchCacheInitialization).
  - ``get``/``list`` with a resourceVersion (NotOlderThan / Any): authn/authz, then served from the cache
    once the cache's resourceVersion has reached it. Otherwise the request waits, as
    watchCache.waitUntilFreshAndBlock does, for `fresh_wait_ms` (3 s) of logical time, then gets 504
    ``Timeout: Too large resource version: N, current: M``.
  - everything else, including consistent reads (resourceVersion ""), goes through `Pipeline.handle`, which
    reads and writes the store through the handle.
  The answer goes back to the sender, on the request's stream if it came on one.
* the etcd connection given up on (a partition: the etcd client's gRPC keepalive, `ETCD_CLIENT_KEEPALIVE`,
  pings etcd 30 s after the last frame and gives up 10 s later; kmodel.loop.health): what etcd sent and the
  replica has not received is lost, and the watch resumes from the cache's resourceVersion + 1 once etcd can
  be reached (clientv3 resumes a watch by itself), or relists if that revision was compacted meanwhile.
* an etcd call that timed out (the replica is cut off from etcd): kube-apiserver answers with etcd's error,
  a 500 with reason Unknown and message ``etcdserver: request timed out``, after etcd's request timeout
  (7 s). The replica holds the answer back that long (timer ``etcd-timeout``).
* a watch's timeout: the request's timeoutSeconds, or when it has none (or 0) --min-request-timeout (1,800 s)
  × [1, 2), drawn from the replica's own seeded random source (GetTimeoutForWatch). When it comes the replica
  ends the watch with a final 200, as serveWatch returns on its timeout (timer ``watch-timeouts``); the
  cacher's last bookmark for it comes 2 s before.
* a client's watch stream ending: the watcher is forgotten.
* a request fault (the loop's `FailRequest`, kmodel.apiserver.request_faults): the next request of that client
  outside a watch is answered with the fault's status instead (429, 500, 503: nothing runs; 504: the request
  runs, its write reaching etcd, when the fault says it was applied, and its answer is replaced). One fault per
  client at a time; a newer one replaces it.
* crash: cache, watchers, waiting requests and armed request faults are lost; restart lists and watches again.
"""

from __future__ import annotations

import heapq
import random
from typing import Any, Optional

from kmodel.apiserver import errors
from kmodel.apiserver.errors import StatusCause, StatusDetails
from kmodel.apiserver.etcd_log import EtcdLog
from kmodel.apiserver.etcd_endpoint import ETCD, ETCD_REQUEST_TIMEOUT_MS, REGISTRY_PREFIX, EtcdHandle
from kmodel.apiserver.request_faults import fault_status
from kmodel.apiserver.resources import list_prefix, object_key, resource, storage_name
from kmodel.apiserver.selectors import SelectorError, parse_field_selector, parse_label_selector
from kmodel.apiserver.watchcache import CacheWatcher, WatchCache, WatchCacheConfig
from kmodel.apiserver.wire import ListResult, Request, Response, Status
from kmodel.component import Component, HealthCheck, Out, Send
from kmodel.network import Message
from kmodel.store import StoreError, prefix_end

FRESH_WAIT_MS = 3000  # watchCache's blockTimeout in waitUntilFreshAndBlock
ETCD_RETRY_MS = 1000
#: kube-apiserver's --min-request-timeout default (1,800 s): a watch that asks for no timeout gets this × [1, 2)
MIN_REQUEST_TIMEOUT_MS = 1_800_000

TIMER_FRESH = "fresh-wait"
TIMER_BOOKMARKS = "bookmarks"
TIMER_ETCD_RETRY = "etcd-retry"
TIMER_ETCD_TIMEOUT = "etcd-timeout"
TIMER_WATCH_TIMEOUTS = "watch-timeouts"


def too_large_resource_version(requested: int, current: int) -> Status:
    """storage.NewTooLargeResourceVersionError (NewTimeoutError with retryAfterSeconds 1)."""
    return Status(504, "Timeout", f"Timeout: Too large resource version: {requested}, current: {current}",
                  StatusDetails(causes=(StatusCause("ResourceVersionTooLarge", "Too large resource version", ""),)))


def initializing() -> Status:
    return Status(429, "TooManyRequests", "storage is (re)initializing")


def resource_not_found() -> Status:
    return Status(404, "NotFound", "the server could not find the requested resource")


def store_error_status(error: StoreError) -> Status:
    """responsewriters.ErrorToAPIStatus for an error that is not an API status: 500, reason Unknown."""
    return Status(500, "", error.message)


class _Waiting:
    __slots__ = ("deadline", "rv", "request", "src", "stream")

    def __init__(self, deadline: int, rv: int, request: Request, src: str, stream: Optional[str]) -> None:
        self.deadline, self.rv, self.request, self.src, self.stream = deadline, rv, request, src, stream


#: kube-apiserver's etcd client's gRPC keepalive (k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go:
#: keepaliveTime 30 s, keepaliveTimeout 10 s, dialTimeout 20 s), on its connection to etcd only
ETCD_CLIENT_KEEPALIVE = HealthCheck(idle_ms=30_000, ping_timeout_ms=10_000, dial_timeout_ms=20_000, peers=(ETCD,),
                                    lost_reason="rpc error: code = Unavailable desc = keepalive ping failed to "
                                                "receive ACK within timeout")


class APIServerReplica(Component):
    """One kube-apiserver. See the module docstring."""

    connection_health_check = ETCD_CLIENT_KEEPALIVE
    #: what invariants may read of it (kmodel.invariants.records): the log of what etcd's watches sent it, and
    #: the faults it answered requests with
    RECORDS: frozenset[str] = frozenset({"etcd_received", "faults_answered"})

    def __init__(self, name: str, pipeline: Any, etcd: EtcdHandle, *,
                 cache_config: WatchCacheConfig = WatchCacheConfig(), fresh_wait_ms: int = FRESH_WAIT_MS,
                 etcd_retry_ms: int = ETCD_RETRY_MS, etcd_name: str = ETCD) -> None:
        super().__init__(name)
        self.pipeline = pipeline
        self.etcd = etcd
        self.cache_config = cache_config
        self.fresh_wait_ms = fresh_wait_ms
        self.etcd_retry_ms = etcd_retry_ms
        self.etcd_name = etcd_name
        # What this replica's watch cache received from etcd, for the watch invariants (survives a crash):
        # (stream, start_revision) when a watch is opened, (stream, WatchResponse) for each response applied
        # (a sequence of those pairs, kept compact until read: see etcd_log.py).
        self.etcd_received = EtcdLog()
        #: the random source of the default watch timeouts (Go's math/rand in GetTimeoutForWatch), seeded from the
        #: run's seed and the replica's name
        self.watch_rng = random.Random(f"{pipeline.config.seed}/{name}/watch-timeouts")
        #: the request faults this replica answered (an observer's record for the sometimes properties, survives a
        #: crash): (time, client, verb, code, whether a write reached etcd before the answer)
        self.faults_answered: list[tuple[int, str, str, int, bool]] = []
        self._forget()

    def _forget(self) -> None:
        self.cache = WatchCache(self.cache_config)
        self.etcd_stream: Optional[str] = None
        self._waiting: list[_Waiting] = []
        self._fresh_timer: Optional[int] = None
        self._bookmark_timer: Optional[int] = None
        self._timeouts_timer: Optional[int] = None
        self._held: list[tuple[int, int, str, Response, Optional[str]]] = []  # answers held for etcd's timeout
        self._held_seq = 0
        #: client -> the request fault its next request meets (`fail_next_request`)
        self.request_faults: dict[str, Any] = {}

    # -- Component --------------------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        self._relist(now, out)

    def crash(self) -> None:
        self._forget()

    def fail_next_request(self, src: str, fault: Any) -> None:
        """Answer the next request of `src` outside a watch with `fault`'s status (see the module docstring)."""
        self.request_faults[src] = fault

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        payload = msg.payload
        if type(payload) is Request:
            if self.request_faults and msg.stream is None and msg.src in self.request_faults:
                self._fail_request(now, msg, payload, self.request_faults.pop(msg.src), out)
                return
            self._on_request(now, msg, payload, out)
        elif msg.src == self.etcd_name:
            self._on_etcd_watch(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if name == TIMER_FRESH:
            self._fresh_timer = None
            self._serve_waiting(now, out)
        elif name == TIMER_BOOKMARKS:
            self._bookmark_timer = None
            self.cache.fire_bookmarks(now, out)
            self._arm_bookmarks(out)
        elif name == TIMER_WATCH_TIMEOUTS:
            self._timeouts_timer = None
            self.cache.end_timed_out(now, out)
            self._arm_watch_timeouts(out)
        elif name == TIMER_ETCD_RETRY:
            if self.cache.ready:
                self._rewatch(now, out)
            else:
                self._relist(now, out)
        elif name == TIMER_ETCD_TIMEOUT:
            held = self._held
            while held and held[0][0] <= now:
                _, _, dst, response, stream = heapq.heappop(held)
                out.send(dst, response, stream)
            if held:
                out.set_timer(TIMER_ETCD_TIMEOUT, at=held[0][0])

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        """The etcd client's keepalive gave up on the connection to etcd (a partition): its watch stream ended
        with it. clientv3 resumes the watch by itself, from the revision after the last one received, once it
        can connect again: the replica re-watches from its cache's revision, retrying until etcd is reached."""
        if peer == self.etcd_name and self.etcd_stream is not None:
            self.etcd_stream = None
            self._rewatch(now, out)

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        if stream == self.etcd_stream:
            self.etcd_stream = None
            self._rewatch(now, out)
            return
        self.cache.stop_watch(stream)
        if self._waiting:
            self._waiting = [w for w in self._waiting if w.stream != stream]

    # -- etcd ---------------------------------------------------------------------------------------------------

    def _relist(self, now: int, out: Out) -> None:
        try:
            response = self.etcd.range(REGISTRY_PREFIX, prefix_end(REGISTRY_PREFIX))
            self.cache.replace(response.kvs, response.header_revision, out)
            self.etcd_stream = self.etcd.watch(response.header_revision + 1)
            self.etcd_received.append((self.etcd_stream, response.header_revision + 1))
        except StoreError:
            self.etcd_stream = None
            out.set_timer(TIMER_ETCD_RETRY, self.etcd_retry_ms)
            return
        if self._waiting:
            self._serve_waiting(now, out)

    def _rewatch(self, now: int, out: Out) -> None:
        try:
            self.etcd_stream = self.etcd.watch(self.cache.resource_version + 1)
            self.etcd_received.append((self.etcd_stream, self.cache.resource_version + 1))
        except StoreError:
            self.etcd_stream = None
            out.set_timer(TIMER_ETCD_RETRY, self.etcd_retry_ms)

    def _on_etcd_watch(self, now: int, msg: Message, out: Out) -> None:
        if msg.stream != self.etcd_stream:
            return  # from a watch this replica has already replaced
        response = msg.payload
        self.etcd_received.record(msg.stream, response)
        if response.canceled:
            out.close_stream(msg.stream)
            self.etcd_stream = None
            if response.compact_revision:
                self._relist(now, out)  # the reflector's 410: list again
            else:
                self._rewatch(now, out)
            return
        self.cache.apply(response, now, out)
        if self._waiting:
            self._serve_waiting(now, out)

    # -- requests -----------------------------------------------------------------------------------------------

    def _on_request(self, now: int, msg: Message, req: Request, out: Out) -> None:
        verb = req.verb
        if verb == "watch":
            self._watch(now, msg, req, out)
        elif (verb == "get" or verb == "list") and req.resource_version and not req.subresource \
                and self.cache.ready and storage_name(req.resource) in self.cache.resources:
            self._cached_read(now, msg, req, out)
        else:
            timeouts = self.etcd.timeouts
            try:
                response = self.pipeline.handle(req, now=now, replica=self.name)
            except StoreError as error:
                response = Response(req.id, 500, store_error_status(error))
            if self.etcd.timeouts != timeouts:
                self._hold(now, msg.src, response, msg.stream, out)
            else:
                out.effects.append(Send(msg.src, response, msg.stream))  # out.send, without the call

    def _fail_request(self, now: int, msg: Message, req: Request, fault: Any, out: Out) -> None:
        """Answer `req` with the fault's status; a 504 whose write was applied runs the request first (its answer
        is lost to the timeout filter). A request refused on the way (authentication, authorization, admission)
        is refused the same."""
        written = False
        if fault.code == 504 and fault.applied:
            try:
                written = self.pipeline.handle(req, now=now, replica=self.name).code < 300 and req.verb not in (
                    "get", "list")
            except StoreError:
                pass  # etcd could not be reached: nothing was written, the 504 stands
        self.faults_answered.append((now, msg.src, req.verb, fault.code, written))
        status = fault_status(fault.code, fault.retry_after_seconds)
        out.effects.append(Send(msg.src, Response(req.id, fault.code, status), None))

    def _hold(self, now: int, dst: str, response: Response, stream: Optional[str], out: Out) -> None:
        self._held_seq += 1
        due = now + ETCD_REQUEST_TIMEOUT_MS
        if not self._held:
            out.set_timer(TIMER_ETCD_TIMEOUT, at=due)
        heapq.heappush(self._held, (due, self._held_seq, dst, response, stream))

    def _cached_read(self, now: int, msg: Message, req: Request, out: Out) -> None:
        admitted = self.pipeline.admit_read(req, now)
        if isinstance(admitted, Response):
            out.send(msg.src, admitted, msg.stream)
            return
        rv = _parse_rv(req.resource_version)
        if rv is None:
            out.send(msg.src, _bad_rv(req), msg.stream)
        elif rv <= self.cache.resource_version:
            out.send(msg.src, self._read_from_cache(req), msg.stream)
        else:
            deadline = now + self.fresh_wait_ms
            self._waiting.append(_Waiting(deadline, rv, req, msg.src, msg.stream))
            if self._fresh_timer is None or deadline < self._fresh_timer:
                self._fresh_timer = deadline
                out.set_timer(TIMER_FRESH, at=deadline)

    def _serve_waiting(self, now: int, out: Out) -> None:
        """Answer the waiting reads the cache has caught up with, and 504 those whose wait is over."""
        current = self.cache.resource_version
        still = []
        for w in self._waiting:
            if w.rv <= current and self.cache.ready:
                out.send(w.src, self._read_from_cache(w.request), w.stream)
            elif w.deadline <= now:
                out.send(w.src, Response(w.request.id, 504, too_large_resource_version(w.rv, current)), w.stream)
            else:
                still.append(w)
        self._waiting = still
        if still:
            first = min(w.deadline for w in still)
            if first != self._fresh_timer:
                self._fresh_timer = first
                out.set_timer(TIMER_FRESH, at=first)
        elif self._fresh_timer is not None:
            self._fresh_timer = None
            out.cancel_timer(TIMER_FRESH)

    def _read_from_cache(self, req: Request) -> Response:
        stored = storage_name(req.resource)  # another group version reads its stored resource's cache
        rc = self.cache.resources[stored]
        res = rc.resource
        if req.verb == "get":
            obj = rc.objects.get(object_key(res, req.namespace, req.name))
            if obj is None:
                group = res.group if stored == req.resource else (resource(req.resource) or res).group
                return Response(req.id, 404, errors.not_found(group, res.name, req.name).status)
            return Response(req.id, 200, obj)
        try:
            labels, fields = _selectors(req)
        except SelectorError as error:
            return Response(req.id, 400, errors.bad_request(str(error)).status)
        items = self.cache.list(stored, req.namespace, labels, fields)
        return Response(req.id, 200, ListResult(tuple(items), str(self.cache.resource_version)))

    def _watch(self, now: int, msg: Message, req: Request, out: Out) -> None:
        stream = msg.stream
        if stream is None:
            out.send(msg.src, Response(req.id, 400, errors.bad_request("a watch needs a stream").status))
            return
        admitted = self.pipeline.admit_read(req, now)
        if isinstance(admitted, Response):
            out.send(msg.src, admitted, stream)
            return
        stored = storage_name(req.resource)
        rc = self.cache.resources.get(stored)
        if rc is None:
            out.send(msg.src, Response(req.id, 404, resource_not_found()), stream)
            return
        if not self.cache.ready:
            out.send(msg.src, Response(req.id, 429, initializing()), stream)
            return
        try:
            labels, fields = _selectors(req)
        except SelectorError as error:
            out.send(msg.src, Response(req.id, 400, errors.bad_request(str(error)).status), stream)
            return
        rv = _parse_rv(req.resource_version)
        if rv is None:
            out.send(msg.src, _bad_rv(req), stream)
            return
        trigger = fields.required_value(rc.trigger_field) if rc.trigger_field and fields is not None else None
        w = CacheWatcher(msg.src, stream, req.id, stored, list_prefix(rc.resource, req.namespace),
                         name=req.name, labels=labels, fields=fields, bookmarks=req.allow_watch_bookmarks,
                         trigger=trigger, deadline=now + self._watch_timeout_ms(req))
        if self.cache.start_watch(w, rv, now, out):
            self._arm_watch_timeouts(out)
            if w.bookmarks:
                self._arm_bookmarks(out)

    def _watch_timeout_ms(self, req: Request) -> int:
        """GetTimeoutForWatch: timeoutSeconds when given and not 0 (a negative one ends the watch at once), else
        --min-request-timeout × [1, 2)."""
        if req.timeout_seconds:
            return max(req.timeout_seconds * 1000, 0)
        return int(MIN_REQUEST_TIMEOUT_MS * (self.watch_rng.random() + 1.0))

    def _arm_watch_timeouts(self, out: Out) -> None:
        due = self.cache.next_watch_deadline()
        if due is not None and due != self._timeouts_timer:
            self._timeouts_timer = due
            out.set_timer(TIMER_WATCH_TIMEOUTS, at=due)

    def _arm_bookmarks(self, out: Out) -> None:
        due = self.cache.next_bookmark_due()
        if due is not None and due != self._bookmark_timer:
            self._bookmark_timer = due
            out.set_timer(TIMER_BOOKMARKS, at=due)

    def bookmark_now(self, out: Out) -> None:
        """Send every bookmark-allowing watcher a bookmark now (the explorer's 'progress' input)."""
        self.cache.bookmark_now(out)


def _parse_rv(text: str) -> Optional[int]:
    if text == "":
        return 0
    try:
        rv = int(text)
    except ValueError:
        return None
    return rv if rv >= 0 else None


def _bad_rv(req: Request) -> Response:
    return Response(req.id, 400, errors.bad_request(f'invalid resource version "{req.resource_version}"').status)


def _selectors(req: Request) -> tuple[Any, Any]:
    labels = parse_label_selector(req.label_selector) if req.label_selector else None
    fields = parse_field_selector(req.field_selector, storage_name(req.resource)) if req.field_selector else None
    return labels, fields
