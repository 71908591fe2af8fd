"""The store's fast paths agree with its reference steps (kmodel/store/reference.py) on random requests.

Each generated sequence runs on a `Store` and on a `ReferenceStore` side by side. After every request the two
must agree on: the answer (or the StoreError, same code and text), the revision and compaction revision,
every history entry recorded since the last request (the fast store's compact entries expanded), every
watch's queue of responses not yet taken, and every change tracker's revision. At the end of a sequence every
retained revision is read back in full on both. The requests are weighted toward the shapes the fast paths
take (single puts; the API server's txn of one compare, one put, else one read) and also include their near
misses (a compare with a range, a put under a different key, a failure read at a past revision), which must
fall through to the reference steps.

The sequences come from Hypothesis with a fixed derandomized seed, at least 10,000 requests in all.
"""

from __future__ import annotations

from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmodel.store import Compare, DeleteOp, PutOp, RangeOp, Store, StoreError, prefix_end
from kmodel.store.reference import ReferenceStore

MIN_REQUESTS = 10_000
SEQUENCES = 100
SEQUENCE_LENGTH = (110, 140)

KEYS = ["a", "a/1", "a/2", "b", "c/1", "c/2"]
PREFIXES = ["a", "a/", "c/", "b"]
VALUES = ["v0", "v1", "v2", ""]
TRACKED = [("a/",), ("b", "c/"), ("",)]

key_specs = st.one_of(
    st.tuples(st.just("single"), st.sampled_from(KEYS)),
    st.tuples(st.just("prefix"), st.sampled_from(PREFIXES)),
    st.tuples(st.just("range"), st.sampled_from(KEYS), st.sampled_from(KEYS + ["d"])),
    st.tuples(st.just("from"), st.sampled_from(KEYS)),
)
backs = st.integers(min_value=-2, max_value=8)  # revisions back from the current one; < 0 is the future
maybe_back = st.one_of(st.none(), backs)
results = st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "GREATER"])

puts = st.tuples(st.just("put"), st.sampled_from(KEYS + [""]), st.sampled_from(VALUES), st.booleans())
deletes = st.tuples(st.just("delete"), key_specs, st.booleans())
ranges = st.tuples(st.just("range"), key_specs, maybe_back, st.sampled_from([0, 0, 1, 2]), st.booleans(),
                   st.booleans())
# a compare's value: "current" is the key's own field now (so that EQUAL holds), "zero" 0, else revisions back
compare_values = st.one_of(st.just("current"), st.just("zero"), backs)
compares = st.one_of(
    st.tuples(st.sampled_from(["MOD", "CREATE"]), st.sampled_from(KEYS), st.just("EQUAL"), compare_values,
              st.just(False)),
    st.tuples(st.sampled_from(["MOD", "CREATE", "VERSION"]), st.sampled_from(KEYS + [""]), results,
              compare_values, st.booleans()),
    st.tuples(st.just("VALUE"), st.sampled_from(KEYS), results, st.sampled_from(VALUES), st.booleans()),
)
# the API server's own compares (create_revision == 0 to create, mod_revision == the one read to update)
registry_compares = st.tuples(st.sampled_from(["MOD", "CREATE"]), st.sampled_from(KEYS), st.just("EQUAL"),
                              st.sampled_from(["current", "current", "current", "zero"]), st.just(False))
sub_ops = st.one_of(puts, deletes, ranges)
# the API server's shape: one compare on a key, a put of that key (now and then another), else a read of it
api_txns = st.tuples(
    st.just("api-txn"), st.one_of(registry_compares, registry_compares, compares), st.sampled_from(VALUES), st.booleans(),
    st.sampled_from(["same", "same", "same", "other"]), st.sampled_from(["none", "read", "read", "past-read"]),
)
txns = st.tuples(st.just("txn"), st.lists(compares, max_size=2), st.lists(sub_ops, max_size=3),
                 st.lists(sub_ops, max_size=3))
