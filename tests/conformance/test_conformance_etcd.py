"""kmodel.store against a real etcd 3.4, side by side, on Hypothesis-generated sequences.

Each sequence runs on a fresh model ``Store`` and on the shared etcd under a fresh key
prefix. Prefixes increase from one sequence to the next, so a "every key >= key" range
(range_end "\\0") never reaches an older sequence's keys, and the next sequence's keys
do not exist yet. Before a sequence starts, a put on a sentinel key outside every
prefix moves etcd past any earlier compaction, so model revision 1 is etcd's current
revision and ``Mapping`` shifts revisions by a fixed offset (see etcd_gateway.py).

Compared after every request: the whole response (header revision, kvs with create
and mod revision and version, count, more, prev_kv(s), deleted, succeeded and each
txn sub-response with its own header), or the error's gRPC code and exact text.
Compared for every watch at the end of its sequence: the events (type, kv, prev_kv)
in order, that each revision's events came in a single response, and the
cancellations (compaction, refused range) with their fields.

etcd answers watches asynchronously; two waits keep the comparison exact rather than
timing-dependent: a new watch is used only once etcd confirmed it ("created"), and
before a compaction and at the end of a sequence every watch is brought in sync
(``barrier``). Compactions are physical, so they are finished when
etcd answers, as the model's are.
"""

from __future__ import annotations

import base64
import itertools
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etcd_gateway import Gateway, Mapping, WatchStream
from kmodel.store import (
    Compare,
    CompactResponse,
    DeleteOp,
    KeyEvent,
    KeyValue,
    PutOp,
    RangeOp,
    Store,
    StoreError,
    WatchResponse,
    prefix_end,
)

pytestmark = pytest.mark.conformance

SEQUENCES = 60  # Hypothesis examples
OPS_PER_SEQUENCE = (35, 45)
SENTINEL = "!kmodel-sentinel"  # sorts before every sequence prefix ("s…")

SUFFIXES = ["a", "a/1", "a/2", "b", "c/1"]
PREFIXES = ["a", "a/", "c/", ""]
VALUES = ["", "v0", "v1", "v2"]

TOTALS = {"sequences": 0, "operations": 0, "txns": 0, "errors": 0, "compactions": 0, "past_watches": 0,
          "compacted_watches": 0, "watch_events": 0}
_sequence_numbers = itertools.count()

# --- generated operations (resolved against the model's current revision when run) -----

key_specs = st.one_of(
    st.tuples(st.just("single"), st.sampled_from(SUFFIXES)),
    st.tuples(st.just("prefix"), st.sampled_from(PREFIXES)),
    st.tuples(st.just("range"), st.sampled_from(SUFFIXES), st.sampled_from(SUFFIXES + ["c/2", "d"])),
    st.tuples(st.just("from"), st.sampled_from(SUFFIXES)),
)
backs = st.integers(min_value=-2, max_value=8)  # revisions back from the current one; < 0 is the future
maybe_back = st.one_of(st.none(), backs)

put_ops = st.tuples(st.just("put"), st.sampled_from(SUFFIXES), st.sampled_from(VALUES), st.booleans())
delete_ops = st.tuples(st.just("delete"), key_specs, st.booleans())
range_ops = st.tuples(
    st.just("range"), key_specs, maybe_back, st.sampled_from([0, 0, 1, 2]), st.booleans(), st.booleans()
)
compares = st.one_of(
    st.tuples(st.just("VALUE"), st.sampled_from(SUFFIXES), st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "GREATER"]),
              st.sampled_from(VALUES), st.booleans()),
    st.tuples(st.just("VERSION"), st.sampled_from(SUFFIXES), st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "GREATER"]),
              st.integers(0, 3), st.booleans()),
    st.tuples(st.sampled_from(["CREATE", "MOD"]), st.sampled_from(SUFFIXES),
              st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "GREATER"]), maybe_back, st.booleans()),
)
txn_sub_ops = st.one_of(put_ops, delete_ops, range_ops)
txn_ops = st.tuples(
    st.just("txn"),
    st.lists(compares, max_size=2),
    st.lists(txn_sub_ops, max_size=3),
    st.lists(txn_sub_ops, max_size=3),
)
compact_ops = st.tuples(st.just("compact"), backs)
watch_ops = st.tuples(st.just("watch"), key_specs, maybe_back, st.booleans())
operations = st.one_of(put_ops, put_ops, delete_ops, range_ops, txn_ops, compact_ops, watch_ops)
sequences = st.lists(operations, min_size=OPS_PER_SEQUENCE[0], max_size=OPS_PER_SEQUENCE[1])


