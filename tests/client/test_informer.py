"""Informers against replicas: sync, events, never going back in time, relist after 410."""

from __future__ import annotations

from kmodel.apiserver.watchcache import WatchCacheConfig
from kmodel.client import NODE_NAME_INDEX, DeletedFinalStateUnknown, index_by_node_name
from kmodel.client.informer import Listener
from kmodel.loop import AdvanceTime, BreakStream, Crash, DelayHead, Deliver, Partition, Restart, SlowLink, Work

from .harness import Cluster, Probe, pod


class Seen:
    """Handlers that record what an informer exposed, checking it never goes back in time."""

    def __init__(self, informer):
        self.informer = informer
        self.log = []
        self.deleted = {}  # name -> rv of its deletion
        informer.add_listener(Listener("", self.add, self.update, self.delete))
        self.max_rv = 0

    def _check(self, obj):
        rv = int(obj.metadata.resource_version)
        assert self.informer.last_rv >= self.max_rv, "the informer's resourceVersion went back"
        assert obj.metadata.name not in self.deleted or rv > self.deleted[obj.metadata.name], \
            f"{obj.metadata.name} came back from an older state"
        self.max_rv = max(self.max_rv, rv)

    def add(self, now, obj, out):
        self._check(obj)
        self.log.append(("add", obj.metadata.name))

    def update(self, now, old, new, out):
        self._check(new)
        assert int(new.metadata.resource_version) >= int(old.metadata.resource_version)
        self.log.append(("update", new.metadata.name))

    def delete(self, now, obj, out):
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.deleted[obj.metadata.name] = int(self.informer.last_rv)
        self.log.append(("delete", obj.metadata.name))


def do(cluster, probe, fn):
    cluster.act(probe, lambda now, out: fn(now, out))


def test_informer_lists_watches_and_indexes():
    p = Probe("probe", ["apiserver-0"])
    inf = p.informer("pods", indexers={NODE_NAME_INDEX: index_by_node_name})
    seen = Seen(inf)
    c = Cluster(1, probes=[p])
    do(c, p, lambda now, out: p.client.create(now, out, "pods", pod("a", node="n1"), on_done=p.record))
    do(c, p, lambda now, out: p.client.create(now, out, "pods", pod("b", node="n2"), on_done=p.record))
    c.run()
    assert inf.has_synced and inf.last_rv == c.store.revision
    assert [o.metadata.name for o in inf.by_index(NODE_NAME_INDEX, "n1")] == ["a"]
    # A bound pod's delete is graceful: the informer sees an update carrying the deletionTimestamp...
    do(c, p, lambda now, out: p.client.delete(now, out, "pods", "a", namespace="default", on_done=p.record))
    c.run()
    assert seen.log == [("add", "a"), ("add", "b"), ("update", "a")]
    assert inf.get("default", "a").metadata.deletion_timestamp is not None
    # ...and the final removal (what a kubelet does with grace period 0) as a delete, leaving the index.
    c.store.delete_range("/registry/pods/default/a")
    c.etcd.poke()
    c.run()
    assert seen.log[-1] == ("delete", "a") and inf.get("default", "a") is None
    assert inf.by_index(NODE_NAME_INDEX, "n1") == [] and inf.last_rv == c.store.revision


def test_informer_never_goes_back_in_time_when_it_reconnects_to_a_lagging_replica():
    writer = Probe("writer", ["apiserver-0"])
    p = Probe("probe", ["apiserver-0", "apiserver-1"])
    inf = p.informer("pods")
    seen = Seen(inf)
    c = Cluster(2, probes=[writer, p])
    do(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("old"), on_done=writer.record))
    c.run()
    lag_rv = c.store.revision
    # Hold everything etcd sends apiserver-1 from now on: its cache stays at lag_rv.
    do(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("new"), on_done=writer.record))
    c.loop.step(Deliver("writer", "apiserver-0"))
    c.loop.step(Work("etcd"))
    c.loop.step(DelayHead("etcd", "apiserver-1", 120_000))
    c.run(until_ms=c.loop.now)
    # Force-delete "old" so the lagging state differs visibly from the newest.
    c.store.delete_range("/registry/pods/default/old")
    c.etcd.poke()
    c.run(until_ms=c.loop.now)
    newest = c.store.revision
    assert inf.last_rv == newest and inf.get("default", "old") is None
    assert c.replicas[1].cache.resource_version == lag_rv

    # The watch breaks; the client fails over to the lagging apiserver-1 and resumes from `newest` there.
    c.loop.step(BreakStream(inf.watch_stream))
    c.run(until_ms=c.loop.now + 1_000)
    assert p.client.endpoint == "apiserver-1"
    assert inf.get("default", "old") is None and inf.last_rv == newest

    # A relist on the lagging replica asks for RV >= newest: it waits 3 s, gets 504, and falls back to a
    # consistent list (from etcd) instead of exposing the lagging cache's state.
    do(c, p, lambda now, out: inf._list(now, out))
    c.run(until_ms=c.loop.now + 10_000)
    assert inf.get("default", "old") is None and inf.get("default", "new") is not None
    assert inf.last_rv >= newest and inf.refused_lists == 0

    # The delay ends: apiserver-1 catches up, and the informer converges on the newest state.
    do(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("newer"), on_done=writer.record))
    c.run(until_ms=c.loop.now + 200_000)
    assert c.replicas[1].cache.resource_version == c.store.revision
    assert sorted(o.metadata.name for o in inf.list()) == ["new", "newer"]
    assert inf.last_rv == c.store.revision