compactions = st.tuples(st.just("compact"), backs)
watches = st.tuples(st.just("watch"), key_specs, maybe_back, st.booleans(), st.booleans())
cancels = st.tuples(st.just("cancel"), st.integers(min_value=-1, max_value=12))
progress = st.tuples(st.just("progress"), st.integers(min_value=-1, max_value=12))
takes = st.tuples(st.just("take"), st.integers(min_value=-1, max_value=12))
tracks = st.tuples(st.just("track"), st.sampled_from(TRACKED))
requests = st.one_of(
    puts, puts, api_txns, api_txns, api_txns, deletes, ranges, txns, compactions, watches, watches, cancels,
    progress, takes, takes, tracks,
)
sequences = st.tuples(st.booleans(), st.lists(requests, min_size=SEQUENCE_LENGTH[0], max_size=SEQUENCE_LENGTH[1]))


def key_range(spec: tuple) -> tuple[str, Any]:
    kind = spec[0]
    if kind == "single":
        return spec[1], None
    if kind == "prefix":
        return spec[1], prefix_end(spec[1])
    if kind == "range":
        return spec[1], spec[2]
    return spec[1], "\0"


def revision_back(store: Store, back: Any) -> int:
    return 0 if back is None else max(1, store.revision - back)


def sub_op(store: Store, raw: tuple) -> Any:
    kind = raw[0]
    if kind == "put":
        return PutOp(raw[1], raw[2], raw[3])
    key, end = key_range(raw[1])
    if kind == "delete":
        return DeleteOp(key, end, raw[2])
    return RangeOp(key, end, revision_back(store, raw[2]), raw[3], raw[4], raw[5])


_FIELD = {"MOD": 3, "CREATE": 2, "VERSION": 4}


def compare(store: Store, raw: tuple) -> Compare:
    target, key, result, value, over_range = raw
    if target != "VALUE":
        if value == "current":
            kvs = store.peek(key) if key else []
            value = kvs[0][_FIELD[target]] if kvs else 0
        elif value == "zero":
            value = 0
        else:
            value = revision_back(store, value)
    return Compare(key, target, result, value, prefix_end(key) if over_range and key else None)


def request(store: Store, raw: tuple, watch_ids: list[int]) -> Callable[[Store], Any]:
    """The request `raw` stands for, resolved against `store`'s state (the reference's), as a call."""
    kind = raw[0]
    if kind == "put":
        return lambda s: s.put(raw[1], raw[2], prev_kv=raw[3])
    if kind == "delete":
        key, end = key_range(raw[1])
        return lambda s: s.delete_range(key, end, prev_kv=raw[2])
    if kind == "range":
        op = sub_op(store, raw)
        return lambda s: s.range(op.key, op.range_end, revision=op.revision, limit=op.limit,
                                 count_only=op.count_only, keys_only=op.keys_only)
    if kind == "api-txn":
        _, raw_compare, value, prev_kv, which, otherwise = raw
        c = compare(store, raw_compare)
        key = c.key if which == "same" else ("b" if c.key != "b" else "a")
        failure = {"none": [], "read": [RangeOp(c.key)],
                   "past-read": [RangeOp(c.key, None, max(1, store.revision - 1))]}[otherwise]
        return lambda s: s.txn([c], [PutOp(key, value, prev_kv)], failure)
    if kind == "txn":
        cs = [compare(store, r) for r in raw[1]]
        success = [sub_op(store, r) for r in raw[2]]
        failure = [sub_op(store, r) for r in raw[3]]
        return lambda s: s.txn(cs, success, failure)
    if kind == "compact":
        revision = max(0, store.revision - raw[1])
        return lambda s: s.compact(revision)
    if kind == "watch":
        key, end = key_range(raw[1])
        back = raw[2]
        start = 0 if back is None else max(1, store.revision - back)
        return lambda s: s.watch(key, end, start_revision=start, prev_kv=raw[3], progress_notify=raw[4])
    if kind == "track":
        return lambda s: s.track(raw[1]).revision
    watch_id = raw[1] if raw[1] < 0 or not watch_ids else watch_ids[raw[1] % len(watch_ids)]
    if kind == "cancel":
        return lambda s: s.cancel_watch(watch_id)
    if kind == "progress":
        return lambda s: s.request_progress(watch_id)
    assert kind == "take", kind
    return lambda s: s.take_watch_responses(watch_id)


def answer(store: Store, call: Callable[[Store], Any]) -> Any:
    try:
        return call(store)
    except StoreError as error:
        return error


