"""Watchers, indexed by what they select, so a write reaches only the watchers it concerns.

Theory of operation
-------------------
A ``Watcher`` is one etcd watch: a key range, a first revision (``min_revision``),
options, and a queue of ``WatchResponse`` values waiting to be taken. The store is
sans-IO: it never delivers anything, it only appends to these queues, and the caller
takes them (``Store.take_watch_responses``) whenever its scheduler decides the
response arrives.

Our watchers are always "synced" in etcd's terms: a write's events are queued the
moment the write happens, all events of one revision in one response, in the order
the write made them. So the Ordered, Unique, Reliable and Atomic guarantees hold by
construction; the delay etcd may add is the caller's to model.

The ``WatchIndex`` finds the watchers of a key without looking at the others:

* ``exact``   single-key watches, by key (a dict lookup);
* ``prefix``  prefix watches (range_end == prefix_end(key)), by prefix; a key is
              looked up once per distinct prefix *length* in use, which stays small
              (Kubernetes watches a handful of resource prefixes);
* ``ranges``  any other range (including "every key >= key"), scanned in full.

Iteration follows insertion order (dicts and lists of ints/strings, never sets), so
the queues fill in the same order on every run.
"""

from __future__ import annotations

from typing import Optional

from .keyspace import FROM_KEY
from .types import prefix_end


class Watcher:
    __slots__ = (
        "id", "key", "range_end", "min_revision", "prev_kv", "progress_notify", "pending", "active", "cancellable"
    )

    def __init__(
        self, watch_id: int, key: str, range_end: Optional[str], min_revision: int, prev_kv: bool, progress_notify: bool
    ) -> None:
        self.id = watch_id
        self.key = key
        self.range_end = range_end or None
        self.min_revision = min_revision
        self.prev_kv = prev_kv
        self.progress_notify = progress_notify
        self.pending: list = []
        # False once cancelled by the client or by compaction: receives nothing more.
        self.active = True
        # False once the client cancelled it: etcd forgets the id.
        self.cancellable = True


class WatchIndex:
    __slots__ = ("exact", "prefix", "prefix_lengths", "ranges")

    def __init__(self) -> None:
        self.exact: dict[str, list[Watcher]] = {}
        self.prefix: dict[str, list[Watcher]] = {}
        self.prefix_lengths: dict[int, int] = {}  # length -> number of prefixes of that length
        self.ranges: list[Watcher] = []

    def add(self, w: Watcher) -> None:
        if w.range_end is None:
            self.exact.setdefault(w.key, []).append(w)
        elif w.key and w.range_end == prefix_end(w.key):
            group = self.prefix.get(w.key)
            if group is None:
                group = self.prefix[w.key] = []
                n = len(w.key)
                self.prefix_lengths[n] = self.prefix_lengths.get(n, 0) + 1
            group.append(w)
        else:
            self.ranges.append(w)

    def remove(self, w: Watcher) -> None:
        if w.range_end is None:
            _remove_from(self.exact, w.key, w)
        elif w.key and w.range_end == prefix_end(w.key):
            if _remove_from(self.prefix, w.key, w):
                n = len(w.key)
                left = self.prefix_lengths[n] - 1
                if left:
                    self.prefix_lengths[n] = left
                else:
                    del self.prefix_lengths[n]
        else:
            self.ranges.remove(w)

    def matching(self, key: str) -> list[Watcher]:
        """The watchers whose range holds ``key``, in a stable order. Read-only: the
        list returned may be one of the index's own (copying it costs a put ~10%)."""
        found = self.exact.get(key) or _NONE
        if self.prefix_lengths:
            prefix = self.prefix
            size = len(key)
            for n in self.prefix_lengths:
                if n > size:
                    continue  # key[:n] would be the key itself: the prefix of another length, found at its own
                group = prefix.get(key[:n])
                if group:
                    found = group if not found else found + group
        if self.ranges:
            extra = [w for w in self.ranges if w.key <= key and (w.range_end == FROM_KEY or key < w.range_end)]
            if extra:
                found = found + extra
        return found


_NONE: list = []  # shared, never mutated


def _remove_from(groups: dict[str, list[Watcher]], key: str, w: Watcher) -> bool:
    """Remove ``w`` from its group; True when the group became empty (and was dropped)."""
    group = groups[key]
    group.remove(w)
    if not group:
        del groups[key]
        return True
    return False