def _restarted_against_a_lagging_replica(consistent_first_list: bool) -> tuple[int, int, list]:
    """A reader on apiserver-1 only crashes and restarts while etcd -> apiserver-1 is slowed for 30 s (its
    cache lags): "old" was deleted and "new" created since the cache's revision. Returns the store's revision
    at the restart, the first resourceVersion the restarted informer exposed, and what its first list added."""
    writer = Probe("writer", ["apiserver-0"])
    p = Probe("reader", ["apiserver-1"])
    p.client.consistent_first_list = consistent_first_list
    inf = p.informer("pods")
    c = Cluster(2, probes=[writer, p])
    do(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("old"), on_done=writer.record))
    c.run()
    assert inf.get("default", "old") is not None
    c.loop.step(SlowLink("etcd", "apiserver-1", 30_000))
    c.store.delete_range("/registry/pods/default/old")
    c.etcd.poke()
    do(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("new"), on_done=writer.record))
    c.run(until_ms=c.loop.now + 1_000)
    assert c.replicas[1].cache.resource_version < c.store.revision
    c.loop.step(Crash("reader"))
    restarted_at = c.store.revision
    added: list = []  # (the resourceVersion being exposed, the pod added)
    inf.add_listener(Listener("", lambda now, obj, out: added.append((inf.exposed[-1], obj.metadata.name)), None, None))
    c.loop.step(Restart("reader"))
    c.run(until_ms=c.loop.now + 40_000)  # past the slow link: the cache catches up in both cases
    assert inf.get("default", "old") is None and inf.get("default", "new") is not None
    first_rv = inf.exposed[inf.exposed.index(0) + 1]
    return restarted_at, first_rv, [name for rv, name in added if rv == first_rv]


def test_a_restarted_reflector_first_lists_from_a_lagging_cache_and_goes_back_in_time():
    """Upstream's first list asks resourceVersion 0: the lagging cache answers at once, with a pod deleted
    before the crash and without one created before it (kubernetes#59848)."""
    restarted_at, first_rv, added = _restarted_against_a_lagging_replica(False)
    assert first_rv < restarted_at
    assert "old" in added and "new" not in added


def test_with_the_consistent_first_list_fix_a_restarted_reflector_lists_the_current_state():
    """`reflector-consistent-first-list`: the first list asks "" and is read from etcd (its answer waits out
    the slow link), never older than the state before the crash."""
    restarted_at, first_rv, added = _restarted_against_a_lagging_replica(True)
    assert first_rv >= restarted_at
    assert added == ["new"]


def test_watch_too_old_after_compaction_makes_the_informer_relist():
    p = Probe("probe", ["apiserver-0"])
    writer = Probe("writer", ["apiserver-0"])
    inf = p.informer("pods")
    c = Cluster(1, probes=[p, writer], cache_config=WatchCacheConfig(lower_capacity=2, upper_capacity=2))
    c.run()
    lists_before = inf.lists
    # Break the informer's watch and keep it from resuming while three writes push its RV out of the window.
    stream = inf.watch_stream
    c.loop.step(BreakStream(stream))  # 10 s old: the informer watches again at once (its request on the link)
    for name in ("a", "b", "c"):
        do(c, writer, lambda now, out, n=name: writer.client.create(now, out, "pods", pod(n), on_done=writer.record))
        c.loop.step(Deliver("writer", "apiserver-0"))
        c.loop.step(Work("etcd"))
        c.loop.step(Deliver("etcd", "apiserver-0"))
    c.store.compact(c.store.revision)
    expired = c.loop.now
    c.run(until_ms=expired)  # the watch arrives, too old for the cache: 410
    assert inf.watch_stream is None and inf.lists == lists_before
    c.run(until_ms=expired + 799)
    assert inf.lists == lists_before  # the watch returned an error: the reflector's backoff first
    c.run(until_ms=expired + 5_000)
    assert inf.lists == lists_before + 1  # then a list from last RV
    assert sorted(o.metadata.name for o in inf.list()) == ["a", "b", "c"]
    assert inf.last_rv == c.store.revision


def _quiet_watch_broken_after(ms: int, draws: tuple = (0.0,)) -> tuple:
    p = Probe("probe", ["apiserver-0", "apiserver-1"], draws=draws)
    inf = p.informer("pods")
    c = Cluster(2, probes=[p])
    c.run()
    started = c.loop.now
    if ms:
        c.loop.step(AdvanceTime(started + ms))
    old = inf.watch_stream
    c.loop.step(BreakStream(old))
    return c, inf, old