def assert_same_state(fast: Store, ref: Store, seen: int, watch_ids: list[int], what: str) -> int:
    """Compare what two stores hold; returns the history length both have reached."""
    assert (fast.revision, fast.compact_revision) == (ref.revision, ref.compact_revision), what
    assert fast.peek(" ", "\0") == ref.peek(" ", "\0"), f"{what}: every live key"
    assert len(fast.history) == len(ref.history), what
    assert fast.history[seen:] == ref.history[seen:], what
    for watch_id in watch_ids:
        w_fast, w_ref = fast.watcher(watch_id), ref.watcher(watch_id)
        assert (w_fast is None) == (w_ref is None), what
        if w_fast is not None:
            assert w_fast.pending == w_ref.pending, f"{what}: watch {watch_id}"
            assert (w_fast.min_revision, w_fast.active, w_fast.cancellable) == (
                w_ref.min_revision, w_ref.active, w_ref.cancellable), f"{what}: watch {watch_id}"
    for prefixes in TRACKED:
        if prefixes in fast._trackers or prefixes in ref._trackers:  # noqa: SLF001 (no public list of them)
            assert fast.track(prefixes).revision == ref.track(prefixes).revision, what
    return len(ref.history)


def run_sequence(keep_compaction_tombstone: bool, raws: list[tuple]) -> int:
    fast = Store(keep_compaction_tombstone=keep_compaction_tombstone)
    ref = ReferenceStore(keep_compaction_tombstone=keep_compaction_tombstone)
    watch_ids: list[int] = []
    seen = 0
    for step, raw in enumerate(raws):
        call = request(ref, raw, watch_ids)
        expected = answer(ref, call)
        actual = answer(fast, call)
        what = f"request {step} {raw!r}"
        assert actual == expected, f"{what}\n      fast: {actual!r}\n reference: {expected!r}"
        if raw[0] == "watch" and expected >= 0:
            watch_ids.append(expected)
        seen = assert_same_state(fast, ref, seen, watch_ids, what)
    # every retained revision, read in full (the keyspace's versions as both stores kept them)
    for revision in range(max(ref.compact_revision, 1), ref.revision + 1):
        assert answer(fast, lambda s: s.range(" ", "\0", revision=revision)) == \
            answer(ref, lambda s: s.range(" ", "\0", revision=revision)), f"all keys at revision {revision}"
    for watch_id in [-1, *watch_ids]:
        assert fast.take_watch_responses(watch_id) == ref.take_watch_responses(watch_id)
    return len(raws)


def test_fast_paths_agree_with_the_reference_steps() -> None:
    counted = [0]

    @settings(max_examples=SEQUENCES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(sequences)
    def check(sequence: tuple[bool, list[tuple]]) -> None:
        counted[0] += run_sequence(*sequence)

    check()
    assert counted[0] >= MIN_REQUESTS, f"only {counted[0]} requests ran; raise SEQUENCES or SEQUENCE_LENGTH"


def test_the_comparison_sees_a_fast_path_that_disagrees(monkeypatch: Any) -> None:
    """A fast path that drops a watch event, and one that misnumbers a version, are both caught."""
    original = Store._fan_out_one

    def drop_prev_kv(self: Store, watchers: list, kv: Any, prev: Any, rev: int) -> None:
        original(self, watchers, kv, None, rev)

    monkeypatch.setattr(Store, "_fan_out_one", drop_prev_kv)
    raws = [("watch", ("prefix", "a"), None, True, False), ("put", "a/1", "v0", False),
            ("put", "a/1", "v1", False)]
    try:
        run_sequence(False, raws)
    except AssertionError as error:
        assert "watch 0" in str(error)
    else:
        raise AssertionError("a fast fan-out without prev_kv went unnoticed")
    monkeypatch.undo()

    original_write = Store._write_one

    def misnumber(self: Store, key: str, value: Any, old: Any) -> int:
        return original_write(self, key, value, None)  # every put "creates" its key

    monkeypatch.setattr(Store, "_write_one", misnumber)
    try:
        run_sequence(False, [("put", "a", "v0", False), ("put", "a", "v1", True)])
    except AssertionError as error:
        assert "request 1" in str(error) and "every live key" in str(error)
    else:
        raise AssertionError("a fast put that restarts the key's version went unnoticed")
