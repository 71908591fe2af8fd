"""The REST client every component reaches the API with (client-go's rest.Client and typed clients, sans-IO).

Theory of operation
-------------------
A component embeds one `ApiClient` and forwards to it the messages, timers and stream closings it does not
recognise (`on_message`, `on_timer`, `on_stream_closed` return True when they consumed the input). The
client never delivers anything: each call appends effects to the `out` it is given.

Requests. `request` (and the typed helpers `get`, `list`, `create`, `update`, `update_status`, `patch`,
`delete`, `bind`) builds a `Request` with the next id (a counter that survives `reset`, so an answer meant for
the process before a crash is never taken for a new request), sends it to the current endpoint and keeps a
continuation ``on_done(now, response, out)`` for the `Response` with that id. Each request has a deadline
(`timeout_ms`, default 60 s, kube-apiserver's own request timeout); one client timer (``<prefix>deadline``)
is armed at the earliest deadline, so the number of timer names stays constant. When a request times out
the client fails over to the next endpoint (round robin over `endpoints`, standing in for a new connection
through the load balancer). A read (get, list) is then resent there, with the same id, up to
`read_attempts` times in all; a write is not resent (client-go retries only GETs on connection errors,
since a write may have been applied) and its continuation gets a 504 ``Timeout`` status built by the
client (`client_timeout`).

Crashed API servers. A timeout is how a client learns of a request lost across a partition or dropped. A
crashed API server's machine is still there, and its kernel answers for it: when the process crashes, every
client that reaches it learns at once that its connection was reset (`on_connection_reset`, told by the
loop), and its unanswered requests there fail as client-go fails them: a read is resent to the next endpoint
a second later (client-go retries a GET on a reset connection after a made-up "Retry-After: 1"), anything else
gets a 503 built by the client (`connection_lost`: a write may have been applied before the crash). A request
sent to an API server that is down is refused at once (`on_send_refused`): it never arrived, so it goes to
the next endpoint whatever its verb, as a load balancer redispatches a refused connection, and fails with
`connection_lost` once every endpoint has refused it. Answers the server sent before it crashed are still
delivered, first (its kernel had them): their requests are not failed.

A connection across a partition. Nothing comes back, so a request waits for its deadline and a watch hangs,
until the transport's health check gives up on the connection (kmodel.loop.health: about 30 to 45 s after the
cut), or, for a connection that had to be dialed across the partition, until the dial times out (30 s). Then
the client is told (`on_connection_lost`): it fails over, each of its watches there ends with the error event
client-go's watch decoder makes of the transport's error (a 500 to its ``on_event``, `watch_decoding_error`),
and its requests there fail as on a reset connection, a write with a 503 giving the transport's error.

Watches. `watch` opens a stream ``<owner>/watch-<n>`` to the current endpoint and sends the watch request
on it. `WatchEvent`s arriving on it go to ``on_event(now, stream, event, out)``; the server's final
`Response` on the stream, or the stream breaking (``None``), goes to ``on_closed(now, stream, response,
out)``. A broken stream also fails the client over to the next endpoint. `stop_watch` closes a stream.

Rate limits. A client given a `rate_limit` (rest.Config's QPS and Burst; kmodel/client/rate_limiter.py) takes
a token for each new request, as rest.Request's tryThrottle does; a request that finds the bucket empty waits,
on the `later` timer, and is sent (and its deadline starts) when its token comes, in the order the requests
were made. Informers' lists (`informer=True`) take one too when the informers share the component's client
(the kubelet's, the scheduler's and kube-proxy's informer factories are given the component's own clientset),
and neither wait nor take one when an `informer_token` is given (a controller built outside a cluster, whose
informers stand for kube-controller-manager's: in a cluster they run on the process's "shared-informers"
client, kmodel.controllers.shared_informers, whose lists take their tokens from its own bucket). Watch
requests never take one (rest.Request.Watch: "we specifically don't want to rate limit watches"), nor do
resends after a timeout, a reset or a refusal. A crash forgets the waiting requests, and the new process
starts with a full bucket.

Retry-After. An answer that is a 429, or any 5xx, whose Status carries retryAfterSeconds (the Retry-After header
kube-apiserver sets from it) is not given to the caller: the request is sent again that many seconds later,
whatever its verb, with the same id, taking a token from the rate limit again if it took one, up to
`MAX_RETRIES` (10) times; the answer after the last retry goes to the caller whatever it is. That is client-go's
rest.Request (withRetry: checkWait, IsNextRetry, Before's tryThrottle), Kubernetes 1.28-1.32. A 429 or 5xx
without it goes to the caller at once. Each resend gets a deadline of its own (client-go's rest.Config.Timeout
would span the retries; kube-controller-manager and the kubelet set none). `retried_after` counts the resends.

`call_later(now, out, delay_ms, fn)` runs ``fn(now, out)`` after a delay, on one more client timer
(``<prefix>later``); informers and retry loops use it for their backoffs.

Updates. Every update carries the resourceVersion its body was read at (metadata.resourceVersion), the
precondition the API server checks. An observer's instrumentation, not part of client-go: for each update
the server accepted (an object came back), the client appends an `UpdateRecord` to `updates` (which survives
`reset`): what it wrote, the resourceVersion its body was read at, and the one the answer carries. The
`occ-no-lost-update` invariant reads it (an answer that never arrives leaves no record).

Variants (kmodel.variants; a client is built with its cluster's `Switches`, kmodel.switches, and reads the
variant from them). The update path of `request` is the one place two of them switch:

* ``blind-writes``: the client strips metadata.resourceVersion from every update body, so the API server
  takes the update unconditionally (Kubernetes allows that for every resource the model serves) and the
  last writer wins. The record above still says which version the body was read at.
* ``pessimistic-locking``: the controller manager's writers take a lock around each update
  (kmodel/client/pessimistic_locking.py: a Lease without expiry, created before the update and deleted
  after its answer; a writer that finds it taken waits and tries again).
"""

