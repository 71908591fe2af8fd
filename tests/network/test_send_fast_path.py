"""Network.send's inlined paths (stream admission, the ready set) agree with the general ones after any mix of
sends, deliveries, partitions, holds, stream ends and crashes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.network import REFUSED, Network, NetworkError

ENDPOINTS = ("a", "b", "c")
STREAMS = ("s1", "s2")

ops = st.lists(st.one_of(
    st.tuples(st.just("send"), st.sampled_from(ENDPOINTS), st.sampled_from(ENDPOINTS),
              st.sampled_from((None, *STREAMS))),
    st.tuples(st.just("deliver"), st.sampled_from(ENDPOINTS), st.sampled_from(ENDPOINTS)),
    st.tuples(st.just("partition"), st.sampled_from(ENDPOINTS)),
    st.tuples(st.just("heal_all")),
    st.tuples(st.just("hold"), st.sampled_from(ENDPOINTS), st.sampled_from(ENDPOINTS), st.integers(1, 3)),
    st.tuples(st.just("release"), st.integers(0, 4)),
    st.tuples(st.just("close"), st.sampled_from(STREAMS)),
    st.tuples(st.just("down"), st.sampled_from(ENDPOINTS)),
    st.tuples(st.just("up"), st.sampled_from(ENDPOINTS)),
), max_size=60)


def _deliverable(net: Network, link) -> bool:
    """What Network._refresh decides for one link."""
    return (bool(link.queue) and link.held_until is None and link.dst not in net._down
            and net.reachability.can_reach(link.src, link.dst))


@settings(max_examples=300, deadline=None)
@given(ops)
def test_ready_links_and_stream_counts_match_the_general_rules(steps):
    net = Network()
    for e in ENDPOINTS:
        net.add_endpoint(e)
    for step in steps:
        kind = step[0]
        try:
            if kind == "send" and step[1] != step[2]:
                result = net.send(step[1], step[2], "x", step[3])
                if result is not None and result is not REFUSED:
                    assert net.in_flight(step[1], step[2])[-1] is result
            elif kind == "deliver" and net.is_deliverable(step[1], step[2]):
                net.deliver(step[1], step[2])
            elif kind == "partition":
                net.partition([step[1]])
            elif kind == "heal_all":
                net.heal_all()
            elif kind == "hold" and step[1] != step[2]:
                net.hold_link(step[1], step[2], step[3])
            elif kind == "release":
                net.release(step[1])
            elif kind == "close" and net.stream_ends(step[1]) is not None:
                net.close_stream(step[1])
            elif kind == "down" and not net.is_down(step[1]):
                net.set_down(step[1])
            elif kind == "up" and net.is_down(step[1]):
                net.set_up(step[1])
        except NetworkError:
            continue  # a stream used between other ends: refused before anything changed
        for key, link in net._links.items():
            assert (key in net._ready) == _deliverable(net, link), (key, step)
            assert (key in net._nonempty) == bool(link.queue)
        counts: dict[str, int] = {}
        for link in net._links.values():
            for m in link.queue:
                if m.stream is not None:
                    counts[m.stream] = counts.get(m.stream, 0) + 1
        assert net._in_flight_on == counts
