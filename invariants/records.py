"""Records: what components keep for invariants to read, declared by the component and read through `record`.

An invariant judges from recorded facts: a controller's log of what it heard (`heard`), an API client's
updates and informer lives, an API server's log of what etcd sent it. Such an attribute is a record, and the
class that keeps it declares it, in a class attribute `RECORDS` (a frozenset of attribute names; a subclass
adds to its base's):

    class NodeLifecycleController(Controller):
        RECORDS = Controller.RECORDS | {"heard"}

An invariant reads a record with `record(holder, "heard")`, never with `getattr(holder, "heard", None)`: a name
the holder's class does not declare raises UndeclaredRecord, a declared one the object lacks raises
MissingRecord, so renaming a record, or reading one no component keeps, fails the check with a message instead
of weakening it without a sound. `declares(holder, "heard")` says whether a holder is one that keeps the
record at all (of the components, only a node lifecycle controller keeps `heard`), which is how an invariant
picks the components it reads.

A record is a log or table a component keeps for its observers, or an attribute only some holders have. What
every holder of a kind has and the model itself uses (a kubelet's runtime, kube-proxy's rules) is read as an
attribute: a rename fails there with AttributeError already.

tests/invariants/test_records.py lists every record each invariant and sometimes property reads, and fails
when one reads a record the list does not name or stops reading one it names.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional


class RecordError(LookupError):
    """An invariant read a record that its holder does not declare, or that is not there."""


class UndeclaredRecord(RecordError):
    pass


class MissingRecord(RecordError):
    pass


#: while `reads()` collects: "Class.record" of every record read (the class that declares it)
_reads: Optional[set[str]] = None


#: what a class that declares no records declares (one value, not a new empty frozenset per question)
_NONE: frozenset[str] = frozenset()


def declared(holder: Any) -> frozenset[str]:
    """The records `holder`'s class declares (none for a class that declares none)."""
    return getattr(type(holder), "RECORDS", _NONE)


# `declares` and `record` are asked about a million times in a dev run (every invariant check reads its records
# through them), so each reads the class's RECORDS itself rather than through a call of `declared`.


def declares(holder: Any, name: str) -> bool:
    """Whether `holder` is one that keeps the record `name` (False for None)."""
    return name in getattr(type(holder), "RECORDS", _NONE)


def record(holder: Any, name: str) -> Any:
    """The record `name` of `holder`: UndeclaredRecord if its class does not declare it, MissingRecord if it
    declares it and does not have it."""
    if name not in getattr(type(holder), "RECORDS", _NONE):
        raise UndeclaredRecord(
            f"{type(holder).__qualname__} declares no record {name!r} (it declares {sorted(declared(holder))}): "
            f"add it to the RECORDS of the class that keeps it, or read a record it declares")
    try:
        value = getattr(holder, name)
    except AttributeError:
        raise MissingRecord(f"{type(holder).__qualname__} declares the record {name!r} but has no such attribute: "
                            f"set it in __init__ (None where there is nothing to record)") from None
    if _reads is not None:
        _reads.add(declaring_class(type(holder), name))
    return value


def declaring_class(cls: type, name: str) -> str:
    """"Class.name" of the class in `cls`'s bases (or `cls`) that first declares the record `name`."""
    for base in reversed(cls.__mro__):
        if name in base.__dict__.get("RECORDS", ()):
            return f"{base.__name__}.{name}"
    return f"{cls.__name__}.{name}"


@contextmanager
def reads() -> Iterator[set[str]]:
    """Collect every record read inside the block, as "Class.record" of the class that declares it."""
    global _reads
    outer, _reads = _reads, set()
    try:
        yield _reads
    finally:
        _reads = outer
