"""The multi-version key space: every retained version of every key, and what was live when.

Theory of operation
-------------------
etcd's mvcc keeps, for each key, a list of generations (create .. tombstone) of
revisions, and a backend holding every KeyValue by revision. This module keeps the
same information in the shape Python reads fastest:

* ``latest[key]``    the live KeyValue of each live key (the current state);
* ``versions[key]``  every retained version of the key, oldest first, tombstones
                     included (a tombstone is a KeyValue with ``version == 0``). It is
                     sorted by ``mod_revision``; one txn can leave two entries with the
                     same revision (etcd's put-then-delete "\\0" quirk), and the later
                     entry wins, as etcd's sub-revision does;
* ``live_keys``      the live keys, sorted, for ranges at the current revision;
* ``known_keys``     the keys that have any retained version, sorted, for ranges at
                     past revisions.

A read at a past revision bisects a key's versions. Compaction at revision ``c``
keeps, for each key, its versions after ``c`` and the last one at or before ``c``,
dropping that one too if it is a tombstone: exactly what etcd's keyIndex.compact
keeps, so reads at any revision >= ``c`` answer as etcd does. Only keys written
since the previous compaction can have anything to drop, so compaction visits those.

The sorted indexes are ``sortedcontainers.SortedList`` (a dependency of Hypothesis):
inserting a key costs O(log n) rather than the O(n) memmove of ``bisect.insort``,
which matters at 150,000 pods. New keys are not inserted one by one as they are
written: they wait in a list (``_live_new``, ``_known_new``) and go into the sorted
index together, the next time anything reads or removes from it (``live_keys`` and
``known_keys`` are properties that do this first). A write then costs a list append,
and a burst of creates is sorted in once (SortedList.update merges a large batch with
one sort) instead of costing two O(log n) inserts each. The answers are the same: no
read sees the index without its pending keys.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import islice
from operator import itemgetter
from typing import Iterator, Optional

from sortedcontainers import SortedList

from .types import KeyValue

_mod_revision = itemgetter(3)

FROM_KEY = "\0"  # etcd's range_end meaning "every key >= key"


class Keyspace:
    __slots__ = ("latest", "versions", "_live", "_live_new", "_known", "_known_new", "touched",
                 "keep_compaction_tombstone")

    def __init__(self, *, keep_compaction_tombstone: bool = False) -> None:
        #: etcd's fix of etcd-io/etcd#18089 (kmodel.fixes): compaction keeps a tombstone at the compaction
        #: revision, so a watch starting there gets the delete; off, as the etcd 3.4.23 the conformance tests run
        self.keep_compaction_tombstone = keep_compaction_tombstone
        self.latest: dict[str, KeyValue] = {}
        self.versions: dict[str, list[KeyValue]] = {}
        self._live = SortedList()
        self._known = SortedList()
        # keys added to the live / known sets and not yet sorted into them (see the module docstring); a key
        # is in one of these lists only while it is absent from the SortedList beside it, and at most once
        self._live_new: list[str] = []
        self._known_new: list[str] = []
        # keys written since the last compaction, in write order (a dict, for determinism);
        # Store.put and Store._txn_one update these fields directly (they are the hot path)
        self.touched: dict[str, None] = {}

    @property
    def live_keys(self) -> SortedList:
        """The live keys, sorted."""
        if self._live_new:
            self._live.update(self._live_new)
            self._live_new = []
        return self._live

    @property
    def known_keys(self) -> SortedList:
        """The keys with any retained version, sorted."""
        if self._known_new:
            self._known.update(self._known_new)
            self._known_new = []
        return self._known

    # --- writes ---------------------------------------------------------------------

    def record_put(self, kv: KeyValue, created: bool) -> None:
        """Make ``kv`` the live version of its key. ``created``: the key was not live before."""
        key = kv.key
        self.latest[key] = kv
        versions = self.versions.get(key)
        if versions is None:
            self.versions[key] = [kv]
            self._known_new.append(key)
        else:
            versions.append(kv)
        if created:
            self._live_new.append(key)
        self.touched[key] = None

    def record_delete(self, tombstone: KeyValue) -> None:
        key = tombstone.key
        del self.latest[key]
        self.live_keys.remove(key)
        self.versions[key].append(tombstone)
        self.touched[key] = None

    # --- reads ----------------------------------------------------------------------

    def at(self, key: str, revision: int) -> Optional[KeyValue]:
        """The live version of ``key`` at ``revision`` (None if absent or deleted then)."""
        versions = self.versions.get(key)
        if not versions:
            return None
        i = bisect_right(versions, revision, key=_mod_revision)
        if i == 0:
            return None
        kv = versions[i - 1]
        return kv if kv.version else None

    def live_keys_in(self, key: str, range_end: Optional[str]) -> Iterator[str]:
        return _keys_in(self.live_keys, key, range_end)

    def current(self, key: str, range_end: Optional[str], limit: int = 0) -> tuple[list[KeyValue], int]:
        """Live KeyValues in [key, range_end) in key order (at most ``limit`` if > 0) and their total count."""
        if not range_end:
            kv = self.latest.get(key)
            return ([kv], 1) if kv is not None else ([], 0)
        latest = self.latest
        keys = _keys_in(self.live_keys, key, range_end)
        if limit > 0:
            keys = islice(keys, limit)
        kvs = [latest[k] for k in keys]
        return kvs, _count_in(self.live_keys, key, range_end)

    def past(self, key: str, range_end: Optional[str], revision: int) -> list[KeyValue]:
        """Live KeyValues in [key, range_end) as they were at ``revision``, in key order."""
        if not range_end:
            kv = self.at(key, revision)
            return [kv] if kv is not None else []
        at = self.at
        found = (at(k, revision) for k in _keys_in(self.known_keys, key, range_end))
        return [kv for kv in found if kv is not None]

    def is_retained(self, kv: KeyValue) -> bool:
        """Whether this exact version survived compaction (etcd still has it in its backend)."""
        return any(v is kv for v in self.versions.get(kv.key, ()))

    # --- compaction -----------------------------------------------------------------

    def compact(self, revision: int) -> None:
        touched = self.touched
        self.touched = {}
        for key in touched:
            versions = self.versions[key]
            i = bisect_right(versions, revision, key=_mod_revision)
            if i == 0:
                self.touched[key] = None
                continue
            kept_at_or_below = versions[i - 1]
            # etcd before #18274 drops the newest version at or below the compaction revision when it is a
            # tombstone, even one made at that very revision; with the fix it keeps a tombstone made there
            dropped = kept_at_or_below.version == 0 and not (
                self.keep_compaction_tombstone and kept_at_or_below.mod_revision == revision)
            start = i if dropped else i - 1
            remaining = versions[start:]
            if not remaining:
                del self.versions[key]
                self.known_keys.remove(key)
                continue
            self.versions[key] = remaining
            if remaining[-1].mod_revision > revision or remaining[-1].version == 0:
                self.touched[key] = None  # more to compact later (a kept tombstone goes with the next compaction)


def _keys_in(keys: SortedList, key: str, range_end: Optional[str]) -> Iterator[str]:
    if not range_end:
        return iter((key,) if key in keys else ())
    if range_end == FROM_KEY:
        return keys.irange(key, None)
    if range_end <= key:
        return iter(())
    return keys.irange(key, range_end, inclusive=(True, False))


def _count_in(keys: SortedList, key: str, range_end: str) -> int:
    if range_end == FROM_KEY:
        return len(keys) - keys.bisect_left(key)
    if range_end <= key:
        return 0
    return keys.bisect_left(range_end) - keys.bisect_left(key)


def in_range(key: str, range_end: Optional[str], candidate: str) -> bool:
    """Whether ``candidate`` falls in etcd's range [key, range_end)."""
    if not range_end:
        return candidate == key
    if range_end == FROM_KEY:
        return candidate >= key
    return key <= candidate < range_end
