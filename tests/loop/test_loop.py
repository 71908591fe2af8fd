"""The loop: the enabled-event menu, step, faults, the fair runner, replay and the digest."""

import pytest

from kmodel.component import Component
from kmodel.component.effects import Send
from kmodel.component.example import CounterClient, CounterServer, Echo, Pinger
from kmodel.loop import (
    AdvanceTime, BreakStream, Crash, DelayHead, Deliver, DropHead, EventNotEnabled, FireTimer, Heal,
    HealAll, Loop, Partition, ReleaseAll, Restart, SlowLink, Work,
)

from kmodel.loop.loop import BUSY_QUANTUM_MS, BUSY_SPELL_DIVISOR

class Recorder(Component):
    """Records everything that happens to it; sets the timers it is told to set on start."""

    def __init__(self, name, timers=(), sends=()):
        super().__init__(name)
        self.timers = timers
        self.sends = sends
        self.log = []

    def start(self, now, out):
        self.log.append(("start", now))
        for name, at in self.timers:
            out.set_timer(name, at=at)
        for dst, payload, stream in self.sends:
            out.send(dst, payload, stream)

    def on_message(self, now, msg, out):
        self.log.append(("msg", now, msg.src, msg.payload))

    def on_timer(self, now, name, out):
        self.log.append(("timer", now, name))

    def on_stream_closed(self, now, stream, out):
        self.log.append(("closed", now, stream))

    def on_connection_reset(self, now, peer, arriving, out):
        self.log.append(("reset", now, peer, arriving))

    def on_send_refused(self, now, dst, payload, out):
        self.log.append(("refused", now, dst, payload))

    def crash(self):
        self.log.append(("crash",))


def counter_cluster(*clients, retry_ms=100):
    server = CounterServer("server")
    cs = [CounterClient(name, "server", retry_ms=retry_ms) for name in clients]
    loop = Loop(components=[server, *cs])
    return loop, server, cs


def queue(loop, client, n):
    client.enqueue(n)
    loop.notify_work(client.name)


def test_enabled_events_are_listed_in_a_stable_order():
    a = Recorder("a", timers=[("t2", 0), ("t1", 0), ("later", 50)], sends=[("c", 1, None)])
    b = Recorder("b", sends=[("a", 2, None)])
    c = Recorder("c")
    loop = Loop(components=[c, b, a])  # any input order
    assert [e.name for e in loop.enabled_events()] == [
        "deliver a -> c",
        "deliver b -> a",
        "fire timer 't1' of a",
        "fire timer 't2' of a",
        "advance time to 50 ms",
    ]


def test_work_is_an_event_of_its_own():
    loop, server, (client,) = counter_cluster("c")
    queue(loop, client, 1)
    assert Work("c") in loop.enabled_events()
    loop.step(Work("c"))
    assert Work("c") not in loop.enabled_events()  # one request outstanding at a time
    assert loop.network.in_flight("c", "server")[-1].payload == ("incr", "c", 1)


def test_step_refuses_an_event_that_is_not_enabled_and_says_why():
    a = Recorder("a", timers=[("t", 100)])
    loop = Loop(components=[a, Echo("b")])
    with pytest.raises(EventNotEnabled, match="deliver a -> b: link a -> b has no deliverable message"):
        loop.step(Deliver("a", "b"))
    with pytest.raises(EventNotEnabled, match="due at 100"):
        loop.step(FireTimer("a", "t"))
    with pytest.raises(EventNotEnabled, match="past the next due time 100"):
        loop.step(AdvanceTime(101))
    with pytest.raises(EventNotEnabled, match="does not model crashes"):
        loop.step(Crash("b"))
    with pytest.raises(EventNotEnabled, match="not down"):
        loop.step(Restart("a"))
    assert loop.events_applied == 0


def test_time_advances_to_the_next_timer_and_the_timer_fires_with_that_time():
    a = Recorder("a", timers=[("t", 100)])
    loop = Loop(components=[a])
    loop.step(AdvanceTime(40))  # partial advances are allowed
    assert loop.enabled_events() == [AdvanceTime(100)]
    loop.step(AdvanceTime(100))
    assert loop.enabled_events() == [FireTimer("a", "t")]
    loop.step(FireTimer("a", "t"))
    assert a.log[-1] == ("timer", 100, "t")
    assert loop.enabled_events() == []


