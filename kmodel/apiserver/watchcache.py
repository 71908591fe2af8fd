"""One API server replica's watch cache (kube-apiserver's cacher + watchCache), fed by its etcd watch.

Theory of operation
-------------------
The cache holds, per resource (`ResourceCache`): the current objects by etcd key, the keys in sorted order
(a list is a range of them; keys of new objects wait in a list and are sorted in when the order is next
needed, so a burst of creates costs one merge rather than one insertion each), an index by the resource's
*trigger field* (pods: ``spec.nodeName``, nodes: ``metadata.name``, as the cacher's triggers), a window of
recent events, and the watchers. The replica feeds it the etcd `WatchResponse`s of its one watch on
``/registry/`` (`apply`) or, after a (re)list, the whole keyspace (`replace`). `resource_version` is the
revision of the last response applied, one number for the whole replica (see "Differences").

Events. A PUT whose key has version 1 is ADDED, any other PUT MODIFIED, a DELETE is DELETED carrying the
last state of the object with its resourceVersion set to the delete's revision (what the etcd3 watcher
builds from prevKV). The previous object comes from the cache itself, as in watchCache.processEvent.

Window. Events are kept in a ring like watchCache's: capacity starts at `lower_capacity` (100), doubles (up
to `upper_capacity`, 100 × 1024) when the cache is full and its oldest event is younger than
`event_fresh_ms` (75 s), and halves (not below the lower bound) when full and the event a quarter of the way
from the newest is older than that (watchCache.resizeCacheLocked). A watch from resourceVersion N replays the
window's events after N; if N is older than the window (N < oldest - 1, where oldest is the list's RV + 1
until an event has been evicted, then the oldest event's RV) the watcher gets an ERROR event with
``410 Expired: too old resource version: N (oldest - 1)`` and the watch ends (cacher's newErrWatcher).

Fan-out. Watchers are indexed per resource: those with a trigger value (a kubelet's ``spec.nodeName=node-1`` on
pods, its ``metadata.name=node-1`` on nodes) by that value, the rest in one dict. An event reaches the trigger
watchers of the object's current and previous value and the untriggered ones, nothing else, so a pod or node
write costs the same however many nodes there are. Each candidate applies its filter exactly like
cacheWatcher.convertToWatchEvent: object passes now and before → MODIFIED; only now → ADDED; only before →
DELETED (the previous object, at the event's RV). Watchers with no selector skip the filter and share one
WatchEvent value per event. A watcher started from a resourceVersion newer than the cache skips every event up
to it (cacheWatcher's "only send events newer than resourceVersion"), so a client resuming on a lagging replica
never goes back.

Bookmarks: a watcher that asked for them gets a BOOKMARK (an empty object of the kind carrying only the
cache's resourceVersion) about every `bookmark_interval_ms` (60 s), and one 2 s before its deadline, bucketed
by second as the cacher's watcherBookmarkTimeBuckets; `bookmark_now` sends one to every such watcher at once.

Timeouts: a watcher may have a deadline (the replica sets it from the request's timeoutSeconds, or its own
default). `end_timed_out` ends each watch whose deadline has come with its final 200, as serveWatch does when
its timeout fires; the replica arms one timer at `next_watch_deadline`.

Ending a watch from the server side (410, a relist that terminates every watcher) is a last message on the
stream: the final `Response` (after any ERROR event). Closing the stream instead would discard events still
in flight on it.

Custom resources: a CRD seen Established (in a list or an event) gets a ResourceCache for the resource it
declares (`serve_custom`, upstream's CRD handler starting a cacher), keyed by `/registry/<group>/<plural>/`;
custom objects enter the cache with the CRD's schema defaults applied, as the cacher decodes them from etcd.

Differences from kube-apiserver (all deliberate): one resourceVersion per replica rather than per resource
(equivalent to the cacher asking etcd for progress notifications, which it does since 1.27); no pagination
(limit/continue).
"""

from __future__ import annotations

import bisect
import heapq
from itertools import repeat
from operator import attrgetter
from typing import Any, Optional

import attrs

from kmodel.apiserver.customresources import as_read, established, resource_for
from kmodel.apiserver.resources import RESOURCES, Resource, list_prefix
from kmodel.apiserver.wire import Response, Status, WatchEvent
from kmodel.component import Out, Send
from kmodel.objects.fastevolve import constructor
from kmodel.objects.meta import ObjectMeta

