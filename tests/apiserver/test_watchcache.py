"""The watch cache on its own: fed by a real Store's watch responses, effects read from an Out."""

from __future__ import annotations

import attrs

from kmodel.apiserver.resources import object_key, RESOURCES
from kmodel.apiserver.selectors import parse_field_selector, parse_label_selector
from kmodel.apiserver.watchcache import CacheWatcher, WatchCache, WatchCacheConfig
from kmodel.apiserver.wire import Response, WatchEvent
from kmodel.component import Out, Send
from kmodel.objects import Container, ObjectMeta, Pod, PodSpec
from kmodel.store import Store, prefix_end

PODS = RESOURCES["pods"]


def pod(name, *, node="", labels=None, ns="default"):
    return Pod(metadata=ObjectMeta(name=name, namespace=ns, labels=labels or {}),
               spec=PodSpec(containers=(Container(name="c", image="i"),), node_name=node))


class Fed:
    """A store, its /registry/ watch, and a watch cache kept in step with it."""

    def __init__(self, config=WatchCacheConfig()):
        self.store = Store()
        self.wid = self.store.watch("/registry/", prefix_end("/registry/"), prev_kv=True)
        self.cache = WatchCache(config)
        self.cache.replace([], self.store.revision, Out())
        self.now = 0

    def put(self, obj):
        self.store.put(object_key(PODS, obj.metadata.namespace, obj.metadata.name), obj)
        return self.sync()

    def delete(self, name, ns="default"):
        self.store.delete_range(object_key(PODS, ns, name))
        return self.sync()

    def sync(self):
        out = Out()
        for response in self.store.take_watch_responses(self.wid):
            self.cache.apply(response, self.now, out)
        return out


def sent(out, stream=None):
    """(type, name) of the WatchEvents sent (on `stream` if given)."""
    return [(e.payload.type, e.payload.object.metadata.name if e.payload.type != "ERROR" else e.payload.object.code)
            for e in out.effects if isinstance(e, Send) and isinstance(e.payload, WatchEvent)
            and (stream is None or e.stream == stream)]


def watcher(stream, *, labels="", fields="", bookmarks=False, ns=""):
    lab = parse_label_selector(labels) if labels else None
    fld = parse_field_selector(fields, "pods") if fields else None
    trigger = fld.required_value("spec.nodeName") if fld is not None else None
    prefix = f"/registry/pods/{ns}/" if ns else "/registry/pods/"
    return CacheWatcher("client", stream, 1, "pods", prefix, labels=lab, fields=fld, bookmarks=bookmarks,
                        trigger=trigger)


def test_objects_carry_their_mod_revision_as_resource_version():
    fed = Fed()
    fed.put(pod("a"))
    obj = fed.cache.get("pods", "/registry/pods/default/a")
    assert obj.metadata.resource_version == str(fed.store.revision)
    assert fed.cache.resource_version == fed.store.revision


def test_label_selector_transitions_become_added_and_deleted():
    fed = Fed()
    w = watcher("w", labels="app=web")
    fed.cache.start_watch(w, 0, 0, Out())
    assert sent(fed.put(pod("a", labels={"app": "db"}))) == []
    assert sent(fed.put(pod("a", labels={"app": "web"}))) == [("ADDED", "a")]
    assert sent(fed.put(pod("a", labels={"app": "web", "x": "1"}))) == [("MODIFIED", "a")]
    out = fed.put(pod("a", labels={"app": "db"}))
    assert sent(out) == [("DELETED", "a")]
    # the DELETED carries the last matching state, at the revision of the change
    deleted = out.effects[0].payload.object
    assert deleted.metadata.labels == {"app": "web", "x": "1"}
    assert deleted.metadata.resource_version == str(fed.store.revision)
    assert sent(fed.delete("a")) == []