from __future__ import annotations

import heapq
import random
from typing import Any, Callable, NamedTuple, Optional, Sequence

from kmodel.apiserver.wire import PatchBody, Request, Response, Status, WatchEvent
from kmodel.component import Out
from kmodel.network import Message
from kmodel.objects.core import Binding
from kmodel.objects.meta import ObjectMeta, ObjectReference
from kmodel.variants import BLIND_WRITES, DEFAULT, PESSIMISTIC_LOCKING
from kmodel.objects.fastevolve import constructor, evolve
from kmodel.client.rate_limiter import RateLimit
from kmodel.fixes import REFLECTOR_CONSISTENT_FIRST_LIST
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.client.pessimistic_locking import locked_update, takes_locks

Done = Callable[[int, Response, Out], None]
OnEvent = Callable[[int, str, WatchEvent, Out], None]
OnClosed = Callable[[int, str, Optional[Response], Out], None]
#: Request(...) from every field in order (id, verb, resource, namespace, name, subresource, body, token,
#: resource_version, label_selector, field_selector, allow_watch_bookmarks, field_validation,
#: grace_period_seconds, timeout_seconds, propagation_policy, field_manager, force, dry_run), its slots filled
#: directly: one per request sent
_request = constructor(Request)

DEFAULT_TIMEOUT_MS = 60_000
#: how long client-go waits before it resends a GET whose connection was reset (the "Retry-After: 1" response
#: it makes up for that error, rest.Request's isErrRetryableFunc)
RESET_RETRY_AFTER_MS = 1_000
READ_VERBS = ("get", "list")
#: client-go's rest.Request maxRetries: how many times a request answered with Retry-After is sent again
MAX_RETRIES = 10


def retry_after_ms(response: Response) -> int:
    """How long to wait before sending the request again, in ms, when its answer asks for it: a 429 or a 5xx
    whose Status carries retryAfterSeconds > 0 (client-go's checkWait, reading the Retry-After header the
    server set from it); 0 when it does not."""
    code = response.code
    if code != 429 and code < 500:
        return 0
    details = getattr(response.body, "details", None)
    seconds = getattr(details, "retry_after_seconds", 0) or 0
    return seconds * 1000 if seconds > 0 else 0


def client_timeout(request: Request, endpoint: str) -> Response:
    """What a caller gets when no answer came in time (client-go's context deadline error, as a Status)."""
    return Response(request.id, 504, Status(
        504, "Timeout", f'{request.verb} {request.resource} on {endpoint}: context deadline exceeded '
                        f'(Client.Timeout exceeded while awaiting headers)'))


def connection_lost(request: Request, endpoint: str) -> Response:
    """What a caller gets when the API server's process was down: its connection reset with the request
    unanswered, or every endpoint refused it (client-go's transport error, as a Status: a 503, as a load
    balancer with no backend left answers)."""
    return Response(request.id, 503, Status(
        503, "ServiceUnavailable", f'{request.verb} {request.resource} on {endpoint}: connection refused or '
                                   f'reset (the API server is down)'))


HTTP2_CONNECTION_LOST = "http2: client connection lost"


def transport_error(reason: str) -> Callable[[Request, str], Response]:
    """What a caller gets when its transport gave up on the connection the request was on (kmodel.loop.health):
    `reason` is the transport's error (golang.org/x/net/http2's errClientConnLost, or a dial's i/o timeout), as a
    Status: a 503, like `connection_lost`, since a write may have been applied."""
    def error(request: Request, endpoint: str) -> Response:
        return Response(request.id, 503, Status(
            503, "ServiceUnavailable", f"{request.verb} {request.resource} on {endpoint}: {reason}"))
    return error


http2_connection_lost = transport_error(HTTP2_CONNECTION_LOST)


