"""`evolve(obj, **changes)`: attrs.evolve for the pipeline's hot path, about twice as fast.

attrs.evolve looks up the class's fields and aliases on every call; this keeps each class's field names in a
dict and calls the generated __init__ with keywords (validators and converters, which the API kinds do not
use, would still run).
"""

from __future__ import annotations

from typing import Any

import attrs

_NAMES: dict[type, tuple[str, ...]] = {}


def evolve(obj: Any, **changes: Any) -> Any:
    cls = obj.__class__
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(a.name for a in attrs.fields(cls))
    for name in names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)
