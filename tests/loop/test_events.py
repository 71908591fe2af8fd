"""Events are data: readable names, a JSON form that round-trips, canonical parameters."""

import json

import pytest

from kmodel.loop import (
    AdvanceTime, BreakStream, Crash, DelayHead, Deliver, DropHead, EVENT_KINDS, LoopEvent, FailRequest, FireTimer, Heal,
    HealAll, Partition, ReleaseAll, Restart, SlowLink, Work, event_from_json,
)

ALL = [
    Deliver("scheduler", "apiserver-0"),
    FireTimer("kubelet/node-1", "lease"),
    Work("replicaset-controller"),
    AdvanceTime(1500),
    Partition(["b", "a"]),
    Heal(["a"]),
    HealAll(),
    DropHead("a", "b"),
    DelayHead("a", "b", 300),
    SlowLink("etcd", "apiserver-1", 2000),
    ReleaseAll(),
    BreakStream("scheduler#watch-1"),
    Crash("etcd"),
    Restart("etcd"),
    FailRequest("scheduler", "apiserver-0", 504, applied=True),
]


def test_every_kind_is_covered():
    assert sorted(type(e).kind for e in ALL) == sorted(EVENT_KINDS)


@pytest.mark.parametrize("event", ALL, ids=str)
def test_json_round_trip(event):
    data = json.loads(json.dumps(event.to_json()))
    assert event_from_json(data) == event
    assert LoopEvent.from_json(data) == event
    assert json.loads(event.stable_json()) == event.to_json()


def test_names_read_like_a_story():
    assert str(Deliver("scheduler", "apiserver-0")) == "deliver scheduler -> apiserver-0"
    assert FireTimer("kubelet/node-1", "lease").name == "fire timer 'lease' of kubelet/node-1"
    assert Partition({"b", "a"}).name == "partition {a, b} from the rest"
    assert DelayHead("a", "b", 300).name == "delay a -> b by 300 ms"


def test_partition_endpoints_are_canonical_whatever_the_input_order():
    assert Partition(["b", "a", "b"]) == Partition(("a", "b"))
    assert Partition(["b", "a"]).stable_json() == '{"endpoints":["a","b"],"kind":"partition"}'
    with pytest.raises(TypeError):
        Partition("ab")


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown event kind"):
        event_from_json({"kind": "teleport"})


def test_events_are_hashable_values():
    assert len({Deliver("a", "b"), Deliver("a", "b"), Work("a")}) == 2


@pytest.mark.parametrize("to_ms", [0, 1, 1500, 60_000, 10**15])
def test_the_fair_runners_advance_line_is_the_events_own(to_ms):
    """The fair runner records an AdvanceTime by a formatted line (`advance_line`): the same bytes as the
    event's stable JSON and a newline, the reference."""
    from kmodel.loop.loop import advance_line

    assert advance_line(to_ms) == AdvanceTime(to_ms).stable_json().encode() + b"\n"
