"""Snapshots: a deep copy of a live object graph (a warmed-up session) that can be restored many times.

Theory of operation
-------------------
Every checker example starts the same way: the same cluster, warmed up by the same fair run (the first action
of every trace). Building and warming it costs more than a whole example's rules, so a campaign builds it
once, takes a `Snapshot`, and starts each example from `snapshot.restore()`: a fresh, independent copy of
the graph, equal to a freshly built one in every bit that the model, the invariants and the digests read.

A snapshot is a pickle, taken and restored in this process only (it is never written anywhere), with three
additions to plain pickling:

* Immutable values are shared, not copied. Frozen attrs instances whose fields are (recursively) immutable
  (strings, numbers, tuples, classes, enum members, module-level functions, other such values), tuples and
  named tuples of such values, FrozenDicts, ip addresses and long ints are put aside by identity
  (`persistent_id`) and every restore hands back the very same objects (only the empty tuple, a singleton, is
  pickled as itself). This is sound because they cannot change, it is what the model does anyway (the store
  shares object versions, a pod shares its template's spec), and it keeps identity intact: a value compared
  with `is` (the shared ``EMPTY_MAP``, a memo keyed by identity) is the same object in the copy. Objects named
  in `shared` (the campaign's Stats, the invariant definitions) are handed back as they are too.
* Closures are rebuilt. Components keep continuations (a callback waiting for an answer, capturing `self`
  and a few values); pickle cannot store a function that is not importable by name, so such a function is
  stored as (its code object, its cells' contents, its defaults) and rebuilt around the copied contents.
  The code object is kept in this process's table, which is why a snapshot never leaves the process.
* Objects pickle cannot take are handled one by one: a running blake2b (the digests) is restored as a
  `.copy()` of its state when the snapshot was taken; a random.Random (each API client has one) is
  rebuilt with `setstate` from its state kept beside the pickle, not through `Random.__reduce__`, which
  would seed a generator from the OS only to overwrite it and unpickle its 625 ints each time; a slotted
  class that forwards unknown attributes (`__getattr__`, like the API servers' etcd handles) is rebuilt
  without asking it for ``__setstate__`` (the lookup would be forwarded before the object has its slots).

Anything else that pickle refuses (a generator, a lock, a file) raises `SnapshotError` when the snapshot is
taken: the caller falls back to building each example from scratch. Order is kept exactly: dicts and lists
are rebuilt in their order; sets are rebuilt from their iteration order, which the model never depends on
(no order taken from a set of strings: docs/architecture.md, Determinism). tests/checker/test_snapshot.py checks that an
example started from a snapshot makes exactly the moves (the same digest) of one built from scratch.
"""

from __future__ import annotations

import enum
import hashlib
import io
import ipaddress
import pickle
import random
import sys
import types
from typing import Any, Iterable

import attr
import attrs

from kmodel.objects.frozendict import FrozenDict

_FROZEN_SETATTR = getattr(attr._make, "_frozen_setattrs", None)  # noqa: SLF001 (how attrs marks frozen classes)
_HASH_TYPE = type(hashlib.blake2b())
_ATOMS = (str, int, float, bool, type(None), bytes, complex)
#: an int longer than this is shared like the immutable values (a bitmap an invariant keeps can run to hundreds of
#: thousands of bits, which unpickling would rebuild digit by digit at each restore)
_LONG_INT_BITS = 64
_ADDRESSES = (ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network, ipaddress.IPv6Network)

# code objects of the closures snapshotted in this process (token -> (code, globals, name))
_CODES: dict[int, tuple[types.CodeType, dict, str]] = {}


class SnapshotError(Exception):
    """The graph holds something that cannot be snapshotted (the message says what)."""


class _Unset:
    """Stands for an empty closure cell (a variable not yet assigned when the snapshot was taken)."""


_UNSET = _Unset()


def _new_function(token: int, cells: int) -> types.FunctionType:
    code, globs, name = _CODES[token]
    closure = tuple(types.CellType() for _ in range(cells)) if cells else None
    return types.FunctionType(code, globs, name, None, closure)


def _fill_function(fn: types.FunctionType, state: tuple) -> None:
    contents, defaults, kwdefaults, attributes = state
    if contents:
        for cell, value in zip(fn.__closure__, contents):  # type: ignore[arg-type]
            if value is not _UNSET:
                cell.cell_contents = value
    fn.__defaults__ = defaults
    fn.__kwdefaults__ = kwdefaults
    if attributes:
        fn.__dict__.update(attributes)


def _set_slots(obj: Any, state: dict) -> None:
    for name, value in state.items():
        object.__setattr__(obj, name, value)


def _importable(fn: types.FunctionType) -> bool:
    module = sys.modules.get(fn.__module__)
    if module is None or "<locals>" in fn.__qualname__:
        return False
    target: Any = module
    for part in fn.__qualname__.split("."):
        target = getattr(target, part, None)
    return target is fn