def test_run_fair_reaches_quiescence_with_every_increment_counted_once():
    loop, server, clients = counter_cluster("c1", "c2", "c3")
    for i, c in enumerate(clients):
        queue(loop, c, i + 2)
    n = loop.run_fair(until_ms=10_000)
    assert n == loop.events_applied
    assert server.value == 2 + 3 + 4
    assert sorted(v for c in clients for _, v in c.acked) == list(range(1, 10))
    assert all(c.seen[-1] == 9 for c in clients)
    assert loop.enabled_events() == []
    assert loop.run_fair(until_ms=10_000) == 0


def test_run_fair_does_not_starve_a_quiet_link_behind_a_chatty_pair():
    chatty = Pinger("chatty", "echo", rounds=10**9)
    quiet = Pinger("quiet", "echo-2", rounds=3)
    loop = Loop(components=[chatty, Echo("echo"), quiet, Echo("echo-2")])
    loop.run_fair(until_ms=0, max_events=20)
    assert quiet.received == 3


def test_run_fair_fires_timers_in_due_owner_name_order_and_stops_at_the_time_limit():
    fired = []

    class T(Recorder):
        def on_timer(self, now, name, out):
            fired.append((now, self.name, name))

    loop = Loop(components=[T("b", timers=[("x", 10)]), T("a", timers=[("y", 10), ("x", 20), ("late", 500)])])
    loop.run_fair(until_ms=100)
    assert fired == [(10, "a", "y"), (10, "b", "x"), (20, "a", "x")]
    assert loop.now == 20
    loop.run_fair(until_ms=1000)
    assert fired[-1] == (500, "a", "late")


def test_partition_holds_requests_and_the_retry_timer_gets_through_after_heal():
    loop, server, (client,) = counter_cluster("c", retry_ms=100)
    loop.run_fair(until_ms=0)  # the watch is open
    loop.step(Partition(["server"]))
    queue(loop, client, 1)
    loop.run_fair(until_ms=350)
    assert server.value == 0
    held = loop.network.in_flight("c", "server")
    assert [m.payload for m in held] == [("incr", "c", 1)] * 4  # the first send and three retries
    loop.step(Heal(["server"]))
    loop.run_fair(until_ms=1000)
    assert server.value == 1 and client.acked == [(1, 1)]


def test_drop_and_delay_faults():
    loop, server, (client,) = counter_cluster("c", retry_ms=100)
    loop.run_fair(until_ms=0)
    queue(loop, client, 1)
    loop.step(Work("c"))
    assert DropHead("c", "server") in loop.enabled_faults()
    loop.step(DropHead("c", "server"))
    assert loop.enabled_events() == [AdvanceTime(100)]
    loop.step(AdvanceTime(100))
    loop.step(FireTimer("c", "retry"))
    loop.step(DelayHead("c", "server", 30))
    assert loop.enabled_events() == [AdvanceTime(130)]  # the release comes before the next retry
    loop.step(AdvanceTime(130))
    assert Deliver("c", "server") in loop.enabled_events()
    loop.run_fair(until_ms=1000)
    assert server.value == 1


def test_breaking_a_stream_tells_both_ends_and_the_client_rewatches():
    loop, server, (client,) = counter_cluster("c", retry_ms=100)
    loop.run_fair(until_ms=0)
    assert loop.network.open_streams() == ["c#watch-1"]
    assert BreakStream("c#watch-1") in loop.enabled_faults()
    loop.step(BreakStream("c#watch-1"))
    assert server.watches == {} and client.watch_stream is None
    loop.run_fair(until_ms=1000)
    assert loop.network.open_streams() == ["c#watch-2"]
    assert list(server.watches) == ["c#watch-2"]


def test_closing_a_stream_tells_only_the_peer():
    class Closer(Recorder):
        def on_message(self, now, msg, out):
            super().on_message(now, msg, out)
            out.close_stream(msg.stream)

    a = Recorder("a", sends=[("b", "open", "a#1")])
    b = Closer("b")
    loop = Loop(components=[a, b])
    loop.step(Deliver("a", "b"))
    assert a.log[-1] == ("closed", 0, "a#1")
    assert not any(entry[0] == "closed" for entry in b.log)
    assert loop.network.open_streams() == []


