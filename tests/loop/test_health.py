"""Connection health checks (kmodel.loop.health): a health-checked client gives up on a connection across a
partition at the first PING after the cut plus the PING timeout, and only then."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.component import HealthCheck, Out
from kmodel.component.example import CounterClient, CounterServer
from kmodel.loop import AdvanceTime, Crash, FireTimer, Heal, HealAll, Loop, Partition
from kmodel.loop.health import DIAL_TIMER_PREFIX, TIMER_PREFIX, first_ping_after

CHECK = HealthCheck(idle_ms=30_000, ping_timeout_ms=15_000)
TIMER = TIMER_PREFIX + "server"


class CheckedClient(CounterClient):
    """A counter client whose transport checks its connections' health; records what it is told."""

    connection_health_check = CHECK

    def __init__(self, name: str, server: str, retry_ms: int = 100) -> None:
        super().__init__(name, server, retry_ms)
        self.lost: list[tuple[int, str]] = []
        self.reasons: list[str] = []
        self.closed: list[str] = []

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        self.lost.append((now, peer))
        self.reasons.append(reason)

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        self.closed.append(stream)
        super().on_stream_closed(now, stream, out)


def started(client_cls=CheckedClient) -> tuple[Loop, CounterServer, CounterClient]:
    server, client = CounterServer("server"), client_cls("client", "server", retry_ms=100_000)
    loop = Loop(components=[server, client])
    loop.run_fair(until_ms=0)  # the watch is open, its first value heard at 0
    assert client.seen == [0]
    return loop, server, client


def advance(loop: Loop, to_ms: int) -> None:
    loop.run_fair(until_ms=to_ms)
    if loop.now < to_ms:
        loop._advance_recorded(to_ms)  # noqa: SLF001 (tests move the clock with nothing due)


@pytest.mark.parametrize("heard, cut, ping", [
    (0, 10_000, 30_000),  # the first PING after the last frame
    (0, 30_000, 30_000),  # a PING at the instant of the cut goes unanswered
    (0, 30_001, 60_000),  # the one at 30 s was answered; the next is 30 s later
    (5_000, 100_000, 125_000),
    (7_000, 7_000, 37_000),
])
def test_the_first_ping_after_the_cut(heard, cut, ping):
    assert first_ping_after(heard, cut, 30_000) == ping


def test_a_connection_across_a_partition_is_given_up_at_the_first_ping_plus_its_timeout():
    loop, server, client = started()
    advance(loop, 10_000)
    client.enqueue()
    loop.notify_work("client")
    loop.step(Partition(("server",)))
    assert loop.clock.due_at("client", TIMER) == 30_000 + 15_000
    loop.run_fair(until_ms=60_000)  # the request is held on the link, the watch hears nothing
    assert client.outstanding is not None and not server.applied
    assert client.lost == [(45_000, "server")]
    assert client.closed == []  # its watch ended with the loss: told once, by on_connection_lost
    assert loop.network.stream_ends("client#watch-1") is None
    assert server.watches == {}  # the replica was told of the stream
    assert not loop.network.in_flight("client", "server")  # the request on the dead connection is gone
    loop.step(HealAll())
    loop.run_fair(until_ms=60_000)
    assert not server.applied  # and it never arrives


def test_the_health_timer_is_an_event_of_the_client_like_its_own_timers():
    loop, _, client = started()
    loop.step(Partition(("server",)))
    loop.run_fair(until_ms=44_999)
    assert client.lost == []
    loop._advance_recorded(45_000)  # noqa: SLF001
    assert FireTimer("client", TIMER) in loop.enabled_events()
    loop.step(FireTimer("client", TIMER))
    assert client.lost == [(45_000, "server")] and loop.clock.due_at("client", TIMER) is None


def test_a_heal_before_the_timer_cancels_it_and_nothing_is_lost():
    loop, server, client = started()
    client.enqueue()
    loop.notify_work("client")
    loop.step(Partition(("server",)))
    loop.run_fair(until_ms=20_000)
    loop.step(Heal(("server",)))
    assert loop.clock.due_at("client", TIMER) is None
    loop.run_fair(until_ms=100_000)
    assert client.lost == [] and client.closed == []
    assert client.acked == [(1, 1)] and client.seen == [0, 1]  # the held request arrived, the watch went on