class _Pickler(pickle.Pickler):
    def __init__(self, file: Any, shared: Iterable[Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.table: list[Any] = []
        self.tokens: dict[int, int] = {}
        self.immutable: dict[int, bool] = {}
        self.fields: dict[type, tuple[str, ...]] = {}
        self.hashes: list[Any] = []
        self.random_states: list[tuple] = []
        for obj in shared:
            self.tokens[id(obj)] = len(self.table)
            self.table.append(obj)

    # -- sharing immutable values ---------------------------------------------------------------------------

    def _is_immutable(self, obj: Any) -> bool:
        t = type(obj)
        if t in _ATOMS:
            return True
        known = self.immutable.get(id(obj))
        if known is not None:
            return known
        if t is frozenset or isinstance(obj, tuple):  # tuples and named tuples
            result = all(self._is_immutable(v) for v in obj)
        elif t is FrozenDict:
            result = all(self._is_immutable(v) for v in obj.values())
        elif t in _ADDRESSES or isinstance(obj, (type, enum.Enum)) or t is types.BuiltinFunctionType:
            result = True  # classes, enum members and builtins are pickled by reference anyway
        elif t is types.FunctionType:
            result = _importable(obj)  # a module-level function is a constant; a closure holds cells
        elif _FROZEN_SETATTR is not None and getattr(t, "__setattr__", None) is _FROZEN_SETATTR:
            names = self.fields.get(t)
            if names is None:
                names = self.fields[t] = tuple(f.name for f in attrs.fields(t))
            result = all(self._is_immutable(getattr(obj, n)) for n in names)
        else:
            result = False
        self.immutable[id(obj)] = result
        return result

    def persistent_id(self, obj: Any) -> Any:
        t = type(obj)
        if t is int and obj.bit_length() > _LONG_INT_BITS:
            return self._share(obj)
        if t in _ATOMS or (t is tuple and not obj):
            return None
        token = self.tokens.get(id(obj))
        if token is not None:
            return token
        if (t is FrozenDict or t in _ADDRESSES or getattr(t, "__setattr__", None) is _FROZEN_SETATTR
                or isinstance(obj, tuple)) and self._is_immutable(obj):
            return self._share(obj)
        return None

    def _share(self, obj: Any) -> int:
        """Put `obj` aside (once): every restore hands back this very object."""
        token = self.tokens.get(id(obj))
        if token is None:
            self.tokens[id(obj)] = token = len(self.table)
            self.table.append(obj)
        return token

    # -- what plain pickling cannot take --------------------------------------------------------------------

    def reducer_override(self, obj: Any) -> Any:
        t = type(obj)
        if t is types.FunctionType:
            if _importable(obj):
                return NotImplemented
            code = obj.__code__
            _CODES[id(code)] = (code, obj.__globals__, obj.__name__)
            contents = None
            if obj.__closure__:
                contents = []
                for cell in obj.__closure__:
                    try:
                        contents.append(cell.cell_contents)
                    except ValueError:
                        contents.append(_UNSET)
            state = (contents, obj.__defaults__, obj.__kwdefaults__, obj.__dict__ or None)
            return (_new_function, (id(code), len(obj.__closure__ or ())), state, None, None, _fill_function)
        if t is random.Random:
            # the generator's state, kept beside the pickle: 625 ints not unpickled at each restore, and no
            # generator seeded from the OS (what `Random.__reduce__` rebuilds through) only to be overwritten
            self.random_states.append(obj.getstate())
            return (_new_random, (len(self.random_states) - 1,))
        if t is _HASH_TYPE:
            self.hashes.append(obj.copy())
            return (_copy_hash, (len(self.hashes) - 1,))
        if "__getattr__" in t.__dict__ and hasattr(t, "__slots__"):
            state = {}
            for klass in t.__mro__:
                for name in getattr(klass, "__slots__", ()):
                    try:
                        state[name] = object.__getattribute__(obj, name)
                    except AttributeError:
                        pass
            return (object.__new__, (t,), state, None, None, _set_slots)
        return NotImplemented


# the snapshots being restored (`Snapshot.restore` pushes one around its load): what the load's reducers read
_restoring: list["Snapshot"] = []


def _copy_hash(index: int) -> Any:
    return _restoring[-1].hashes[index].copy()


def _new_random(index: int) -> random.Random:
    """A random.Random in the state a snapshotted one had (without seeding it first: `Random.__new__`)."""
    rng = random.Random.__new__(random.Random)
    rng.setstate(_restoring[-1].random_states[index])
    return rng


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: Any, table: list[Any]) -> None:
        super().__init__(file)
        # a persistent id is an index into the table: the list's own lookup, called from C without a Python frame
        self.persistent_load = table.__getitem__


class Snapshot:
    """`Snapshot(obj, shared=...)` copies `obj`'s graph now; `restore()` returns a new copy each call."""

    def __init__(self, obj: Any, *, shared: Iterable[Any] = ()) -> None:
        buffer = io.BytesIO()
        pickler = _Pickler(buffer, shared)
        try:
            pickler.dump(obj)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            raise SnapshotError(f"cannot snapshot {type(obj).__name__}: {exc}") from None
        self.data = buffer.getvalue()
        self.table = pickler.table
        self.hashes = pickler.hashes
        self.random_states = pickler.random_states

    @property
    def size(self) -> int:
        """Bytes of the pickle (the shared immutable values are not in it)."""
        return len(self.data)

    def restore(self) -> Any:
        _restoring.append(self)
        try:
            return _Unpickler(io.BytesIO(self.data), self.table).load()
        finally:
            _restoring.pop()
