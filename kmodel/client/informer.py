"""An informer: client-go's reflector + indexer + event handlers, simplified and sans-IO.

Theory of operation
-------------------
`start` lists, then watches from the list's resourceVersion; every event updates the `Indexer` and calls
the handlers ``on_add(now, obj, out)``, ``on_update(now, old, new, out)``, ``on_delete(now, obj, out)`` of
every `Listener`, in registration order (the constructor's handlers first; a shared informer's listeners are
its process's controllers', kmodel.client.shared_informer).
`last_rv` is the newest resourceVersion the informer has seen (list, event or bookmark).

It never goes back in time (client-go's reflector since 1.27):

* The first list asks resourceVersion "0" (served from a watch cache, possibly stale: nothing has been seen
  yet by this process, though its previous incarnation may have seen more; kubernetes#59848, which the
  restart-no-time-travel invariant flags, and the `reflector-consistent-first-list` fix, kmodel.fixes, which
  asks "" instead). Every later list asks
  resourceVersion = `last_rv` (NotOlderThan): a replica whose
  cache is behind either waits until it catches up or answers 504 "Too large resource version"; on that
  answer (or a 410) the reflector marks the RV unavailable and lists again at once with resourceVersion ""
  (a consistent read from etcd), exactly as reflector.relistResourceVersion does. A list answered with an
  RV older than `last_rv` is refused (counted in `refused_lists`) and retried.
* Watches start from `last_rv`; a replica lagging behind it sends nothing until it has passed it. An event
  whose RV is not newer than `last_rv` is dropped (`dropped_stale`).

Watch timeouts: every watch asks the server to end it after timeoutSeconds = int(`MIN_WATCH_TIMEOUT_S` ×
(1 + a draw from the client's `rng`)), 5 to 10 minutes, as reflector.watch does; the server ends it then
with a 200 (after a bookmark 2 s before, so `last_rv` is fresh), and the informer watches again at once.

Errors, as client-go's reflector handles them (Run: wait.BackoffUntil(ListAndWatch), one backoff manager):
a watch stream that ends quietly (the server ended it: 200, e.g. its cache relisting, terminateAllWatchers;
or it broke as on EOF or a reset: ``None``, the client having failed over) resumes from `last_rv` at once,
unless it was a "very short" watch (ended, either way, within
`VERY_SHORT_WATCH_MS` of its start having delivered nothing: reflector.handleWatch's check), which is an
error; a 429 re-watches after a backoff; anything else (an ERROR event, a 410 among them, or the client's
own 500 when its transport lost the connection: `ApiClient.on_connection_lost`; an error answer; a very
short watch) makes ListAndWatch return, so the reflector relists (from `last_rv`) after a backoff, failing
the client over first for 5xx answers (`ApiClient.fail_over_from` the replica that answered: the informers
of one client failing together move it once). A failed list is retried after a backoff too, except a 410 or
504 "Too large resource version", which lists again at once with resourceVersion "". Backoff:
wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0): 800 ms × 2^n up to 30 s, back to 800 ms once
two minutes have passed since the last backoff began (a successful list does not reset it), each wait
jittered as wait.Jitter(d, 1.0): d + [0, 1) × d, drawn from the client's `rng`.

After a relist every object still present is passed to ``on_update(old, new)`` (client-go's Replaced
deltas), and an object gone is passed to ``on_delete`` as `DeletedFinalStateUnknown`.

Polling (the `polling` variant, kmodel.variants)
-----------------------------------------------
When the informer's client runs the variant ``polling`` (`ApiClient.variant`, which the cluster sets on every
component's client from `ClusterConfig.variant`), the informer never opens a watch. It lists every
`POLL_PERIOD_MS` (10 s: the period of the kubelet's node status and lease renewals, and of a typical
hand-written poll loop) at a phase of its own, a stable hash of its owner, resource and selectors (processes
do not poll in lock-step; in lock-step every hop of a chain of pollers would cost exactly one period): after
a successful list the next poll is due at the next time of that phase. A poll lists with the informer's
selectors and the relist's resourceVersion rule (NotOlderThan `last_rv`, so it never goes back in time
either) and diffs the answer against the cache: a new key is an add, a key whose resourceVersion changed an
update, a key gone a delete (as `DeletedFinalStateUnknown`: the poller never saw the deletion), and an
unchanged object raises nothing, so a quiet cluster gives its controllers no work. Failed lists back off as
above. The poll is a timer, like the kubelet's lease renewal, so it is not unfinished work: the `settles`
invariant looks at messages in flight and queued work, never at timers.

What a poller cannot see: the states an object went through between two polls. A handler that acts on
"the last state seen" of a deleted object (nodeipam releases the podCIDRs of the Node its DeleteFunc gets)
then acts on an older state than the last one written, which a watch would have delivered.

Not modelled: resync periods, paginated lists, the watch-list (sendInitialEvents) mode, and a retry of a watch
refused with "connection refused" (a load balancer in front of the replicas answers for a replica that is down,
see ApiClient).
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, NamedTuple, Optional

from kmodel.apiserver.wire import Response, WatchEvent
from kmodel.client.api_client import ApiClient
from kmodel.client.indexer import DeletedFinalStateUnknown, IndexFunc, Indexer, meta_namespace_key
from kmodel.component import Out
from kmodel.variants import POLLING

BACKOFF_INITIAL_MS = 800
BACKOFF_MAX_MS = 30_000
#: the backoff starts again from BACKOFF_INITIAL_MS once this long has passed since the last one began
BACKOFF_RESET_MS = 120_000
#: a watch that broke sooner than this after it was opened, having delivered nothing, is "very short" (the
#: server or the way to it is refusing watches): an error, after which the reflector backs off and relists
#: (reflector.handleWatch's check); any other broken watch resumes at once
VERY_SHORT_WATCH_MS = 1_000
#: reflector's minWatchTimeout: each watch asks the server to end it after timeoutSeconds =
#: int(minWatchTimeout × [1, 2)) (5 to 10 minutes), and the reflector then watches again from `last_rv`
MIN_WATCH_TIMEOUT_S = 300
#: the `polling` variant's period between two lists of one informer (see the module docstring)
POLL_PERIOD_MS = 10_000

Handler = Optional[Callable[..., None]]


class Listener(NamedTuple):
    """One registration of event handlers on an informer (client-go's processorListener): `owner` names the
    component that registered it ("" for the informer's own handlers)."""

    owner: str
    on_add: Handler
    on_update: Handler
    on_delete: Handler


def _is_too_large_rv(response: Response) -> bool:
    status = response.body
    return response.code == 504 and "Too large resource version" in getattr(status, "message", "")


class Informer:
    """List, watch, cache, notify. See the module docstring."""

    def __init__(self, client: ApiClient, resource: str, *, namespace: str = "", label_selector: str = "",
                 field_selector: str = "", indexers: Optional[dict[str, IndexFunc]] = None,
                 on_add: Handler = None, on_update: Handler = None, on_delete: Handler = None) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self._indexers = dict(indexers or {})
        #: the handlers, called in registration order for every change (client-go's sharedProcessor: each
        #: listener of a shared informer gets every delta, in the order the listeners were added)
        self.listeners: list[Listener] = []
        if on_add is not None or on_update is not None or on_delete is not None:
            self.listeners.append(Listener("", on_add, on_update, on_delete))
        # every resourceVersion this informer exposed to its handlers (a list's, then each event's), in order;
        # 0 marks a reset (the owner crashed: a new process starts from nothing). Read by invariants. Each life's
        # part of it is also recorded in the client's `informer_lives` (see `reset`).
        self.exposed: list[int] = []
        # what each watch received, before the informer filters anything, in order: (stream, start rv) when a
        # watch is opened, then (stream, rv, key) per event (bookmarks and errors left out). Read by invariants
        # (watch-delivers-after-start), which judge the watch end to end: etcd, the watch cache, the client.
        self.watch_received: list[tuple] = []
        #: None: list then watch (the model as Kubernetes builds it); a period: list every period, never watch
        self.poll_period_ms: Optional[int] = None
        self._generation = 0
        self.reset()

    def reset(self) -> None:
        """Forget everything (the owning component crashed)."""
        if self._generation:
            self.exposed.append(0)
        # A new life begins (the informer is new, or its process restarted): record where its exposures start on
        # the client, which outlives the process, so each life's can be compared with the earlier lives' of the
        # same informer, or of the one the process built before it crashed (restart-no-time-travel).
        self.client.informer_lives.setdefault(self.identity, []).append(
            (self.client.incarnation, self.exposed, len(self.exposed)))
        self.indexer = Indexer(self._indexers)
        self.last_rv = 0
        self.has_synced = False
        self.rv_unavailable = False
        self.watch_stream: Optional[str] = None
        self.lists = 0
        self.refused_lists = 0
        self.dropped_stale = 0
        #: observer's counts for the sometimes properties (this life): watches that ended with 410 Expired, and
        #: objects a relist found gone (passed to on_delete as DeletedFinalStateUnknown)
        self.expired_watches = 0
        self.tombstones = 0
        self._listing = False
        self._events_on_watch = 0
        self._watch_started = 0
        self._backoff_next_ms = BACKOFF_INITIAL_MS
        self._backoff_started: Optional[int] = None
        self._started = False
        self._generation += 1  # a poll scheduled before the reset is dropped when its timer fires

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """What this informer watches: its resource, namespace, label selector and field selector."""
        return (self.resource, self.namespace, self.label_selector, self.field_selector)

    @property
    def started(self) -> bool:
        """Whether `start` was called in this life."""
        return self._started

    # -- lifecycle --------------------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        self._started = True
        # The one place that reads the `polling` variant (kmodel.variants).
        self.poll_period_ms = POLL_PERIOD_MS if self.client.variant == POLLING else None
        self._list(now, out)

    def relist_resource_version(self) -> str:
        """reflector.relistResourceVersion. With the `reflector-consistent-first-list` fix (kmodel.fixes; the
        one place that reads it) the first list is a consistent read, as kubernetes#83520 made it."""
        if self.rv_unavailable:
            return ""
        if self.last_rv == 0:
            return "" if self.client.consistent_first_list else "0"
        return str(self.last_rv)

    def _list(self, now: int, out: Out) -> None:
        self._listing = True
        self.lists += 1
        self.client.list(now, out, self.resource, namespace=self.namespace,
                         resource_version=self.relist_resource_version(), label_selector=self.label_selector,
                         field_selector=self.field_selector, on_done=self._on_list,
                         informer=True)  # upstream lists through the informer factory's own client

    def _backoff_ms(self, now: int) -> int:
        """The reflector's backoff manager (wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)):
        800 ms, doubling up to 30 s, back to 800 ms once two minutes have passed since the last backoff began
        (a successful list does not reset it); each wait jittered as wait.Jitter(d, 1.0) does, d + [0, 1) × d,
        with a draw from the client's `rng`."""
        if self._backoff_started is not None and now - self._backoff_started > BACKOFF_RESET_MS:
            self._backoff_next_ms = BACKOFF_INITIAL_MS
        self._backoff_started = now
        wait = self._backoff_next_ms
        self._backoff_next_ms = min(wait * 2, BACKOFF_MAX_MS)
        return wait + int(self.client.rng.random() * wait)

    def _later(self, now: int, out: Out, fn: Callable[[int, Out], None]) -> None:
        self.client.call_later(now, out, self._backoff_ms(now), fn)

    # -- list -------------------------------------------------------------------------------------------------

    def _on_list(self, now: int, response: Response, out: Out) -> None:
        self._listing = False
        if response.ok:
            result = response.body
            rv = int(result.resource_version)
            if rv < self.last_rv:
                self.refused_lists += 1  # an older state than one already seen: never expose it
                self._later(now, out, self._list)
                return
            polling = self.poll_period_ms is not None
            if not polling or not self.exposed or self.exposed[-1] != rv:
                self.exposed.append(rv)
            self._replace(now, result.items, out, changed_only=polling)
            self.last_rv = rv
            self.rv_unavailable = False
            self.has_synced = True
            if polling:
                self._schedule_poll(now, out)
            else:
                self._watch(now, out)
            return
        if response.code == 410 or _is_too_large_rv(response):
            if not self.rv_unavailable:
                self.rv_unavailable = True
                self._list(now, out)
                return
        if response.code >= 500:
            self.client.fail_over_from(self.client.answered_by)
        self._later(now, out, self._list)

    def _replace(self, now: int, items: tuple, out: Out, *, changed_only: bool = False) -> None:
        """Make the cache hold exactly `items`, telling the handlers. `changed_only` (a poll's diff): an
        object whose resourceVersion the cache already holds raises nothing."""
        indexer = self.indexer
        fresh = {meta_namespace_key(obj): obj for obj in items}
        for key in [k for k in indexer.items if k not in fresh]:
            old = indexer.delete_key(key)
            self.tombstones += 1
            self._deleted(now, DeletedFinalStateUnknown(key, old), out)
        cached = indexer.items
        for obj in items:
            if changed_only:
                held = cached.get(meta_namespace_key(obj))
                if held is not None and held.metadata.resource_version == obj.metadata.resource_version:
                    continue
            old = indexer.upsert(obj)
            if old is None:
                self._added(now, obj, out)
            else:
                self._updated(now, old, obj, out)

    # -- poll (the `polling` variant) ---------------------------------------------------------------------------

    def _schedule_poll(self, now: int, out: Out) -> None:
        generation = self._generation
        period: int = self.poll_period_ms  # type: ignore[assignment]
        phase = zlib.crc32(f"{self.client.owner}|{self.resource}|{self.namespace}|{self.label_selector}|"
                           f"{self.field_selector}".encode()) % period

        def poll(t: int, o: Out) -> None:
            if generation == self._generation and not self._listing:
                self._list(t, o)

        self.client.call_later(now, out, (phase - now) % period or period, poll)

    # -- watch ------------------------------------------------------------------------------------------------

    def _watch(self, now: int, out: Out) -> None:
        self._events_on_watch = 0
        self._watch_started = now
        self.watch_stream = self.client.watch(
            now, out, self.resource, namespace=self.namespace, resource_version=str(self.last_rv),
            label_selector=self.label_selector, field_selector=self.field_selector, allow_bookmarks=True,
            timeout_seconds=int(MIN_WATCH_TIMEOUT_S * (self.client.rng.random() + 1.0)),
            on_event=self._on_event, on_closed=self._on_closed)
        self.watch_received.append((self.watch_stream, self.last_rv))

    def _on_event(self, now: int, stream: str, event: WatchEvent, out: Out) -> None:
        if stream != self.watch_stream:
            return
        typ = event.type
        if typ == "ERROR":
            if getattr(event.object, "code", 0) == 410:
                self.expired_watches += 1
            self.client.stop_watch(stream, out)
            self.watch_stream = None
            self._later(now, out, self._list)  # a 410 too, from last_rv (NotOlderThan)
            return
        obj = event.object
        rv = int(obj.metadata.resource_version)
        if typ == "BOOKMARK":
            if rv > self.last_rv:
                self.last_rv = rv
            return
        meta = obj.metadata
        self.watch_received.append((stream, rv, f"{meta.namespace}/{meta.name}"))
        if rv <= self.last_rv:
            self.dropped_stale += 1
            return
        self._events_on_watch += 1
        self.exposed.append(rv)
        self.last_rv = rv
        if typ == "DELETED":
            self.indexer.delete_key(meta_namespace_key(obj))
            self._deleted(now, obj, out)
            return
        old = self.indexer.upsert(obj)
        if old is None:
            self._added(now, obj, out)
        else:
            self._updated(now, old, obj, out)

    def _on_closed(self, now: int, stream: str, response: Optional[Response], out: Out) -> None:
        if stream != self.watch_stream:
            return
        self.watch_stream = None
        if response is None or response.code == 200:  # the stream ended quietly: broken, or ended by the server
            if self._events_on_watch or now - self._watch_started >= VERY_SHORT_WATCH_MS:
                self._watch(now, out)
            else:
                self._later(now, out, self._list)  # "very short watch": an error, so the reflector relists
        elif response.code == 429:
            self.client.fail_over_from(self.client.answered_by)
            self._later(now, out, self._watch)
        else:
            if response.code >= 500:
                self.client.fail_over_from(self.client.answered_by)
            self._later(now, out, self._list)

    # -- the listeners ----------------------------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Register handlers (after the informer's own, and after every listener registered before)."""
        self.listeners.append(listener)

    def remove_listeners(self, owner: str) -> None:
        """Unregister every listener `owner` registered (its component crashed and will register anew)."""
        self.listeners = [entry for entry in self.listeners if entry.owner != owner]

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add indexes to the cache (client-go's AddIndexers; a shared informer's listeners each bring theirs).
        An index already there under the same name is kept."""
        new = {name: fn for name, fn in indexers.items() if name not in self._indexers}
        if not new:
            return
        self._indexers.update(new)
        items = self.indexer.list()
        self.indexer = Indexer(self._indexers)
        for obj in items:
            self.indexer.upsert(obj)

    def replay(self, now: int, listener: Listener, out: Out) -> None:
        """Give a listener registered after the informer filled its cache an add for every object in it, in key
        order (client-go's AddEventHandler on a started informer: synthetic adds of the cache's content)."""
        if listener.on_add is not None:
            for key in self.indexer.keys():
                listener.on_add(now, self.indexer.items[key], out)

    def _added(self, now: int, obj: Any, out: Out) -> None:
        for listener in self.listeners:
            if listener.on_add is not None:
                listener.on_add(now, obj, out)

    def _updated(self, now: int, old: Any, new: Any, out: Out) -> None:
        for listener in self.listeners:
            if listener.on_update is not None:
                listener.on_update(now, old, new, out)

    def _deleted(self, now: int, obj: Any, out: Out) -> None:
        for listener in self.listeners:
            if listener.on_delete is not None:
                listener.on_delete(now, obj, out)

    # -- reading the cache -------------------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> Any:
        return self.indexer.get(namespace, name)

    def list(self) -> list:
        return self.indexer.list()

    def by_index(self, index: str, value: str) -> list:
        return self.indexer.by_index(index, value)
