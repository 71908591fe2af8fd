"""Memoising pure functions of immutable objects by identity.

API objects are frozen and shared: the pods a ReplicaSet creates all carry the one PodSpec of its template,
and a status update carries the spec it read. Defaulting and validating that spec is a pure function of it,
so the answer for one spec object is the answer for every request that carries it. Hashing a deep frozen
object costs as much as the work saved, so the memo keys on `id(obj)` and keeps the object itself beside the
answer: while the entry lives the object lives, so its id cannot be reused by another object. The memo is
cleared wholesale when it grows past `maxsize` (no LRU bookkeeping on the hot path). Nothing here decides an
order, so ids never leak into a run's behaviour: with or without the memo, the answers are the same.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

R = TypeVar("R")

# The pod-spec memos (defaulting, validation, default tolerations) hold one entry per distinct spec object
# in use: one per template normally, one per pod when every pod was built on its own.
POD_SPEC_MEMO_SIZE = 65_536


class IdentityMemo(Generic[R]):
    """`memo(obj, *extra)` is `fn(obj, *extra)`, computed once per (object, extra) while the entry lives."""

    __slots__ = ("_fn", "_entries", "_maxsize")

    def __init__(self, fn: Callable[..., R], maxsize: int = 4096) -> None:
        self._fn = fn
        self._entries: dict[tuple, tuple[Any, R]] = {}
        self._maxsize = maxsize

    def __call__(self, obj: Any, *extra: Any) -> R:
        key = (id(obj), *extra)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is obj:
            return entry[1]
        result = self._fn(obj, *extra)
        if len(self._entries) >= self._maxsize:
            self._entries.clear()
        self._entries[key] = (obj, result)
        return result
