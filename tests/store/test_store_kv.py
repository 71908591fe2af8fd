"""KV semantics of kmodel.store: revisions, versions, tombstones, ranges, txn rules, compaction, history."""

from __future__ import annotations

import pytest

from kmodel.store import (
    Compare,
    DeleteOp,
    KeyValue,
    PutOp,
    RangeOp,
    Store,
    StoreError,
    prefix_end,
)

COMPACTED = StoreError("OutOfRange", "etcdserver: mvcc: required revision has been compacted")
FUTURE = StoreError("OutOfRange", "etcdserver: mvcc: required revision is a future revision")
EMPTY_KEY = StoreError("InvalidArgument", "etcdserver: key is not provided")
DUPLICATE = StoreError("InvalidArgument", "etcdserver: duplicate key given in txn request")


def test_revisions_start_at_one_and_each_write_raises_by_one():
    s = Store()
    assert s.revision == 1
    assert s.put("a", "1").header_revision == 2
    assert s.put("b", "1").header_revision == 3
    assert s.delete_range("zzz").header_revision == 3  # matched nothing: no new revision
    assert s.revision == 3
    assert s.delete_range("a").header_revision == 4


def test_versions_and_create_revision_follow_a_key_life():
    s = Store()
    s.put("k", "1")
    s.put("k", "2")
    kv = s.range("k").kvs[0]
    assert (kv.create_revision, kv.mod_revision, kv.version) == (2, 3, 2)
    s.delete_range("k")
    assert s.range("k").kvs == []
    s.put("k", "3")
    kv = s.range("k").kvs[0]
    assert (kv.create_revision, kv.mod_revision, kv.version) == (5, 5, 1)


def test_past_revisions_see_old_values_and_deleted_keys():
    s = Store()
    s.put("k", "1")
    s.put("k", "2")
    s.delete_range("k")
    assert s.range("k", revision=2).kvs[0].value == "1"
    assert s.range("k", revision=3).kvs[0].value == "2"
    assert s.range("k", revision=4).kvs == []
    # the header is always the current revision
    assert s.range("k", revision=2).header_revision == 4


def test_prev_kv_on_put_and_delete():
    s = Store()
    assert s.put("k", "1", prev_kv=True).prev_kv is None
    first = s.range("k").kvs[0]
    assert s.put("k", "2", prev_kv=True).prev_kv is first  # shared, not copied
    r = s.delete_range("k", prefix_end("k"), prev_kv=True)
    assert r.deleted == 1 and [kv.value for kv in r.prev_kvs] == ["2"]


def test_range_end_semantics_limit_count_keys_only():
    s = Store()
    for k in ["a", "a/1", "a/2", "b", "c"]:
        s.put(k, k.upper())
    assert [kv.key for kv in s.range("a", prefix_end("a")).kvs] == ["a", "a/1", "a/2"]
    assert [kv.key for kv in s.range("a/", "\0").kvs] == ["a/1", "a/2", "b", "c"]
    assert s.range("b", "a").kvs == [] and s.range("b", "a").count == 0
    r = s.range("a", "\0", limit=2)
    assert ([kv.key for kv in r.kvs], r.count, r.more) == (["a", "a/1"], 5, True)
    r = s.range("a", "\0", count_only=True)
    assert (r.kvs, r.count, r.more) == ([], 5, False)
    assert [kv.value for kv in s.range("a", "b", keys_only=True).kvs] == [None, None, None]
    r = s.range("a", "\0", revision=4, limit=1)
    assert ([kv.key for kv in r.kvs], r.count, r.more) == (["a"], 3, True)


def test_prefix_end_matches_etcd():
    assert prefix_end("a") == "b"
    assert prefix_end("/registry/pods/") == "/registry/pods0"
    assert prefix_end("") == "\0"


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda s: s.range(""), EMPTY_KEY),
        (lambda s: s.put("", "v"), EMPTY_KEY),
        (lambda s: s.delete_range(""), EMPTY_KEY),
        (lambda s: s.range("a", revision=99), FUTURE),
        (lambda s: s.compact(99), FUTURE),
        (lambda s: s.txn([], [PutOp("a", "1"), PutOp("a", "2")], []), DUPLICATE),
        (lambda s: s.txn([], [DeleteOp("a", "c"), PutOp("b", "2")], []), DUPLICATE),
        (lambda s: s.txn([], [], [DeleteOp("b"), PutOp("b", "2")]), DUPLICATE),
        (lambda s: s.txn([Compare("", "VERSION", "EQUAL", 0)], [], []), EMPTY_KEY),
        (lambda s: s.txn([], [RangeOp("a", revision=99)], []), FUTURE),
    ],
)
def test_refusals_carry_etcd_texts_and_are_recorded(call, error):
    s = Store()
    s.put("a", "0")
    with pytest.raises(StoreError) as raised:
        call(s)
    assert raised.value == error
    assert s.history[-1][1] == error
    assert s.revision == 2  # a refused request changes nothing


