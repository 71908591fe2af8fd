"""The etcd v3 KV and Watch model: one value holding revisions, keys, watchers and history.

Theory of operation
-------------------
The store is a single etcd member seen through its gRPC API, without I/O. It has one
cluster-wide ``revision``, 1 when empty, raised by exactly one by every request that
changes something: a put, a delete that deletes at least one key, a txn whose branch
writes. Each key carries ``create_revision``, ``mod_revision`` and ``version`` (1 on
create, +1 per put; a delete ends the key's life and a later put starts again at 1).

Writes happen in three steps, the same for a put, a delete and a txn:

1. apply each change to the ``Keyspace`` at revision ``rev = revision + 1`` and note
   it (``changes``), with the state of its key before the request (``before``);
2. if anything changed, append the changes to the revision log and raise the
   revision;
3. hand the changes to the matching watchers: one ``WatchResponse`` per watcher per
   revision, events in change order. A watch's ``prev_kv`` is the key's state at
   ``rev - 1``, which is what etcd's watch server looks up.

These steps (``_txn``, ``_put``, ``_delete``, ``_commit``, ``_fan_out``) are the reference
implementation of every write. The shapes the model sends most have fast paths beside
them (``_write_one`` for a put of one key, by ``put`` and by ``_txn_one`` for the API
server's txn; ``_fan_out_one`` for a revision that changed one key), each checked against
the reference steps by tests/store/test_reference.py through ``ReferenceStore``
(reference.py), the store with its fast paths off.

Reads at the current revision come from the live index; reads at a past revision
bisect each key's versions. ``compact(c)`` forgets what etcd's compaction forgets:
reads below ``c`` fail, a watch starting below ``c`` is cancelled with
``compact_revision = c``, and a watch starting at ``c`` misses the tombstones of
revision ``c`` (etcd has deleted them from its backend) and gets no prev_kv for
revision ``c`` (etcd's lookup at ``c - 1`` fails). Nothing is copied: the KeyValue
recorded by a write is the one every later response and event hands out.

Every request and its answer (or the StoreError it raised) is appended to
``history`` as a ``(request, response)`` tuple, for invariants to read (the API
server's one-compare-one-put txn is kept compact until first read: see
``history.py``). Watch responses are not recorded there: they are in the
watchers' queues until taken.

Every change written is also fed, as it is made, to a running blake2b (its KeyValue's
content: key, value, revisions, version; `kmodel.fingerprint`): `digest()` says which
writes the store took, and what they wrote.
"""

from __future__ import annotations

import hashlib
from typing import Any, Optional, Sequence

from kmodel.fingerprint import fingerprint

from . import errors
from .errors import StoreError
from .history import History
from .keyspace import Keyspace, in_range
from .txn_rules import check_txn_request, compare_holds
from .types import (
    CancelWatchRequest,
    Compare,
    CompactRequest,
    CompactResponse,
    DeleteOp,
    DeleteRangeResponse,
    KeyEvent,
    KeyValue,
    ProgressRequest,
    PutOp,
    PutResponse,
    RangeOp,
    RangeResponse,
    TxnRequest,
    TxnResponse,
    WatchCreated,
    WatchRequest,
    WatchResponse,
)
from .watch import WatchIndex, Watcher

_new = tuple.__new__  # builds a NamedTuple from a tuple of its fields, skipping the Python-level __new__

WATCH_BATCH_MAX_REVISIONS = 1000  # etcd's watchBatchMaxRevs: revisions per replayed response
_REFUSED_WATCH_ID = -1  # the id etcd gives a watch it refuses at creation
_REVISION_FIELDS = {"MOD": 3, "CREATE": 2, "VERSION": 4}  # Compare target -> KeyValue field (0 when missing)


def _changes_of(entry: Any) -> tuple[KeyValue, ...]:
    """The changes of one revision from its `Store._log` entry (a KeyValue, or a tuple of them)."""
    return (entry,) if type(entry) is KeyValue else entry


class _Write:
    """The changes of one write request in progress (a put, a delete or a txn)."""

    __slots__ = ("rev", "changes", "before")

    def __init__(self, rev: int) -> None:
        self.rev = rev
        self.changes: list[KeyValue] = []
        self.before: dict[str, Optional[KeyValue]] = {}


class ChangeTracker:
    """See `Store.track`."""

    __slots__ = ("prefixes", "revision")

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        self.prefixes = prefixes
        self.revision = 0


