"""The second etcd client's actions: requests that the cluster's etcd gets from a client other than the API
servers, straight to the store (as `Compact` reaches it), never over the model's network.

Real clusters have such clients: a backup tool or an administrator with etcdctl (`etcdctl get --prefix
--keys-only /registry`, `etcdctl watch`, `etcdctl compact`), and components that keep their own data in the
same etcd under a prefix of their own, with txns and watches (Calico and flannel in etcd mode). They use the
etcd API the API servers never do: range limits, keys-only and count-only reads, reads at a past revision,
from-key ranges, compares on a value, a version, a create revision or a lease, txns whose else-branch runs,
watches from a past revision with prev_kv and progress requests, compaction at a revision of their choosing,
compare-and-swap txns that lose to a write they did not see (libcalico-go's update of an IPAM block: compare
the mod revision it read, then put, else get), deletes of their own keys. etcd answers each as it answers
anyone; a request it refuses is answered with its error (a `StoreError`), which is the client's to handle,
never the cluster's.

Such a component also keeps watches open (Calico's Felix watches its prefix for as long as it runs): a watch
drawn with `keep` stays open across steps and gets the API servers' writes as they happen, up to KEPT_WATCHES
at a time (the next one replaces the oldest, opened before the oldest is cancelled, as a client re-watching
does), and each of the client's later requests first reads what its kept watches were sent. Which watches it
keeps is the client's own memory, held beside the store it talks to (`kept_watches`), not in the model.

What the client may not do is write: the API server owns /registry, and the invariants that judge the API as
the single contract (`api-single-contract`, `refused-request-changes-nothing`) take every new store revision
for an API server's write. So every request here writes nothing: its txns compare and read, or are refused
before they run (a duplicate key, too many operations, a missing key), and delete only in its own prefix,
where nothing is ever put; its compare-and-swap names a revision or value its own absent key never has, so it
always loses. Compaction writes no revision.

Each action says what to send in small numbers and names (an index into a table listed simplest first); the
revisions it reads at are taken from the store when it runs (`revision_at`), so a trace replays the same
requests on the same model. The requests, and etcd's answers, go on the store's history as any client's.
"""

from __future__ import annotations

