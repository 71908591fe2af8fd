"""Reading the store's history incrementally: what each request changed, and small mirrors of the keyspace.

Invariants only read. Each one that needs the store's changes keeps a feed in its memo (`change_feed`) and
calls `read(store)` after every step: it returns one `Change` per key a write request changed since the last
call, under the feed's key prefixes, in the order the store made them. Behind the feeds, a `HistoryReader`
walks only the `store.history` records appended since it last read. The reader keeps a mirror of the live
keys (value, mod_revision, version), so a change knows what it replaced (a deletion of a range is expanded to
the keys the mirror has in it) and so invariants can look objects up without a scan (`value`).

The invariants of one run share one reader (`SharedChanges`, in the run's shared memo, registry.SHARED): each
history record is decoded once, not once per invariant, and each feed keeps its own position in the shared
list of changes. A memo without the shared dict (a test calling an invariant with `{}`) gets a reader of its
own; the changes a feed returns are the same either way.

The mirror is built from the history alone (never from the store's internals), so it is an independent
account of the store: a store whose state disagreed with its own history would show.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple, Optional

from kmodel.invariants import _paths
from kmodel.invariants.registry import SHARED
from kmodel.store.compact_log import CompactLog
from kmodel.store.history import TXN_PUT_COMPARE, TXN_PUT_KEY, TXN_PUT_REVISION, TXN_PUT_VALUE
from kmodel.store.history import is_compact as is_compact_txn_put
from kmodel.store.types import (
    DeleteOp,
    DeleteRangeResponse,
    PutOp,
    PutResponse,
    TxnRequest,
    TxnResponse,
)


class Change(NamedTuple):
    rev: int  # the revision the write created
    key: str
    value: Any  # None for a deletion
    prev: Any  # the value replaced (None: the key did not exist)
    prev_mod: int  # the mod_revision of the value replaced (0: the key did not exist)
    index: int  # the position of the request in store.history
    request: Any  # None for a txn put the history keeps compact (see `compare`)
    response: Any  # None for a txn put the history keeps compact
    #: a txn put the history keeps compact (kmodel.store.history: a txn that succeeded with one Compare and one
    #: PutOp, read here without building its request and response): its Compare's fields (key, target, result,
    #: value, range_end); None for any other write
    compare: Any = None


def _in_range(key: str, start: str, end: Optional[str]) -> bool:
    if end is None:
        return key == start
    if end == "\0":
        return key >= start
    return start <= key < end


class HistoryReader:
    """See the module docstring. `prefixes`: keep in the mirror (and report) only keys under these."""

    __slots__ = ("pos", "live", "prefixes", "last_write_rev")

    def __init__(self, prefixes: tuple[str, ...] = ("",)) -> None:
        self.pos = 0
        # key -> (value, mod_revision, version) of every live key (under the prefixes)
        self.live: dict[str, tuple[Any, int, int]] = {}
        self.prefixes = prefixes
        self.last_write_rev = 1

    def value(self, key: str) -> Any:
        entry = self.live.get(key)
        return None if entry is None else entry[0]

    def read(self, store: Any) -> list[Change]:
        history = store.history
        start, end = self.pos, len(history)
        if start == end:
            return []
        self.pos = end
        changes: list[Change] = []
        entries = history[start:end] if _paths.REFERENCE else stored_since(history, start, end)
        for i, entry in enumerate(entries, start):
            if is_compact_txn_put(entry):  # its fields as stored (kmodel.store.history.record_txn_put)
                self._put(changes, entry[TXN_PUT_KEY], entry[TXN_PUT_VALUE], entry[TXN_PUT_REVISION], i, None, None,
                          entry[TXN_PUT_COMPARE])
                continue
            request, response = entry
            rtype = type(request)
            if rtype is TxnRequest:
                if type(response) is not TxnResponse:
                    continue
                ops = request.success if response.succeeded else request.failure
                if not any(type(op) is not _RANGE for op in ops):
                    continue
                self._apply(changes, ops, response.header_revision, response.responses, i, request, response)
            elif rtype is PutOp:
                if type(response) is PutResponse:
                    self._apply(changes, (request,), response.header_revision, (response,), i, request, response)
            elif rtype is DeleteOp:
                if type(response) is DeleteRangeResponse and response.deleted:
                    self._apply(changes, (request,), response.header_revision, (response,), i, request, response)
        return changes

    def _apply(self, changes: list, ops: Iterable, rev: int, responses: Any, index: int, request: Any,
               response: Any) -> None:
        live = self.live
        prefixes = self.prefixes
        for op, res in zip(ops, responses):
            t = type(op)
            if t is PutOp:
                self._put(changes, op.key, op.value, rev, index, request, response, None)
            elif t is DeleteOp:
                if not getattr(res, "deleted", 0):
                    continue
                self.last_write_rev = rev
                if op.range_end is None:
                    doomed = [op.key] if op.key in live else []
                else:
                    doomed = sorted(k for k in live if _in_range(k, op.key, op.range_end))
                for key in doomed:
                    old = live.pop(key)
                    changes.append(Change(rev, key, None, old[0], old[1], index, request, response))

    def _put(self, changes: list, key: str, value: Any, rev: int, index: int, request: Any, response: Any,
             compare: Any) -> None:
        self.last_write_rev = rev
        live = self.live
        old = live.get(key)
        if not key.startswith(self.prefixes):
            return
        if old is None:
            live[key] = (value, rev, 1)
            changes.append(Change(rev, key, value, None, 0, index, request, response, compare))
        else:
            live[key] = (value, rev, old[2] + 1)
            changes.append(Change(rev, key, value, old[0], old[1], index, request, response, compare))


from kmodel.store.types import RangeOp as _RANGE  # noqa: E402  (after the class, to keep the reader on top)

_WRITE_RESPONSES = (PutResponse, DeleteRangeResponse, TxnResponse)


class WriteReader:
    """The revisions the store's writes created, read incrementally from `store.history`: (revision, index) for
    each request that made a new revision, in order, `index` its position in the history. No mirror of the
    keyspace (for an invariant that needs only which revisions exist, not what they changed): the store's
    revision grows by one per write, so a write is a put, delete or txn response whose header revision is newer
    than every earlier one."""

    __slots__ = ("pos", "last")

    def __init__(self) -> None:
        self.pos = 0
        self.last = 1  # a new store is at revision 1

    def read(self, store: Any) -> list[tuple[int, int]]:
        history = store.history
        start, end = self.pos, len(history)
        if start == end:
            return []
        self.pos = end
        found = []
        last = self.last
        entries = history[start:end] if _paths.REFERENCE else stored_since(history, start, end)
        for i, entry in enumerate(entries, start):
            if is_compact_txn_put(entry):  # a TxnResponse at its revision
                if entry[TXN_PUT_REVISION] > last:
                    last = entry[TXN_PUT_REVISION]
                    found.append((last, i))
                continue
            response = entry[1]
            if type(response) in _WRITE_RESPONSES and response.header_revision > last:
                last = response.header_revision
                found.append((last, i))
        self.last = last
        return found


def audit_since(cluster: Any, memo: dict, start: int, end: int) -> Any:
    """The audit records `start` to `end` (cluster.audit.records[start:end]). The invariants and sometimes
    properties of a run read the trail from the same place after each step, so the first to ask reads the
    records (the trail builds each from its compact entry) and the others get that same list from the run's
    shared dict (registry.SHARED): one reading per step, not one per reader. The trail only grows and a record
    never changes, so a range read once reads the same for ever. Read-only: never change the list."""
    records = cluster.audit.records
    home = memo.get(SHARED)
    if home is None or _paths.REFERENCE:
        return records[start:end]
    cached = home.get("audit")
    if cached is not None and cached[0] is records and cached[1] == start and cached[2] == end:
        return cached[3]
    read = records[start:end]
    home["audit"] = (records, start, end, read)
    return read


def stored_since(log: Any, start: int, end: Optional[int] = None) -> list:
    """The entries of `log` from `start` on as the log stores them: for a `CompactLog` (kmodel.store.compact_log:
    the store's history, an API server's etcd watch log, the audit trail) its compact entries are left compact,
    not built into the objects they stand for (which the log would then keep for the rest of the run); the
    reader interprets them itself. Any other sequence: its entries."""
    return log.stored(start, end) if isinstance(log, CompactLog) else list(log[start:end])


class SharedChanges:
    """One `HistoryReader` over every key and the changes it has read, in order (see the module docstring), and
    the last stretch of them each set of prefixes was read for: the feeds of a run read after every step, from
    the same place, so feeds with the same prefixes get the same list, filtered once."""

    __slots__ = ("reader", "changes", "filtered")

    def __init__(self) -> None:
        self.reader = HistoryReader()
        self.changes: list[Change] = []
        # prefixes -> (start, end, the changes start:end under those prefixes)
        self.filtered: dict[tuple[str, ...], tuple[int, int, list[Change]]] = {}

    def update(self, store: Any) -> None:
        if self.reader.pos != len(store.history):
            self.changes.extend(self.reader.read(store))


class ChangeFeed:
    """One invariant's view of the shared changes: those under `prefixes` it has not read yet."""

    __slots__ = ("shared", "prefixes", "pos")

    def __init__(self, shared: SharedChanges, prefixes: tuple[str, ...]) -> None:
        self.shared = shared
        self.prefixes = prefixes
        self.pos = 0  # changes of `shared` already returned

    def read(self, store: Any) -> list[Change]:
        """The changes under this feed's prefixes since its last read, in order (read-only: other feeds may get
        the same list)."""
        shared = self.shared
        shared.update(store)
        changes = shared.changes
        start, end = self.pos, len(changes)
        if start == end:
            return []
        self.pos = end
        prefixes = self.prefixes
        if _paths.REFERENCE:
            return self._filter(changes, start, end)
        last = shared.filtered.get(prefixes)
        if last is not None and last[0] == start and last[1] == end:
            return last[2]  # read for another feed with these prefixes (the list is read-only)
        found = self._filter(changes, start, end)
        shared.filtered[prefixes] = (start, end, found)
        return found

    def _filter(self, changes: list[Change], start: int, end: int) -> list[Change]:
        prefixes = self.prefixes
        if prefixes == ("",):
            return changes[start:end]
        return [ch for ch in changes[start:end] if ch.key.startswith(prefixes)]

    def value(self, key: str) -> Any:
        """The live value of `key` in the mirror (None: no such key), as of the newest history read."""
        return self.shared.reader.value(key)

    def has_news(self, store: Any) -> bool:
        """Would `read` return anything (or has the store written since)?"""
        return self.shared.reader.pos != len(store.history) or self.pos != len(self.shared.changes)


