"""etcd's rules for a txn request: what it refuses up front, and how a Compare is judged.

Validation follows etcd 3.4's ``checkTxnRequest`` then ``checkIntervals`` (server
v3rpc/key.go), in the same order, so the same error wins when several apply:

1. more than 128 ops in compare, success or failure -> "too many operations";
2. a compare with an empty key, then any op of success, then of failure, with an
   empty key -> "key is not provided";
3. within success, then within failure: a put whose key was already put, or that
   falls inside a delete's interval -> "duplicate key given in txn request".

The interval test is etcd's, quirk included: a delete with range_end "\\0" ("every
key >= key") is stored in etcd's interval tree as the empty interval [key, "\\0"),
so it overlaps no put. A txn may therefore put "a" and delete from "a" with
range_end "\\0": etcd accepts it and deletes the key it just put (real etcd 3.4.23
does this; the model follows).

A Compare reads the state before the txn. On a missing key, a VALUE compare fails
and the others compare against zeros; with a range_end, every key in the range must
pass (and an empty range behaves like a missing key).
"""

from __future__ import annotations

from typing import Any, Optional

from . import errors
from .types import Compare, DeleteOp, KeyValue, PutOp

MAX_TXN_OPS = 128  # etcd's --max-txn-ops default


def check_txn_request(compare: tuple, success: tuple, failure: tuple) -> None:
    if max(len(compare), len(success), len(failure)) > MAX_TXN_OPS:
        raise errors.too_many_ops()
    for c in compare:
        if not c.key:
            raise errors.empty_key()
    for op in success:
        if not op.key:
            raise errors.empty_key()
    for op in failure:
        if not op.key:
            raise errors.empty_key()
    _check_intervals(success)
    _check_intervals(failure)


def _check_intervals(ops: tuple) -> None:
    if len(ops) < 2:
        return  # one op cannot collide with another
    deletes = [(op.key, op.range_end) for op in ops if isinstance(op, DeleteOp)]
    puts: set[str] = set()  # membership only; never iterated
    for op in ops:
        if not isinstance(op, PutOp):
            continue
        if op.key in puts or any(_interval_holds(k, end, op.key) for k, end in deletes):
            raise errors.duplicate_key()
        puts.add(op.key)


def _interval_holds(begin: str, end: Optional[str], point: str) -> bool:
    if not end:
        return point == begin
    # "\0" is not special here: [begin, "\0") is empty, as in etcd's adt interval tree.
    return begin <= point < end


ZERO_KV = KeyValue("", b"", 0, 0, 0, 0)


def compare_holds(c: Compare, kvs: list[KeyValue]) -> bool:
    if not kvs:
        if c.target == "VALUE":
            return False
        return _compare_kv(c, ZERO_KV)
    for kv in kvs:
        if not _compare_kv(c, kv):
            return False
    return True


def _compare_kv(c: Compare, kv: KeyValue) -> bool:
    target = c.target
    if target == "VALUE":
        actual: Any = kv.value
    elif target == "VERSION":
        actual = kv.version
    elif target == "CREATE":
        actual = kv.create_revision
    elif target == "MOD":
        actual = kv.mod_revision
    elif target == "LEASE":
        actual = kv.lease
    else:
        raise ValueError(f"unknown compare target {target!r}")
    result = c.result
    if result == "EQUAL":
        return actual == c.value
    if result == "NOT_EQUAL":
        return actual != c.value
    if result == "LESS":
        return actual < c.value
    if result == "GREATER":
        return actual > c.value
    raise ValueError(f"unknown compare result {result!r}")