def resolve_keys(prefix: str, spec: tuple) -> tuple:
    kind = spec[0]
    if kind == "single":
        return prefix + spec[1], None
    if kind == "prefix":
        return prefix + spec[1], prefix_end(prefix + spec[1])
    if kind == "range":
        return prefix + spec[1], prefix + spec[2]
    return prefix + spec[1], "\0"


def resolve_revision(store: Store, back) -> int:
    if back is None:
        return 0
    return max(1, store.revision - back)


def resolve_op(store: Store, prefix: str, raw: tuple):
    kind = raw[0]
    if kind == "put":
        return PutOp(prefix + raw[1], raw[2], raw[3])
    if kind == "delete":
        key, end = resolve_keys(prefix, raw[1])
        return DeleteOp(key, end, raw[2])
    key, end = resolve_keys(prefix, raw[1])
    return RangeOp(key, end, resolve_revision(store, raw[2]), raw[3], raw[4], raw[5])


def resolve_compare(store: Store, prefix: str, raw: tuple) -> Compare:
    target, suffix, result, value, over_prefix = raw
    if target in ("CREATE", "MOD"):
        value = 0 if value is None else resolve_revision(store, value)
    key = prefix + suffix
    # a compare over a range: every key in [key, prefix_end(key)) must pass
    return Compare(key, target, result, value, prefix_end(key) if over_prefix else None)


# --- normalising the model's answers to what etcd can express ----------------------------


def norm_kv(kv):
    # etcd sends no value for tombstones and keys_only ranges; the model says None
    if kv is not None and kv.value is None:
        return kv._replace(value="")
    return kv


def norm(response):
    name = type(response).__name__
    if name == "RangeResponse":
        return response._replace(kvs=[norm_kv(kv) for kv in response.kvs])
    if name == "PutResponse":
        return response._replace(prev_kv=norm_kv(response.prev_kv))
    if name == "DeleteRangeResponse":
        return response._replace(prev_kvs=[norm_kv(kv) for kv in response.prev_kvs])
    if name == "TxnResponse":
        return response._replace(responses=[norm(r) for r in response.responses])
    return response


def norm_event(e: KeyEvent) -> KeyEvent:
    return KeyEvent(e.type, norm_kv(e.kv), norm_kv(e.prev_kv))


# --- running one sequence ----------------------------------------------------------------


class Side:
    """Run one request on both sides and compare the answers."""

    def __init__(self, port: int) -> None:
        self.gateway = Gateway(port)
        self.port = port

    def etcd_revision(self) -> int:
        answer = self.gateway.call("kv/range", {"key": base64.b64encode(SENTINEL.encode()).decode()})
        return int(answer["header"]["revision"])

    def both(self, model_call, path: str, body: dict, convert, m: Mapping, what: str):
        try:
            expected = norm(model_call())
        except StoreError as error:
            expected = error
        answer = self.gateway.call(path, body)
        actual = Gateway.error(answer) or convert(answer, m)
        assert actual == expected, f"{what}\n model: {expected!r}\n  etcd: {actual!r}"
        return expected


