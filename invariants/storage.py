"""Storage invariants: optimistic concurrency and resourceVersions, read from the store's own history."""

from __future__ import annotations

from typing import Any, Iterator

from invariants._history import HistoryReader
from invariants.registry import SAFETY, invariant
from kmodel.store.types import TxnRequest


def _conditional_on(request: Any, key: str, mod_revision: int) -> bool:
    """Did the txn `request` (taking its success branch) compare `key`'s mod_revision to `mod_revision`?"""
    if type(request) is not TxnRequest:
        return False
    for c in request.compare:
        if c.key == key and c.range_end in (None, "") and c.target == "MOD" and c.result == "EQUAL" \
                and c.value == mod_revision:
            return True
    return False


@invariant("occ-no-lost-update", kind=SAFETY, principle="optimistic concurrency")
def occ_no_lost_update(cluster: Any, memo: dict) -> Iterator[str]:
    """Every store write that replaced or deleted an existing value was conditional on the mod_revision it
    replaced (a txn comparing that key's mod_revision, taking its success branch); a blind put or delete
    over an existing key can lose an update.

    Reads `store.history` incrementally."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader()
        memo["bad"] = []
    bad: list = memo["bad"]
    for ch in reader.read(cluster.store):
        if ch.prev is None:
            continue  # a create: nothing to lose
        request = ch.request
        succeeded = getattr(ch.response, "succeeded", False)
        if succeeded and _conditional_on(request, ch.key, ch.prev_mod):
            continue
        what = "put" if ch.value is not None else "delete"
        how = ("a txn's failure branch" if type(request) is TxnRequest and not succeeded
               else "a txn that did not compare its mod_revision" if type(request) is TxnRequest
               else f"a plain {type(request).__name__}")
        bad.append(f"revision {ch.rev}: blind {what} of {ch.key} over mod_revision {ch.prev_mod} ({how}); "
                   f"an update made in between would be lost")
    yield from bad


@invariant("resource-version-monotonic", kind=SAFETY, principle="optimistic concurrency")
def resource_version_monotonic(cluster: Any, memo: dict) -> Iterator[str]:
    """Store revisions strictly increase (each write by exactly one, no answer older than a write before it),
    a stored object's resourceVersion is its mod_revision, and no API server's watch cache ever goes back to
    an older resourceVersion (except by crashing, which empties it)."""
    bad: list = memo.setdefault("bad", [])
    history = cluster.store.history
    start = memo.get("pos", 0)
    last = memo.get("last", 1)  # the newest revision any answer has shown
    last_write = memo.get("last_write", 1)
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader()
    for i in range(start, len(history)):
        response = history[i][1]
        header = getattr(response, "header_revision", None)
        if header is None or header == 0:
            continue
        if header < last:
            bad.append(f"store history #{i}: {type(history[i][0]).__name__} answered at revision {header}, "
                       f"older than revision {last} already shown")
        last = max(last, header)
    memo["pos"] = len(history)
    memo["last"] = last
    seen_revs: list = []
    for ch in reader.read(cluster.store):
        if not seen_revs or seen_revs[-1] != ch.rev:
            seen_revs.append(ch.rev)
        if ch.value is not None:
            meta = getattr(ch.value, "metadata", None)
            rv = getattr(meta, "resource_version", None)
            if rv is not None and rv != "" and rv != str(ch.rev):
                bad.append(f"{ch.key} stored at revision {ch.rev} says resourceVersion {rv}")
    for rev in seen_revs:
        if rev != last_write + 1:
            bad.append(f"store write at revision {rev} follows revision {last_write}: revisions must rise by one "
                       f"per write")
        last_write = max(last_write, rev)
    memo["last_write"] = last_write
    caches: dict = memo.setdefault("caches", {})
    for replica in cluster.replicas:
        cache = replica.cache
        rv = cache.resource_version
        seen = caches.get(replica.name)
        if seen is not None and seen[0] is cache and rv < seen[1]:
            bad.append(f"{replica.name}'s watch cache went back from resourceVersion {seen[1]} to {rv}")
        caches[replica.name] = (cache, max(rv, seen[1]) if seen is not None and seen[0] is cache else rv)
    yield from bad