def watch_decoding_error(reason: str) -> WatchEvent:
    """The ERROR event client-go's StreamWatcher sends its watcher when reading the stream failed with `reason`
    and that is not a probable EOF (io.EOF, a reset, a closed connection: those end the watch quietly):
    errors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding")'s Status."""
    return WatchEvent("ERROR", Status(500, "InternalError",
                                      f"unable to decode an event from the watch stream: {reason}",
                                      details="ClientWatchDecoding"))


class UpdateRecord(NamedTuple):
    """An update the API server accepted, as the client that sent it saw it (see the module docstring)."""

    resource: str
    namespace: str
    name: str
    subresource: str
    read_rv: int  # the resourceVersion the body was read at (what the client had before stripping it)
    written_rv: int  # the resourceVersion of the object that came back
    sent: int  # logical ms
    answered: int


def _read_rv(body: Any) -> str:
    meta = getattr(body, "metadata", None)
    return getattr(meta, "resource_version", "") or ""


def without_resource_version(body: Any) -> Any:
    """The body with no metadata.resourceVersion: an unconditional update (the `blind-writes` variant)."""
    return evolve(body, metadata=evolve(body.metadata, resource_version=""))


_WRITE_VERBS = frozenset(("create", "update", "patch", "delete"))
#: the writes `write_guard` is not asked about: Events report, the leader-election Leases are the election itself
_UNGUARDED = frozenset(("events", "leases"))


class _Pending:
    __slots__ = ("request", "on_done", "deadline", "attempts", "endpoint", "read_rv", "sent", "refusals",
                 "timeout_ms", "retries", "throttled")

    def __init__(self, request: Request, on_done: Optional[Done], deadline: int, attempts: int, endpoint: str,
                 timeout_ms: int):
        self.request, self.on_done, self.deadline, self.attempts, self.endpoint = (
            request, on_done, deadline, attempts, endpoint)
        self.timeout_ms = timeout_ms  # this request's own (each resend gets it again)
        self.read_rv = ""  # an update's: the resourceVersion its body was read at
        self.sent = 0
        self.refusals = 0  # endpoints that refused it in a row (see on_send_refused)
        self.retries = 0  # resends after a Retry-After (see the module docstring)
        self.throttled = False  # it took a token from the client's rate limit


class _Watch:
    __slots__ = ("request", "on_event", "on_closed", "endpoint")

    def __init__(self, request: Request, on_event: OnEvent, on_closed: OnClosed, endpoint: str) -> None:
        self.request, self.on_event, self.on_closed, self.endpoint = request, on_event, on_closed, endpoint