def test_crash_drops_memory_timers_inbound_messages_and_streams_and_restart_starts_again():
    loop, server, (client,) = counter_cluster("c", retry_ms=100)
    loop.run_fair(until_ms=0)
    queue(loop, client, 3)
    loop.step(Work("c"))  # request 1 in flight to the server, retry timer set
    loop.step(Crash("c"))
    assert loop.clock.timers_of("c") == {}
    assert not loop.is_up("c") and Work("c") not in loop.enabled_events()
    assert server.watches == {}  # the server heard the watch stream break
    assert Restart("c") in loop.enabled_faults()
    loop.run_fair(until_ms=1000)  # the request sent before the crash still arrives; the answer is lost
    assert server.value == 1 and client.acked == []
    loop.step(Restart("c"))
    assert loop.network.open_streams() == ["c#watch-1"]  # a restarted opener may reuse its ids
    queue(loop, client, 1)
    loop.run_fair(until_ms=2000)
    assert client.acked == [(2, 2)]  # request ids survived on "disk"


def test_a_pause_holds_a_link_first_used_during_it_and_a_crash_ends_its_holds():
    a, b, c = Recorder("a"), Recorder("b"), Recorder("c")
    loop = Loop(components=[a, b, c])
    loop.run_fair(until_ms=0)
    loop.pause("b", 1_000)
    loop._apply("c", [Send("b", "first", None)])  # c's first message to b: a new link, made during the pause
    assert loop.network.held_until("c", "b") == 1_000
    assert Deliver("c", "b") not in loop.enabled_events()
    loop.step(Crash("b"))  # the pause ends with the process, and so do its holds
    assert not loop.is_paused("b") and loop.network.held_until("c", "b") is None
    loop.step(Restart("b"))
    loop._apply("c", [Send("b", "after the restart", None)])
    assert Deliver("c", "b") in loop.enabled_events()
    loop.step(Deliver("c", "b"))
    assert b.log[-1] == ("msg", 0, "c", "after the restart")


def test_a_stream_to_a_crashed_server_is_refused_and_the_opener_told():
    loop, server, (client,) = counter_cluster("c", retry_ms=100)
    loop.run_fair(until_ms=0)
    loop.step(Crash("server"))
    assert client.watch_stream is None
    loop.run_fair(until_ms=300)  # rewatch at 100, refused, rewatch at 200, refused, ...
    assert client.watch_count == 4 and client.watch_stream is None
    loop.step(Restart("server"))
    loop.run_fair(until_ms=1000)
    assert client.watch_stream is not None and list(server.watches) == [client.watch_stream]


def test_a_crash_resets_the_connections_of_every_live_sender_that_reaches_it_and_a_send_to_it_is_refused():
    server = Recorder("server")
    a, b, c, quiet = (Recorder(n, sends=[("server", f"hello from {n}", None)]) for n in ("a", "b", "c", "d"))
    quiet.sends = []
    loop = Loop(components=[server, c, b, a, quiet])
    loop.run_fair(until_ms=0)
    loop.step(Partition(["c"]))
    loop.step(Crash("b"))
    loop.step(Crash("server"))
    # told in name order; not b (down), not c (cut off: no reset reaches it), not d (never sent it anything)
    assert [e for e in a.log if e[0] == "reset"] == [("reset", 0, "server", ())]
    assert [e[0] for e in c.log + quiet.log if e[0] == "reset"] == []
    # a message to the down server: refused at once when the sender reaches its machine, lost across a partition
    loop._apply("a", [Send("server", "again", None)])  # noqa: SLF001 (an input from outside the model)
    loop._apply("c", [Send("server", "again", None)])  # noqa: SLF001
    assert a.log[-1] == ("refused", 0, "server", "again")
    assert [e for e in c.log if e[0] == "refused"] == []