def test_a_ping_waiting_at_the_heal_is_answered_then_and_the_next_comes_an_idle_period_later():
    loop, _, client = started()
    loop.step(Partition(("server",)))  # PING at 30 s, unanswered while cut
    advance(loop, 40_000)
    loop.step(HealAll())  # the PING gets through: heard at 40 s
    loop.step(Partition(("server",)))  # cut again at once: the next PING is at 70 s
    assert loop.clock.due_at("client", TIMER) == 70_000 + 15_000


def test_partitioning_the_client_checks_its_connections_too():
    loop, _, client = started()
    loop.step(Partition(("client",)))
    assert loop.clock.due_at("client", TIMER) == 45_000
    loop.step(Partition(("client", "server")))  # both on one side again: they reach each other
    assert loop.clock.due_at("client", TIMER) is None


@pytest.mark.parametrize("who", ["client", "server"])
def test_a_crash_of_either_end_cancels_the_check(who):
    loop, _, client = started()
    loop.step(Partition(("server",)))
    loop.step(Crash(who))
    assert loop.clock.due_at("client", TIMER) is None
    assert loop.health.armed == {}


def test_a_client_without_a_health_check_waits_for_the_heal():
    loop, server, client = started(CounterClient)
    loop.step(Partition(("server",)))
    assert loop.clock.due_at("client", TIMER) is None
    loop.run_fair(until_ms=600_000)
    assert client.watch_stream == "client#watch-1" and server.watches  # the watch hangs, still open


class CheckedCounterClient(CounterClient):
    connection_health_check = CHECK


def _armed_checks_are_consistent(loop: Loop) -> None:
    for (client, peer), ping in loop.health.armed.items():
        assert loop.is_up(client) and loop.is_up(peer), (client, peer)
        assert not loop.network.can_reach(client, peer), (client, peer)
        assert loop.clock.due_at(client, TIMER_PREFIX + peer) == ping + CHECK.ping_timeout_ms
    for (client, peer), started_at in loop.health.dialing.items():
        assert loop.is_up(client) and not loop.network.can_reach(client, peer), (client, peer)
        assert loop.clock.due_at(client, DIAL_TIMER_PREFIX + peer) == started_at + CHECK.dial_timeout_ms


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_random_walks_keep_the_checks_consistent_and_replay(data):
    def build() -> Loop:
        clients = [CheckedCounterClient(f"c{i}", "server", retry_ms=7_000) for i in range(2)]
        loop = Loop(components=[CounterServer("server"), *clients])
        for c in clients:
            c.enqueue(2)
            loop.notify_work(c.name)
        return loop

    loop = build()
    trace = []
    for _ in range(data.draw(st.integers(0, 60), label="steps")):
        menu = loop.enabled_events() + loop.enabled_faults()
        menu.append(Partition((data.draw(st.sampled_from(["server", "c0", "c1"]), label="cut"),)))
        menu.append(Heal((data.draw(st.sampled_from(["server", "c0", "c1"]), label="heal"),)))
        menu.extend([e for e in menu if isinstance(e, AdvanceTime)] * 4)  # let time pass: checks must fire
        event = data.draw(st.sampled_from(menu), label="event")
        loop.step(event)
        trace.append(event)
        _armed_checks_are_consistent(loop)
    replay = build()
    for event in trace:
        replay.step(event)
    assert replay.digest() == loop.digest()


def test_a_first_message_across_a_partition_dials_and_the_dial_times_out():
    server, client = CounterServer("server"), CheckedClient("client", "server", retry_ms=100_000)
    loop = Loop(components=[server])
    loop.step(Partition(("server",)))
    loop.add_component(client)  # its watch request is its first message to the server: a new connection
    assert loop.health.dialing == {("client", "server"): 0}
    loop.run_fair(until_ms=60_000)
    assert client.lost == [(30_000, "server")] and client.reasons == ["dial tcp: i/o timeout"]
    assert client.closed == [] and loop.network.stream_ends("client#watch-1") is None
    assert loop.health.dialing == {}
