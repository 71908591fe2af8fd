"""API server replicas in a loop: etcd, two replicas, probe clients."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from client.harness import Cluster, Probe, pod  # noqa: E402

from kmodel.loop import AdvanceTime, BreakStream, Crash, DelayHead, Deliver, HealAll, Partition, Restart, Work  # noqa: E402
from kmodel.apiserver.watchcache import WatchCacheConfig  # noqa: E402
from kmodel.objects import Lease, ObjectMeta  # noqa: E402


def names(response):
    return [o.metadata.name for o in response.body.items]


def create(cluster, probe, obj):
    cluster.act(probe, lambda now, out: probe.client.create(now, out, "pods", obj, on_done=probe.record))


def test_writes_reach_every_replica_cache_through_the_etcd_watch():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(2, probes=[p])
    create(c, p, pod("a"))
    c.run()
    assert p.answers[-1].code == 201
    for r in c.replicas:
        assert r.cache.resource_version == c.store.revision
        assert r.cache.get("pods", "/registry/pods/default/a") is not None
    graph = c.network.communication_graph()
    assert graph.has_edge("apiserver-0", "etcd") and graph.has_edge("etcd", "apiserver-1")


def test_lagging_replica_serves_stale_cached_reads_and_waits_for_newer_ones():
    writer = Probe("writer", ["apiserver-0"])
    reader = Probe("reader", ["apiserver-1"])
    c = Cluster(2, probes=[writer, reader])
    create(c, writer, pod("a"))
    c.run()
    before = c.store.revision
    create(c, writer, pod("b"))
    c.loop.step(Deliver("writer", "apiserver-0"))
    c.loop.step(Work("etcd"))
    c.loop.step(DelayHead("etcd", "apiserver-1", 10_000))  # apiserver-1's cache now lags
    c.run(until_ms=c.loop.now)
    latest = c.store.revision
    assert c.replicas[1].cache.resource_version == before < latest

    read = lambda rv: lambda now, out: reader.client.list(now, out, "pods", namespace="default",  # noqa: E731
                                                          resource_version=rv, on_done=reader.record)
    c.act(reader, read("0"))
    c.run(until_ms=c.loop.now)
    assert names(reader.answers[-1]) == ["a"] and reader.answers[-1].body.resource_version == str(before)

    c.act(reader, read(""))  # a consistent read goes to etcd: fresh
    c.run(until_ms=c.loop.now)
    assert names(reader.answers[-1]) == ["a", "b"]

    start = c.loop.now
    c.act(reader, read(str(latest)))
    c.run(until_ms=start + 2_999)
    assert len(reader.answers) == 2  # still waiting for the cache
    c.run(until_ms=start + 3_000)
    timeout = reader.answers[-1]
    assert (timeout.code, timeout.body.reason, timeout.body.message) == (
        504, "Timeout", f"Timeout: Too large resource version: {latest}, current: {before}")

    c.loop.step(AdvanceTime(8_000))  # the etcd link is held until 10 s
    assert c.replicas[1].cache.resource_version == before
    c.act(reader, read(str(latest)))
    c.run(until_ms=20_000)  # the delay ends, the cache catches up, the waiting read is served
    assert c.loop.now < 11_000
    assert names(reader.answers[-1]) == ["a", "b"] and reader.answers[-1].body.resource_version == str(latest)


def test_replica_cut_off_from_etcd_answers_etcd_timeout_after_seven_seconds():
    p = Probe("probe", ["apiserver-1"])
    c = Cluster(2, probes=[p])
    c.loop.step(Partition(["etcd"]))  # apiserver-1 still reaches the probe, no longer etcd
    start = c.loop.now
    revision = c.store.revision
    create(c, p, pod("a"))
    c.run(until_ms=start + 6_999)
    assert p.answers == []
    c.run(until_ms=start + 7_000)
    [answer] = p.answers
    assert (answer.code, answer.body.reason, answer.body.message) == (500, "", "etcdserver: request timed out")
    assert c.store.revision == revision


def test_crashed_replica_forgets_its_watchers_and_relists_on_restart():
    p = Probe("probe", ["apiserver-0", "apiserver-1"])
    inf = p.informer("pods")
    c = Cluster(2, probes=[p])
    c.run()
    assert c.replicas[0].cache.watchers  # the informer watches apiserver-0
    c.loop.step(Crash("apiserver-0"))
    assert not c.replicas[0].cache.watchers and not c.replicas[0].cache.ready
    create(c, p, pod("a"))
    c.run()
    assert p.answers[-1].code == 201  # the client failed over to apiserver-1
    assert [o.metadata.name for o in inf.list()] == ["a"]
    c.loop.step(Restart("apiserver-0"))
    assert c.replicas[0].cache.ready
    assert c.replicas[0].cache.get("pods", "/registry/pods/default/a") is not None


def test_compaction_while_the_etcd_stream_is_down_makes_the_replica_relist():
    p = Probe("probe", ["apiserver-1"])
    inf = p.informer("pods")
    c = Cluster(2, probes=[p], cache_config=WatchCacheConfig(lower_capacity=2, upper_capacity=2))
    create(c, p, pod("a"))
    c.run()
    replica = c.replicas[1]
    old_stream = replica.etcd_stream
    # Cut apiserver-1's etcd watch: break the stream while etcd is unreachable, so the re-watch fails.
    c.loop.step(Partition(["etcd"]))
    c.loop.step(BreakStream(old_stream))
    assert replica.etcd_stream is None
    for name in ("b", "c", "d"):  # written into etcd directly while apiserver-1 is not watching
        c.store.put(f"/registry/pods/default/{name}", pod(name))
    c.store.compact(c.store.revision)
    c.loop.network.heal_all()
    c.run()  # the retry timer re-watches from a compacted revision -> cancelled -> relist
    assert replica.cache.resource_version == c.store.revision
    assert replica.cache.get("pods", "/registry/pods/default/d") is not None
    assert sorted(o.metadata.name for o in inf.list()) == ["a", "b", "c", "d"]
    assert inf.last_rv == c.store.revision
    assert inf.lists >= 2  # the relist ended the informer's watch; resuming was too old: it listed again


def _cut_off_from_etcd_with_writes_held() -> tuple:
    """apiserver-0 cut off from etcd (and everyone) after a quiet spell, while writes go on through apiserver-1.
    Returns the cluster, apiserver-0, its etcd stream, and when its keepalive gives up."""
    from kmodel.loop.health import TIMER_PREFIX, first_ping_after

    p = Probe("probe", ["apiserver-1"])
    c = Cluster(2, probes=[p], cache_config=WatchCacheConfig(lower_capacity=2, upper_capacity=2))
    create(c, p, pod("a"))
    c.run()
    replica = c.replicas[0]
    heard = c.network.delivered_at("etcd", "apiserver-0")
    c.loop.step(AdvanceTime(heard + 5_000))
    c.loop.step(Partition(["apiserver-0"]))
    gives_up = first_ping_after(heard, c.loop.now, 30_000) + 10_000
    assert gives_up == heard + 40_000
    assert c.loop.clock.due_at("apiserver-0", TIMER_PREFIX + "etcd") == gives_up
    assert [peer for (client, peer) in c.loop.health.armed if client == "apiserver-0"] == ["etcd"]
    for name in ("b", "c", "d"):
        create(c, p, pod(name))
        c.run(until_ms=c.loop.now)
    assert replica.cache.get("pods", "/registry/pods/default/d") is None  # held on the cut link
    return c, replica, replica.etcd_stream, gives_up


def test_the_etcd_clients_keepalive_gives_up_on_a_cut_off_connection_and_the_watch_resumes_after_the_heal():
    c, replica, stream, gives_up = _cut_off_from_etcd_with_writes_held()
    c.run(until_ms=gives_up - 1)
    assert replica.etcd_stream == stream
    c.run(until_ms=gives_up)
    assert replica.etcd_stream is None and "apiserver-0" not in c.etcd.watch_streams()  # etcd cancelled it
    assert c.network.stream_ends(stream) is None  # what it held is lost
    c.loop.step(HealAll())
    c.run(until_ms=c.loop.now + 2_000)  # the retry re-watches from the cache's revision: etcd sends b, c, d again
    assert replica.etcd_stream not in (None, stream)
    assert replica.cache.resource_version == c.store.revision
    assert replica.cache.get("pods", "/registry/pods/default/d") is not None


def test_a_compaction_while_the_keepalive_has_ended_the_etcd_watch_makes_the_replica_relist():
    c, replica, stream, gives_up = _cut_off_from_etcd_with_writes_held()
    relists = []
    relist = replica._relist
    replica._relist = lambda now, out: (relists.append(now), relist(now, out))
    c.run(until_ms=gives_up)
    c.store.compact(c.store.revision)
    c.loop.step(HealAll())
    c.run(until_ms=c.loop.now + 2_000)  # re-watch from a compacted revision: cancelled, so relist
    assert relists and replica.cache.resource_version == c.store.revision
    assert replica.cache.get("pods", "/registry/pods/default/d") is not None


def test_a_heal_before_the_keepalive_gives_up_delivers_what_was_held():
    c, replica, stream, gives_up = _cut_off_from_etcd_with_writes_held()
    c.run(until_ms=gives_up - 1_000)
    c.loop.step(HealAll())
    c.run(until_ms=gives_up + 1_000)
    assert replica.etcd_stream == stream and not c.loop.health.armed
    assert replica.cache.get("pods", "/registry/pods/default/d") is not None


def test_a_watch_the_replica_ends_within_a_second_of_its_start_is_very_short_and_the_informer_relists():
    """The cache relisting ends every watch (terminateAllWatchers): a clean end, to which reflector.handleWatch
    applies its very-short check like to any other."""
    p = Probe("probe", ["apiserver-1"])
    inf = p.informer("pods")
    c = Cluster(2, probes=[p])
    create(c, p, pod("a"))
    c.run()
    replica = c.replicas[1]
    c.loop.step(Partition(["etcd"]))
    c.loop.step(BreakStream(replica.etcd_stream))  # its re-watch fails: it retries every second
    for name in ("b", "c"):
        c.store.put(f"/registry/pods/default/{name}", pod(name))
    c.store.compact(c.store.revision)  # past b: the retry's watch is refused as compacted, so the replica relists
    c.loop.network.heal_all()
    retry = c.loop.clock.due_at("apiserver-1", "etcd-retry")
    c.loop.step(AdvanceTime(retry - 500))
    c.loop.step(BreakStream(inf.watch_stream))  # an old watch: the informer watches again at once
    c.run(until_ms=retry - 500)
    young, lists = inf.watch_stream, inf.lists
    assert young is not None
    c.run(until_ms=retry)  # the relist ends `young`, 500 ms old, nothing delivered on it
    assert inf.watch_stream is None and inf.lists == lists
    c.run(until_ms=retry + 800)
    assert inf.lists == lists + 1 and sorted(o.metadata.name for o in inf.list()) == ["a", "b", "c"]
    n = int(young.rsplit("-", 1)[1])
    assert inf.watch_stream == f"probe/watch-{n + 1}"  # no watch between: it did not watch again at once


def test_the_server_ends_an_informers_watch_at_its_timeout_and_the_informer_watches_again_at_once():
    """reflector.watch asks timeoutSeconds in [300, 600); the replica ends the watch then with a 200, after a
    bookmark 2 s before; the informer watches again from that bookmark's resourceVersion, without a list."""
    p = Probe("probe", ["apiserver-0"])
    inf = p.informer("pods")
    c = Cluster(2, probes=[p])
    create(c, p, pod("a"))
    c.run()
    first = inf.watch_stream
    timeout_s = p.client._watches[first].request.timeout_seconds  # noqa: SLF001
    assert 300 <= timeout_s < 600
    watcher = c.replicas[0].cache.watchers[first]
    assert watcher.deadline == inf._watch_started + timeout_s * 1000  # noqa: SLF001 (sent and received at once)
    lists = inf.lists
    c.run(until_ms=watcher.deadline - 10_000)
    create(c, p, pod("b"))  # a write the informer sees on its watch
    c.run(until_ms=watcher.deadline - 5_000)
    seen = inf.last_rv
    c.store.put("/registry/leases/default/x", Lease(metadata=ObjectMeta(name="x", namespace="default")))
    c.loop.notify_work("etcd")  # (written behind the API's back: etcd is told it has watch responses to send)
    c.run(until_ms=watcher.deadline - 1)
    assert inf.watch_stream == first
    # the bookmark 2 s before the deadline carried the cache's revision: the lease's write, which no pod event has
    assert inf.last_rv == c.store.revision > seen
    c.run(until_ms=watcher.deadline)
    second = inf.watch_stream
    assert second not in (None, first) and inf.lists == lists
    request = p.client._watches[second].request  # noqa: SLF001
    assert int(request.resource_version) == c.store.revision
    assert 300 <= request.timeout_seconds < 600 and not watcher.alive
    assert sorted(o.metadata.name for o in inf.list()) == ["a", "b"]


def test_a_watch_without_a_timeout_gets_the_servers_default_of_thirty_to_sixty_minutes():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(2, probes=[p])
    c.run()
    ended = []
    deadlines = []
    for i in range(5):
        c.act(p, lambda now, out: p.client.watch(now, out, "pods", resource_version="0", on_event=lambda *a: None,
                                                 on_closed=lambda now, stream, response, out: ended.append(
                                                     (now, response.code))))
        c.run(until_ms=c.loop.now + 1_000)
        stream = p.client.open_watches[-1]
        deadlines.append(c.replicas[0].cache.watchers[stream].deadline - c.loop.now + 1_000)
    assert all(1_800_000 <= d < 3_600_000 for d in deadlines) and len(set(deadlines)) == 5
    c.run(until_ms=c.loop.now + 3_600_000)
    assert [code for _, code in ended] == [200] * 5
