"""The network: FIFO links, deliverability, partitions, faults, streams, crash, communication graph."""

import pytest

from kmodel.network import REFUSED, Network, NetworkError


def make(*names):
    net = Network()
    for n in names or ("a", "b", "c"):
        net.add_endpoint(n)
    return net


def drain(net, src, dst):
    out = []
    while net.is_deliverable(src, dst):
        out.append(net.deliver(src, dst).payload)
    return out


def test_links_are_fifo_and_ids_count_up_across_links():
    net = make()
    m1 = net.send("a", "b", "x")
    m2 = net.send("a", "c", "y")
    m3 = net.send("a", "b", "z")
    assert [m1.id, m2.id, m3.id] == [1, 2, 3]
    assert net.deliverable_links() == [("a", "b"), ("a", "c")]
    assert drain(net, "a", "b") == ["x", "z"]
    assert net.deliverable_links() == [("a", "c")]


def test_delivering_from_an_empty_link_is_an_error():
    net = make()
    with pytest.raises(NetworkError, match="not deliverable"):
        net.deliver("a", "b")


def test_unknown_endpoint_is_an_error():
    net = make()
    with pytest.raises(NetworkError, match="unknown endpoint 'zz'"):
        net.send("a", "zz", 1)
    with pytest.raises(NetworkError):
        net.add_endpoint("a")


def test_partition_holds_messages_until_heal_and_members_still_talk():
    net = make("a", "b", "c", "d")
    net.send("a", "b", 1)
    net.send("a", "c", 2)
    assert net.partition(["b", "a"]) == ["a", "b"]
    net.send("c", "a", 3)
    assert net.deliverable_links() == [("a", "b")]  # a and b are on the same side
    assert net.nonempty_links() == [("a", "b"), ("a", "c"), ("c", "a")]
    net.heal(["a"])
    # a is back with c and d; b is alone now.
    assert net.deliverable_links() == [("a", "c"), ("c", "a")]
    assert not net.can_reach("a", "b")
    net.heal_all()
    assert net.deliverable_links() == [("a", "b"), ("a", "c"), ("c", "a")]
    assert not net.partitioned
    assert list(net.reachability.graph.nodes) == [0]


def test_partition_sides_are_reported_sorted():
    net = make("a", "b", "c", "d")
    net.partition({"d", "c"})
    net.partition(["a"])
    assert net.reachability.sides() == [["c", "d"], ["a"]]
    assert not net.can_reach("a", "c") and net.can_reach("c", "d") and not net.can_reach("b", "a")


def test_drop_head_removes_only_the_head_even_when_not_deliverable():
    net = make()
    net.send("a", "b", 1)
    net.send("a", "b", 2)
    net.partition(["b"])
    assert net.drop_head("a", "b").payload == 1
    net.heal_all()
    assert drain(net, "a", "b") == [2]
    with pytest.raises(NetworkError):
        net.drop_head("a", "b")


def test_delay_holds_the_whole_link_until_released():
    net = make()
    net.send("a", "b", 1)
    net.send("a", "b", 2)
    net.send("b", "a", 3)
    net.delay_head("a", "b", until_ms=500)
    assert net.deliverable_links() == [("b", "a")]
    assert net.next_release() == 500
    net.release(499)
    assert not net.is_deliverable("a", "b")
    net.release(500)
    assert net.next_release() is None
    assert drain(net, "a", "b") == [1, 2]


def test_a_later_delay_replaces_the_earlier_one():
    net = make()
    net.send("a", "b", 1)
    net.delay_head("a", "b", 100)
    net.delay_head("a", "b", 300)
    assert net.next_release() == 300
    net.release(200)
    assert not net.is_deliverable("a", "b")
    net.release(300)
    assert net.is_deliverable("a", "b")


def test_fair_rotation_alternates_between_busy_links():
    net = make()
    for i in range(3):
        net.send("a", "b", f"ab{i}")
        net.send("c", "b", f"cb{i}")
    order = []
    while (key := net.next_fair_link()) is not None:
        order.append(net.deliver(*key).payload)
    assert order == ["ab0", "cb0", "ab1", "cb1", "ab2", "cb2"]


def test_stream_is_opened_by_its_first_message_and_tied_to_its_two_ends():
    net = make()
    net.send("a", "b", "watch", stream="a#1")
    assert net.stream_ends("a#1") == ("a", "b")
    net.send("b", "a", "event", stream="a#1")
    with pytest.raises(NetworkError, match="runs between a and b"):
        net.send("c", "b", "x", stream="a#1")


def test_closing_a_stream_purges_its_messages_both_ways_and_keeps_the_rest():
    net = make()
    net.send("a", "b", "req-1")
    net.send("a", "b", "watch", stream="s")
    net.send("a", "b", "req-2")
    net.send("b", "a", "ev", stream="s")
    assert net.close_stream("s") == ("a", "b")
    assert drain(net, "a", "b") == ["req-1", "req-2"]
    assert not net.has_in_flight("b", "a")
    assert net.send("b", "a", "late", stream="s") is None  # discarded: the stream ended
    assert net.discarded_on_ended_streams == 1
    with pytest.raises(NetworkError, match="not open"):
        net.close_stream("s")