class ApiClient:
    """Requests and watches to the API server replicas of one component. See the module docstring."""

    #: what invariants may read of it (kmodel.invariants.records): its updates, its informers' lives, the
    #: revisions its writes were answered with, and how many requests it resent after a Retry-After
    RECORDS: frozenset[str] = frozenset({"updates", "informer_lives", "written_rvs", "retried_after"})

    def __init__(self, owner: str, endpoints: Sequence[str], *, token: str = "", informer_token: Optional[str] = None,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS, read_attempts: int = 3, timer_prefix: str = "api/",
                 rate_limit: Optional[RateLimit] = None, switches: Switches = DEFAULT_SWITCHES) -> None:
        if not endpoints:
            raise ValueError("an ApiClient needs at least one API server endpoint")
        self.owner = owner
        self.endpoints = list(endpoints)
        self.token = token
        #: the identity of informers' lists and watches (`informer=True`): kube-controller-manager's shared informer
        #: factory has a client of its own, with the controller manager's identity; None: `token`
        self.informer_token = token if informer_token is None else informer_token
        #: whether informers list through a client of their own (kube-controller-manager's "shared-informers"
        #: client), outside this client's rate limit; otherwise they share this client's bucket
        self.informers_own_client = informer_token is not None
        self.timeout_ms = timeout_ms
        self.read_attempts = read_attempts
        self.rate_limit = rate_limit  # rest.Config's QPS and Burst; None: no client-side limit
        self.deadline_timer = timer_prefix + "deadline"
        self.later_timer = timer_prefix + "later"
        self._next_id = 0  # survives reset (see the module docstring)
        self._watch_seq = 0
        self._later_seq = 0
        #: the anti-pattern variant this client runs (kmodel.variants), from its switches
        self.variant = switches.variant
        #: whether this client's updates take the `pessimistic-locking` variant's lock (a built-in controller's, whose
        #: service account the lock role is bound to: kmodel/client/pessimistic_locking.py), from its switches
        self.takes_locks = token in switches.lock_holders
        #: the `reflector-consistent-first-list` fix (kmodel.fixes): this client's informers list consistently
        #: (resourceVersion "") the first time, not from a watch cache; from its switches
        self.consistent_first_list = switches.on(REFLECTOR_CONSISTENT_FIRST_LIST)
        #: this process's random source (Go's math/rand) for its reflectors' watch timeouts and backoff jitter; the
        #: cluster seeds it from the run's seed and the owner, so a run replays
        self.rng = random.Random(f"{owner}/rand")
        #: the updates the API server accepted (an observer's record, survives reset; see the module docstring)
        self.updates: list[UpdateRecord] = []
        #: requests sent again after an answer with Retry-After (an observer's count, survives reset)
        self.retried_after = 0
        #: asked before each write is sent (not Events, not the leader-election Leases): an observer's record of
        #: a process's writes and, with the leaderelection-fence-writes fix, its refusal of a write while the
        #: process does not hold its lease (kmodel.client.leaderelection: `Leadership.guard`); a refusal (a
        #: non-empty reason) answers the write with a 503 at once, unsent. None: no guard
        self.write_guard: Optional[Callable[[int, str, str, str], str]] = None
        #: how many times this client's process started (a crash starts a new one)
        self.incarnation = 0
        #: every life of every informer built on this client (an observer's record, survives reset): informer
        #: identity (resource, namespace, label selector, field selector) -> (incarnation, the informer's
        #: `exposed` record, where this life's part of it begins), in order; kmodel.client.informer keeps it and
        #: the restart-no-time-travel invariant reads it, so what a restarted process's informers expose can be
        #: compared with what its earlier lives' informers did (they are gone from the component by then)
        self.informer_lives: dict[tuple[str, str, str, str], list[tuple[int, list[int], int]]] = {}
        #: resource -> incarnation -> the newest resourceVersion a write of that life to that resource came back
        #: with (2xx answers whose body has one; an observer's record, survives reset; read by
        #: restart-no-time-travel: a restarted process's view must not predate its own acknowledged writes)
        self.written_rvs: dict[str, dict[int, int]] = {}
        #: the endpoint of the request or watch whose answer (or failure) a continuation is handling now: a caller
        #: that fails over because of it calls `fail_over_from(answered_by)`
        self.answered_by = ""
        self.reset()

    def reset(self) -> None:
        """Forget everything in flight (the owning component crashed)."""
        self.incarnation += 1
        self._current = 0
        self._pending: dict[int, _Pending] = {}
        self._deadlines: list[tuple[int, int]] = []
        self._deadline_armed: Optional[int] = None
        self._watches: dict[str, _Watch] = {}
        self._later: list[tuple[int, int, Callable[[int, Out], None]]] = []
        self._later_armed: Optional[int] = None
        # a new process, a new (full) bucket; requests still waiting for a token were on `_later`, now gone
        self._bucket = None if self.rate_limit is None else self.rate_limit.bucket()

    # -- endpoints ---------------------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return self.endpoints[self._current]

    def failover(self) -> None:
        """Use the next endpoint from now on (round robin)."""
        self._current = (self._current + 1) % len(self.endpoints)

    def _failed(self, endpoint: str) -> None:
        if endpoint == self.endpoint:
            self.failover()

    def fail_over_from(self, endpoint: str) -> None:
        """Use the next endpoint, if `endpoint` is still the current one (a caller whose answer came from a replica
        that failed it; after the client or another caller moved on already, nothing more moves)."""
        self._failed(endpoint)

    # -- requests ----------------------------------------------------------------------------------------------

    def writes_outstanding(self) -> list[int]:
        """The request ids of this client's writes (create, update, patch, delete; Events aside: they report a
        change, they are not part of it) sent and not answered yet: its owner is in the middle of a change."""
        if not self._pending:
            return []
        return [rid for rid, p in self._pending.items()
                if p.request.verb in _WRITE_VERBS and p.request.resource != "events"]

    def request(self, now: int, out: Out, verb: str, resource: str, *, namespace: str = "", name: str = "",
                subresource: str = "", body: Any = None, resource_version: str = "", label_selector: str = "",
                field_selector: str = "", grace_period_seconds: Optional[int] = None,
                on_done: Optional[Done] = None, informer: bool = False, timeout_ms: Optional[int] = None,
                throttled: bool = True, propagation_policy: str = "", field_manager: str = "",
                force: bool = False) -> int:
        """Send one request; `on_done(now, response, out)` gets its answer. Returns the request id.
        `grace_period_seconds` is a delete's DeleteOptions.gracePeriodSeconds (None: the object's own), and
        `propagation_policy` its propagationPolicy ("": the server's default). `field_manager` and `force`: a
        write's fieldManager and an apply's force (see `apply`).
        `informer=True` marks an informer's list: sent with `informer_token`, past the client's rate limit when
        the informers have a client of their own (see the module docstring). `timeout_ms` overrides the client's
        request timeout, and `throttled=False` sends past its rate limit: a request of a client built from a copy
        of the config with its own Timeout and QPS -1 (the kubelet's heartbeat client), over the same
        connections. The keywords are built once into the `Request` sent (kmodel.apiserver.wire), which is what
        goes down the send path and through the pessimistic-locking variant's lock."""
        guard = self.write_guard
        if guard is not None and verb in _WRITE_VERBS and resource not in _UNGUARDED:
            refusal = guard(now, self.owner, verb, resource)
            if refusal:
                return self._refuse(now, out, verb, resource, refusal, on_done)
        read_rv = ""
        locked = False
        if verb == "update":
            read_rv = _read_rv(body)
            variant = self.variant
            if variant != DEFAULT:
                if variant == BLIND_WRITES and read_rv:
                    body = without_resource_version(body)
                elif variant == PESSIMISTIC_LOCKING and resource != "leases":
                    locked = takes_locks(self)
        # the request, built once here and passed down as one value; numbered now unless the lock puts its
        # sending off (then numbered when sent: a client numbers its requests in the order they leave it)
        if not locked:
            self._next_id += 1
        req = _request(0 if locked else self._next_id, verb, resource, namespace, name, subresource, body,
                       self.informer_token if informer else self.token, resource_version, label_selector,
                       field_selector, False, "Strict", grace_period_seconds, None, propagation_policy,
                       field_manager, force, False)
        # an informer's list, when the informers have a client of their own, is past this client's rate limit
        throttled = throttled and not (informer and self.informers_own_client)
        if locked:
            return locked_update(self, now, out, req, on_done, lambda t, o, done: self._send_request(
                t, o, self._numbered(req), done, read_rv, timeout_ms, throttled))
        return self._send_request(now, out, req, on_done, read_rv, timeout_ms, throttled)

    def _numbered(self, draft: Request) -> Request:
        """`draft` (a request built before it could be sent) with the next request id."""
        self._next_id += 1
        return evolve(draft, id=self._next_id)

    def _refuse(self, now: int, out: Out, verb: str, resource: str, reason: str, on_done: Optional[Done]) -> int:
        """A write the guard refused: never sent; its caller gets a 503 with `reason` a moment later."""
        self._next_id += 1
        rid = self._next_id
        if on_done is not None:
            response = Response(rid, 503, Status(503, "ServiceUnavailable", f"{verb} {resource}: {reason}"))
            self.call_later(now, out, 0, lambda t, o: on_done(t, response, o))
        return rid

    def _send_request(self, now: int, out: Out, req: Request, on_done: Optional[Done], read_rv: str,
                      timeout_ms: Optional[int], throttled: bool) -> int:
        """Send `req` (numbered) once the client's rate limit gives it a token, when it is `throttled`; `read_rv`:
        an update's body's resourceVersion, for the record of updates; `timeout_ms`: None for the client's own."""
        bucket = self._bucket
        takes_token = bucket is not None and throttled
        at = bucket.reserve(now) if takes_token else now  # type: ignore[union-attr]
        timeout = self.timeout_ms if timeout_ms is None else timeout_ms
        if at > now:  # the bucket is empty: the request waits for its token, as rest.Request's tryThrottle does
            self.call_later(now, out, at - now,
                            lambda t, o: self._send_first(t, o, req, on_done, read_rv, timeout, takes_token))
        else:
            self._send_first(now, out, req, on_done, read_rv, timeout, takes_token)
        return req.id

    def _send_first(self, now: int, out: Out, req: Request, on_done: Optional[Done], read_rv: str,
                    timeout_ms: int, throttled: bool) -> None:
        self._send(now, out, req, on_done, 1, timeout_ms)
        p = self._pending[req.id]
        p.throttled = throttled
        if read_rv:
            p.read_rv, p.sent = read_rv, now

    def _send(self, now: int, out: Out, req: Request, on_done: Optional[Done], attempts: int,
              timeout_ms: int) -> None:
        endpoint = self.endpoint
        out.send(endpoint, req)
        deadline = now + timeout_ms
        self._pending[req.id] = _Pending(req, on_done, deadline, attempts, endpoint, timeout_ms)
        heapq.heappush(self._deadlines, (deadline, req.id))
        if self._deadline_armed is None or deadline < self._deadline_armed:
            self._deadline_armed = deadline
            out.set_timer(self.deadline_timer, at=deadline)

    def get(self, now: int, out: Out, resource: str, name: str, *, namespace: str = "", resource_version: str = "",
            on_done: Optional[Done] = None, **options: Any) -> int:
        return self.request(now, out, "get", resource, namespace=namespace, name=name,
                            resource_version=resource_version, on_done=on_done, **options)

    def list(self, now: int, out: Out, resource: str, *, namespace: str = "", resource_version: str = "",
             label_selector: str = "", field_selector: str = "", on_done: Optional[Done] = None,
             informer: bool = False) -> int:
        return self.request(now, out, "list", resource, namespace=namespace, resource_version=resource_version,
                            label_selector=label_selector, field_selector=field_selector, on_done=on_done,
                            informer=informer)

    def create(self, now: int, out: Out, resource: str, obj: Any, *, namespace: Optional[str] = None,
               on_done: Optional[Done] = None, **options: Any) -> int:
        ns = obj.metadata.namespace if namespace is None else namespace
        return self.request(now, out, "create", resource, namespace=ns, body=obj, on_done=on_done, **options)

    def update(self, now: int, out: Out, resource: str, obj: Any, *, subresource: str = "",
               on_done: Optional[Done] = None, **options: Any) -> int:
        meta = obj.metadata
        return self.request(now, out, "update", resource, namespace=meta.namespace, name=meta.name,
                            subresource=subresource, body=obj, on_done=on_done, **options)

    def update_status(self, now: int, out: Out, resource: str, obj: Any, *, on_done: Optional[Done] = None,
                      **options: Any) -> int:
        return self.update(now, out, resource, obj, subresource="status", on_done=on_done, **options)

    def patch(self, now: int, out: Out, resource: str, name: str, patch: Any, *, namespace: str = "",
              subresource: str = "", on_done: Optional[Done] = None, field_manager: str = "") -> int:
        """A JSON merge patch (a dict in the object's JSON shape), or a PatchBody."""
        return self.request(now, out, "patch", resource, namespace=namespace, name=name, subresource=subresource,
                            body=patch, on_done=on_done, field_manager=field_manager)

    def apply(self, now: int, out: Out, resource: str, name: str, config: dict, *, field_manager: str,
              namespace: str = "", force: bool = False, on_done: Optional[Done] = None) -> int:
        """A server-side apply of `config` (the object's JSON shape, apiVersion and kind included) as
        `field_manager`; `force` takes fields other managers own instead of failing with 409 Conflict."""
        return self.request(now, out, "patch", resource, namespace=namespace, name=name,
                            body=PatchBody("apply", config), on_done=on_done, field_manager=field_manager,
                            force=force)

    def delete(self, now: int, out: Out, resource: str, name: str, *, namespace: str = "", body: Any = None,
               grace_period_seconds: Optional[int] = None, propagation_policy: str = "",
               on_done: Optional[Done] = None) -> int:
        return self.request(now, out, "delete", resource, namespace=namespace, name=name, body=body,
                            grace_period_seconds=grace_period_seconds, propagation_policy=propagation_policy,
                            on_done=on_done)

    def bind(self, now: int, out: Out, namespace: str, pod: str, node: str, *,
             on_done: Optional[Done] = None) -> int:
        """POST pods/<pod>/binding with target Node <node> (what the scheduler does)."""
        binding = Binding(metadata=ObjectMeta(name=pod, namespace=namespace),
                          target=ObjectReference(kind="Node", name=node))
        return self.request(now, out, "create", "pods", namespace=namespace, name=pod, subresource="binding",
                            body=binding, on_done=on_done)

    # -- watches -----------------------------------------------------------------------------------------------

    def watch(self, now: int, out: Out, resource: str, *, on_event: OnEvent, on_closed: OnClosed,
              namespace: str = "", name: str = "", resource_version: str = "", label_selector: str = "",
              field_selector: str = "", allow_bookmarks: bool = True, timeout_seconds: Optional[int] = None) -> str:
        """Open a watch (an informer's: sent with `informer_token`); returns its stream id. `timeout_seconds`:
        ListOptions.timeoutSeconds (None: the server's default)."""
        self._next_id += 1
        self._watch_seq += 1
        stream = f"{self.owner}/watch-{self._watch_seq}"
        req = Request(self._next_id, "watch", resource, namespace, name, "", None, self.informer_token,
                      resource_version, label_selector, field_selector, allow_bookmarks,
                      timeout_seconds=timeout_seconds)
        endpoint = self.endpoint
        self._watches[stream] = _Watch(req, on_event, on_closed, endpoint)
        out.send(endpoint, req, stream)
        return stream

    def stop_watch(self, stream: str, out: Out) -> None:
        if self._watches.pop(stream, None) is not None:
            out.close_stream(stream)

    @property
    def open_watches(self) -> list[str]:
        return list(self._watches)

    # -- inputs forwarded by the owning component ----------------------------------------------------------------

    def on_message(self, now: int, msg: Message, out: Out) -> bool:
        stream = msg.stream
        payload = msg.payload
        if stream is None:
            if type(payload) is not Response:
                return False
            p = self._pending.pop(payload.id, None)
            if p is None:
                return True  # a late answer to a request already timed out or retried: dropped
            if not self._pending and self._deadline_armed is not None:
                self._deadline_armed = None
                self._deadlines.clear()
                out.cancel_timer(self.deadline_timer)
            if payload.code >= 429 and p.retries < MAX_RETRIES:
                wait = retry_after_ms(payload)
                if wait:
                    self.retried_after += 1
                    self.call_later(now, out, wait, lambda t, o, p=p: self._retry_after(t, o, p))
                    return True
            if p.read_rv and payload.code < 300:
                self._record_update(now, p, payload)
            if payload.code < 300 and p.request.verb in _WRITE_VERBS:
                self._record_written(p, payload)
            if p.on_done is not None:
                self.answered_by = p.endpoint
                p.on_done(now, payload, out)
            return True
        w = self._watches.get(stream)
        if w is None:
            return stream.startswith(self.owner + "/watch-")  # an event on a watch we stopped
        if type(payload) is WatchEvent:
            w.on_event(now, stream, payload, out)
        else:  # the server ended the watch
            del self._watches[stream]
            out.close_stream(stream)
            self.answered_by = w.endpoint
            w.on_closed(now, stream, payload, out)
        return True

    def _record_update(self, now: int, p: _Pending, response: Response) -> None:
        written = _read_rv(response.body)
        if written:
            r = p.request
            self.updates.append(UpdateRecord(r.resource, r.namespace, r.name, r.subresource, int(p.read_rv),
                                             int(written), p.sent, now))

    def _record_written(self, p: _Pending, response: Response) -> None:
        written = _read_rv(response.body)
        if written:
            by_life = self.written_rvs.setdefault(p.request.resource, {})
            by_life[self.incarnation] = max(by_life.get(self.incarnation, 0), int(written))

    def on_stream_closed(self, now: int, stream: str, out: Out) -> bool:
        w = self._watches.pop(stream, None)
        if w is None:
            return stream.startswith(self.owner + "/watch-")
        self._failed(w.endpoint)
        self.answered_by = w.endpoint
        w.on_closed(now, stream, None, out)
        return True

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        """`peer` crashed with requests of this client unanswered: each whose answer is not `arriving` (sent
        before the crash, still on its way) is failed now, in id order, as client-go fails a request whose
        connection was reset: a read is resent to the next endpoint a second later (client-go retries a GET on
        a reset connection after a made-up "Retry-After: 1"), up to `read_attempts` in all; anything else gets
        `connection_lost` (a write may have been applied before the crash)."""
        answered = {r.id for r in arriving if type(r) is Response}
        self._fail_requests_on(now, out, peer, answered, connection_lost)

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        """The transport gave up on the connection to `peer` (kmodel.loop.health: its health check found it
        dead, or its dial timed out). The client fails over even with nothing outstanding there: its next
        request needs a new connection, which the load balancer gives to a replica that answers. Each watch
        there (its stream has ended) gets an ERROR event, as client-go's StreamWatcher reports a decode error
        that is not a probable EOF: a 500 "unable to decode an event from the watch stream: `reason`" (the
        ClientWatchDecoding reporter), on which a reflector relists after its backoff. Then every request
        awaiting an answer there fails as on a reset connection (`on_connection_reset`: client-go retries a GET
        on "http2: client connection lost" as on a reset), a write with a 503 saying `reason`."""
        self._failed(peer)
        for stream in sorted(s for s, w in self._watches.items() if w.endpoint == peer):
            w = self._watches.pop(stream, None)
            if w is None:
                continue  # stopped by a handler of an earlier one
            out.close_stream(stream)  # ended already (closing twice is harmless)
            self.answered_by = peer
            w.on_event(now, stream, watch_decoding_error(reason), out)
        self._fail_requests_on(now, out, peer, set(), transport_error(reason))

    def close_all_connections(self, now: int, out: Out) -> None:
        """The process closes every connection its clients have (the kubelet's onRepeatedHeartbeatFailure,
        closeAllConns: a connection may be dead long before the health check gives up on it). Every watch ends
        (each goes to its ``on_closed`` as broken), and every request awaiting an answer fails as on a lost
        connection (`on_connection_lost`). New connections go to the current endpoint: the client does not fail
        over for this (a timeout or a loss already moved it off a replica that did not answer)."""
        lost = list(self._pending.values())  # not what the handlers below send on new connections
        for stream in list(self._watches):
            w = self._watches.pop(stream)
            out.close_stream(stream)
            self.answered_by = w.endpoint
            w.on_closed(now, stream, None, out)
        self._fail(now, out, lost, http2_connection_lost)

    def _fail_requests_on(self, now: int, out: Out, peer: str, answered: set,
                          error: Callable[[Request, str], Response]) -> None:
        lost = [p for p in self._pending.values() if p.endpoint == peer and p.request.id not in answered]
        if not lost:
            return
        self._failed(peer)
        self._fail(now, out, lost, error)

    def _fail(self, now: int, out: Out, lost: list, error: Callable[[Request, str], Response]) -> None:
        for p in lost:
            if self._pending.get(p.request.id) is not p:
                continue  # failed already by a handler of an earlier one (the kubelet closing all connections)
            if p.request.verb in READ_VERBS and p.attempts < self.read_attempts:
                # client-go retries it after the artificial "Retry-After: 1" it sets for a reset connection
                del self._pending[p.request.id]
                self.call_later(now, out, RESET_RETRY_AFTER_MS,
                                lambda t, o, p=p: self._resend(t, o, p, p.attempts + 1))
            else:
                self._fail_now(now, out, p, p.endpoint, error)
        self._disarm_if_idle(out)

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        """A request just sent to `dst` was refused (its API server is down): it never arrived, so it goes to
        the next endpoint at once, whatever its verb, as a load balancer redispatches a connection its backend
        refused; once every endpoint has refused it, the caller gets `connection_lost`."""
        if type(payload) is not Request:
            return
        p = self._pending.get(payload.id)
        if p is None or p.endpoint != dst:
            return
        self._failed(dst)
        if p.refusals + 1 < len(self.endpoints):
            self._resend(now, out, p, p.attempts, refusals=p.refusals + 1)
        else:
            self._fail_now(now, out, p, dst, connection_lost)
            self._disarm_if_idle(out)

    def _resend(self, now: int, out: Out, p: "_Pending", attempts: int, refusals: int = 0, retries: int = -1) -> None:
        self._send(now, out, p.request, p.on_done, attempts, p.timeout_ms)
        q = self._pending[p.request.id]
        q.read_rv, q.sent, q.refusals, q.throttled = p.read_rv, p.sent, refusals, p.throttled
        q.retries = p.retries if retries < 0 else retries

    def _retry_after(self, now: int, out: Out, p: "_Pending") -> None:
        """Send `p` again after its Retry-After, through the rate limit when it took a token (withRetry.Before
        throttles every retry as it throttled the first try)."""
        bucket = self._bucket
        at = bucket.reserve(now) if p.throttled and bucket is not None else now
        if at > now:
            self.call_later(now, out, at - now,
                            lambda t, o: self._resend(t, o, p, p.attempts, retries=p.retries + 1))
        else:
            self._resend(now, out, p, p.attempts, retries=p.retries + 1)

    def _fail_now(self, now: int, out: Out, p: "_Pending", endpoint: str,
                  error: Callable[[Request, str], Response]) -> None:
        del self._pending[p.request.id]
        if p.on_done is not None:
            self.answered_by = p.endpoint
            p.on_done(now, error(p.request, endpoint), out)

    def _disarm_if_idle(self, out: Out) -> None:
        if not self._pending and self._deadline_armed is not None:
            self._deadline_armed = None
            self._deadlines.clear()
            out.cancel_timer(self.deadline_timer)

    def on_timer(self, now: int, name: str, out: Out) -> bool:
        if name == self.deadline_timer:
            self._deadline_armed = None
            self._expire(now, out)
            return True
        if name == self.later_timer:
            self._later_armed = None
            later = self._later
            while later and later[0][0] <= now:
                _, _, fn = heapq.heappop(later)
                fn(now, out)
            self._arm_later(out)
            return True
        return False

    def _expire(self, now: int, out: Out) -> None:
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            deadline, rid = heapq.heappop(deadlines)
            p = self._pending.get(rid)
            if p is None or p.deadline != deadline:
                continue  # answered, or resent with a later deadline
            self._failed(p.endpoint)
            if p.request.verb in READ_VERBS and p.attempts < self.read_attempts:
                self._send(now, out, p.request, p.on_done, p.attempts + 1, p.timeout_ms)
                continue
            del self._pending[rid]
            if p.on_done is not None:
                self.answered_by = p.endpoint
                p.on_done(now, client_timeout(p.request, p.endpoint), out)
        while deadlines and deadlines[0][1] not in self._pending:
            heapq.heappop(deadlines)
        if deadlines and deadlines[0][0] != self._deadline_armed:
            self._deadline_armed = deadlines[0][0]
            out.set_timer(self.deadline_timer, at=deadlines[0][0])

    # -- delayed continuations -----------------------------------------------------------------------------------

    def latest_deadline(self) -> Optional[int]:
        """The latest due time of what waits behind the client's two timers (request deadlines, some perhaps of
        requests answered since; calls put off with `call_later`), or None."""
        dues = [d for d, _ in self._deadlines]
        dues.extend(t for t, _, _ in self._later)
        return max(dues, default=None)

    def call_later(self, now: int, out: Out, delay_ms: int, fn: Callable[[int, Out], None]) -> None:
        """Run `fn(now, out)` `delay_ms` from now (on the client's `later` timer)."""
        self._later_seq += 1
        heapq.heappush(self._later, (now + delay_ms, self._later_seq, fn))
        self._arm_later(out)

    def _arm_later(self, out: Out) -> None:
        if self._later and self._later[0][0] != self._later_armed:
            self._later_armed = self._later[0][0]
            out.set_timer(self.later_timer, at=self._later_armed)
