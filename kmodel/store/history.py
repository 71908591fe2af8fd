"""`Store.history`: every request the store answered and its answer, in order, built when first read.

Theory of operation
-------------------
The store records each request as a ``(request, response)`` pair (the response may be the `StoreError` it
refused the request with). Invariants read the pairs; nothing in etcd's behaviour depends on them. A run
keeps every pair for ever, so on the API server's write path (a txn: one compare, one put) the pair and the
eight records inside it (TxnRequest, its compare and success tuples, Compare, PutOp, TxnResponse, its
responses list, PutResponse) would be nine more objects alive per write for Python's cyclic collector to
walk at every full collection, which under the default GC settings is most of the cost of a write.

So that write is recorded compact: one flat tuple of the fields (`record_txn_put`), and the pair is built
from it the first time anyone reads that entry, then kept in its place. A reader sees exactly the pair
the store would have recorded: the same types, equal fields, the same stored value and KeyValue objects
(the object written, the previous KeyValue), and the same pair object on every later read. Every other
request is recorded as its pair at once (`append`).

`History` is a read-only sequence (len, index, negative index, slice, iteration) plus `append`.
"""

from __future__ import annotations

from typing import Any, Optional

from .compact_log import CompactLog
from .types import Compare, KeyValue, PutOp, PutResponse, TxnRequest, TxnResponse

_new = tuple.__new__
_PAIR = 2  # a recorded entry is a pair; a compact one is longer (see record_txn_put)
#: where a compact txn put (`record_txn_put`) keeps its fields, for readers that read entries as stored
#: (`CompactLog.stored`): its Compare's five fields (key, target, result, value, range_end), then the put's key
#: and value, and the revision it was answered at
TXN_PUT_COMPARE = slice(0, 5)
TXN_PUT_KEY, TXN_PUT_VALUE, TXN_PUT_REVISION = 5, 6, 9


def is_compact(entry: tuple) -> bool:
    """Is a stored entry a compact txn put (not a (request, response) pair)?"""
    return len(entry) != _PAIR


class History(CompactLog):
    """The store's request history (see the module docstring)."""

    __slots__ = ()

    def append(self, entry: tuple[Any, Any]) -> None:
        """Record a ``(request, response)`` pair."""
        self._entries.append(entry)

    def record_txn_put(self, compare: tuple, put: tuple, failure: tuple, revision: int,
                       prev_kv: Optional[KeyValue]) -> None:
        """Record a txn that succeeded with one `Compare` (its fields `compare`) and one `PutOp` (its fields
        `put`), `failure` its failure branch (a tuple), answered at `revision`; `prev_kv` the PutResponse's
        prev_kv (None unless the put asked for it). The pair is built when first read."""
        self._entries.append((*compare, *put, failure, revision, prev_kv))

    def _expand(self, entry: tuple) -> Optional[tuple[TxnRequest, TxnResponse]]:
        return None if len(entry) == _PAIR else _txn_put_pair(entry)


def _txn_put_pair(entry: tuple) -> tuple[TxnRequest, TxnResponse]:
    """The (TxnRequest, TxnResponse) pair a compact entry of `record_txn_put` stands for."""
    c_key, c_target, c_result, c_value, c_range_end, key, value, prev, failure, revision, prev_kv = entry
    request = _new(TxnRequest, ((_new(Compare, (c_key, c_target, c_result, c_value, c_range_end)),),
                                (_new(PutOp, (key, value, prev)),), failure))
    response = _new(TxnResponse, (revision, True, [_new(PutResponse, (revision, prev_kv))]))
    return request, response