def test_compaction_errors_and_reads_at_the_compacted_revision():
    s = Store()
    s.put("a", "1")  # 2
    s.put("a", "2")  # 3
    s.delete_range("a")  # 4
    s.put("b", "1")  # 5
    assert s.compact(3).header_revision == 5
    assert s.compact_revision == 3
    with pytest.raises(StoreError) as raised:
        s.range("a", revision=2)
    assert raised.value == COMPACTED
    assert s.range("a", revision=3).kvs[0].value == "2"  # the compacted revision itself is readable
    with pytest.raises(StoreError) as raised:
        s.compact(3)
    assert raised.value == COMPACTED
    s.compact(5)
    assert s.range("a", "\0", revision=5).count == 1
    # a txn branch reading below the compacted revision fails as a whole
    with pytest.raises(StoreError) as raised:
        s.txn([], [PutOp("c", "1"), RangeOp("a", revision=4)], [])
    assert raised.value == COMPACTED and s.revision == 5


def test_compact_zero_succeeds_once_on_a_fresh_store_like_etcd():
    s = Store()
    s.compact(0)
    with pytest.raises(StoreError):
        s.compact(0)


def test_txn_compares_and_branches():
    s = Store()
    s.put("k", "v1")
    mod = s.range("k").kvs[0].mod_revision
    ok = s.txn([Compare("k", "MOD", "EQUAL", mod)], [PutOp("k", "v2")], [RangeOp("k")])
    assert ok.succeeded and ok.header_revision == 3
    stale = s.txn([Compare("k", "MOD", "EQUAL", mod)], [PutOp("k", "v3")], [RangeOp("k")])
    assert not stale.succeeded and stale.header_revision == 3
    assert stale.responses[0].kvs[0].value == "v2"
    # a VALUE compare on a missing key fails; others compare against zeros
    assert not s.txn([Compare("missing", "VALUE", "NOT_EQUAL", "x")], [], []).succeeded
    assert s.txn([Compare("missing", "CREATE", "EQUAL", 0)], [], []).succeeded
    assert s.txn([Compare("k", "VALUE", "GREATER", "v1")], [], []).succeeded
    # over a range, every key must pass
    s.put("k2", "v1")
    assert not s.txn([Compare("k", "VALUE", "EQUAL", "v2", prefix_end("k"))], [], []).succeeded
    assert s.txn([Compare("k", "VERSION", "GREATER", 0, prefix_end("k"))], [], []).succeeded


def test_txn_is_one_revision_and_sub_headers_follow_etcd():
    s = Store()
    s.put("x", "0")
    r = s.txn([], [RangeOp("x"), DeleteOp("none"), PutOp("a", "1"), PutOp("b", "1"), RangeOp("a")], [])
    assert r.header_revision == 3 and s.revision == 3
    assert [sub.header_revision for sub in r.responses] == [2, 2, 3, 3, 3]
    assert r.responses[4].kvs[0].value == "1"  # a range sees the txn's own writes
    assert s.range("a").kvs[0].mod_revision == s.range("b").kvs[0].mod_revision == 3
    assert s.txn([], [RangeOp("a")], []).header_revision == 3  # read-only txn: no revision


def test_txn_put_then_delete_from_key_deletes_the_put_like_etcd():
    s = Store()
    r = s.txn([], [PutOp("b", "1"), DeleteOp("b", "\0", prev_kv=True)], [])
    assert r.responses[1].deleted == 1
    assert r.responses[1].prev_kvs[0] == KeyValue("b", "1", 2, 2, 1, 0)
    assert s.range("b").kvs == [] and s.revision == 2


