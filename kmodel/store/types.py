"""The values the store takes and returns, shaped like etcd's v3 protobuf messages.

Every record is a ``NamedTuple``: immutable, compared field by field, and cheap to
build. The hot path builds them with ``tuple.__new__(Cls, fields)`` (about 150 ns,
against about 800 ns for a frozen attrs class), so a ``KeyValue`` stored in the
history can be handed to any number of responses and watchers without copying.
A consequence worth knowing: like any tuple, ``KeyValue(...) == (…same fields…)``.

Keys are ``str``; Python orders ``str`` by code point, which is the same order as
etcd's byte order over their UTF-8 encodings. Values are any immutable object.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Union

from kmodel.fingerprint import immutable


@immutable  # values are immutable objects: a digest encodes a stored KeyValue once (kmodel.fingerprint)
class KeyValue(NamedTuple):
    """One version of a key, exactly as etcd's mvccpb.KeyValue.

    A deletion is represented as etcd represents it in a DELETE event: the key,
    ``mod_revision`` = the revision of the delete, and zeros elsewhere (``version``
    is 0 only for these tombstones, since a live key has version >= 1).
    """

    key: str
    value: Any
    create_revision: int
    mod_revision: int
    version: int
    lease: int = 0


@immutable
class KeyEvent(NamedTuple):
    """A watch event: ``type`` is "PUT" or "DELETE"; ``prev_kv`` only when the watch asked for it."""

    type: str
    kv: KeyValue
    prev_kv: Optional[KeyValue] = None


class WatchResponse(NamedTuple):
    watch_id: int
    header_revision: int
    events: list
    compact_revision: int = 0
    canceled: bool = False
    cancel_reason: str = ""


class RangeResponse(NamedTuple):
    header_revision: int
    kvs: list
    count: int
    more: bool = False


class PutResponse(NamedTuple):
    header_revision: int
    prev_kv: Optional[KeyValue] = None


class DeleteRangeResponse(NamedTuple):
    header_revision: int
    deleted: int
    prev_kvs: list


class TxnResponse(NamedTuple):
    header_revision: int
    succeeded: bool
    responses: list  # RangeResponse | PutResponse | DeleteRangeResponse, one per op of the branch taken


class CompactResponse(NamedTuple):
    header_revision: int


class Compare(NamedTuple):
    """A txn guard. ``target``: VALUE, VERSION, CREATE, MOD or LEASE; ``result``: EQUAL,
    NOT_EQUAL, LESS or GREATER. With ``range_end`` every key in the range must pass."""

    key: str
    target: str
    result: str
    value: Any
    range_end: Optional[str] = None


class RangeOp(NamedTuple):
    key: str
    range_end: Optional[str] = None
    revision: int = 0
    limit: int = 0
    count_only: bool = False
    keys_only: bool = False


class PutOp(NamedTuple):
    key: str
    value: Any
    prev_kv: bool = False


class DeleteOp(NamedTuple):
    key: str
    range_end: Optional[str] = None
    prev_kv: bool = False


Op = Union[RangeOp, PutOp, DeleteOp]


# --- requests as recorded in Store.history --------------------------------------------
# Range, put and delete requests are recorded as the RangeOp/PutOp/DeleteOp above.


class TxnRequest(NamedTuple):
    compare: tuple
    success: tuple
    failure: tuple


class CompactRequest(NamedTuple):
    revision: int


class WatchRequest(NamedTuple):
    key: str
    range_end: Optional[str]
    start_revision: int
    prev_kv: bool
    progress_notify: bool


class CancelWatchRequest(NamedTuple):
    watch_id: int


class ProgressRequest(NamedTuple):
    watch_id: int


class WatchCreated(NamedTuple):
    """The answer recorded in history for a WatchRequest: the id given (-1 if refused)."""

    watch_id: int
    header_revision: int


def prefix_end(prefix: str) -> str:
    """The range_end that selects every key starting with ``prefix`` (etcd's GetPrefixRangeEnd).

    Works on code points, which order like etcd's bytes: drop trailing maximal
    characters, then increment the last one. An empty prefix, or one made only of
    maximal characters, has no end: "\\0" (every key >= key) is returned, as etcd does.
    """
    chars = prefix
    while chars and chars[-1] == "\U0010ffff":
        chars = chars[:-1]
    if not chars:
        return "\0"
    return chars[:-1] + chr(ord(chars[-1]) + 1)
