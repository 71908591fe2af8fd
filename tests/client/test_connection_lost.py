"""A client whose replica is cut off: its HTTP/2 health check gives up on the connection (kmodel.loop.health), its
watch moves to the other replica, a read is resent there and a write fails, instead of everything hanging until
the partition heals."""

from __future__ import annotations

from kmodel.client.component import CLIENT_GO_HTTP2
from kmodel.loop import AdvanceTime, HealAll, Partition
from kmodel.loop.health import TIMER_PREFIX, first_ping_after
from tests.client.harness import Cluster, pod
from tests.client.test_retry_and_client import Timed as Recording  # a probe that notes when each answer came

IDLE, PING_TIMEOUT = CLIENT_GO_HTTP2.idle_ms, CLIENT_GO_HTTP2.ping_timeout_ms


def cut_off_replica_with_work_in_flight() -> tuple[Recording, Cluster, int]:
    """A probe watching pods through apiserver-0, which is then cut off with a read and a write of the probe on
    their way to it. Returns the time the connection is given up on."""
    p = Recording("probe", ["apiserver-0", "apiserver-1"])
    pods = p.informer("pods")
    c = Cluster(2, probes=[p])
    c.run()
    assert pods.has_synced and pods.watch_stream is not None
    heard = c.network.delivered_at("apiserver-0", "probe")
    c.loop.step(Partition(["apiserver-0"]))
    c.act(p, lambda now, out: p.client.list(now, out, "pods", resource_version="0", on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    gives_up = first_ping_after(heard, c.loop.now, IDLE) + PING_TIMEOUT
    assert c.loop.clock.due_at("probe", TIMER_PREFIX + "apiserver-0") == gives_up
    return p, c, gives_up


def test_until_the_health_check_gives_up_the_connection_just_hears_nothing():
    p, c, gives_up = cut_off_replica_with_work_in_flight()
    stream = p.informers[0].watch_stream
    c.run(until_ms=gives_up - 1)
    assert p.answers == [] and p.informers[0].watch_stream == stream


def test_then_the_watch_moves_to_the_other_replica_a_read_is_resent_and_a_write_fails():
    p, c, gives_up = cut_off_replica_with_work_in_flight()
    pods = p.informers[0]
    old_stream, lists = pods.watch_stream, pods.lists
    c.run(until_ms=gives_up)
    # the watch ended with an error event (client-go's decoder: "http2: client connection lost" is no EOF)
    assert pods.watch_stream is None and pods.lists == lists
    [write] = p.answers
    assert (write.code, write.body.reason) == (503, "ServiceUnavailable")
    assert "http2: client connection lost" in write.body.message and p.times == [gives_up]
    assert p.client.endpoint == "apiserver-1"
    assert not c.network.streams_between("probe", "apiserver-0")
    c.run(until_ms=gives_up + 1_000)  # the read, as client-go retries a GET on a lost connection
    assert [a.code for a in p.answers] == [503, 200] and p.times == [gives_up, gives_up + 1_000]
    # the reflector relisted after its first backoff (800 ms), then watched, both through apiserver-1
    assert pods.lists == lists + 1 and pods.watch_stream not in (None, old_stream)
    assert c.network.stream_ends(pods.watch_stream) == ("probe", "apiserver-1")

    # The write died with the connection: healing the partition does not deliver it late.
    c.loop.step(HealAll())
    c.run(until_ms=c.loop.now + 10_000)
    assert not c.store.range("/registry/pods/default/w").kvs


def test_the_moved_watch_hears_what_is_written_through_the_other_replica():
    p, c, gives_up = cut_off_replica_with_work_in_flight()
    writer = Recording("writer", ["apiserver-1"])
    c.loop.add_component(writer)
    c.act(writer, lambda now, out: writer.client.create(now, out, "pods", pod("x"), on_done=writer.record))
    c.run(until_ms=gives_up + 1_000)
    assert [a.code for a in writer.answers] == [201]
    assert p.informers[0].get("default", "x") is not None  # heard while apiserver-0 is still cut off


def test_a_request_with_a_timeout_of_its_own_times_out_then():
    # the kubelet's heartbeat client: Timeout 10 s, where the client's other requests wait 60 s
    p = Recording("probe", ["apiserver-0", "apiserver-1"])
    c = Cluster(2, probes=[p])
    c.run()
    c.loop.step(Partition(["apiserver-0"]))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("hb"), on_done=p.record, timeout_ms=10_000))
    c.run(until_ms=start + 10_000)
    assert [(a.code, a.body.reason) for a in p.answers] == [(504, "Timeout")] and p.times == [start + 10_000]
    assert p.client.endpoint == "apiserver-1"