def test_a_quiet_watch_broken_after_a_second_resumes_at_once():
    # reflector.handleWatch: only a watch under 1 s old that delivered nothing is "very short"
    c, inf, old = _quiet_watch_broken_after(1_000)
    assert inf.watch_stream not in (None, old) and c.network.stream_ends(inf.watch_stream)[1] == "apiserver-1"


def test_a_very_short_watch_is_an_error_the_reflector_relists_after_its_backoff():
    c, inf, old = _quiet_watch_broken_after(999)
    assert inf.watch_stream is None
    now, lists = c.loop.now, inf.lists
    c.run(until_ms=now + 799)
    assert inf.watch_stream is None and inf.lists == lists
    c.run(until_ms=now + 800)
    assert inf.lists == lists + 1  # ListAndWatch returned: the backoff, then a list (not a watch)
    c.run(until_ms=now + 1_000)
    assert inf.watch_stream is not None


def advance(c, to_ms: int) -> None:
    """Run fairly until `to_ms`, and move the clock there even when nothing falls due."""
    c.run(until_ms=to_ms)
    if c.loop.now < to_ms:
        c.loop._advance_recorded(to_ms)  # noqa: SLF001 (tests move the clock with nothing due)


def test_the_backoff_grows_across_successful_lists_and_starts_again_after_two_quiet_minutes():
    """wait.NewExponentialBackoffManager(800ms, 30s, 2min, ...): a successful list does not reset it; two minutes
    since the last backoff began do."""
    c, inf, _ = _quiet_watch_broken_after(0)  # a very short watch: the first backoff

    def wait_for_the_relist() -> int:
        broken, lists = c.loop.now, inf.lists
        while inf.lists == lists:
            advance(c, c.loop.now + 100)
        assert inf.watch_stream is not None  # listed and watching again, at that instant
        return c.loop.now - broken

    waits = []
    for _ in range(3):
        waits.append(wait_for_the_relist())
        c.loop.step(BreakStream(inf.watch_stream))  # very short again
    waits.append(wait_for_the_relist())
    assert waits == [800, 1_600, 3_200, 6_400]  # each list between them succeeded

    advance(c, c.loop.now + 121_000)
    lists = inf.lists
    c.loop.step(BreakStream(inf.watch_stream))  # a watch 2 min old: resumed at once, no backoff, no list
    assert inf.watch_stream is not None and inf.lists == lists
    c.loop.step(BreakStream(inf.watch_stream))  # very short
    assert wait_for_the_relist() == 800


def test_the_backoff_is_jittered_by_up_to_its_own_length_even_at_the_cap():
    # wait.Jitter(d, 1.0) = d + rand.Float64() × d, on every step, the capped ones too (Backoff.Step)
    p = Probe("probe", ["apiserver-0"], draws=(0.5,))
    inf = p.informer("pods")
    assert [inf._backoff_ms(0) for _ in range(8)] == [  # noqa: SLF001
        1_200, 2_400, 4_800, 9_600, 19_200, 38_400, 45_000, 45_000]


def test_a_jittered_backoff_delays_the_relist_after_a_very_short_watch():
    c, inf, _ = _quiet_watch_broken_after(0, draws=(0.5,))
    now, lists = c.loop.now, inf.lists
    c.run(until_ms=now + 1_199)
    assert inf.lists == lists
    c.run(until_ms=now + 1_200)
    assert inf.lists == lists + 1


def test_a_clusters_clients_draw_from_random_sources_seeded_by_the_run_and_the_process():
    from kmodel.cluster import Cluster as ModelCluster, ClusterConfig

    def draws(seed: int) -> dict:
        cluster = ModelCluster(ClusterConfig(nodes=1, apiservers=1, seed=seed))
        return {n: c.client.rng.random() for n, c in sorted(cluster.loop.components.items()) if hasattr(c, "client")}

    one, again, other = draws(1), draws(1), draws(2)
    assert one == again and one != other and len(set(one.values())) == len(one)


def test_informers_failing_on_one_replica_fail_the_client_over_once():
    # Three informers of one client list through apiserver-0, which is cut off: their lists time out together.
    # The client fails over when the first times out; each informer's own fail-over then sees it has moved on
    # already. (Each failing over on its own used to move the client once per informer: with three informers and
    # two replicas it ended back on the cut-off one, and every relist timed out again.)
    p = Probe("probe", ["apiserver-0", "apiserver-1"], timeout_ms=5_000, read_attempts=1)
    informers = [p.informer(resource) for resource in ("pods", "services", "nodes")]
    c = Cluster(2, probes=[])
    c.run()
    c.loop.network.add_endpoint("probe")
    c.loop.step(Partition(["apiserver-0"]))
    start = c.loop.now
    c.loop.add_component(p)
    c.run(until_ms=start + 5_000)
    assert p.client.endpoint == "apiserver-1"
    c.run(until_ms=start + 7_000)  # the relists, after the informers' first backoff (800 ms)
    assert all(inf.has_synced for inf in informers)
