"""An immutable, hashable dict for the maps inside API objects (labels, annotations, resource lists).

Why a dict subclass: construction is one C-level dict copy, lookups stay C-speed, `json`/`yaml` and any
code that reads a dict accept it unchanged, and the store can share it between object versions because no
method that mutates it works. Iteration order is insertion order (deterministic); equality ignores order,
as Go's map equality does.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, NoReturn

from kmodel.fingerprint import immutable


@immutable  # a digest encodes each one once (kmodel.fingerprint): versions of an object share their maps
class FrozenDict(dict):
    """A dict that refuses mutation and can be hashed (so frozen attrs objects holding it hash too)."""

    __slots__ = ()

    def _immutable(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("FrozenDict is immutable; build a new one (e.g. FrozenDict({**old, k: v}))")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _immutable  # type: ignore[assignment]
    __ior__ = _immutable  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __reduce__(self) -> tuple:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> "FrozenDict":
        return self

    def __deepcopy__(self, memo: dict) -> "FrozenDict":
        return self

    def set(self, key: str, value: Any) -> "FrozenDict":
        """A copy with key set to value."""
        new = dict(self)
        new[key] = value
        return FrozenDict(new)

    def without(self, key: str) -> "FrozenDict":
        """A copy without key (the same object when key is absent)."""
        if key not in self:
            return self
        new = dict(self)
        del new[key]
        return FrozenDict(new)


EMPTY_MAP: FrozenDict = FrozenDict()


def frozen_map(items: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None, **kwargs: Any) -> FrozenDict:
    """Build a FrozenDict; returns the shared EMPTY_MAP when there is nothing in it."""
    if items is None and not kwargs:
        return EMPTY_MAP
    d = dict(items or (), **kwargs)
    return FrozenDict(d) if d else EMPTY_MAP


def freeze(value: Any) -> Any:
    """Deep-freeze plain JSON data: dicts become FrozenDicts, lists become tuples."""
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of freeze: plain dicts and lists, ready for json/yaml."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
