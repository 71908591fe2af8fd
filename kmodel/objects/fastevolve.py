"""`evolve(obj, **changes)`: attrs.evolve for the hot paths (defaulting, the API server's pipeline).

attrs.evolve looks up the class's fields and aliases and calls getattr once per field on every call. This
generates, once per class, a function that reads each field as a plain attribute (or takes it from
`changes`) and calls the class's own __init__, so validators, converters and __attrs_post_init__ (which
the API kinds do not use) still run, as with attrs.evolve. Anything unusual (an unknown name in `changes`,
or a class whose __init__ does not take every field under its own name) goes to attrs.evolve itself, so
errors are attrs.evolve's. The frozen __init__ (one object.__setattr__ per field) is most of what is left.
"""

from __future__ import annotations

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
    args = ", ".join(f"c['{f.name}'] if '{f.name}' in c else o.{f.name}" for f in fields)
    source = f"def evolve(o, c):\n    return cls({args})\n"
    namespace: dict[str, Any] = {"cls": cls}
    exec(compile(source, f"<fastevolve {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 (field names only)
    return frozenset(f.name for f in fields), namespace["evolve"]
