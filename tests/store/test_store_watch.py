"""Watch semantics of kmodel.store: the etcd watch guarantees, replay, compaction, cancel, progress."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.store import DeleteOp, PutOp, Store, prefix_end
from kmodel.store.store import _changes_of


def events_of(responses):
    return [(e.type, e.kv.key, e.kv.mod_revision) for r in responses for e in r.events]


def test_exact_prefix_and_range_watchers_see_only_their_keys():
    s = Store()
    exact = s.watch("a/1")
    prefix = s.watch("a/", prefix_end("a/"))
    from_key = s.watch("b", "\0")
    ranged = s.watch("a/2", "b")
    for k in ["a/1", "a/2", "b", "c"]:
        s.put(k, "v")
    assert events_of(s.take_watch_responses(exact)) == [("PUT", "a/1", 2)]
    assert events_of(s.take_watch_responses(prefix)) == [("PUT", "a/1", 2), ("PUT", "a/2", 3)]
    assert events_of(s.take_watch_responses(from_key)) == [("PUT", "b", 4), ("PUT", "c", 5)]
    assert events_of(s.take_watch_responses(ranged)) == [("PUT", "a/2", 3)]
    assert s.take_watch_responses(exact) == []  # taking clears


def test_a_key_equal_to_a_short_prefix_reaches_its_watcher_once_beside_longer_prefixes():
    """Prefix watches of two lengths ("b" and "a/"): a put of "b", shorter than "a/", is one event for the "b"
    watch, in one response, by either write path (a put, a txn of two puts)."""
    s = Store()
    short = s.watch("b", prefix_end("b"))
    s.watch("a/", prefix_end("a/"))
    s.put("b", "v")
    s.txn([], [PutOp("b", "w"), PutOp("a/1", "x")], [])
    responses = s.take_watch_responses(short)
    assert [events_of([r]) for r in responses] == [[("PUT", "b", 2)], [("PUT", "b", 3)]]


def test_a_txn_revision_arrives_in_one_response_in_txn_order():
    s = Store()
    s.put("a", "0")
    w = s.watch("", "\0", prev_kv=True)
    s.txn([], [PutOp("c", "1"), DeleteOp("a"), PutOp("b", "1")], [])
    (response,) = s.take_watch_responses(w)
    assert response.header_revision == 3
    assert [(e.type, e.kv.key) for e in response.events] == [("PUT", "c"), ("DELETE", "a"), ("PUT", "b")]
    delete = response.events[1]
    assert (delete.kv.mod_revision, delete.kv.version, delete.kv.create_revision) == (3, 0, 0)
    assert delete.prev_kv.value == "0"


def test_watch_prev_kv_is_the_state_before_the_revision():
    # etcd looks prev_kv up at revision - 1, even for a key written earlier in the same txn
    s = Store()
    s.put("b", "old")
    w = s.watch("b", prev_kv=True)
    s.txn([], [PutOp("b", "new"), DeleteOp("b", "\0")], [])
    events = s.take_watch_responses(w)[0].events
    assert [(e.type, e.prev_kv.value) for e in events] == [("PUT", "old"), ("DELETE", "old")]


def test_replay_from_a_past_revision_then_live_events():
    s = Store()
    s.put("k", "1")  # 2
    s.put("k", "2")  # 3
    w = s.watch("k", start_revision=2)
    s.put("k", "3")  # 4
    responses = s.take_watch_responses(w)
    assert events_of(responses) == [("PUT", "k", 2), ("PUT", "k", 3), ("PUT", "k", 4)]
    assert [r.header_revision for r in responses] == [3, 4]  # replay is one batch at the current revision


def test_watch_below_compaction_is_cancelled_as_etcd_does():
    s = Store()
    s.put("k", "1")
    s.put("k", "2")
    s.compact(3)
    w = s.watch("k", start_revision=2)
    (response,) = s.take_watch_responses(w)
    assert (response.canceled, response.compact_revision, response.header_revision, response.events) == (
        True, 3, 0, [])
    s.put("k", "3")
    assert s.take_watch_responses(w) == []


def test_watch_at_the_compacted_revision_misses_its_tombstones():
    s = Store()
    s.put("a", "1")  # 2
    s.put("b", "1")  # 3
    s.delete_range("a")  # 4
    s.compact(4)
    assert s.take_watch_responses(s.watch("", "\0", start_revision=4)) == []
    w = s.watch("", "\0", start_revision=3, prev_kv=False)
    assert s.take_watch_responses(w)[0].canceled


def test_with_etcds_fix_a_watch_at_the_compacted_revision_gets_its_tombstone_until_the_next_compaction():
    """etcd-io/etcd#18274 (the etcd-keep-compaction-tombstone fix): a tombstone made at the compaction revision is
    kept, so a watch starting there gets the delete; the next compaction drops it."""
    s = Store(keep_compaction_tombstone=True)
    s.put("a", "1")  # 2
    s.put("b", "1")  # 3
    s.delete_range("a")  # 4
    s.compact(4)
    assert events_of(s.take_watch_responses(s.watch("", "\0", start_revision=4))) == [("DELETE", "a", 4)]
    assert s.range("a").kvs == [] and s.range("a", revision=4).kvs == []  # still deleted to every read
    s.put("c", "1")  # 5
    s.compact(5)
    assert events_of(s.take_watch_responses(s.watch("", "\0", start_revision=5))) == [("PUT", "c", 5)]
    assert "a" not in s._keys.versions  # noqa: SLF001 (the tombstone went with the second compaction)


def test_future_start_revision_waits():
    s = Store()
    w = s.watch("k", start_revision=4)
    s.put("k", "1")  # 2
    s.put("k", "2")  # 3
    s.put("k", "3")  # 4
    assert events_of(s.take_watch_responses(w)) == [("PUT", "k", 4)]


def test_cancel_confirms_once_and_stops_events():
    s = Store()
    w = s.watch("k")
    s.cancel_watch(w)
    s.cancel_watch(w)
    s.put("k", "1")
    (response,) = s.take_watch_responses(w)
    assert response.canceled and response.header_revision == 1 and response.events == []
    assert s.take_watch_responses(w) == []
    assert s.watch("k") == w + 1  # ids are never reused


def test_refused_watch_gets_id_minus_one():
    s = Store()
    assert s.watch("b", "a") == -1
    (response,) = s.take_watch_responses(-1)
    assert response.canceled and response.cancel_reason == "mvcc: watcher range is empty"
    assert s.watch("a") == 0


def test_progress_notification_carries_the_current_revision():
    s = Store()
    w = s.watch("k")
    s.put("other", "1")
    s.request_progress(w)
    (response,) = s.take_watch_responses(w)
    assert (response.events, response.header_revision) == ([], 2)


ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.sampled_from(["a", "a/1", "b", "c"])),
        st.tuples(st.just("del"), st.sampled_from(["a", "b", "c"]), st.sampled_from([None, "\0", "b"])),
        st.tuples(st.just("txn"), st.sampled_from(["a", "a/1", "b"]), st.sampled_from(["c", "a/1"])),
        st.tuples(st.just("watch"), st.sampled_from(["a", "b"]), st.sampled_from([None, "\0", "c"]),
                  st.integers(0, 12)),
    ),
    max_size=40,
)


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(ops)
def test_every_watch_gets_each_matching_change_once_in_order_atomically(steps):
    """Ordered, unique, reliable, atomic: a watch's events are exactly the matching
    changes from its start revision, one response per revision."""
    s = Store()
    watches = []
    for step in steps:
        if step[0] == "put":
            s.put(step[1], "v")
        elif step[0] == "del":
            s.delete_range(step[1], step[2])
        elif step[0] == "txn":
            if step[1] != step[2]:
                s.txn([], [PutOp(step[1], "t"), DeleteOp(step[2])], [])
        else:
            start = min(step[3], s.revision + 2)
            watches.append((s.watch(step[1], step[2], start_revision=start), step[1], step[2], start or s.revision + 1))
    changes = [kv for rev in s._log for kv in _changes_of(rev)]  # no compaction here: the whole log
    for watch_id, key, end, start in watches:
        responses = s.take_watch_responses(watch_id)
        expected = [
            kv for kv in changes
            if kv.mod_revision >= start and (kv.key == key if end is None else key <= kv.key and (end == "\0" or kv.key < end))
        ]
        assert [e.kv for r in responses for e in r.events] == expected
        seen = set()
        for r in responses:
            revisions = {e.kv.mod_revision for e in r.events}
            assert not revisions & seen
            seen |= revisions


def test_watch_from_revision_one_replays_everything_once():
    # regression: revision 1 has no log entry; replay must not wrap around to the last one
    s = Store()
    s.put("k", "1")
    s.put("k", "2")
    assert events_of(s.take_watch_responses(s.watch("k", start_revision=1))) == [("PUT", "k", 2), ("PUT", "k", 3)]