def test_heal_all_is_only_enabled_when_something_is_partitioned():
    loop, _, _ = counter_cluster("c")
    assert HealAll() not in loop.enabled_faults()
    loop.step(Partition(["c"]))
    assert HealAll() in loop.enabled_faults()
    loop.step(HealAll())
    assert not loop.network.partitioned


def test_replaying_a_trace_gives_the_same_state_and_digest():
    def build():
        loop, server, clients = counter_cluster("c1", "c2")
        for c in clients:
            queue(loop, c, 3)
        return loop, server, clients

    loop, server, clients = build()
    trace = []
    i = 0
    while True:
        menu = loop.enabled_events() + loop.enabled_faults()[:2]
        if not menu or loop.now > 2000:
            break
        event = menu[(i * 7) % len(menu)]
        i += 1
        trace.append(event)
        loop.step(event)
        if isinstance(event, Crash):
            loop.step(Restart(event.component))
            trace.append(Restart(event.component))

    replay, server2, clients2 = build()
    for event in trace:
        replay.step(type(event).from_json(event.to_json()))
    assert replay.digest() == loop.digest()
    assert replay.events_applied == loop.events_applied == len(trace)
    assert server2.value == server.value
    assert [c.acked for c in clients2] == [c.acked for c in clients]


def test_step_and_run_fair_feed_the_digest_the_same_way():
    def pair():
        return Loop(components=[Pinger("p", "e", rounds=5), Echo("e")])

    fair = pair()
    fair.run_fair(until_ms=0)
    stepped = pair()
    while stepped.enabled_events():
        stepped.step(stepped.enabled_events()[0])
    assert fair.digest() == stepped.digest()
    assert fair.events_applied == stepped.events_applied == 10


def test_different_runs_have_different_digests():
    a = Loop(components=[Pinger("p", "e", rounds=5), Echo("e")])
    b = Loop(components=[Pinger("p", "e", rounds=6), Echo("e")])
    a.run_fair(0)
    b.run_fair(0)
    assert a.digest() != b.digest()


def test_cost_structures_ignore_idle_endpoints():
    idle = [Echo(f"idle-{i}") for i in range(500)]
    loop = Loop(components=[Pinger("p", "e", rounds=3), Echo("e"), *idle])
    assert loop.enabled_events() == [Deliver("p", "e")]
    assert loop.run_fair(0) == 6


def test_down_components_lists_the_crashed_ones_sorted_until_they_restart():
    loop, server, (c1, c2) = counter_cluster("c1", "c2")
    assert loop.down_components() == []
    loop.step(Crash("c2"))
    loop.step(Crash("c1"))
    assert loop.down_components() == ["c1", "c2"]
    loop.step(Restart("c1"))
    assert loop.down_components() == ["c2"]


def test_slow_link_holds_an_empty_link_and_what_is_sent_on_it_meanwhile():
    loop, server, (client,) = counter_cluster("c", retry_ms=10_000)
    loop.run_fair(until_ms=0)
    assert loop.why_not_enabled(SlowLink("c", "c", 10)) == "a link joins two endpoints"
    assert "unknown endpoints" in loop.why_not_enabled(SlowLink("c", "nowhere", 10))
    loop.step(SlowLink("c", "server", 1_000))  # empty now: a DelayHead would not be enabled
    queue(loop, client, 1)
    loop.step(Work("c"))
    assert Deliver("c", "server") not in loop.enabled_events()
    loop.run_fair(until_ms=999)
    assert server.value == 0
    loop.run_fair(until_ms=1_000)
    assert server.value == 1


class _Ping(Component):
    """Sends itself a message for every message it gets: busy for ever at one instant."""

    def start(self, now, out):
        out.send(self.name, "ping")
        out.set_timer("wake", at=50)

    def on_message(self, now, msg, out):
        out.send(self.name, "ping")

    def on_timer(self, now, name, out):
        self.woke = now


def test_a_busy_instant_lets_the_clock_move_on_only_when_asked():
    loop = Loop(components=[_Ping("p")])
    assert loop.run_fair(until_ms=100, max_events=1_000) == 1_000 and loop.now == 0  # Zeno: time stands still
    loop = Loop(components=[_Ping("p")])
    applied = loop.run_fair(until_ms=100, max_events=1_000, busy_instant=300)
    assert loop.components["p"].woke == 50
    # still busy with nothing more due: the clock goes on, BUSY_QUANTUM_MS at a time, to 100 ms, and the run
    # ends there instead of spinning to max_events
    assert applied < 1_000 and loop.clock.now == 100