def test_kubelet_watch_is_indexed_by_node_and_sees_binding_as_added():
    fed = Fed()
    w1 = watcher("node-1", fields="spec.nodeName=node-1")
    w2 = watcher("node-2", fields="spec.nodeName=node-2")
    everyone = watcher("all")
    for w in (w1, w2, everyone):
        fed.cache.start_watch(w, 0, 0, Out())
    rc = fed.cache.resources["pods"]
    assert list(rc.trigger_watchers) == ["node-1", "node-2"] and list(rc.all_watchers) == ["all"]
    out = fed.put(pod("a"))
    assert [(e.stream, e.payload.type) for e in out.effects] == [("all", "ADDED")]
    out = fed.put(pod("a", node="node-1"))  # bound to node-1
    assert [(e.stream, e.payload.type) for e in out.effects] == [("all", "MODIFIED"), ("node-1", "ADDED")]
    out = fed.put(pod("a", node="node-2"))  # moved: node-1 loses it, node-2 gains it
    assert sorted((e.stream, e.payload.type) for e in out.effects) == [
        ("all", "MODIFIED"), ("node-1", "DELETED"), ("node-2", "ADDED")]
    assert [o.metadata.name for o in fed.cache.list("pods", fields=parse_field_selector("spec.nodeName=node-2"))] \
        == ["a"]


def test_watch_from_rv_replays_the_window_and_too_old_gets_410():
    fed = Fed(WatchCacheConfig(lower_capacity=4, upper_capacity=4))
    revs = []
    for i in range(6):
        fed.put(pod(f"p{i}"))
        revs.append(fed.store.revision)
    out = Out()
    assert fed.cache.start_watch(watcher("w"), revs[3], 0, out)
    assert sent(out) == [("ADDED", "p4"), ("ADDED", "p5")]
    # window holds the last 4 events (revs[2]..revs[5]): the oldest start is revs[2] - 1
    out = Out()
    assert fed.cache.start_watch(watcher("ok"), revs[1], 0, out)
    assert [name for _, name in sent(out)] == ["p2", "p3", "p4", "p5"]
    out = Out()
    assert not fed.cache.start_watch(watcher("old"), revs[0], 0, out)
    error, final = out.effects
    assert error.payload.type == "ERROR"
    assert (error.payload.object.code, error.payload.object.reason, error.payload.object.message) == (
        410, "Expired", f"too old resource version: {revs[0]} ({revs[1]})")
    assert isinstance(final.payload, Response) and final.stream == "old"
    assert "old" not in fed.cache.watchers


def test_window_keeps_the_last_events_exactly_across_evictions_and_compactions():
    # the window keeps events flat and drops the evicted prefix in bulk (after more than 1024 evictions): a
    # watch from any rv still replays exactly the live events after it, with the same types and objects
    fed = Fed(WatchCacheConfig(lower_capacity=8, upper_capacity=8))
    applied = []  # (rv, type, name) of every event, in order
    for i in range(1500):
        name = f"p{i % 20}"
        if i % 7 == 6 and name in {n for _, t, n in applied if t != "DELETED"} - {
                n for _, t, n in applied if t == "DELETED"}:
            fed.delete(name)
            kind = "DELETED"
        else:
            existed = any(n == name for _, _, n in applied) and applied[
                max(j for j, (_, _, n) in enumerate(applied) if n == name)][1] != "DELETED"
            fed.put(pod(name, labels={"i": str(i)}))
            kind = "MODIFIED" if existed else "ADDED"
        applied.append((fed.store.revision, kind, name))
    rc = fed.cache.resources["pods"]
    assert rc.start < 1024 < 1500  # compacted at least once
    assert rc.recorded - rc.start == 8
    live = applied[-8:]
    assert rc.oldest_minus_one() == live[0][0] - 1
    for k in range(8):
        got = [(e[0], e[1], e[3].metadata.name) for e in rc.events_after(live[k][0] - 1)]
        assert got == live[k:]
        assert all(e[3].metadata.resource_version == str(e[0]) for e in rc.events_after(live[k][0] - 1))
    out = Out()
    assert fed.cache.start_watch(watcher("w"), live[0][0] - 1, 0, out)
    assert sent(out) == [(t, n) for _, t, n in live]
    out = Out()
    assert not fed.cache.start_watch(watcher("old"), live[0][0] - 2, 0, out)


def test_watch_from_a_future_rv_skips_events_up_to_it():
    fed = Fed()
    fed.put(pod("a"))
    future = fed.store.revision + 2
    w = watcher("w")
    fed.cache.start_watch(w, future, 0, Out())
    assert sent(fed.put(pod("b"))) == []
    assert sent(fed.put(pod("c"))) == []  # revision == future: not newer
    assert sent(fed.put(pod("d"))) == [("ADDED", "d")]


