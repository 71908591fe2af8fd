"""The second etcd client's actions: requests that the cluster's etcd gets from a client other than the API
servers, straight to the store (as `Compact` reaches it), never over the model's network.

Real clusters have such clients: a backup tool or an administrator with etcdctl (`etcdctl get --prefix
--keys-only /registry`, `etcdctl watch`, `etcdctl compact`), and components that keep their own data in the
same etcd under a prefix of their own, with txns and watches (Calico and flannel in etcd mode). They use the
etcd API the API servers never do: range limits, keys-only and count-only reads, reads at a past revision,
from-key ranges, compares on a value, a version, a create revision or a lease, txns whose else-branch runs,
watches from a past revision with prev_kv and progress requests, compaction at a revision of their choosing.
etcd answers each as it answers anyone; a request it refuses is answered with its error (a `StoreError`),
which is the client's to handle, never the cluster's.

What the client may not do is write: the API server owns /registry, and the invariants that judge the API as
the single contract (`api-single-contract`, `refused-request-changes-nothing`) take every new store revision
for an API server's write. So every request here writes nothing: its txns compare and read, or are refused
before they run (a duplicate key, too many operations, a missing key), and delete only in its own prefix,
where nothing is ever put. Compaction writes no revision.

Each action says what to send in small numbers and names (an index into a table listed simplest first); the
revisions it reads at are taken from the store when it runs (`revision_at`), so a trace replays the same
requests on the same model. The requests, and etcd's answers, go on the store's history as any client's.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import attrs

from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default, earlier, fewer
from kmodel.loop.events import at_least
from kmodel.store.errors import StoreError
from kmodel.store.txn_rules import MAX_TXN_OPS
from kmodel.store.types import Compare, DeleteOp, PutOp, RangeOp, prefix_end

#: the client's own prefix (Calico's IPAM data in etcd mode); nothing is ever put there
OWN_PREFIX = "/calico/ipam/v2/"
#: a key of its own: an IPAM block (absent: the client only ever reads and deletes)
OWN_KEY = OWN_PREFIX + "assignment/ipv4/block/10.244.0.0-26"
REGISTRY = "/registry/"
PODS = "/registry/pods/"
#: what a read or a watch covers, simplest first: (key, range_end) of etcd's range
RANGES: dict[str, tuple[str, Optional[str]]] = {
    "own-key": (OWN_KEY, None),  # etcdctl get KEY
    "own-prefix": (OWN_PREFIX, prefix_end(OWN_PREFIX)),  # etcdctl get --prefix
    "registry": (REGISTRY, prefix_end(REGISTRY)),  # a backup's read of every object
    "pods-from-key": (PODS, "\0"),  # etcdctl get --from-key /registry/pods/
    "empty": (PODS, REGISTRY),  # a range_end before the key: nothing (a watch of it is refused)
    "no-key": ("", None),  # a client's mistake: etcd answers "key is not provided"
}
RANGE_NAMES: tuple[str, ...] = tuple(RANGES)
#: the revision a request names, simplest first: none (the newest), a few behind the newest, below the last
#: compaction (refused: compacted), one past the newest (refused: a future revision)
REVISIONS: tuple[str, ...] = ("now", "past", "compacted", "future")
#: how far behind the newest a `past` revision is
PAST = 5
#: the longest limit a read draws (0: none)
MAX_LIMIT = 3
#: compare targets and results (etcd's Compare.CompareTarget and CompareResult)
TARGETS: tuple[str, ...] = ("MOD", "CREATE", "VERSION", "VALUE", "LEASE")
RESULTS: tuple[str, ...] = ("EQUAL", "NOT_EQUAL", "LESS", "GREATER")
#: what a compare is made against, simplest first: a /registry key's current state (a client's consistent
#: snapshot; a value compare is made on its own key instead), the client's own absent key, every key of its own
#: prefix (a compare with a range_end)
COMPARED: tuple[str, ...] = ("registry-key", "own-key", "own-prefix")
#: the value a compare expects: the compared key's current field (zero, or b"" for a value, when absent), or
#: one more (a value that is not it)
EXPECT: tuple[str, ...] = ("current", "other")
#: a txn's then-branch, simplest first; the refused ones are refused before any compare (etcd's checkTxnRequest)
THEN: tuple[str, ...] = ("read", "read-past", "delete-own", "read-future", "read-compacted", "duplicate-put",
                         "put-in-delete", "too-many", "no-key")
#: a txn's else-branch
OTHERWISE: tuple[str, ...] = ("nothing", "read", "read-past")


def revision_at(store: Any, kind: str) -> int:
    """The revision `kind` (one of REVISIONS) names in `store` now (0: the newest)."""
    newest, compacted = store.revision, store.compact_revision
    if kind == "now":
        return 0
    if kind == "past":
        return max(compacted, newest - PAST, 1)
    if kind == "compacted":
        return compacted - 1 if compacted > 1 else max(newest - PAST, 1)
    if kind == "future":
        return newest + 1
    raise ValueError(f"unknown revision kind {kind!r}; known: {', '.join(REVISIONS)}")


def _answered(request: Any) -> Optional[StoreError]:
    """Send `request` (a call of the store): None when etcd answered, its error when it refused."""
    try:
        request()
    except StoreError as error:
        return error
    return None


@attrs.frozen
class EtcdRange(Action):
    """A second client's read of `over` (RANGES) at a revision (REVISIONS), with a limit, keys only or count
    only: `etcdctl get [--prefix|--from-key] [--rev R] [--limit N] [--keys-only] [--count-only]`."""

    kind: ClassVar[str] = "etcd-range"
    simplest: ClassVar[Simplest] = (("over", earlier(RANGE_NAMES)), ("at", earlier(REVISIONS)),
                                    ("limit", fewer(0)), ("keys_only", default(False)),
                                    ("count_only", default(False)))
    over: str
    at: str = "now"
    limit: int = at_least(0, default=0)
    keys_only: bool = False
    count_only: bool = False

    def __attrs_post_init__(self) -> None:
        _check(self.over, RANGE_NAMES, "over")
        _check(self.at, REVISIONS, "at")

    @property
    def name(self) -> str:
        options = [f"--rev {self.at}" if self.at != "now" else "", f"--limit {self.limit}" if self.limit else "",
                   "--keys-only" if self.keys_only else "", "--count-only" if self.count_only else ""]
        return " ".join(["etcdctl get", self.over, *filter(None, options)])

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        key, range_end = RANGES[self.over]
        revision = revision_at(store, self.at)
        _answered(lambda: store.range(key, range_end, revision=revision, limit=self.limit,
                                      keys_only=self.keys_only, count_only=self.count_only))


@attrs.frozen
class EtcdWatch(Action):
    """A second client's watch of `over` from a revision, with prev_kv and a progress request: etcd queues what
    it has (the events since that revision, or the watch's cancellation: compacted, or a range that is empty),
    the client takes it and cancels the watch (`etcdctl watch --rev R --prev-kv`, then Ctrl-C)."""

    kind: ClassVar[str] = "etcd-watch"
    simplest: ClassVar[Simplest] = (("over", earlier(RANGE_NAMES[:-1])), ("start", earlier(REVISIONS[:3])),
                                    ("prev_kv", default(False)), ("progress", default(False)))
    over: str
    start: str = "now"
    prev_kv: bool = False
    progress: bool = False

    def __attrs_post_init__(self) -> None:
        _check(self.over, RANGE_NAMES[:-1], "over")  # etcdctl watch always names a key
        _check(self.start, REVISIONS[:3], "start")  # a watch from a future revision waits: nothing to see here

    @property
    def name(self) -> str:
        options = [f"--rev {self.start}" if self.start != "now" else "", "--prev-kv" if self.prev_kv else "",
                   "--progress-notify" if self.progress else ""]
        return " ".join(["etcdctl watch", self.over, *filter(None, options)])

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        key, range_end = RANGES[self.over]
        watch_id = store.watch(key, range_end, start_revision=revision_at(store, self.start), prev_kv=self.prev_kv,
                               progress_notify=self.progress)
        if self.progress:
            store.request_progress(watch_id)
        store.take_watch_responses(watch_id)  # the replay, or the cancellation etcd answered with
        store.cancel_watch(watch_id)
        store.take_watch_responses(watch_id)


@attrs.frozen
class EtcdTxn(Action):
    """A second client's txn: `compared` (COMPARED) compared on `target` by `result` with what `expect` says,
    then `then` (THEN) or `otherwise` (OTHERWISE). Writes nothing (see the module docstring)."""

    kind: ClassVar[str] = "etcd-txn"
    simplest: ClassVar[Simplest] = (("compared", earlier(COMPARED)), ("target", earlier(TARGETS)),
                                    ("result", earlier(RESULTS)), ("expect", earlier(EXPECT)),
                                    ("then", earlier(THEN)), ("otherwise", earlier(OTHERWISE)),
                                    ("key", fewer(0)))
    compared: str
    target: str = "MOD"
    result: str = "EQUAL"
    expect: str = "current"
    then: str = "read"
    otherwise: str = "nothing"
    key: int = at_least(0, default=0)  # which /registry key a "registry-key" compare names (modulo the keys there are)

    def __attrs_post_init__(self) -> None:
        for value, domain, field in ((self.compared, COMPARED, "compared"), (self.target, TARGETS, "target"),
                                     (self.result, RESULTS, "result"), (self.expect, EXPECT, "expect"),
                                     (self.then, THEN, "then"), (self.otherwise, OTHERWISE, "otherwise")):
            _check(value, domain, field)

    @property
    def name(self) -> str:
        return (f"etcdctl txn: if {self.compared} {self.target} {self.result} {self.expect} then {self.then} "
                f"else {self.otherwise}")

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        compare = self._compare(store)
        then, otherwise = self._ops(store, self.then), self._ops(store, self.otherwise)
        _answered(lambda: store.txn([compare], then, otherwise))

    def _compare(self, store: Any) -> Compare:
        # a stored object is a value the model keeps as an object, not etcd's bytes, which have an order: a value
        # compare is made on the client's own key (absent: etcd fails a value compare on a missing key)
        if self.compared == "registry-key" and self.target != "VALUE":
            keys = [kv.key for kv in store.peek(REGISTRY, prefix_end(REGISTRY))]
            key, range_end = (keys[self.key % len(keys)] if keys else OWN_KEY), None
        elif self.compared == "own-key":
            key, range_end = OWN_KEY, None
        else:
            key, range_end = OWN_PREFIX, prefix_end(OWN_PREFIX)
        found = store.peek(key, range_end)
        current = found[0] if found else None
        if self.target == "VALUE":
            value: Any = current.value if current is not None else b""
            if self.expect == "other":
                value = b"not-" + value if isinstance(value, bytes) else b"other"
        else:
            field = {"MOD": "mod_revision", "CREATE": "create_revision", "VERSION": "version", "LEASE": "lease"}
            value = getattr(current, field[self.target]) if current is not None else 0
            value += self.expect == "other"
        return Compare(key, self.target, self.result, value, range_end)

    @staticmethod
    def _ops(store: Any, branch: str) -> list[Any]:
        """The operations of a branch (THEN or OTHERWISE)."""
        own = (OWN_PREFIX, prefix_end(OWN_PREFIX))
        if branch == "nothing":
            return []
        if branch == "read":
            return [RangeOp(*own, limit=1)]
        if branch in ("read-past", "read-future", "read-compacted"):
            revision = revision_at(store, branch.partition("-")[2])
            return [RangeOp(PODS, prefix_end(PODS), revision=revision, keys_only=True), RangeOp(*own)]
        if branch == "delete-own":
            return [DeleteOp(*own, prev_kv=True), RangeOp(*own, count_only=True)]
        if branch == "duplicate-put":
            return [PutOp(OWN_KEY, b"a"), PutOp(OWN_KEY, b"b")]
        if branch == "put-in-delete":
            return [DeleteOp(*own), PutOp(OWN_KEY, b"a")]
        if branch == "too-many":
            return [RangeOp(OWN_KEY)] * (MAX_TXN_OPS + 1)
        if branch == "no-key":
            return [RangeOp("")]
        raise ValueError(f"unknown txn branch {branch!r}")


@attrs.frozen
class EtcdCompact(Action):
    """An administrator's `etcdctl compact R` at a revision (REVISIONS): a few behind the newest, at or below the
    last compaction (refused: compacted), or past the newest (refused: a future revision)."""

    kind: ClassVar[str] = "etcd-compact"
    simplest: ClassVar[Simplest] = (("at", earlier(REVISIONS[1:])),)
    at: str = "past"

    def __attrs_post_init__(self) -> None:
        _check(self.at, REVISIONS[1:], "at")

    @property
    def name(self) -> str:
        return f"etcdctl compact {self.at}"

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        revision = store.compact_revision if self.at == "compacted" else revision_at(store, self.at)
        _answered(lambda: store.compact(revision))


def _check(value: str, domain: tuple[str, ...], field: str) -> None:
    if value not in domain:
        raise ValueError(f"{field} {value!r} is not one of {', '.join(domain)}")