_CRD_PREFIX = RESOURCES["customresourcedefinitions"].prefix + "/"
ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
#: the cacher's last bookmark comes this long before a watch's deadline (cacheWatcher.nextBookmarkTime)
BOOKMARK_BEFORE_DEADLINE_MS = 2_000

# Fields of an event record (a plain tuple: cheaper than an object, and never changed).
_RV, _TYPE, _KEY, _OBJ, _PREV, _TIME = range(6)
_STRIDE = 6  # the window keeps each event's fields flat, one after the other (see ResourceCache._window)
_watch_event = constructor(WatchEvent)  # WatchEvent(type, object), built as its __init__ would (see fastevolve)


@attrs.frozen
class WatchCacheConfig:
    lower_capacity: int = 100  # watchCache's defaultLowerBoundCapacity
    upper_capacity: int = 100 * 1024  # defaultUpperBoundCapacity
    event_fresh_ms: int = 75_000  # eventFreshDuration
    bookmark_interval_ms: int = 60_000  # the cacher's bookmarkFrequency


# Per resource: the field the cacher indexes watchers by (its "trigger") and how to read it, as the registries
# declare them (StoreOptions.TriggerFunc): pods by spec.nodeName (pod.NodeNameTriggerFunc), nodes by metadata.name
# (node.NameTriggerFunc), so that a kubelet's watch of its pods and of its own Node is reached through the index
# and a write costs the same however many kubelets watch.
TRIGGERS: dict[str, tuple[str, Any]] = {
    "pods": ("spec.nodeName", attrgetter("spec.node_name")),
    "nodes": ("metadata.name", attrgetter("metadata.name")),
}


def with_resource_version(obj: Any, revision: int) -> Any:
    """`obj` with metadata.resourceVersion = str(revision): the object itself when it already says so (the
    pipeline stores objects that way), else a copy (what the etcd3 store's versioner does on decode)."""
    meta = obj.metadata
    rv = str(revision)
    if meta.resource_version == rv:
        return obj
    return attrs.evolve(obj, metadata=attrs.evolve(meta, resource_version=rv))


def expired(requested: int, oldest_minus_one: int) -> Status:
    return Status(410, "Expired", f"too old resource version: {requested} ({oldest_minus_one})")


def bookmark_object(resource: Resource, revision: int) -> Any:
    return resource.cls(metadata=ObjectMeta(resource_version=str(revision)))


class CacheWatcher:
    """One client watch: where to send, what it selects, and from which resourceVersion."""

    __slots__ = ("client", "stream", "request_id", "resource", "prefix", "name", "labels", "fields", "rv",
                 "bookmarks", "trigger", "everything", "alive", "deadline")

    def __init__(self, client: str, stream: str, request_id: int, resource: str, prefix: str, *, name: str = "",
                 labels: Any = None, fields: Any = None, bookmarks: bool = False, trigger: Optional[str] = None,
                 deadline: Optional[int] = None):
        self.client = client
        self.stream = stream
        self.request_id = request_id
        self.resource = resource
        self.prefix = prefix  # the resource's (or one namespace's) key prefix
        self.name = name
        self.labels = labels if labels is not None and not labels.empty() else None
        self.fields = fields if fields is not None and not fields.empty() else None
        self.rv = 0  # events at or below this resourceVersion are not sent
        self.bookmarks = bookmarks
        self.trigger = trigger
        self.everything = not name and self.labels is None and self.fields is None
        self.alive = True
        self.deadline = deadline  # logical ms at which the server ends this watch (its timeout); None: never

    def matches(self, obj: Any) -> bool:
        meta = obj.metadata
        if self.name and meta.name != self.name:
            return False
        if self.labels is not None and not self.labels.matches(meta.labels):
            return False
        return self.fields is None or self.fields.matches(obj)

    def convert(self, event: tuple) -> Optional[tuple[str, Any]]:
        """cacheWatcher.convertToWatchEvent: (type, object) this watcher sees for `event`, or None."""
        typ = event[_TYPE]
        cur = typ != DELETED and self.matches(event[_OBJ])
        prev = event[_PREV]
        old = prev is not None and self.matches(prev)
        if cur:
            return (MODIFIED if old else ADDED), event[_OBJ]
        if old:
            return DELETED, (event[_OBJ] if typ == DELETED else with_resource_version(prev, event[_RV]))
        return None