def run_sequence(etcd, ops: list) -> None:
    side = Side(etcd.client_port)
    gateway = side.gateway
    number = next(_sequence_numbers)
    prefix = f"s{number:06d}/"
    # move etcd past any earlier compaction: model revision 1 = this revision
    gateway.call("kv/put", {"key": base64.b64encode(SENTINEL.encode()).decode(), "value": ""})
    m = Mapping(side.etcd_revision() - 1)
    store = Store()
    watches: list[Watch] = []
    try:
        for step, raw in enumerate(ops):
            what = f"step {step} of sequence {prefix}: {raw}"
            kind = raw[0]
            if kind == "put":
                op = resolve_op(store, prefix, raw)
                side.both(lambda: store.put(op.key, op.value, prev_kv=op.prev_kv), "kv/put",
                          Gateway.put_body(op, m), Gateway.put_response, m, what)
            elif kind == "delete":
                op = resolve_op(store, prefix, raw)
                side.both(lambda: store.delete_range(op.key, op.range_end, prev_kv=op.prev_kv), "kv/deleterange",
                          Gateway.delete_body(op, m), Gateway.delete_response, m, what)
            elif kind == "range":
                op = resolve_op(store, prefix, raw)
                result = side.both(
                    lambda: store.range(op.key, op.range_end, revision=op.revision, limit=op.limit,
                                        count_only=op.count_only, keys_only=op.keys_only),
                    "kv/range", Gateway.range_body(op, m), Gateway.range_response, m, what)
                TOTALS["errors"] += isinstance(result, StoreError)
            elif kind == "txn":
                cmps = [resolve_compare(store, prefix, c) for c in raw[1]]
                success = [resolve_op(store, prefix, o) for o in raw[2]]
                failure = [resolve_op(store, prefix, o) for o in raw[3]]
                result = side.both(lambda: store.txn(cmps, success, failure), "kv/txn",
                                   Gateway.txn_body(cmps, success, failure, m), Gateway.txn_response, m, what)
                TOTALS["txns"] += 1
                TOTALS["errors"] += isinstance(result, StoreError)
            elif kind == "compact":
                revision = resolve_revision(store, raw[1])
                barrier(watches, m.to_etcd(store.revision), need_progress=False)
                result = side.both(lambda: store.compact(revision), "kv/compaction",
                                   {"revision": m.to_etcd(revision), "physical": True},
                                   _compact_response, m, what)
                TOTALS["compactions"] += not isinstance(result, StoreError)
                TOTALS["errors"] += isinstance(result, StoreError)
            elif kind == "watch":
                key, end = resolve_keys(prefix, raw[1])
                start = resolve_revision(store, raw[2])
                watch_id = store.watch(key, end, start_revision=start, prev_kv=raw[3])
                request = {"key": _b64(key), "start_revision": m.to_etcd(start), "prev_kv": raw[3],
                           "progress_notify": True}
                if end:
                    request["range_end"] = _b64(end)
                stream = WatchStream(etcd.client_port, request)
                _wait_created(stream)
                watches.append(Watch(watch_id, stream, synced_at_start=start == 0 or start > store.revision))
                if watch_id == -1:
                    watches[-1].model.extend(store.take_watch_responses(-1))
                TOTALS["past_watches"] += 0 < start <= store.revision
                TOTALS["compacted_watches"] += 0 < start < store.compact_revision
            for w in watches:
                w.model.extend(store.take_watch_responses(w.watch_id))
            TOTALS["operations"] += 1
        barrier(watches, m.to_etcd(store.revision), need_progress=True)
        for w in watches:
            compare_watch(w, m, prefix)
    finally:
        for w in watches:
            w.stream.close()
    TOTALS["sequences"] += 1


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _compact_response(answer: dict, m: Mapping) -> CompactResponse:
    return CompactResponse(Gateway.header(answer, m))


def _wait_created(stream: WatchStream) -> None:
    deadline = time.monotonic() + 10
    while not any(msg.get("created") for msg in stream.snapshot()):
        assert time.monotonic() < deadline and not stream.closed, "etcd never confirmed the watch"
        time.sleep(0.002)


class Watch:
    """One watch of a sequence: the model's id and responses so far, etcd's stream."""

    def __init__(self, watch_id: int, stream: WatchStream, synced_at_start: bool) -> None:
        self.watch_id = watch_id
        self.stream = stream
        self.model: list[WatchResponse] = []
        # etcd puts a watch starting now or later straight in its synced group
        self.synced_at_start = synced_at_start


def barrier(watches: list[Watch], etcd_revision: int, need_progress: bool, timeout: float = 10.0) -> None:
    """Wait until etcd has sent each watch what the model has queued for it.

    A watch that etcd has cancelled gets nothing more. Otherwise: once etcd sent as
    many events as the model queued, and the watch is synced in etcd (it started
    synced, or received events, which a lagging watch only gets by syncing), it is
    caught up. A lagging watch with nothing to send, or a final check for events the
    model did not expect, needs a progress notification at or after ``etcd_revision``:
    etcd sends those only to synced watches, after every earlier event.
    """
    deadline = time.monotonic() + timeout
    waiting = [w for w in watches if w.watch_id != -1]
    while waiting:
        still = []
        for w in waiting:
            messages = w.stream.snapshot()
            if any(msg.get("canceled") for msg in messages):
                continue
            expected = sum(len(r.events) for r in w.model)
            received = sum(len(msg.get("events", ())) for msg in messages)
            progressed = any(
                not msg.get("events") and not msg.get("created")
                and int(msg.get("header", {}).get("revision", 0)) >= etcd_revision
                for msg in messages
            )
            synced = w.synced_at_start or received > 0
            if progressed or (not need_progress and synced and received >= expected):
                continue
            still.append(w)
        waiting = still
        if waiting:
            assert time.monotonic() < deadline, f"etcd watches did not catch up: {[w.stream.snapshot() for w in waiting]}"
            time.sleep(0.005)