def change_feed(memo: dict, prefixes: tuple[str, ...] = ("",)) -> ChangeFeed:
    """A new feed over the run's shared reader (registry.SHARED in `memo`), or over a reader of its own."""
    home = memo.get(SHARED)
    if home is None:
        return ChangeFeed(SharedChanges(), prefixes)
    shared = home.get("history")
    if shared is None:
        shared = home["history"] = SharedChanges()
    return ChangeFeed(shared, prefixes)


def kept_ledger(memo: dict, prefixes: tuple[str, ...], make: Callable[[], Any]) -> tuple[Any, ChangeFeed]:
    """The ledger an invariant keeps in its memo for the run (`make()` the first time) and its change feed over
    `prefixes`, for the invariant to read the new changes into."""
    ledger = memo.get("ledger")
    if ledger is None:
        ledger = memo["ledger"] = make()
        memo["feed"] = change_feed(memo, prefixes)
    return ledger, memo["feed"]


def describe_write(request: Any, response: Any) -> str:
    """'put <key>' or 'delete <key>' for the first write a put, delete or txn request made (for messages)."""
    if type(request) is TxnRequest:
        ops = request.success if response.succeeded else request.failure
    else:
        ops = (request,)
    for op in ops:
        if type(op) is PutOp:
            return f"put {op.key}"
        if type(op) is DeleteOp:
            return f"delete {op.key}"
    return type(request).__name__


