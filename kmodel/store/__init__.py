"""kmodel.store: an etcd v3 KV + Watch model (a value; no I/O, no clock).

See ``store.py`` for the theory of operation and ``types.py`` for the records.
"""

from .errors import StoreError
from .store import Store
from .types import (
    Compare,
    CompactResponse,
    DeleteOp,
    DeleteRangeResponse,
    KeyEvent,
    KeyValue,
    PutOp,
    PutResponse,
    RangeOp,
    RangeResponse,
    TxnResponse,
    WatchResponse,
    prefix_end,
)

__all__ = [
    "Store",
    "KeyValue",
    "KeyEvent",
    "WatchResponse",
    "RangeResponse",
    "PutResponse",
    "DeleteRangeResponse",
    "TxnResponse",
    "CompactResponse",
    "Compare",
    "RangeOp",
    "PutOp",
    "DeleteOp",
    "StoreError",
    "prefix_end",
]