def test_compaction_keeps_exactly_what_reads_need():
    s = Store()
    for i in range(5):
        s.put("k", str(i))  # 2..6
    s.put("gone", "x")  # 7
    s.delete_range("gone")  # 8
    s.compact(5)
    assert [kv.mod_revision for kv in s._keys.versions["k"]] == [5, 6]
    assert [kv.mod_revision for kv in s._keys.versions["gone"]] == [7, 8]
    s.compact(8)
    assert "gone" not in s._keys.versions and "gone" not in s._keys.known_keys
    assert [kv.value for kv in s.range("k", revision=8).kvs] == ["4"]


def test_history_records_requests_and_answers_in_order():
    s = Store()
    s.put("a", "1")
    s.range("a")
    with pytest.raises(StoreError):
        s.range("a", revision=10)
    kinds = [type(req).__name__ for req, _ in s.history]
    assert kinds == ["PutOp", "RangeOp", "RangeOp"]
    assert s.history[0] == (PutOp("a", "1", False), s.history[0][1])
    assert isinstance(s.history[2][1], StoreError)


def test_ranges_see_every_key_in_order_however_writes_and_reads_interleave():
    # the sorted key indexes take new keys in batches, when they are next read: a range after any mix of
    # creates, deletes and re-creates answers exactly what etcd would, now and at past revisions
    s = Store()
    live: dict[str, int] = {}
    for i in range(300):
        key = f"k{(i * 53) % 97:03d}"
        if i % 5 == 4 and key in live:
            s.delete_range(key)
            del live[key]
        else:
            s.put(key, i)
            live[key] = i
        if i % 37 == 0:
            assert [kv.key for kv in s.range("k", "l").kvs] == sorted(live)
            assert s.range("k", "l", count_only=True).count == len(live)
    assert [(kv.key, kv.value) for kv in s.range("k", "l").kvs] == sorted(live.items())
    at = s.revision - 50
    past = s.range("k", "l", revision=at).kvs
    assert [kv.key for kv in past] == sorted({kv.key for kv in past})
    assert all(kv.mod_revision <= at for kv in past)
    s.compact(at)
    assert [kv.key for kv in s.range("k", "l").kvs] == sorted(live)


def test_peek_reads_what_range_reads_and_is_not_a_request():
    s = Store()
    tracker = s.track(("a",))
    watch = s.watch("a", prefix_end("a"))
    s.put("a/1", "x")
    s.put("a/2", "y")
    s.delete_range("a/1")
    s.put("b", "z")
    cases = [(key, end, at) for key, end in [("a/2", None), ("a/1", None), ("a", prefix_end("a")), ("a", "\0"),
                                            ("a/2", "a")] for at in [0, 2, 3, 4, 5, 99]]
    expected = [s.range(key, end, revision=min(at, s.revision)).kvs for key, end, at in cases]
    recorded, responses, revision = len(s.history), s.take_watch_responses(watch), s.revision
    assert [s.peek(key, end, revision=at) for key, end, at in cases] == expected
    assert s.peek("a/2") == [KeyValue("a/2", "y", 3, 3, 1)]
    assert s.peek("a/1", revision=2) == [KeyValue("a/1", "x", 2, 2, 1)]
    assert len(s.history) == recorded and s.revision == revision and tracker.revision == 4
    assert s.take_watch_responses(watch) == [] and responses


def test_peek_below_the_compaction_never_raises_and_never_shows_a_wrong_version():
    s = Store()
    s.put("k", "v1")  # 2
    s.put("k", "v2")  # 3
    s.put("gone", "g")  # 4
    s.delete_range("gone")  # 5
    s.compact(5)
    assert s.peek("k", revision=3) == [KeyValue("k", "v2", 2, 3, 2)]  # the version compaction kept
    assert s.peek("k", revision=2) == []  # compacted away: missing, not v2
    assert s.peek("gone", revision=4) == []


def test_deletion_revisions_lists_the_uncompacted_revisions_that_deleted_a_key_newest_first():
    s = Store()
    s.put("a", 1)  # 2
    s.put("b", 1)  # 3
    s.delete_range("a")  # 4
    s.delete_range("nothing")  # no revision
    s.put("c", 1)  # 5
    s.delete_range("b", "d")  # 6: b and c in one revision
    assert s.deletion_revisions() == [6, 4]
    s.compact(4)
    assert s.deletion_revisions() == [6]