# -- object helpers ----------------------------------------------------------------------------------------

PODS = "/registry/pods/"
NODES = "/registry/minions/"
NAMESPACES = "/registry/namespaces/"
LEASES = "/registry/leases/"


def node_key(name: str) -> str:
    return NODES + name


def pod_ips(pod: Any) -> tuple[str, ...]:
    status = pod.status
    ips = tuple(p.ip for p in status.pod_ips if p.ip)
    if not ips and status.pod_ip:
        ips = (status.pod_ip,)
    return ips


def is_terminal(pod: Any) -> bool:
    return pod.status.phase in ("Succeeded", "Failed")


def node_cidrs(node: Any) -> tuple[str, ...]:
    spec = node.spec
    return tuple(spec.pod_cidrs) or ((spec.pod_cidr,) if spec.pod_cidr else ())


def condition(obj: Any, kind: str) -> Any:
    for c in obj.status.conditions:
        if c.type == kind:
            return c
    return None


def name_of(key: str) -> str:
    """"/registry/pods/default/web-1" -> "default/web-1"; "/registry/minions/node-1" -> "node-1"."""
    parts = key.split("/")
    if len(parts) == 5:
        return f"{parts[3]}/{parts[4]}"
    if len(parts) == 4:
        return parts[3]
    return key