def late_probe_of_a_cut_off_replica() -> tuple[Recording, Cluster, int]:
    """A probe that starts after apiserver-0 was cut off, so it has never talked to it: its first request there
    needs a connection. Returns the time it started."""
    p = Recording("late", ["apiserver-0", "apiserver-1"])
    c = Cluster(2, probes=[])
    c.run()
    c.loop.step(Partition(["apiserver-0"]))
    start = c.loop.now
    c.loop.add_component(p)
    return p, c, start


def test_a_dial_to_a_cut_off_replica_times_out_after_30_s():
    # the dialer gives up on the new connection after 30 s (client-go's net.Dialer); the watch waiting on it ends too
    p2, c, start = late_probe_of_a_cut_off_replica()
    pods = p2.informer("pods")
    c.act(p2, lambda now, out: pods.start(now, out))
    c.act(p2, lambda now, out: p2.client.create(now, out, "pods", pod("w"), on_done=p2.record))
    assert c.loop.health.dialing == {("late", "apiserver-0"): start}
    c.run(until_ms=start + 29_999)
    assert p2.answers == []
    c.run(until_ms=start + 30_000)
    [write] = p2.answers
    assert write.code == 503 and "dial tcp: i/o timeout" in write.body.message and p2.times == [start + 30_000]
    assert p2.client.endpoint == "apiserver-1"
    c.run(until_ms=start + 32_000)
    assert pods.has_synced and c.network.stream_ends(pods.watch_stream) == ("late", "apiserver-1")


def test_a_heal_lets_a_waiting_dial_complete():
    p, c, start = late_probe_of_a_cut_off_replica()
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=start + 20_000)
    c.loop.step(AdvanceTime(start + 20_000))  # nothing else is due before the dial's timeout
    c.loop.step(HealAll())
    assert c.loop.health.dialing == {}
    c.run(until_ms=start + 60_000)
    assert [a.code for a in p.answers] == [201] and p.times == [start + 20_000]


def test_closing_all_connections_ends_every_watch_and_fails_what_is_outstanding_without_failing_over():
    p = Recording("probe", ["apiserver-0", "apiserver-1"])
    pods = p.informer("pods")
    c = Cluster(2, probes=[p])
    c.run()
    old = pods.watch_stream
    c.act(p, lambda now, out: p.client.list(now, out, "pods", resource_version="0", on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.close_all_connections(now, out))
    [write] = p.answers
    assert write.code == 503 and "http2: client connection lost" in write.body.message
    assert c.network.stream_ends(old) is None and p.client.endpoint == "apiserver-0"
    c.run(until_ms=start + 1_000)
    assert [a.code for a in p.answers] == [503, 200]  # the read, resent a second later
    assert pods.watch_stream not in (None, old)
    assert c.network.stream_ends(pods.watch_stream) == ("probe", "apiserver-0")  # a new connection, same replica


def test_a_watch_on_the_lost_connection_ends_with_client_gos_decoding_error_not_a_quiet_close():
    p, c, gives_up = cut_off_replica_with_work_in_flight()
    events, closed = [], []
    c.act(p, lambda now, out: p.client.watch(
        now, out, "services", resource_version="0", on_event=lambda t, s, e, o: events.append((t, e)),
        on_closed=lambda t, s, r, o: closed.append(r)))
    c.run(until_ms=gives_up)
    [(at, error)] = [(t, e) for t, e in events if e.type == "ERROR"]
    assert at == gives_up and closed == []
    assert (error.object.code, error.object.reason) == (500, "InternalError")
    assert error.object.message == "unable to decode an event from the watch stream: http2: client connection lost"
    assert p.client.open_watches == []  # the informer backs off before it lists again
