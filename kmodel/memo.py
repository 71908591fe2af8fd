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

from typing import Any, Callable, TypeVar

R = TypeVar("R")

# The pod-spec memos (defaulting, validation, default tolerations) hold one entry per distinct spec object
# in use: one per template normally, one per pod when every pod was built on its own.
POD_SPEC_MEMO_SIZE = 65_536


def identity_memo(fn: Callable[..., R], maxsize: int = 4096, *, extra: bool = False) -> Callable[..., R]:
    """A function `memo(obj)` that is `fn(obj)`, computed once per object while the entry lives; with
    `extra=True`, `memo(obj, x)` is `fn(obj, x)`, computed once per (object, x) (x hashable).

    A closure rather than an object with __call__: these memos sit on the hot path of every pod request,
    and a plain function of fixed arity is the cheapest thing CPython calls."""
    entries: dict[Any, tuple[Any, R]] = {}

    if extra:
        def memo2(obj: Any, x: Any) -> R:
            key = (id(obj), x)
            entry = entries.get(key)
            if entry is not None and entry[0] is obj:
                return entry[1]
            result = fn(obj, x)
            if len(entries) >= maxsize:
                entries.clear()
            entries[key] = (obj, result)
            return result

        memo2.__wrapped__ = fn  # type: ignore[attr-defined]
        return memo2

    def memo(obj: Any) -> R:
        key = id(obj)
        entry = entries.get(key)
        if entry is not None and entry[0] is obj:
            return entry[1]
        result = fn(obj)
        if len(entries) >= maxsize:
            entries.clear()
        entries[key] = (obj, result)
        return result

    memo.__wrapped__ = fn  # type: ignore[attr-defined]
    return memo