def test_a_busy_spell_moves_the_clock_at_a_steady_pace_not_from_timer_to_timer():
    # the only timer is at 50 ms, but a busy spell's clock stops every BUSY_QUANTUM_MS on the way: each quantum
    # gets its share of events, so a backlog queued behind a hot loop drains in logical time a control plane
    # would take, not in one share per timer (which could be seconds apart)
    loop = Loop(components=[_Ping("p")])
    times = []
    loop.set_delivery_tap(lambda msg: times.append(loop.now))
    loop.run_fair(until_ms=50, max_events=10_000, busy_instant=300)
    steps = sorted(set(times))
    assert steps == list(range(0, 51, BUSY_QUANTUM_MS))
    assert all(times.count(t) <= 300 // BUSY_SPELL_DIVISOR for t in steps[1:])


class _Retrier(Component):
    """Keeps itself busy (a message per message) while a 5 ms retry timer ticks; a back-off that ends at 800 ms
    makes it stop: a hot loop that only the passing of time ends."""

    def start(self, now, out):
        self.stopped_at = None
        out.send(self.name, "ping")
        out.set_timer("retry", at=5)
        out.set_timer("backoff", at=800)

    def on_message(self, now, msg, out):
        if self.stopped_at is None:
            out.send(self.name, "ping")

    def on_timer(self, now, name, out):
        if name == "retry" and self.stopped_at is None:
            out.set_timer("retry", at=now + 5)
        elif name == "backoff":
            self.stopped_at = now


def test_a_busy_spell_keeps_time_passing_until_the_cluster_falls_quiet():
    loop = Loop(components=[_Retrier("r")])
    applied = loop.run_fair(until_ms=2_000, max_events=200_000, busy_instant=5_000)
    # 160 retry instants to reach 800 ms: the first busy instant takes 5,000 events, later ones 100 each
    assert loop.components["r"].stopped_at == 800 and applied < 25_000
    assert loop.now == 800  # quiet after that: nothing more due before 2,000 ms


def test_release_all_is_only_enabled_while_a_link_is_held_and_frees_what_waits():
    loop, server, (client,) = counter_cluster("c", retry_ms=10_000)
    loop.run_fair(until_ms=0)
    assert ReleaseAll() not in loop.enabled_faults()
    loop.step(SlowLink("c", "server", 60_000))
    queue(loop, client, 1)
    loop.step(Work("c"))
    assert ReleaseAll() in loop.enabled_faults() and Deliver("c", "server") not in loop.enabled_events()
    loop.step(ReleaseAll())
    assert Deliver("c", "server") in loop.enabled_events()
    with pytest.raises(EventNotEnabled, match="no link is held"):
        loop.step(ReleaseAll())


@pytest.mark.parametrize("resets", [False, True])
def test_a_process_that_resets_on_exit_discards_what_a_partition_held_but_not_what_a_delay_carries(resets):
    """Without a reset on exit, what a crashed process sent across a partition is still delivered at the heal
    (the kernel retransmits an orphaned connection's data); with one (SO_LINGER 0, the
    leaderelection-reset-on-exit fix) it is discarded. A message on a reachable, slowed link is ahead of the
    reset either way and arrives."""
    cut, slowed = Recorder("cut"), Recorder("slowed")
    sender = Recorder("sender", sends=[("cut", "held by the partition", None), ("slowed", "slowed", None)])
    loop = Loop(components=[cut, sender, slowed])
    if resets:
        loop.resets_on_exit = frozenset({"sender"})
    loop.step(Partition(("cut",)))
    loop.step(DelayHead("sender", "slowed", 5_000))
    loop.step(Crash("sender"))
    loop.step(HealAll())
    loop.run_fair(until_ms=10_000)
    assert [e[3] for e in slowed.log if e[0] == "msg"] == ["slowed"]
    assert [e[3] for e in cut.log if e[0] == "msg"] == ([] if resets else ["held by the partition"])