def test_rv_zero_starts_with_the_current_state_as_added_in_key_order():
    fed = Fed()
    for name in ("b", "a", "c"):
        fed.put(pod(name, ns="shop" if name == "c" else "default"))
    out = Out()
    fed.cache.start_watch(watcher("w", ns="default"), 0, 0, out)
    assert sent(out) == [("ADDED", "a"), ("ADDED", "b")]


def test_bookmarks_every_minute_and_on_request():
    fed = Fed()
    fed.put(pod("a"))
    w = watcher("w", bookmarks=True)
    silent = watcher("silent")
    fed.cache.start_watch(w, 0, 500, Out())
    fed.cache.start_watch(silent, 0, 500, Out())
    assert fed.cache.next_bookmark_due() == 61_000  # 60 s later, rounded up to the second
    fed.put(pod("b"))
    out = Out()
    fed.cache.fire_bookmarks(61_000, out)
    [bm] = out.effects
    assert bm.stream == "w" and bm.payload.type == "BOOKMARK"
    assert bm.payload.object.metadata.resource_version == str(fed.store.revision)
    assert bm.payload.object.metadata.name == ""
    assert fed.cache.next_bookmark_due() == 121_000
    fed.put(pod("c"))
    out = Out()
    fed.cache.bookmark_now(out)
    assert [e.stream for e in out.effects] == ["w"]


def test_watchers_due_together_share_one_bookmark_of_the_same_resource_version():
    fed = Fed()
    fed.put(pod("a"))
    for stream in ("w1", "w2"):
        fed.cache.start_watch(watcher(stream, bookmarks=True), 0, 500, Out())
    fed.put(pod("b"))
    out = Out()
    fed.cache.fire_bookmarks(61_000, out)
    first, second = out.effects
    assert (first.stream, second.stream) == ("w1", "w2") and first.payload is second.payload
    fed.put(pod("c"))
    out = Out()
    fed.cache.bookmark_now(out)
    assert out.effects[0].payload is not first.payload
    assert out.effects[0].payload.object.metadata.resource_version == str(fed.store.revision)


def test_window_grows_while_events_are_fresh():
    fed = Fed(WatchCacheConfig(lower_capacity=2, upper_capacity=8, event_fresh_ms=1000))
    for i in range(10):
        fed.put(pod(f"p{i}"))
    rc = fed.cache.resources["pods"]
    assert rc.capacity == 8 and len(rc.events) - rc.start == 8
    fed.now = 10_000  # everything is stale now: the window shrinks when full
    fed.put(pod("late"))
    assert rc.capacity == 4 and len(rc.events) - rc.start == 4


def test_relist_terminates_every_watcher():
    fed = Fed()
    w = watcher("w")
    fed.cache.start_watch(w, 0, 0, Out())
    out = Out()
    fed.cache.replace([], fed.store.revision, out)
    assert [(e.stream, type(e.payload)) for e in out.effects] == [("w", Response)]
    assert not fed.cache.watchers and not w.alive