def compare_watch(w: Watch, m: Mapping, prefix: str) -> None:
    model, watch_id = w.model, w.watch_id
    raw = w.stream.snapshot()
    refused = [r for r in raw if r.get("created") and r.get("canceled")]
    if watch_id == -1:
        actual = [Gateway.watch_response(r, m) for r in refused]
        assert actual == model, f"refused watch in {prefix}\n model: {model}\n  etcd: {actual}"
        return
    etcd = [Gateway.watch_response(r, m) for r in raw if not r.get("created")]
    # drop progress notifications (etcd sends them periodically; the model only on request)
    etcd = [r for r in etcd if r.events or r.canceled]
    assert all(r.watch_id == 0 for r in etcd)  # one watch per stream: etcd numbers each from 0

    model_events = [norm_event(e) for r in model for e in r.events]
    etcd_events = [e for r in etcd for e in r.events]
    assert etcd_events == model_events, (
        f"watch {watch_id} in {prefix}\n model: {model_events}\n  etcd: {etcd_events}")
    for responses in (model, etcd):  # atomic: a revision's events never span two responses
        where = {}
        for i, r in enumerate(responses):
            for e in r.events:
                assert where.setdefault(e.kv.mod_revision, i) == i, f"revision split across responses: {responses}"

    def cancellations(responses):
        return [(r.header_revision, r.compact_revision, r.cancel_reason) for r in responses if r.canceled]

    assert cancellations(etcd) == cancellations(model), f"watch {watch_id} in {prefix}: {etcd} vs {model}"
    TOTALS["watch_events"] += len(model_events)


# --- the tests ---------------------------------------------------------------------------

HANDWRITTEN = [
    # put then delete-from-key in one txn: etcd's interval check lets it through, and it deletes the put
    [("put", "a", "v0", False), ("watch", ("prefix", ""), None, True),
     ("txn", [], [("put", "b", "v1", False), ("delete", ("from", "b"), True), ("range", ("from", "a"), None, 0, False, False)], []),
     ("range", ("prefix", ""), 1, 0, False, False)],
    # a delete at the compaction revision is gone for a watch starting there; a watch below it is cancelled
    [("put", "a", "v0", False), ("put", "b", "v1", False), ("delete", ("single", "a"), False),
     ("compact", 0), ("watch", ("prefix", ""), 0, True), ("watch", ("prefix", ""), 1, False),
     ("put", "a", "v2", True), ("compact", 0), ("compact", -1), ("range", ("prefix", ""), 1, 0, False, False)],
    # duplicate keys, empty ranges, refused watch, limits and counts
    [("put", "a/1", "v0", False), ("put", "a/2", "v0", False), ("put", "b", "", False),
     ("txn", [], [("put", "a", "v1", False), ("put", "a", "v2", False)], []),
     ("txn", [], [("delete", ("prefix", "a"), False), ("put", "a/1", "v2", False)], []),
     ("range", ("range", "b", "a"), None, 0, False, False), ("watch", ("range", "b", "a"), None, False),
     ("range", ("from", "a"), None, 1, False, False), ("range", ("from", "a"), 2, 2, True, False),
     ("range", ("prefix", "a"), None, 1, False, True)],
]


def test_handwritten_sequences_agree_with_etcd(etcd):
    for ops in HANDWRITTEN:
        run_sequence(etcd, ops)


def test_generated_sequences_agree_with_etcd(etcd):
    before = dict(TOTALS)

    @settings(max_examples=SEQUENCES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(sequences)
    def agree(ops):
        run_sequence(etcd, ops)

    agree()
    ran = {k: TOTALS[k] - before[k] for k in TOTALS}
    print(f"\nconformance: {ran}")
    assert ran["sequences"] >= 50
    assert ran["operations"] >= 2000
    assert ran["compactions"] >= 20
    assert ran["past_watches"] >= 20
    assert ran["compacted_watches"] >= 5
    assert ran["txns"] >= 100