import weakref
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
#: its IPAM blocks: a prefix longer than many /registry keys (the watch index looks a key up per prefix length)
OWN_BLOCKS = OWN_PREFIX + "assignment/ipv4/block/"
#: a key of its own: an IPAM block (absent: the client only ever reads and deletes)
OWN_KEY = OWN_BLOCKS + "10.244.0.0-26"
REGISTRY = "/registry/"
PODS = "/registry/pods/"
#: the Nodes' prefix: the API server keeps Nodes under /registry/minions/ (the node registry's NewREST prefix,
#: kmodel.apiserver.resources), so a read of it finds every Node, more than a limit of 1 or 2
NODES = "/registry/minions/"
#: the RBAC Roles' prefix: as long as OWN_PREFIX (16 characters), so that watches of both share one prefix length
ROLES = "/registry/roles/"
#: the range `etcdctl get "" --prefix` reads: clientv3's WithPrefix of an empty key, every key (see `key_range`)
EVERY_KEY = "every-key"
#: what a read or a watch covers, simplest first: (key, range_end) of etcd's range
RANGES: dict[str, tuple[str, Optional[str]]] = {
    "own-key": (OWN_KEY, None),  # etcdctl get KEY
    "own-prefix": (OWN_PREFIX, prefix_end(OWN_PREFIX)),  # etcdctl get --prefix
    "own-blocks": (OWN_BLOCKS, prefix_end(OWN_BLOCKS)),  # the IPAM blocks
    "registry": (REGISTRY, prefix_end(REGISTRY)),  # a backup's read of every object
    "nodes": (NODES, prefix_end(NODES)),  # a monitor's read of the Nodes
    "roles": (ROLES, prefix_end(ROLES)),  # an auditor's read of the RBAC Roles
    EVERY_KEY: ("\0", "\0"),  # etcdctl get "" --prefix: every key (a backup of the whole keyspace)
    "pods-from-key": (PODS, "\0"),  # etcdctl get --from-key /registry/pods/
    "empty": (PODS, REGISTRY),  # a range_end before the key: nothing (a watch of it is refused)
    "no-key": ("", None),  # a client's mistake: etcd answers "key is not provided"
}
RANGE_NAMES: tuple[str, ...] = tuple(RANGES)
#: the revision a request names, simplest first: none (the newest), a few behind the newest, below the last
#: compaction (refused: compacted), one past the newest (refused: a future revision)
REVISIONS: tuple[str, ...] = ("now", "past", "compacted", "future")
#: where a watch starts, simplest first: REVISIONS' first three, the last compaction's revision itself (etcd
#: replays from there, without what compaction removed), a few revisions ahead of the newest (it waits for them)
WATCH_STARTS: tuple[str, ...] = ("now", "past", "compacted", "compaction", "ahead")
#: how far behind the newest a `past` revision is, and ahead of it an `ahead` one
PAST = 5
#: how many watches the client keeps open at once (EtcdWatch.keep)
KEPT_WATCHES = 2
#: the longest limit a read draws (0: none)
MAX_LIMIT = 3
#: compare targets and results (etcd's Compare.CompareTarget and CompareResult)
TARGETS: tuple[str, ...] = ("MOD", "CREATE", "VERSION", "VALUE", "LEASE")
RESULTS: tuple[str, ...] = ("EQUAL", "NOT_EQUAL", "LESS", "GREATER")
#: what a compare is made against, simplest first: a /registry key's current state (a client's consistent
#: snapshot; a value compare LESS or GREATER is made on its own key instead), the client's own absent key, every
#: key of its own prefix (a compare with a range_end), every Node (a compare with a range_end over keys that
#: are there: each must pass, and the first that does not fails the txn), no key (refused: "key is not provided")
COMPARED: tuple[str, ...] = ("registry-key", "own-key", "own-prefix", "nodes", "no-key")
#: the value a compare expects: the compared key's current field (zero, or b"" for a value, when absent), or
#: one more (a value that is not it)
EXPECT: tuple[str, ...] = ("current", "other")
#: a txn's then-branch, simplest first; the refused ones are refused before any compare (etcd's checkTxnRequest)
THEN: tuple[str, ...] = ("read", "read-past", "delete-own", "read-future", "read-compacted", "duplicate-put",
                         "put-in-delete", "put-deleted-key", "too-many", "no-key")
#: a txn's else-branch; "no-key" is refused before any compare, like the then-branch's; "read-future" once a
#: compare has failed (etcd checks the revisions of the branch it runs only)
OTHERWISE: tuple[str, ...] = ("nothing", "read", "read-past", "no-key", "read-future")
#: what a compare-and-swap guards its write with (EtcdCas): the mod revision it read (libcalico-go's update and
#: delete), or the value it read (a put if the value is still what the client last saw)
GUARDS: tuple[str, ...] = ("mod", "value")
#: what a compare-and-swap does when its guard holds (it never does: see EtcdCas), then when it fails
SWAPS: tuple[str, ...] = ("put", "delete")
CAS_ELSE: tuple[str, ...] = ("get", "get-at-read")
#: when the client read what a compare-and-swap guards: a few revisions back, or before the last compaction (a
#: client that was away for a while)
CAS_READ: tuple[str, ...] = ("past", "compacted")
#: what an `etcdctl del` names, simplest first
DELETES: tuple[str, ...] = ("own-key", "own-prefix", "no-key")

#: the watches the second client keeps open on each store (EtcdWatch.keep), oldest first: its own memory, which
#: a replay rebuilds as it replays the same requests on a new store
_KEPT: "weakref.WeakKeyDictionary[Any, list[int]]" = weakref.WeakKeyDictionary()


def kept_watches(store: Any) -> list[int]:
    """The ids of the watches the second client keeps open on `store`, oldest first (the client's own list)."""
    return _KEPT.setdefault(store, [])


def _read_kept(store: Any) -> None:
    """The client reads what its kept watches were sent since it last looked (the client's first move in every
    request: its watch streams are read as they arrive)."""
    for watch_id in _KEPT.get(store, ()):
        store.take_watch_responses(watch_id)


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
    if kind == "compaction":
        return compacted if compacted else max(newest - PAST, 1)
    if kind == "ahead":
        return newest + PAST
    raise ValueError(f"unknown revision kind {kind!r}; known: {', '.join(WATCH_STARTS + REVISIONS[3:])}")