def test_lists_stay_in_key_order_whatever_order_objects_were_created_and_deleted_in():
    # new keys wait unsorted until the order is next needed (a list, a watch from rv 0, a delete): every read
    # must still see them all, in key order, including keys created after a read and keys deleted before one
    fed = Fed()
    names = [f"p{(i * 37) % 101}" for i in range(101)]  # 101 distinct names in a scrambled order
    live: set[str] = set()
    for i, name in enumerate(names):
        fed.put(pod(name))
        live.add(name)
        if i % 7 == 0 and names[i // 2] in live:
            fed.delete(names[i // 2])
            live.remove(names[i // 2])
        if i % 20 == 0:
            assert [p.metadata.name for p in fed.cache.list("pods")] == sorted(live)
    assert [p.metadata.name for p in fed.cache.list("pods", "default")] == sorted(live)
    out = Out()
    fed.cache.start_watch(watcher("w"), 0, 0, out)
    assert [name for _, name in sent(out)] == sorted(live)


def test_a_watch_gets_its_last_bookmark_two_seconds_before_its_deadline_and_ends_there_with_a_200():
    """cacheWatcher.nextBookmarkTime (every minute, and 2 s before the deadline) and serveWatch's timeout."""
    fed = Fed()
    fed.put(pod("a"))
    w = watcher("w", bookmarks=True)
    w.deadline = 240_500
    fed.cache.start_watch(w, 0, 500, Out())
    assert fed.cache.next_watch_deadline() == 240_500
    dues = []
    while fed.cache.next_bookmark_due() is not None and len(dues) < 10:
        due = fed.cache.next_bookmark_due()
        dues.append(due)
        fed.put(pod(f"p{due}"))  # something new for each bookmark to carry
        out = Out()
        fed.cache.fire_bookmarks(due, out)
        assert [(e.stream, e.payload.type) for e in out.effects] == [("w", "BOOKMARK")]
    assert dues == [61_000, 121_000, 181_000, 239_000]  # the last one 238.5 s, rounded up to the second
    out = Out()
    fed.cache.end_timed_out(240_499, out)
    assert out.effects == [] and w.alive
    fed.cache.end_timed_out(240_500, out)
    assert [(e.stream, e.payload) for e in out.effects] == [("w", Response(1, 200))]
    assert not w.alive and not fed.cache.watchers and fed.cache.next_watch_deadline() is None


def test_a_stopped_or_terminated_watch_has_no_deadline_left():
    fed = Fed()
    early, late = watcher("early"), watcher("late")
    early.deadline, late.deadline = 10_000, 20_000
    for w in (early, late):
        fed.cache.start_watch(w, 0, 0, Out())
    fed.cache.stop_watch("early")  # the client went away
    assert fed.cache.next_watch_deadline() == 20_000
    out = Out()
    fed.cache.end_timed_out(10_000, out)
    assert out.effects == []
    fed.cache.replace([], fed.store.revision, Out())  # the relist ends `late` now
    assert fed.cache.next_watch_deadline() is None


NODES = RESOURCES["nodes"]


def node_watcher(stream, *, fields=""):
    """A watch on nodes, indexed by its metadata.name as the replica does when the cache has that trigger."""
    from kmodel.apiserver import watchcache

    fld = parse_field_selector(fields, "nodes") if fields else None
    trigger = fld.required_value("metadata.name") if fld is not None and "nodes" in watchcache.TRIGGERS else None
    return CacheWatcher(stream, stream, 1, "nodes", NODES.prefix + "/", fields=fld, trigger=trigger)


def node_sends(monkeypatch, indexed: bool):
    """Every kubelet's watch of its own Node plus an unfiltered one, through a sequence of node writes: the
    (stream, type, name) of each send, per write; `indexed` False takes the nodes' trigger away (the reference:
    every watcher filtered on every event)."""
    from kmodel.apiserver import watchcache
    from kmodel.objects import Node

    if not indexed:
        monkeypatch.delitem(watchcache.TRIGGERS, "nodes")
    fed = Fed()
    watchers = [node_watcher(f"node-{i}", fields=f"metadata.name=node-{i}") for i in range(4)]
    watchers.append(node_watcher("all"))
    for w in watchers:
        fed.cache.start_watch(w, 0, 0, Out())
    rc = fed.cache.resources["nodes"]
    assert (len(rc.trigger_watchers), len(rc.all_watchers)) == ((4, 1) if indexed else (0, 5))
    writes = []
    for name, labels in [("node-1", {}), ("node-2", {}), ("node-1", {"a": "b"}), ("node-9", {}), ("node-2", {"x": "0"})]:
        fed.store.put(object_key(NODES, "", name), Node(metadata=ObjectMeta(name=name, labels=labels)))
        writes.append(sorted((e.stream, e.payload.type, e.payload.object.metadata.name)
                             for e in fed.sync().effects if isinstance(e.payload, WatchEvent)))
    fed.store.delete_range(object_key(NODES, "", "node-1"))
    writes.append(sorted((e.stream, e.payload.type, e.payload.object.metadata.name)
                         for e in fed.sync().effects if isinstance(e.payload, WatchEvent)))
    listed = [o.metadata.name for o in fed.cache.list("nodes", fields=parse_field_selector("metadata.name=node-2",
                                                                                           "nodes"))]
    return writes, listed


def test_node_watches_indexed_by_name_get_what_filtering_every_watcher_gives(monkeypatch):
    indexed = node_sends(monkeypatch, indexed=True)
    assert indexed == node_sends(monkeypatch, indexed=False)
    writes, listed = indexed
    assert writes[0] == [("all", "ADDED", "node-1"), ("node-1", "ADDED", "node-1")]
    assert writes[3] == [("all", "ADDED", "node-9")]  # no kubelet watches node-9
    assert writes[-1] == [("all", "DELETED", "node-1"), ("node-1", "DELETED", "node-1")]
    assert listed == ["node-2"]