class Store:
    """An etcd v3 server's KV and Watch API as a value. See the module docstring."""

    #: what invariants may read of it besides its API (kmodel.invariants.records): the change trackers made so far
    RECORDS: frozenset[str] = frozenset({"trackers"})

    def __init__(self, *, keep_compaction_tombstone: bool = False) -> None:
        """`keep_compaction_tombstone`: etcd's fix of etcd-io/etcd#18089 (kmodel.fixes, off by default)."""
        self._rev = 1
        # etcd's compactMainRev starts at -1: compact(0) on a fresh store succeeds once.
        self._compact_rev = -1
        self._keys = Keyspace(keep_compaction_tombstone=keep_compaction_tombstone)
        # _log[i] holds the changes of revision _log_base + i, in the order they were made: the KeyValue itself
        # when the revision changed one key (nearly every write: no wrapping tuple is kept alive per write,
        # one object less for the cyclic GC to walk), else a tuple of them (see `_changes_of`)
        self._log: list[Any] = []
        self._log_base = 2
        self._watchers: dict[int, Watcher] = {}
        self._index = WatchIndex()
        self._next_watch_id = 0
        self._refused: list[WatchResponse] = []
        self._trackers: dict[tuple[str, ...], ChangeTracker] = {}
        self.history = History()
        # every change written, in order: its KeyValue's fingerprint (key, value, revisions, version)
        self._writes = hashlib.blake2b(digest_size=16)

    # --- state ------------------------------------------------------------------------

    @property
    def revision(self) -> int:
        return self._rev

    def digest(self) -> str:
        """Hex blake2b of every change written so far, in order: each key put or deleted, with its value's content
        (`kmodel.fingerprint`), revisions and version. Equal digests: the same writes, to the same values."""
        return self._writes.hexdigest()

    @property
    def compact_revision(self) -> int:
        """The revision of the last compaction, 0 if none."""
        return max(self._compact_rev, 0)

    def peek(self, key: str, range_end: Optional[str] = None, *, revision: int = 0) -> list[KeyValue]:
        """The live KeyValues in [key, range_end) in key order, now or (``revision`` > 0) as of that revision:
        what ``range(key, range_end, revision=revision).kvs`` would hold, without being a request.

        For readers that are not etcd clients (invariants, reports, the API server's reads of its informer
        caches in kmodel/apiserver/storeview.py): nothing goes on ``history``, no watcher, tracker or
        revision changes, and it never raises. ``range_end`` follows etcd: None for ``key`` alone,
        ``prefix_end(p)`` for a prefix, "\\0" for every key >= ``key``. A ``revision`` at or above the
        current one reads the current state. Below ``compact_revision`` the answer is what compaction kept:
        it may miss keys that were live then (etcd would refuse the read), never shows a wrong version. The
        list is the caller's; the KeyValues are the store's own, immutable."""
        if 0 < revision < self._rev:
            return self._keys.past(key, range_end, revision)
        if not range_end:
            kv = self._keys.latest.get(key)
            return [kv] if kv is not None else []
        return self._keys.current(key, range_end)[0]

    @property
    def live_key_count(self) -> int:
        """How many keys are live now (what a count_only range over every key would answer), without being a
        request: for readers that are not etcd clients, as `peek`."""
        return len(self._keys.live_keys)

    def _fail(self, request: Any, error: StoreError) -> None:
        self.history.append((request, error))
        raise error

    # --- KV ---------------------------------------------------------------------------

    def range(
        self,
        key: str,
        range_end: Optional[str] = None,
        *,
        revision: int = 0,
        limit: int = 0,
        count_only: bool = False,
        keys_only: bool = False,
    ) -> RangeResponse:
        request = _new(RangeOp, (key, range_end, revision, limit, count_only, keys_only))
        if not key:
            self._fail(request, errors.empty_key())
        if revision > self._rev:
            self._fail(request, errors.future_revision())
        if 0 < revision < self._compact_rev:
            self._fail(request, errors.compacted())
        response = self._range(request, self._rev, revision if 0 < revision < self._rev else 0)
        self.history.append((request, response))
        return response

    def _range(self, op: RangeOp, header_revision: int, past_revision: int) -> RangeResponse:
        """Answer ``op`` from the current state, or as of ``past_revision`` when it is not 0."""
        limit = op.limit
        if past_revision:
            kvs = self._keys.past(op.key, op.range_end, past_revision)
            count = len(kvs)
        else:
            # fetch one more than the limit to know whether there is more, as etcd does
            kvs, count = self._keys.current(op.key, op.range_end, limit + 1 if limit > 0 and not op.count_only else 0)
        if op.count_only:
            return _new(RangeResponse, (header_revision, [], count, False))
        more = False
        if limit > 0 and len(kvs) > limit:
            kvs = kvs[:limit]
            more = True
        if op.keys_only:
            kvs = [kv._replace(value=None) for kv in kvs]
        return _new(RangeResponse, (header_revision, kvs, count, more))

    def put(self, key: str, value: Any, *, prev_kv: bool = False) -> PutResponse:
        # A fast path: `_write_one` instead of the reference steps (_put, _commit, _notify; see ReferenceStore).
        request = _new(PutOp, (key, value, prev_kv))
        if not key:
            self._fail(request, errors.empty_key())
        old = self._keys.latest.get(key)
        rev = self._write_one(key, value, old)
        response = _new(PutResponse, (rev, old if prev_kv else None))
        self.history.append((request, response))
        return response

    def delete_range(self, key: str, range_end: Optional[str] = None, *, prev_kv: bool = False) -> DeleteRangeResponse:
        request = _new(DeleteOp, (key, range_end, prev_kv))
        if not key:
            self._fail(request, errors.empty_key())
        write = _Write(self._rev + 1)
        response = self._delete(write, request)
        self._commit(write)
        self.history.append((request, response))
        return response

    def txn(self, compare: Sequence[Compare], success: Sequence[Any], failure: Sequence[Any]) -> TxnResponse:
        compare, success, failure = tuple(compare), tuple(success), tuple(failure)
        if len(compare) == 1 and len(success) == 1 and len(failure) <= 1:
            fast = self._txn_one(compare, success, failure)
            if fast is not None:
                return fast
        return self._txn(_new(TxnRequest, (compare, success, failure)))

    def _txn(self, request: TxnRequest) -> TxnResponse:
        """The reference txn: any compares and branches."""
        try:
            check_txn_request(request.compare, request.success, request.failure)
        except StoreError as error:
            self._fail(request, error)
        succeeded = True
        for c in request.compare:  # etcd stops at the first compare that fails
            if not compare_holds(c, self._keys.current(c.key, c.range_end)[0]):
                succeeded = False
                break
        ops = request.success if succeeded else request.failure
        for op in ops:
            if isinstance(op, RangeOp) and op.revision:
                if op.revision > self._rev:
                    self._fail(request, errors.future_revision())
                if op.revision < self._compact_rev:
                    self._fail(request, errors.compacted())
        begin_rev = self._rev
        write = _Write(begin_rev + 1)
        responses = []
        for op in ops:
            if isinstance(op, PutOp):
                responses.append(self._put(write, op))
            elif isinstance(op, DeleteOp):
                responses.append(self._delete(write, op))
            else:
                # A range sees the txn's own writes; its header is the revision it read at.
                view_rev = write.rev if write.changes else begin_rev
                past = op.revision if op.revision > 0 and (write.changes or op.revision < begin_rev) else 0
                responses.append(self._range(op, view_rev, past))
        self._commit(write)
        response = _new(TxnResponse, (self._rev, succeeded, responses))
        self.history.append((request, response))
        return response

    def _txn_one(self, compare: tuple, success: tuple, failure: tuple) -> Optional[TxnResponse]:
        """A fast path: the API server's txn (one compare `c` on one key, one put `op`, else nothing or the
        read `otherwise` at the current revision) without the general machinery; None when the request is not
        exactly that shape (the reference `_txn` then handles it). Same checks, answer, history and watch
        events as `_txn` (a successful one is recorded compact: `History.record_txn_put`). Fields are read
        by index (Compare: key, target, result, value, range_end; PutOp: key, value, prev_kv; RangeOp: key,
        range_end, revision; KeyValue: key, value, create_revision, mod_revision, version): this is the write
        path of every API request."""
        c, op = compare[0], success[0]
        otherwise = failure[0] if failure else None
        if type(op) is not PutOp or c[4] or not c[0] or not op[0]:
            return None
        if otherwise is not None and (type(otherwise) is not RangeOp or not otherwise[0] or otherwise[2]):
            return None
        # check_txn_request has nothing to refuse here: keys are set and a single put cannot be a duplicate
        keys = self._keys
        latest = keys.latest
        compared = c[0]
        current = latest.get(compared)
        field = _REVISION_FIELDS.get(c[1]) if c[2] == "EQUAL" else None
        if field is not None:
            # the registry's compares (create_revision == 0, mod_revision == read), inlined
            holds = (current[field] if current is not None else 0) == c[3]
        else:
            holds = compare_holds(c, [current] if current is not None else [])
        if not holds:
            responses = [self._range(otherwise, self._rev, 0)] if otherwise is not None else []
            response = _new(TxnResponse, (self._rev, False, responses))
            self.history.append((_new(TxnRequest, (compare, success, failure)), response))
            return response
        key = op[0]
        old = current if key == compared else latest.get(key)
        rev = self._write_one(key, op[1], old)
        prev_kv = old if op[2] else None
        response = _new(TxnResponse, (rev, True, [_new(PutResponse, (rev, prev_kv))]))
        if type(c) is Compare:
            self.history.record_txn_put(c, op, failure, rev, prev_kv)
        else:
            self.history.append((_new(TxnRequest, (compare, success, failure)), response))
        return response

    def _write_one(self, key: str, value: Any, old: Optional[KeyValue]) -> int:
        """A fast path: a write request that puts one key (``old``: its live version, or None) and nothing
        else, all of its steps (the keyspace, the log, the trackers, the watchers) in one function; returns
        the new revision. The reference is `_put` then `_commit`."""
        rev = self._rev + 1
        keys = self._keys
        if old is None:
            kv = _new(KeyValue, (key, value, rev, rev, 1, 0))
            keys.record_put(kv, True)
        else:
            kv = _new(KeyValue, (key, value, old[2], rev, old[4] + 1, 0))  # (create_revision, version)
            keys.latest[key] = kv  # (Keyspace.record_put of a live key, inlined)
            keys.versions[key].append(kv)
            keys.touched[key] = None
        self._rev = rev
        self._log.append(kv)
        self._writes.update(fingerprint(kv))
        if self._trackers:
            self._track(key, rev)
        watchers = self._index.matching(key)
        if watchers:
            self._fan_out_one(watchers, kv, old, rev)
        return rev

    # --- the reference write steps ----------------------------------------------------

    # A write request (put, delete_range, txn) is: a `_Write` at the next revision; `_put` and `_delete` for
    # each of its ops, which change the keyspace and note the changes; then `_commit`, which raises the
    # revision, logs the changes and hands them to the watchers (`_notify`).

    def _put(self, write: _Write, op: PutOp) -> PutResponse:
        rev = write.rev
        old = self._keys.latest.get(op.key)
        if op.key not in write.before:
            write.before[op.key] = old
        if old is None:
            kv = _new(KeyValue, (op.key, op.value, rev, rev, 1, 0))
        else:
            kv = _new(KeyValue, (op.key, op.value, old.create_revision, rev, old.version + 1, 0))
        self._keys.record_put(kv, old is None)
        write.changes.append(kv)
        return _new(PutResponse, (rev, old if op.prev_kv else None))

    def _delete(self, write: _Write, op: DeleteOp) -> DeleteRangeResponse:
        rev = write.rev
        latest = self._keys.latest
        doomed = [latest[k] for k in self._keys.live_keys_in(op.key, op.range_end)]
        before = write.before
        for old in doomed:
            if old.key not in before:
                before[old.key] = old
            tombstone = _new(KeyValue, (old.key, None, 0, rev, 0, 0))
            self._keys.record_delete(tombstone)
            write.changes.append(tombstone)
        header = rev if write.changes else rev - 1
        return _new(DeleteRangeResponse, (header, len(doomed), doomed if op.prev_kv else []))

    def _commit(self, write: _Write) -> None:
        """End a write: if it changed anything, raise the revision, log and track the changes, notify."""
        if not write.changes:
            return
        self._rev = write.rev
        changes = write.changes
        self._log.append(changes[0] if len(changes) == 1 else tuple(changes))
        for kv in changes:
            self._writes.update(fingerprint(kv))
        if self._trackers:
            for kv in write.changes:
                self._track(kv.key, write.rev)
        self._notify(write)

    def deletion_revisions(self) -> list[int]:
        """The revisions not compacted yet that deleted at least one key, newest first (where a compaction leaves
        a watcher that resumes from before it no way to see the delete). Not an etcd call: a view of the log."""
        log, base = self._log, self._log_base
        return [base + i for i in range(len(log) - 1, -1, -1)
                if base + i > self._compact_rev and any(kv.version == 0 for kv in _changes_of(log[i]))]

    # --- change trackers ----------------------------------------------------------------

    @property
    def trackers(self) -> dict[tuple[str, ...], ChangeTracker]:
        """The trackers `track` made so far, by their prefixes (to read: an invariant must not make one)."""
        return self._trackers

    def track(self, prefixes: tuple[str, ...]) -> ChangeTracker:
        """A tracker whose ``revision`` is the last revision that changed a key starting with one of
        ``prefixes`` (0: none since tracking began). One tracker per distinct tuple of prefixes.

        For caches of answers computed from a few prefixes (the API server's RBAC decisions): an answer
        computed at tracker revision r holds while the revision is still r. Not an etcd feature, and
        nothing in etcd's API or history changes with it."""
        tracker = self._trackers.get(prefixes)
        if tracker is None:
            tracker = self._trackers[prefixes] = ChangeTracker(prefixes)
        return tracker

    def _track(self, key: str, rev: int) -> None:
        for tracker in self._trackers.values():
            if key.startswith(tracker.prefixes):
                tracker.revision = rev

    def compact(self, revision: int) -> CompactResponse:
        request = _new(CompactRequest, (revision,))
        if revision <= self._compact_rev:
            self._fail(request, errors.compacted())
        if revision > self._rev:
            self._fail(request, errors.future_revision())
        self._compact_rev = revision
        self._keys.compact(revision)
        # keep the log from `revision` on: a watch may still start exactly there
        drop = revision - self._log_base
        if drop > 0:
            del self._log[:drop]
            self._log_base = revision
        response = _new(CompactResponse, (self._rev,))
        self.history.append((request, response))
        return response

    # --- watch fan-out ----------------------------------------------------------------

    def _notify(self, write: _Write) -> None:
        """Hand a committed write's changes to the watchers: `_fan_out_one` when it changed one key (a fast
        path), else the reference `_fan_out`."""
        if len(write.changes) == 1:
            kv = write.changes[0]
            watchers = self._index.matching(kv.key)
            if watchers:
                self._fan_out_one(watchers, kv, write.before[kv.key], write.rev)
        else:
            self._fan_out(write)

    def _fan_out(self, write: _Write) -> None:
        """The reference fan-out: each watcher whose range holds a changed key and whose first revision has
        come gets one response for the revision, holding the events of its keys in change order; the event
        carries the key's state before the write as prev_kv when the watch asked for it."""
        rev = write.rev
        batches: dict[int, tuple[Watcher, list[KeyEvent]]] = {}  # by watch id, in the order first reached
        for kv in write.changes:
            kind = "PUT" if kv.version else "DELETE"
            for w in self._index.matching(kv.key):
                if rev < w.min_revision:
                    continue
                event = KeyEvent(kind, kv, write.before[kv.key] if w.prev_kv else None)
                batches.setdefault(w.id, (w, []))[1].append(event)
        for w, events in batches.values():
            w.pending.append(WatchResponse(w.id, rev, events))

    def _fan_out_one(self, watchers: list, kv: KeyValue, prev: Optional[KeyValue], rev: int) -> None:
        """A fast path of `_fan_out` for a write that changed one key (``prev``: its state before), to the
        ``watchers`` matching its key: one response with one event each, the two possible events (with and
        without prev_kv) built once and shared."""
        kind = "PUT" if kv[4] else "DELETE"  # (kv.version)
        plain = with_prev = None
        for w in watchers:
            if rev < w.min_revision:
                continue
            if w.prev_kv:
                if with_prev is None:
                    with_prev = _new(KeyEvent, (kind, kv, prev))
                event = with_prev
            else:
                if plain is None:
                    plain = _new(KeyEvent, (kind, kv, None))
                event = plain
            w.pending.append(_new(WatchResponse, (w.id, rev, [event], 0, False, "")))

    # --- watch API --------------------------------------------------------------------

    def watch(
        self,
        key: str,
        range_end: Optional[str] = None,
        *,
        start_revision: int = 0,
        prev_kv: bool = False,
        progress_notify: bool = False,
    ) -> int:
        """Start a watch; returns its id (ids count up from 0 and are never reused).

        A watch etcd refuses (range_end not after key) gets id -1 and its cancelled
        response is queued under -1, as etcd answers it with watch_id -1.
        """
        request = WatchRequest(key, range_end, start_revision, prev_kv, progress_notify)
        range_end = range_end or None
        if range_end is not None and range_end != "\0" and key >= range_end:
            refusal = WatchResponse(_REFUSED_WATCH_ID, self._rev, [], 0, True, errors.EMPTY_WATCHER_RANGE)
            self._refused.append(refusal)
            self.history.append((request, WatchCreated(_REFUSED_WATCH_ID, self._rev)))
            return _REFUSED_WATCH_ID
        watch_id = self._next_watch_id
        self._next_watch_id += 1
        first = start_revision if start_revision > 0 else self._rev + 1
        w = Watcher(watch_id, key, range_end, first, prev_kv, progress_notify)
        self._watchers[watch_id] = w
        self.history.append((request, WatchCreated(watch_id, self._rev)))
        if first < self._compact_rev:
            # etcd answers later, from its sync loop, with no header revision
            w.pending.append(WatchResponse(watch_id, 0, [], self._compact_rev, True, ""))
            w.active = False
            return watch_id
        if first <= self._rev:
            self._replay(w)
        self._index.add(w)
        return watch_id

    def _replay(self, w: Watcher) -> None:
        """Queue the events of revisions min_revision..current, as etcd's unsynced-watcher sync does."""
        keys = self._keys
        compact_rev = self._compact_rev
        batch: list[KeyEvent] = []
        revisions_in_batch = 0
        # revision 1 (the empty store) changed nothing; anything else below _log_base is compacted
        for rev in range(max(w.min_revision, self._log_base), self._rev + 1):
            found = False
            for kv in _changes_of(self._log[rev - self._log_base]):
                if not in_range(w.key, w.range_end, kv.key):
                    continue
                if rev == compact_rev and not keys.is_retained(kv):
                    continue  # physically compacted away in etcd's backend
                prev = None
                if w.prev_kv and rev - 1 >= compact_rev:
                    prev = keys.at(kv.key, rev - 1)
                batch.append(KeyEvent("PUT" if kv.version else "DELETE", kv, prev))
                found = True
            if found:
                revisions_in_batch += 1
                if revisions_in_batch == WATCH_BATCH_MAX_REVISIONS:
                    w.pending.append(WatchResponse(w.id, self._rev, batch))
                    batch, revisions_in_batch = [], 0
        if batch:
            w.pending.append(WatchResponse(w.id, self._rev, batch))
        w.min_revision = self._rev + 1

    def cancel_watch(self, watch_id: int) -> None:
        """Cancel a watch; etcd confirms with a cancelled response. Unknown or already
        cancelled ids get no answer, as in etcd. A watch cancelled by compaction can
        still be cancelled once (etcd keeps it registered until the client does)."""
        request = CancelWatchRequest(watch_id)
        w = self._watchers.get(watch_id)
        response = None
        if w is not None and w.cancellable:
            if w.active:
                self._index.remove(w)
                w.active = False
            w.cancellable = False
            response = WatchResponse(watch_id, self._rev, [], 0, True, "")
            w.pending.append(response)
        self.history.append((request, response))

    def request_progress(self, watch_id: int) -> None:
        """Queue a progress notification: no events, header = current revision.

        It promises every event up to that revision has been queued before it, which
        is always true here (our watchers never lag).
        """
        request = ProgressRequest(watch_id)
        w = self._watchers.get(watch_id)
        response = None
        if w is not None and w.active:
            response = WatchResponse(watch_id, self._rev, [])
            w.pending.append(response)
        self.history.append((request, response))

    def watcher(self, watch_id: int) -> Optional[Watcher]:
        """The watch ``watch_id`` (None if unknown), for a watch server to look at its queue (``pending``)
        without taking from it. Read-only: take responses with ``take_watch_responses``."""
        return self._watchers.get(watch_id)

    def take_watch_responses(self, watch_id: int) -> list[WatchResponse]:
        """Return and clear the responses queued for ``watch_id`` (-1: refused watches)."""
        if watch_id == _REFUSED_WATCH_ID:
            taken, self._refused = self._refused, []
            return taken
        w = self._watchers.get(watch_id)
        if w is None:
            return []
        taken, w.pending = w.pending, []
        if not w.cancellable:
            del self._watchers[watch_id]  # nothing more can ever reach it
        return taken