def test_crash_drops_inbound_messages_breaks_streams_and_refuses_sends():
    net = make()
    net.send("a", "b", "to-b")
    net.send("b", "a", "from-b")
    net.send("c", "b", "watch", stream="c#1")
    broken = net.set_down("b")
    assert broken == [("c#1", "c", "b")]
    assert net.nonempty_links() == [("b", "a")]  # what b sent before crashing is still on the wire
    assert net.send("a", "b", "again") is REFUSED
    assert net.send("c", "b", "watch", stream="c#2") is REFUSED
    assert net.is_ended("c#2")
    net.set_up("b")
    assert net.send("a", "b", "after") is not REFUSED
    assert drain(net, "a", "b") == ["after"]


def test_restarted_opener_may_reuse_its_stream_ids():
    net = make()
    net.send("a", "b", "watch", stream="a#1")
    net.set_down("a")
    assert net.is_ended("a#1")
    net.set_up("a")
    assert net.send("a", "b", "watch", stream="a#1") is not None
    assert net.stream_ends("a#1") == ("a", "b")


def test_communication_counts_every_send_per_ordered_pair():
    net = make("apiserver-0", "scheduler", "kubelet/node-1")
    net.send("scheduler", "apiserver-0", 1)
    net.send("scheduler", "apiserver-0", 2)
    net.send("apiserver-0", "kubelet/node-1", 3)
    net.drop_head("scheduler", "apiserver-0")
    assert net.communication_counts() == {
        ("apiserver-0", "kubelet/node-1"): 1,
        ("scheduler", "apiserver-0"): 2,
    }
    graph = net.communication_graph()
    assert graph["scheduler"]["apiserver-0"]["messages"] == 2
    assert all("apiserver-0" in edge for edge in graph.edges)


def test_idle_links_never_appear_as_deliverable():
    names = [f"n{i}" for i in range(200)]
    net = make(*names)
    for n in names[1:]:
        net.send("n0", n, "hi")
        net.deliver("n0", n)
    assert net.link_count == 199
    assert net.deliverable_links() == []
    net.send("n5", "n6", "x")
    assert net.deliverable_links() == [("n5", "n6")]


def test_pairs_since_lists_only_the_pairs_that_first_talked_later_with_their_counts():
    net = make("apiserver-0", "scheduler", "etcd")
    net.send("scheduler", "apiserver-0", 1)
    assert net.pairs_talked == 1
    net.send("apiserver-0", "etcd", 2)
    net.send("scheduler", "apiserver-0", 3)  # an old pair talking again is nothing new
    net.send("etcd", "apiserver-0", 4)
    assert net.pairs_talked == 3
    assert net.pairs_since(1) == [(("apiserver-0", "etcd"), 1), (("etcd", "apiserver-0"), 1)]
    assert net.pairs_since(0)[0] == (("scheduler", "apiserver-0"), 2)
    assert net.pairs_since(3) == []


def test_head_and_the_cheap_questions_about_what_is_in_flight():
    net = make()
    assert not net.has_in_flight_anywhere and not net.has_open_streams
    with pytest.raises(NetworkError):
        net.head("a", "b")
    net.send("a", "b", "first")
    net.send("a", "b", "second", "a#1")
    assert net.head("a", "b").payload == "first" and net.in_flight_count() == 2  # the head, not popped
    assert net.has_in_flight_anywhere and net.has_open_streams
    net.partition(["b"])  # not deliverable, still in flight
    assert net.has_in_flight_anywhere and net.head("a", "b").payload == "first"
    net.drop_head("a", "b")
    net.close_stream("a#1")
    assert not net.has_in_flight_anywhere and not net.has_open_streams


def test_a_held_link_keeps_what_is_sent_on_it_until_released_even_if_it_was_empty():
    net = make()
    net.hold_link("a", "b", 500)  # nothing on it yet (the link did not even exist)
    net.send("a", "b", "late")
    assert not net.is_deliverable("a", "b") and net.next_release() == 500
    net.send("a", "c", "other links are not held")
    assert net.is_deliverable("a", "c")
    net.release(499)
    assert not net.is_deliverable("a", "b")
    net.release(500)
    assert drain(net, "a", "b") == ["late"]


def test_release_all_ends_every_delay_at_once():
    net = make()
    net.send("a", "b", 1)
    net.delay_head("a", "b", 500)
    net.hold_link("b", "c", 900)
    assert net.has_held_links and not net.is_deliverable("a", "b")
    assert net.release_all() == [("a", "b"), ("b", "c")]
    assert not net.has_held_links and net.is_deliverable("a", "b") and net.next_release() is None
    net.send("b", "c", 2)
    assert net.is_deliverable("b", "c")
