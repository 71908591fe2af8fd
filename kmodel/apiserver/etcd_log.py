"""`APIServerReplica.etcd_received`: what a replica's watch cache received from etcd, built when first read.

Theory of operation
-------------------
The log is a sequence of ``(stream, item)`` pairs: ``item`` is the start revision (an int) when the replica
opens a watch, else a `WatchResponse` it applied. The watch invariants read it; the replica itself never
does. A run keeps it for ever, so a response kept as received would leave four objects alive per write (the
pair, the WatchResponse, its events list, the KeyEvent) for Python's cyclic collector to walk at every full
collection.

So a response with exactly one event (every API write: one key per revision) is kept compact, as one flat
tuple of its fields (`record`), and the pair is built the first time anyone reads that entry, then kept in
its place. A reader sees exactly what was received: a `WatchResponse` with equal fields, its events a list
of one `KeyEvent` holding the same KeyValue objects, and the same pair on every later read. Anything else (a
watch opened, a progress notification, a cancel, a batch of events) is kept as its pair at once.
"""

from __future__ import annotations

from typing import Any

from kmodel.store import KeyEvent, WatchResponse
from kmodel.store.compact_log import CompactLog

_new = tuple.__new__
_PAIR = 2
#: where a compact entry (`EtcdLog.record`: a response of one event) keeps the fields its readers take when they
#: read entries as stored (`CompactLog.stored`): the stream, whether the watch was canceled, the event's KeyValue
STREAM, CANCELED, KV = 0, 4, 7


def is_compact(entry: tuple) -> bool:
    """Is a stored entry a compact one-event response (not a (stream, item) pair)?"""
    return len(entry) != _PAIR


class EtcdLog(CompactLog):
    """A replica's record of its etcd watch (see the module docstring): len, index, slice, iteration."""

    __slots__ = ()

    def append(self, entry: tuple[str, Any]) -> None:
        """Record a ``(stream, item)`` pair as it is."""
        self._entries.append(entry)

    def record(self, stream: str, response: Any) -> None:
        """Record a response received on `stream` (compact when it is one event: see the module docstring)."""
        if type(response) is WatchResponse:
            events = response[2]
            if type(events) is list and len(events) == 1 and type(events[0]) is KeyEvent:
                # stream, watch_id, header_revision, compact_revision, canceled, cancel_reason, type, kv, prev_kv
                self._entries.append((stream, response[0], response[1], response[3], response[4], response[5],
                                      *events[0]))
                return
        self._entries.append((stream, response))

    def _expand(self, entry: tuple) -> Any:
        if len(entry) == _PAIR:
            return None
        stream, watch_id, header, compact, canceled, reason, typ, kv, prev_kv = entry
        return (stream, _new(WatchResponse, (watch_id, header, [_new(KeyEvent, (typ, kv, prev_kv))], compact,
                                             canceled, reason)))
