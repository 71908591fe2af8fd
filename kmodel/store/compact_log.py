"""`CompactLog`: an append-only, list-like log whose entries may be stored compact and are expanded, once and in
place, the first time they are read.

A run keeps its logs (the store's history, an API server's etcd watch log, the audit trail) for ever, and
every object kept alive is walked again by Python's cyclic collector at each full collection. So a log may
store an entry as a flat tuple of plain values (which the collector stops tracking) and build the objects the
entry stands for only when someone reads it; the built value then replaces the compact one, so every later
read gets the very same object. A subclass says how: `_expand(entry)` returns the full value of a compact
entry, or None for an entry that is stored full already.

Reads behave as a list's: len, index (negative too), slice (a list), iteration, and equality with a list or
another log of the same entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Iterator, Optional


class CompactLog(Sequence):
    """See the module docstring."""

    __slots__ = ("_entries", "_full")

    def __init__(self) -> None:
        self._entries: list[Any] = []
        #: every entry below this index is stored full (readers take `log[position:]` over and over, each from
        #: its own position: what one of them expanded is copied out for the others without a look at each)
        self._full = 0

    def _expand(self, entry: Any) -> Optional[Any]:
        """The full value of a compact entry; None if `entry` is stored full."""
        raise NotImplementedError

    def stored(self, start: int, end: Optional[int] = None) -> list[Any]:
        """The entries from `start` (to `end`) as stored: compact ones left compact, nothing built. For readers
        that interpret the flat layout of a subclass's compact entries themselves (the invariants' history
        readers), so that reading a log does not make it keep the built objects for the rest of the run."""
        return self._entries[start:end]

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._read(range(*index.indices(len(self._entries))))
        entry = self._entries[index]
        full = self._expand(entry)
        if full is None:
            return entry
        self._entries[index] = full  # built once: later reads get this same value
        return full

    def _read(self, indices: range) -> list[Any]:
        """The entries at `indices`, each built once (the slice path: readers take `log[position:]`)."""
        entries = self._entries
        start, stop = indices.start, indices.stop
        if indices.step != 1 or start >= stop:
            return self._read_each(indices)
        full = self._full
        if start > full:
            return self._read_each(indices)
        out = entries[start:min(stop, full)]  # stored full: copied as they are
        if stop > full:
            out.extend(self._read_each(range(full, stop)))
            self._full = stop
        return out

    def _read_each(self, indices: range) -> list[Any]:
        """`_read` entry by entry."""
        entries = self._entries
        expand = self._expand
        out = []
        for i in indices:
            entry = entries[i]
            full = expand(entry)
            if full is None:
                out.append(entry)
            else:
                entries[i] = full
                out.append(full)
        return out

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self._entries)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompactLog):
            other = list(other)
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]  (mutable, like the list it stands for)

    def __repr__(self) -> str:
        return repr(list(self))