class ResourceCache:
    """The cache of one resource: objects, sorted keys, trigger index, event window, watchers."""

    def __init__(self, resource: Resource, config: WatchCacheConfig) -> None:
        self.resource = resource
        self.config = config
        self.objects: dict[str, Any] = {}
        self.keys: list[str] = []  # sorted, apart from the keys still in _new_keys (see sorted_keys)
        self._new_keys: list[str] = []  # keys added since the order was last needed, not yet in `keys`
        trigger = TRIGGERS.get(resource.name)
        self.trigger_field: Optional[str] = trigger[0] if trigger else None
        self.trigger_of = trigger[1] if trigger else None
        self.by_trigger: dict[str, dict[str, None]] = {}
        # Event window: the fields of every recorded event, flat (event i at _window[i*6:i*6+6], fields as
        # _RV.._TIME): appending them costs one list.extend and keeps no record object (a tuple) per event
        # alive, which at 100 × 1024 events is that many objects fewer for the cyclic GC to walk at every full
        # collection.
        # Events from `start` (an event index) on are live; capacity as watchCache's.
        self._window: list = []
        self.start = 0
        self.capacity = config.lower_capacity
        self.evicted = False  # an event was dropped from the window since the last list
        self.list_rv = 0
        self.all_watchers: dict[str, CacheWatcher] = {}  # stream -> watcher
        self._untriggered: Optional[list[CacheWatcher]] = None  # all_watchers' values, rebuilt after a change
        self._broadcast = False  # (with _untriggered) all of them take every event unfiltered
        self._broadcast_clients: list[str] = []  # (with _untriggered) their clients
        self._broadcast_streams: list[str] = []  # (with _untriggered) their streams, in the same order
        self._broadcast_rv = 0  # (with _untriggered) the highest rv among them
        self.trigger_watchers: dict[str, dict[str, CacheWatcher]] = {}

    # -- objects ------------------------------------------------------------------------------------------

    def sorted_keys(self) -> list[str]:
        """Every key, sorted (the pending new keys merged in first)."""
        new = self._new_keys
        if new:
            keys = self.keys
            if len(new) * 16 < len(keys):
                for key in new:
                    bisect.insort(keys, key)
            else:
                keys.extend(new)
                keys.sort()  # a sorted run and a short tail: timsort merges them
            self._new_keys = []
        return self.keys

    def reset(self, revision: int) -> None:
        """Empty the cache, as of a list at `revision`."""
        self.objects = {}
        self.keys = []
        self._new_keys = []
        self.by_trigger = {}
        self._window = []
        self.start = 0
        self.evicted = False
        self.list_rv = revision

    def _put(self, key: str, obj: Any, prev: Any) -> None:
        self.objects[key] = obj
        if prev is None:
            self._new_keys.append(key)
        trigger_of = self.trigger_of
        if trigger_of is not None:
            new = trigger_of(obj)
            old = trigger_of(prev) if prev is not None else None
            if new != old:
                if old is not None:
                    self._untrigger(old, key)
                self.by_trigger.setdefault(new, {})[key] = None

    def _delete(self, key: str, prev: Any) -> None:
        del self.objects[key]
        keys = self.sorted_keys()
        del keys[bisect.bisect_left(keys, key)]
        if self.trigger_of is not None:
            self._untrigger(self.trigger_of(prev), key)

    def _untrigger(self, value: str, key: str) -> None:
        group = self.by_trigger[value]
        del group[key]
        if not group:
            del self.by_trigger[value]

    def keys_under(self, prefix: str) -> list[str]:
        keys = self.sorted_keys()
        lo = bisect.bisect_left(keys, prefix)
        hi = bisect.bisect_left(keys, prefix[:-1] + chr(ord(prefix[-1]) + 1), lo)
        return keys[lo:hi]

    def select(self, prefix: str, match: Any, trigger_value: Optional[str]) -> list:
        """Objects under `prefix` that `match` accepts (None: all), in key order."""
        if trigger_value is not None and self.trigger_of is not None:
            keys = sorted(k for k in self.by_trigger.get(trigger_value, ()) if k.startswith(prefix))
        else:
            keys = self.keys_under(prefix)
        objects = self.objects
        if match is None:
            return [objects[k] for k in keys]
        return [o for o in (objects[k] for k in keys) if match(o)]

    # -- the event window ---------------------------------------------------------------------------------

    @property
    def recorded(self) -> int:
        """How many events the window holds or has evicted since it was last compacted (live: those from
        `start` on)."""
        return len(self._window) // _STRIDE

    @property
    def events(self) -> list[tuple]:
        """The recorded events as tuples (fields _RV.._TIME), evicted ones before `start` included. Built on
        each call: for tests and reports, not the hot path."""
        w = self._window
        return [tuple(w[i:i + _STRIDE]) for i in range(0, len(w), _STRIDE)]

    def _record(self, event: tuple, now: int) -> None:
        window = self._window
        if self.recorded - self.start >= self.capacity:
            self._resize(now)
            if self.recorded - self.start >= self.capacity:
                self.start += 1
                self.evicted = True
                if self.start > 1024 and self.start * 2 > self.recorded:
                    del window[: self.start * _STRIDE]
                    self.start = 0
        window.extend(event)

    def _resize(self, now: int) -> None:
        """watchCache.resizeCacheLocked, called when the window is full."""
        cfg = self.config
        window = self._window
        recorded = self.recorded
        if now - window[self.start * _STRIDE + _TIME] < cfg.event_fresh_ms:
            self.capacity = max(self.capacity, min(self.capacity * 2, cfg.upper_capacity))
            return
        if now - window[(recorded - self.capacity // 4) * _STRIDE + _TIME] > cfg.event_fresh_ms:
            capacity = max(self.capacity // 2, cfg.lower_capacity)
            if capacity < self.capacity:
                self.capacity = capacity
                self.start = recorded - capacity
                self.evicted = True

    def oldest_minus_one(self) -> int:
        """The oldest resourceVersion a watch may start from (getAllEventsSinceLocked's oldest - 1)."""
        if self.list_rv > 0 and not self.evicted:
            return self.list_rv
        if self.recorded > self.start:
            return self._window[self.start * _STRIDE + _RV] - 1
        return self.list_rv

    def events_after(self, rv: int) -> list[tuple]:
        """The live events newer than `rv`, oldest first, as tuples."""
        window = self._window
        i = bisect.bisect_right(range(self.start, self.recorded), rv, key=lambda j: window[j * _STRIDE + _RV])
        return [tuple(window[j:j + _STRIDE]) for j in range((self.start + i) * _STRIDE, len(window), _STRIDE)]

    # -- watchers -----------------------------------------------------------------------------------------

    def add_watcher(self, w: CacheWatcher) -> None:
        if w.trigger is not None:
            self.trigger_watchers.setdefault(w.trigger, {})[w.stream] = w
        else:
            self.all_watchers[w.stream] = w
            self._untriggered = None

    def remove_watcher(self, w: CacheWatcher) -> None:
        if w.trigger is not None:
            group = self.trigger_watchers[w.trigger]
            del group[w.stream]
            if not group:
                del self.trigger_watchers[w.trigger]
        else:
            del self.all_watchers[w.stream]
            self._untriggered = None

    def dispatch(self, event: tuple, out: Out) -> None:
        """Send `event` to the watchers that select it (see the module docstring): the untriggered ones in
        the order they started, then those of the object's trigger value, then those of its previous one."""
        untriggered = self._untriggered
        if untriggered is None:
            untriggered = self._untriggered = list(self.all_watchers.values())
            whole = list_prefix(self.resource)
            # the common case: every untriggered watcher takes every event of the resource unfiltered
            self._broadcast = all(w.everything and w.prefix == whole for w in untriggered)
            # a watcher's rv is fixed before it is added, so an event newer than all of them goes to all
            self._broadcast_clients = [w.client for w in untriggered]
            self._broadcast_streams = [w.stream for w in untriggered]
            self._broadcast_rv = max((w.rv for w in untriggered), default=0)
        triggered: Optional[list[CacheWatcher]] = None
        if self.trigger_watchers:
            trigger_of = self.trigger_of
            value = trigger_of(event[_OBJ])
            group = self.trigger_watchers.get(value)
            if group:
                triggered = list(group.values())
            prev = event[_PREV]
            if prev is not None:
                old = trigger_of(prev)
                if old != value:
                    group = self.trigger_watchers.get(old)
                    if group:
                        triggered = (triggered or []) + list(group.values())
        if not untriggered and not triggered:
            return
        rv = event[_RV]
        # Sends go straight on out.effects (as out.send would put them), without a method call per watcher.
        effects = out.effects
        shared: Optional[WatchEvent] = None
        if untriggered:
            if self._broadcast:
                shared = _watch_event(event[_TYPE], event[_OBJ])
                if rv > self._broadcast_rv:
                    effects.extend(map(Send, self._broadcast_clients, repeat(shared), self._broadcast_streams))
                else:
                    effects.extend([Send(w.client, shared, w.stream) for w in untriggered if rv > w.rv])
                if not triggered:
                    return
                made: dict = {}
            else:
                made = {}
                shared = _send_each(untriggered, event, effects, shared, made)
        else:
            made = {}
        if triggered:
            _send_each(triggered, event, effects, shared, made)


def _send_each(watchers: list[CacheWatcher], event: tuple, effects: list, shared: Optional[WatchEvent],
               made: dict) -> Optional[WatchEvent]:
    """Append a Send of `event` for each of `watchers` that selects it; `shared` is the one unfiltered
    WatchEvent of this event (made here if needed, and returned), `made` the filtered ones by type."""
    rv, key = event[_RV], event[_KEY]
    for w in watchers:
        if rv <= w.rv or not key.startswith(w.prefix):
            continue
        if w.everything:
            if shared is None:
                shared = WatchEvent(event[_TYPE], event[_OBJ])
            effects.append(Send(w.client, shared, w.stream))
            continue
        seen = w.convert(event)
        if seen is None:
            continue
        wev = made.get(seen[0])
        if wev is None:
            wev = made[seen[0]] = WatchEvent(seen[0], seen[1])
        effects.append(Send(w.client, wev, w.stream))
    return shared


class WatchCache:
    """Every resource's cache of one replica, its resourceVersion, and its watchers by stream."""

    def __init__(self, config: WatchCacheConfig = WatchCacheConfig()) -> None:
        self.config = config
        self.resource_version = 0
        self.ready = False  # a list has been applied (the cacher's ready flag)
        self.resources: dict[str, ResourceCache] = {}
        self._by_prefix: dict[str, ResourceCache] = {}
        for name, res in RESOURCES.items():
            if not res.prefix:
                continue  # virtual (bindings)
            rc = ResourceCache(res, config)
            self.resources[name] = rc
            self._by_prefix[res.prefix + "/"] = rc
        self._crds = self.resources["customresourcedefinitions"]
        self.watchers: dict[str, CacheWatcher] = {}  # stream -> watcher
        self._bookmark_buckets: dict[int, list[CacheWatcher]] = {}
        self._bookmark_heap: list[int] = []
        self._bookmarks: dict[str, tuple[int, Resource, WatchEvent]] = {}  # resource -> its last BOOKMARK (rv, ...)
        self._deadlines: list[tuple[int, int, CacheWatcher]] = []  # (deadline, sequence, watcher), a heap
        self._deadline_seq = 0

    # -- feeding ------------------------------------------------------------------------------------------

    def resource_of_key(self, key: str) -> Optional[ResourceCache]:
        i = key.find("/", 10)  # the slash after "/registry/<first segment>"
        if i < 0:
            return None
        rc = self._by_prefix.get(key[: i + 1])
        if rc is None:  # two-segment prefixes: /registry/services/specs/
            j = key.find("/", i + 1)
            if j > 0:
                rc = self._by_prefix.get(key[: j + 1])
        return rc

    def serve_custom(self, crd: Any) -> None:
        """Cache the custom resource an Established CRD declares (upstream's CRD handler starts a cacher for it);
        a changed CRD re-aims the existing cache at its new Resource."""
        if not established(crd):
            return
        res = resource_for(crd)
        rc = self.resources.get(res.name)
        if rc is None:
            rc = ResourceCache(res, self.config)
            rc.reset(self.resource_version)
            self.resources[res.name] = rc
            self._by_prefix[res.prefix + "/"] = rc
        elif rc.resource.prefix == res.prefix:
            rc.resource = res

    def replace(self, kvs: list, revision: int, out: Out) -> None:
        """A (re)list: every watcher is terminated (cacher.terminateAllWatchers), the state replaced."""
        self.terminate_all(out)
        for kv in kvs:
            if kv.key.startswith(_CRD_PREFIX):
                self.serve_custom(kv.value)
        for rc in self.resources.values():
            rc.reset(revision)
        for kv in kvs:
            rc = self.resource_of_key(kv.key)
            if rc is not None:
                obj = with_resource_version(kv.value, kv.mod_revision)
                if rc.resource.crd is not None:
                    obj = as_read(rc.resource, obj)
                rc.objects[kv.key] = obj
                rc.keys.append(kv.key)  # a range answers in key order
                if rc.trigger_of is not None:
                    rc.by_trigger.setdefault(rc.trigger_of(obj), {})[kv.key] = None
        self.resource_version = revision
        self.ready = True

    def apply(self, response: Any, now: int, out: Out) -> None:
        """Apply one etcd WatchResponse and fan its events out. A response without events is a progress
        notification: everything up to its header revision has been seen."""
        events = response.events
        if not events:
            if response.header_revision > self.resource_version:
                self.resource_version = response.header_revision
            return
        applied = self.resource_version
        rev = applied
        by_prefix = self._by_prefix
        for ev in events:
            # Event and KeyValue fields by index (type, kv; key, value, _, mod_revision): the hot path
            kv = ev[1]
            rev = kv[3]
            if rev <= applied:
                continue  # already applied (a replay overlapping what the list saw)
            key = kv[0]
            i = key.find("/", 10)  # resource_of_key's one-segment case, inlined
            rc = by_prefix.get(key[: i + 1]) if i >= 0 else None
            if rc is None:
                rc = self.resource_of_key(key)
                if rc is None:
                    continue
            prev = rc.objects.get(key)
            if ev[0] == "PUT":
                obj = kv[1]
                if rc is self._crds:
                    self.serve_custom(obj)
                elif rc.resource.crd is not None:
                    obj = as_read(rc.resource, obj)
                if obj.metadata.resource_version != str(rev):
                    obj = with_resource_version(obj, rev)
                typ = ADDED if prev is None else MODIFIED
                rc._put(key, obj, prev)
            else:
                if prev is None:
                    continue
                obj = with_resource_version(prev, rev)
                typ = DELETED
                rc._delete(key, prev)
            event = (rev, typ, key, obj, prev, now)
            window = rc._window
            if len(window) // _STRIDE - rc.start < rc.capacity:
                window.extend(event)  # _record when the window has room
            else:
                rc._record(event, now)
            rc.dispatch(event, out)
        if rev > self.resource_version:
            self.resource_version = rev

    # -- reads --------------------------------------------------------------------------------------------

    def list(self, resource: str, namespace: str = "", labels: Any = None, fields: Any = None) -> list:
        rc = self.resources[resource]
        prefix = list_prefix(rc.resource, namespace)
        labels = labels if labels is not None and not labels.empty() else None
        fields = fields if fields is not None and not fields.empty() else None
        trigger_value = fields.required_value(rc.trigger_field) if fields is not None and rc.trigger_field else None
        if labels is None and fields is None:
            return rc.select(prefix, None, None)

        def match(obj: Any) -> bool:
            return (labels is None or labels.matches(obj.metadata.labels)) and (fields is None or fields.matches(obj))

        return rc.select(prefix, match, trigger_value)

    def get(self, resource: str, key: str) -> Any:
        return self.resources[resource].objects.get(key)

    # -- watches ------------------------------------------------------------------------------------------

    def start_watch(self, w: CacheWatcher, from_rv: int, now: int, out: Out) -> bool:
        """Start `w` from resourceVersion `from_rv` (0: the current state as ADDED events, then live).
        Returns False when it ended at once (410, sent as an ERROR event and a final Response)."""
        rc = self.resources[w.resource]
        send = out.send
        if from_rv == 0:
            match = None if w.everything else w.matches
            for obj in rc.select(w.prefix, match, w.trigger):
                send(w.client, WatchEvent(ADDED, obj), w.stream)
            w.rv = self.resource_version
        else:
            oldest_minus_one = rc.oldest_minus_one()
            if from_rv < oldest_minus_one:
                send(w.client, WatchEvent(ERROR, expired(from_rv, oldest_minus_one)), w.stream)
                send(w.client, Response(w.request_id, 200), w.stream)
                return False
            for event in rc.events_after(from_rv):
                seen = w.convert(event)
                if seen is not None:
                    send(w.client, WatchEvent(seen[0], seen[1]), w.stream)
            w.rv = max(from_rv, self.resource_version)
        rc.add_watcher(w)
        self.watchers[w.stream] = w
        if w.deadline is not None:
            self._deadline_seq += 1
            heapq.heappush(self._deadlines, (w.deadline, self._deadline_seq, w))
        if w.bookmarks:
            self._schedule_bookmark(w, now)
        return True

    def stop_watch(self, stream: str) -> Optional[CacheWatcher]:
        """Forget the watcher on `stream` (its stream ended); returns it, or None."""
        w = self.watchers.pop(stream, None)
        if w is not None:
            w.alive = False
            self.resources[w.resource].remove_watcher(w)
        return w

    def terminate_all(self, out: Out) -> None:
        """End every watch from the server side (each gets its final Response)."""
        for stream in list(self.watchers):
            w = self.stop_watch(stream)
            out.send(w.client, Response(w.request_id, 200), stream)
        self._deadlines.clear()

    # -- timeouts -----------------------------------------------------------------------------------------

    def next_watch_deadline(self) -> Optional[int]:
        """The earliest deadline of a watch still open, or None."""
        heap = self._deadlines
        while heap and not heap[0][2].alive:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def end_timed_out(self, now: int, out: Out) -> None:
        """End every watch whose deadline has come, as serveWatch returns on its timeout: the response ends
        cleanly (a final 200), after whatever was sent on it before."""
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            w = heapq.heappop(heap)[2]
            if w.alive:
                self.stop_watch(w.stream)
                out.send(w.client, Response(w.request_id, 200), w.stream)

    # -- bookmarks ----------------------------------------------------------------------------------------

    def _schedule_bookmark(self, w: CacheWatcher, now: int) -> None:
        """cacheWatcher.nextBookmarkTime: a bookmark every `bookmark_interval_ms`, and one 2 s before the
        watch's deadline (so the client resumes from as fresh a resourceVersion as can be); none once that
        moment has passed."""
        due = now + self.config.bookmark_interval_ms
        if w.deadline is not None:
            due = min(due, w.deadline - BOOKMARK_BEFORE_DEADLINE_MS)
            if due <= now:  # (logical time: a bookmark just sent at that moment must not be scheduled again)
                return
        due = -(-due // 1000) * 1000  # bucketed by second
        bucket = self._bookmark_buckets.get(due)
        if bucket is None:
            bucket = self._bookmark_buckets[due] = []
            heapq.heappush(self._bookmark_heap, due)
        bucket.append(w)

    def next_bookmark_due(self) -> Optional[int]:
        return self._bookmark_heap[0] if self._bookmark_heap else None

    def fire_bookmarks(self, now: int, out: Out) -> None:
        """Send the bookmarks due by `now` and schedule each watcher's next one."""
        heap = self._bookmark_heap
        while heap and heap[0] <= now:
            for w in self._bookmark_buckets.pop(heapq.heappop(heap)):
                if w.alive:
                    self._send_bookmark(w, out)
                    self._schedule_bookmark(w, now)

    def bookmark_now(self, out: Out) -> None:
        """Send a bookmark to every watcher that allows them (as when the cacher is asked for progress)."""
        for w in self.watchers.values():
            if w.bookmarks:
                self._send_bookmark(w, out)

    def _send_bookmark(self, w: CacheWatcher, out: Out) -> None:
        rv = self.resource_version
        if rv > w.rv:
            out.send(w.client, self._bookmark_event(self.resources[w.resource].resource, rv), w.stream)

    def _bookmark_event(self, resource: Resource, rv: int) -> WatchEvent:
        """The BOOKMARK of `resource` at `rv`: one event shared by every watcher of the resource that gets one at
        that resourceVersion (the watchers of one bucket are due together), not an object built per watcher."""
        entry = self._bookmarks.get(resource.name)
        if entry is not None and entry[0] == rv and entry[1] is resource:
            return entry[2]
        event = WatchEvent(BOOKMARK, bookmark_object(resource, rv))
        self._bookmarks[resource.name] = (rv, resource, event)
        return event