def key_range(over: str) -> tuple[str, Optional[str]]:
    """The (key, range_end) a request over `over` (RANGES) sends; EVERY_KEY's is clientv3's WithPrefix of an
    empty key: from "\\0" to the end of the empty prefix (etcd's GetPrefixRangeEnd of no byte: "\\0", every
    key from there on)."""
    if over == EVERY_KEY:
        return "\0", prefix_end("")
    return RANGES[over]


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
        _read_kept(store)
        key, range_end = key_range(self.over)
        revision = revision_at(store, self.at)
        _answered(lambda: store.range(key, range_end, revision=revision, limit=self.limit,
                                      keys_only=self.keys_only, count_only=self.count_only))


@attrs.frozen
class EtcdWatch(Action):
    """A second client's watch of `over` from a revision (WATCH_STARTS), with prev_kv and a progress request:
    etcd queues what it has (the events since that revision, or the watch's cancellation: compacted, or a range
    that is empty), the client takes it and cancels the watch (`etcdctl watch --rev R --prev-kv`, then Ctrl-C);
    or, with `keep`, leaves it open for the writes to come (a component watching its data), replacing its
    oldest kept watch when it keeps KEPT_WATCHES already."""

    kind: ClassVar[str] = "etcd-watch"
    simplest: ClassVar[Simplest] = (("over", earlier(RANGE_NAMES[:-1])), ("start", earlier(WATCH_STARTS)),
                                    ("prev_kv", default(False)), ("progress", default(False)),
                                    ("keep", default(False)))
    over: str
    start: str = "now"
    prev_kv: bool = False
    progress: bool = False
    keep: bool = False

    def __attrs_post_init__(self) -> None:
        _check(self.over, RANGE_NAMES[:-1], "over")  # etcdctl watch always names a key
        _check(self.start, WATCH_STARTS, "start")

    @property
    def name(self) -> str:
        options = [f"--rev {self.start}" if self.start != "now" else "", "--prev-kv" if self.prev_kv else "",
                   "--progress-notify" if self.progress else "", "(kept open)" if self.keep else ""]
        return " ".join(["etcdctl watch", self.over, *filter(None, options)])

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        _read_kept(store)
        key, range_end = key_range(self.over)
        watch_id = store.watch(key, range_end, start_revision=revision_at(store, self.start), prev_kv=self.prev_kv,
                               progress_notify=self.progress)
        if self.progress:
            store.request_progress(watch_id)
        store.take_watch_responses(watch_id)  # the replay, or the cancellation etcd answered with
        kept = kept_watches(store)
        watcher = store.watcher(watch_id)
        if self.keep and watcher is not None and watcher.active:  # neither refused nor cancelled by compaction
            kept.append(watch_id)
            if len(kept) <= KEPT_WATCHES:
                return
            watch_id = kept.pop(0)  # the new watch is open: the oldest one goes
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
        _check_each((self.compared, COMPARED, "compared"), (self.target, TARGETS, "target"),
                    (self.result, RESULTS, "result"), (self.expect, EXPECT, "expect"), (self.then, THEN, "then"),
                    (self.otherwise, OTHERWISE, "otherwise"))

    @property
    def name(self) -> str:
        return (f"etcdctl txn: if {self.compared} {self.target} {self.result} {self.expect} then {self.then} "
                f"else {self.otherwise}")

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        _read_kept(store)
        compare = self._compare(store)
        then, otherwise = self._ops(store, self.then), self._ops(store, self.otherwise)
        _answered(lambda: store.txn([compare], then, otherwise))

    def _compare(self, store: Any) -> Compare:
        # a stored object is a value the model keeps as an object, not etcd's bytes: equal or not as the bytes
        # are (the API server encodes an object one way), but without their order, so a value compare LESS or
        # GREATER is made on the client's own key (absent: etcd fails a value compare on a missing key)
        orderable = self.target != "VALUE" or self.result in ("EQUAL", "NOT_EQUAL")
        if self.compared == "registry-key" and orderable:
            keys = [kv.key for kv in store.peek(REGISTRY, prefix_end(REGISTRY))]
            key, range_end = (keys[self.key % len(keys)] if keys else OWN_KEY), None
        elif self.compared == "nodes" and orderable:  # against the first Node's field: each Node must pass
            key, range_end = RANGES["nodes"]
        elif self.compared in ("own-key", "nodes"):
            key, range_end = OWN_KEY, None
        elif self.compared == "no-key":
            key, range_end = "", None
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
        if branch == "put-deleted-key":  # a delete of one key is the point interval [key]: the put meets it
            return [DeleteOp(OWN_KEY), PutOp(OWN_KEY, b"a")]
        if branch == "too-many":
            return [RangeOp(OWN_KEY)] * (MAX_TXN_OPS + 1)
        if branch == "no-key":
            return [RangeOp("")]
        raise ValueError(f"unknown txn branch {branch!r}")


