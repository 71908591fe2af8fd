"""Drawing objects from a CustomResourceDefinition's structural schema: valid ones, and ways to break them.

Theory of operation
-------------------
`valid(schema)` is a Hypothesis strategy of values the schema accepts (the keywords of a structural
openAPIV3Schema the API server checks, kmodel/apiserver/openapi_schema.py): `type`, `properties` and
`required`, `enum`, `minimum`/`maximum` (with the boolean `exclusiveMinimum`/`exclusiveMaximum`),
`minLength`/`maxLength`, `pattern`, `minItems`/`maxItems` and `items`, `nullable`,
`x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields`. Values are small (short strings, a
few items, numbers near their bounds) and shrink toward the least one: optional properties left out, the
lowest number, the shortest string.

`breakages(schema)` lists, in schema order, one way each constraint can be broken: (path, value) where value
is what to put there, or `REMOVE` for a required property left out. `broken(value, breakage)` applies one.
An unknown property is one of them where the schema prunes or refuses unknown fields (kubectl's strict field
validation refuses it with 400).
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

from hypothesis import strategies as st

#: a breakage's value meaning "leave this required property out"
REMOVE = object()
#: the property a breakage adds where the schema knows no such field
UNKNOWN_FIELD = "kmodelUnknownField"
#: at most this many characters past a string's least length, and items past an array's least size
SPAN = 6
#: the characters a string without a pattern is drawn from (a DNS label's)
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-"

#: what a string drawn from a pattern is made of
PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)

Path = tuple[str, ...]
Breakage = tuple[Path, Any]


def _bounds(schema: dict) -> tuple[int, int]:
    """The least and greatest whole number the schema allows (SPAN apart when one side is open)."""
    lo, hi = schema.get("minimum"), schema.get("maximum")
    lo = None if lo is None else int(lo) + (1 if schema.get("exclusiveMinimum") is True else 0)
    hi = None if hi is None else int(hi) - (1 if schema.get("exclusiveMaximum") is True else 0)
    if lo is None:
        lo = 0 if hi is None or hi >= 0 else hi - SPAN
    if hi is None:
        hi = lo + SPAN
    return lo, hi


def valid(schema: dict) -> st.SearchStrategy:
    """Values `schema` accepts (see the module docstring)."""
    drawn = _valid(schema)
    return st.one_of(st.none(), drawn) if schema.get("nullable") else drawn


def _valid(schema: dict) -> st.SearchStrategy:
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, SPAN), st.text(ALPHABET[:26], min_size=1, max_size=SPAN))
    kind = schema.get("type")
    if kind == "object":
        properties: dict = schema.get("properties") or {}
        if not properties:
            additional = schema.get("additionalProperties")
            if isinstance(additional, dict):  # a map: a few keys, values as its schema says
                return st.dictionaries(st.sampled_from(["a", "b", "c"]), valid(additional), max_size=2)
            return st.just({})
        required = [name for name in schema.get("required") or [] if name in properties]
        return st.fixed_dictionaries({name: valid(properties[name]) for name in required},
                                     optional={name: valid(sub) for name, sub in properties.items()
                                               if name not in required})
    if kind == "array":
        least = int(schema.get("minItems", 0))
        most = min(int(schema.get("maxItems", least + SPAN)), least + SPAN)
        return st.lists(valid(schema.get("items") or {}), min_size=least, max_size=most)
    if kind in ("integer", "number"):
        lo, hi = _bounds(schema)
        return st.integers(lo, hi)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        least = int(schema.get("minLength", 0))
        most = min(int(schema.get("maxLength", least + SPAN)), least + SPAN)
        if "pattern" in schema:
            # printable ASCII only: Python's \d and \w match more than the API server's (Go's RE2) do
            return st.from_regex(schema["pattern"], fullmatch=True, alphabet=PRINTABLE).filter(
                lambda s: least <= len(s) <= int(schema.get("maxLength", len(s))))
        return st.text(ALPHABET, min_size=least, max_size=most)
    return st.just({})  # no type: x-kubernetes-preserve-unknown-fields alone


def breakages(schema: dict, path: Path = ()) -> list[Breakage]:
    """One way to break each constraint of `schema` (see the module docstring), in schema order."""
    found: list[Breakage] = []
    kind = schema.get("type")
    if "enum" in schema:
        found.append((path, "kmodel-not-in-enum" if kind == "string" else -1))
    if kind in ("integer", "number"):
        lo, hi = _bounds(schema)
        if "minimum" in schema:
            found.append((path, lo - 1))
        if "maximum" in schema:
            found.append((path, hi + 1))
        found.append((path, "not-a-number"))
    elif kind == "string" and "enum" not in schema:
        if schema.get("minLength", 0) > 0:
            found.append((path, ""))
        if "maxLength" in schema:
            found.append((path, "x" * (int(schema["maxLength"]) + 1)))
        found.append((path, 7))
    elif kind == "boolean":
        found.append((path, "yes"))
    elif kind == "array":
        if "maxItems" in schema:
            item = schema.get("items") or {}
            found.append((path, [_least(item)] * (int(schema["maxItems"]) + 1)))
        found.append((path, "not-a-list"))
    elif kind == "object" and path:
        for name in schema.get("required") or []:
            found.append(((*path, name), REMOVE))
        if schema.get("properties") and not schema.get("x-kubernetes-preserve-unknown-fields"):
            found.append(((*path, UNKNOWN_FIELD), "x"))
    for name, sub in (schema.get("properties") or {}).items():
        found.extend(breakages(sub, (*path, name)))
    return found


def _least(schema: dict) -> Any:
    """The simplest value of a schema: what an oversized array is filled with."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind in ("integer", "number"):
        return _bounds(schema)[0]
    if kind == "string":
        return "a" * int(schema.get("minLength", 1) or 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return {}


def broken(value: Any, breakage: Breakage) -> Any:
    """`value` (a dict drawn from its schema) with `breakage` applied: a copy."""
    path, bad = breakage
    out = copy.deepcopy(value)
    if not path:
        return bad
    parent = out
    for key in path[:-1]:
        if not isinstance(parent.get(key), dict):
            parent[key] = {}
        parent = parent[key]
    if bad is REMOVE:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = bad
    return out


def drawn_part(data: Any, schema: dict, part: str, breakage: int, label: str) -> dict:
    """{part: a value of `schema`} drawn with Hypothesis' `data` (labelled `label`), broken as the `breakage` INDEX
    draw says (pick_breakage): a custom object's top-level property (spec, status) drawn from its schema."""
    value = {part: data.draw(valid(schema), label=label)}
    chosen = pick_breakage(breakage, breakages(schema, (part,)))
    return broken(value, chosen) if chosen is not None else value


def pick_breakage(index: int, found: Sequence[Breakage]) -> Any:
    """The breakage an INDEX draw names: each at its own index from 1 on, none (a valid value) at 0, where it
    shrinks, and everywhere past them, so most drawn values are valid."""
    return found[index - 1] if 1 <= index <= len(found) else None
