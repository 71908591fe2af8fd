"""`APIServerReplica.etcd_received`: what a replica's watch cache received from etcd, built when first read.

Theory of operation
-------------------
The log is a sequence of ``(stream, item)`` pairs: ``item`` is the start revision (an int) when the replica
opens a watch, else a `WatchResponse` it applied. The watch invariants read it; the replica itself never
does. A run keeps it for ever, so a response kept as received would leave four objects alive per write (the
pair, the WatchResponse, its events list, the Event) for Python's cyclic collector to walk at every full
collection.

So a response with exactly one event (every API write: one key per revision) is kept compact, as one flat
tuple of its fields (`record`), and the pair is built the first time anyone reads that entry, then kept in
its place. A reader sees exactly what was received: a `WatchResponse` with equal fields, its events a list
of one `Event` holding the same KeyValue objects, and the same pair on every later read. Anything else (a
watch opened, a progress notification, a cancel, a batch of events) is kept as its pair at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Iterator

from kmodel.store import Event, WatchResponse

_new = tuple.__new__
_PAIR = 2


class EtcdLog(Sequence):
    """A replica's record of its etcd watch (see the module docstring): len, index, slice, iteration."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[tuple] = []

    def append(self, entry: tuple[str, Any]) -> None:
        """Record a ``(stream, item)`` pair as it is."""
        self._entries.append(entry)

    def record(self, stream: str, response: Any) -> None:
        """Record a response received on `stream` (compact when it is one event: see the module docstring)."""
        if type(response) is WatchResponse:
            events = response[2]
            if type(events) is list and len(events) == 1 and type(events[0]) is Event:
                # stream, watch_id, header_revision, compact_revision, canceled, cancel_reason, type, kv, prev_kv
                self._entries.append((stream, response[0], response[1], response[3], response[4], response[5],
                                      *events[0]))
                return
        self._entries.append((stream, response))

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._entries)))]
        entry = self._entries[index]
        if len(entry) == _PAIR:
            return entry
        stream, watch_id, header, compact, canceled, reason, typ, kv, prev_kv = entry
        pair = (stream, _new(WatchResponse, (watch_id, header, [_new(Event, (typ, kv, prev_kv))], compact,
                                             canceled, reason)))
        self._entries[index] = pair  # built once: later reads get this same pair
        return pair

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self._entries)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EtcdLog):
            other = list(other)
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]  (mutable, like the list it stands for)

    def __repr__(self) -> str:
        return repr(list(self))
