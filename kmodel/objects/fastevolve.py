"""`evolve(obj, **changes)`: attrs.evolve for the hot paths (defaulting, the API server's pipeline).

attrs.evolve looks up the class's fields and aliases and calls getattr once per field on every call. This
generates, once per class, a function that reads each field as a plain attribute (or takes it from
`changes`) and builds the new object. A class whose __init__ only stores its fields (a slotted attrs class
without validators, converters, init hooks or cached hash: every API kind) gets them stored through the
slots' descriptors directly, which skips the per-field `object.__setattr__` a frozen __init__ pays (most of
the cost of building the object); any other class gets its own __init__ called, so validators, converters
and __attrs_post_init__ still run, as with attrs.evolve. Anything unusual (an unknown name in `changes`,
or a class whose __init__ does not take every field under its own name) goes to attrs.evolve itself, so
errors are attrs.evolve's. `replacer` and `constructor` are the same idea for a fixed set of fields.
"""

from __future__ import annotations

from types import MemberDescriptorType
from typing import Any, Callable, Optional

import attrs

_EVOLVERS: dict[type, Optional[tuple[frozenset, Callable[[Any, dict], Any]]]] = {}


def evolve(obj: Any, **changes: Any) -> Any:
    cls = obj.__class__
    try:
        found = _EVOLVERS[cls]
    except KeyError:
        found = _EVOLVERS[cls] = _evolver(cls)
    if found is None or not found[0].issuperset(changes):
        return attrs.evolve(obj, **changes)
    return found[1](obj, changes)


def _evolver(cls: type) -> Optional[tuple[frozenset, Callable[[Any, dict], Any]]]:
    fields = attrs.fields(cls)
    if any(not f.init or f.kw_only or f.alias != f.name or not f.name.isidentifier() for f in fields):
        return None
    values = [f"c['{f.name}'] if '{f.name}' in c else o.{f.name}" for f in fields]
    namespace: dict[str, Any] = {"cls": cls, "_new": object.__new__}
    slots = _slot_setters(cls, fields)
    if slots is None:
        source = f"def evolve(o, c):\n    return cls({', '.join(values)})\n"
    else:  # the fields stored through their slots, as __init__ would (see `replacer`)
        lines = ["def evolve(o, c):", "    n = _new(cls)"]
        for i, value in enumerate(values):
            namespace[f"_set{i}"] = slots[i]
            lines.append(f"    _set{i}(n, {value})")
        lines.append("    return n")
        source = "\n".join(lines) + "\n"
    exec(compile(source, f"<fastevolve {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 (field names only)
    return frozenset(f.name for f in fields), namespace["evolve"]


def replacer(cls: type, *names: str) -> Callable[..., Any]:
    """A function `(obj, *values)` that builds `cls` with the fields `names` set to `values` (in that order)
    and every other field taken from `obj`: evolve for a hot path that always changes the same fields,
    without building a dict of changes.

    For a class whose __init__ only stores its arguments (a slotted attrs class without validators,
    converters, init hooks or a cached hash: every API kind), the function stores the fields itself through
    the slots' own descriptors, as that __init__ would, skipping the per-field `object.__setattr__` (with
    its wrapper checks) a frozen class's __init__ pays: about a third of the cost of building the object.
    Any other class gets its __init__ called."""
    fields = attrs.fields(cls)
    known = {f.name for f in fields}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise TypeError(f"{cls.__qualname__} has no field(s) {', '.join(unknown)}")
    if any(not f.init or f.kw_only or f.alias != f.name or not f.name.isidentifier() for f in fields):
        def replace(obj: Any, *values: Any) -> Any:
            return attrs.evolve(obj, **dict(zip(names, values)))
        return replace
    params = ", ".join(f"v_{n}" for n in names)
    values = [f"v_{f.name}" if f.name in names else f"o.{f.name}" for f in fields]
    namespace: dict[str, Any] = {"cls": cls, "_new": object.__new__}
    slots = _slot_setters(cls, fields)
    if slots is None:
        source = f"def replace(o, {params}):\n    return cls({', '.join(values)})\n"
    else:
        lines = [f"def replace(o, {params}):", "    n = _new(cls)"]
        for i, value in enumerate(values):
            namespace[f"_set{i}"] = slots[i]
            lines.append(f"    _set{i}(n, {value})")
        lines.append("    return n")
        source = "\n".join(lines) + "\n"
    exec(compile(source, f"<replacer {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 (field names only)
    return namespace["replace"]


_SPEC_REPLACERS: dict[type, Callable[[Any, Any], Any]] = {}  # kind -> replacer(kind, "spec")


def with_spec(obj: Any, spec: Any) -> Any:
    """`obj` with its `spec` replaced (`obj` itself when `spec` is its own): the admission plugins' change of a
    pod's spec, through one cached `replacer` per kind."""
    if spec is obj.spec:
        return obj
    cls = type(obj)
    replace = _SPEC_REPLACERS.get(cls)
    if replace is None:
        replace = _SPEC_REPLACERS[cls] = replacer(cls, "spec")
    return replace(obj, spec)


def _slot_setters(cls: type, fields: Any) -> Optional[list[Callable[[Any, Any], None]]]:
    """The `__set__` of each field's slot descriptor, when storing the fields is all cls.__init__ does;
    else None."""
    if (getattr(cls, "__attrs_pre_init__", None) is not None or getattr(cls, "__attrs_post_init__", None) is not None
            or "__attrs_cached_hash__" in getattr(cls, "__slots__", ()) or cls.__new__ is not object.__new__):
        return None
    setters = []
    for f in fields:
        if f.validator is not None or f.converter is not None:
            return None
        descriptor = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if type(descriptor) is not MemberDescriptorType:
            return None
        setters.append(descriptor.__set__)
    return setters


def constructor(cls: type) -> Callable[..., Any]:
    """A function that builds `cls` from all its fields, positionally, in declaration order: the class itself
    unless storing the fields is all its __init__ does (see `replacer`), in which case the slots are filled
    directly. For a frozen class built on every request (an API response, a watch event)."""
    fields = attrs.fields(cls)
    slots = _slot_setters(cls, fields)
    if slots is None or any(not f.init or f.kw_only or f.alias != f.name or not f.name.isidentifier()
                            for f in fields):
        return cls
    namespace: dict[str, Any] = {"cls": cls, "_new": object.__new__}
    lines = [f"def construct({', '.join(f.name for f in fields)}):", "    n = _new(cls)"]
    for i, f in enumerate(fields):
        namespace[f"_set{i}"] = slots[i]
        lines.append(f"    _set{i}(n, {f.name})")
    lines.append("    return n")
    exec(compile("\n".join(lines) + "\n", f"<constructor {cls.__qualname__}>", "exec"), namespace)  # noqa: S102
    return namespace["construct"]