@attrs.frozen
class EtcdCas(Action):
    """A second client's compare-and-swap of its IPAM block, as libcalico-go's etcd backend updates or deletes a
    key: `txn if mod(block) == R then put(block) (or delete(block)) else get(block)`, R the mod revision it read
    the block at (`guard` "mod"), or `if value(block) == V` (`guard` "value"), V the value it read; it read it
    at `read` (CAS_READ). The block is gone since (nothing of the client's is ever in etcd), so the guard fails,
    nothing is written, and the else-branch reads the key, now or (`otherwise` "get-at-read") at the revision
    the client had read, which etcd refuses when it has been compacted."""

    kind: ClassVar[str] = "etcd-cas"
    simplest: ClassVar[Simplest] = (("guard", earlier(GUARDS)), ("swap", earlier(SWAPS)),
                                    ("otherwise", earlier(CAS_ELSE)), ("read", earlier(CAS_READ)))
    guard: str = "mod"
    swap: str = "put"
    otherwise: str = "get"
    read: str = "past"

    def __attrs_post_init__(self) -> None:
        _check_each((self.guard, GUARDS, "guard"), (self.swap, SWAPS, "swap"), (self.otherwise, CAS_ELSE, "otherwise"),
                    (self.read, CAS_READ, "read"))

    @property
    def name(self) -> str:
        return (f"etcdctl txn: if {self.guard} of the block is what it read ({self.read}) then {self.swap} else "
                f"{self.otherwise}")

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        _read_kept(store)
        read_at = revision_at(store, self.read)  # at least 1: no key's mod revision once it is gone
        if self.guard == "mod":
            compare = Compare(OWN_KEY, "MOD", "EQUAL", read_at)
        else:
            compare = Compare(OWN_KEY, "VALUE", "EQUAL", b"block")
        swap = PutOp(OWN_KEY, b"block") if self.swap == "put" else DeleteOp(OWN_KEY)
        get = RangeOp(OWN_KEY, revision=read_at if self.otherwise == "get-at-read" else 0)
        _answered(lambda: store.txn([compare], [swap], [get]))


@attrs.frozen
class EtcdDelete(Action):
    """A second client's `etcdctl del KEY [--prefix] [--prev-kv]` of its own key or prefix, where nothing is:
    etcd deletes nothing and writes no revision; or of no key, refused ("key is not provided")."""

    kind: ClassVar[str] = "etcd-delete"
    simplest: ClassVar[Simplest] = (("over", earlier(DELETES)), ("prev_kv", default(False)))
    over: str = "own-key"
    prev_kv: bool = False

    def __attrs_post_init__(self) -> None:
        _check(self.over, DELETES, "over")

    @property
    def name(self) -> str:
        return f"etcdctl del {self.over}" + (" --prev-kv" if self.prev_kv else "")

    def apply(self, cluster: Any) -> None:
        store = cluster.store
        _read_kept(store)
        key, range_end = key_range(self.over)
        _answered(lambda: store.delete_range(key, range_end, prev_kv=self.prev_kv))


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
        _read_kept(store)
        revision = store.compact_revision if self.at == "compacted" else revision_at(store, self.at)
        _answered(lambda: store.compact(revision))


def _check(value: str, domain: tuple[str, ...], field: str) -> None:
    if value not in domain:
        raise ValueError(f"{field} {value!r} is not one of {', '.join(domain)}")


def _check_each(*checks: tuple[str, tuple[str, ...], str]) -> None:
    """`_check` each (value, domain, field)."""
    for value, domain, field in checks:
        _check(value, domain, field)


