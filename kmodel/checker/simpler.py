"""Simpler variants of an action: the second pass of minimization (kmodel.checker.minimize) tries them.

Theory of operation
-------------------
Each action class declares, next to its fields, which of them have simpler values: `Action.simplest`, a tuple
of (field name, `Simplify`), in the order the fields are tried. A `Simplify` maps a field's value to its simpler
values, simplest first: the first node, the smallest count, no extras, the default. `variants` turns the table
into whole actions, one field changed at a time (or a few fields together, as one tuple: a table row's values,
such as a node label's key and value). An action with more to it than its own fields overrides
`Action.simpler` instead (`Fault`: the fault event it wraps).

Every value a `Simplify` lists is strictly simpler than the one it was given (a smaller number, an earlier entry
of a fixed domain, the default where the value was not), so a field can only be simplified a bounded number
of times and the pass ends. Orders are fixed tuples and numbers, never sets: the variants of an action are a
function of the action. A variant may be one the model refuses (a node that does not exist, a pod spec that
cannot change): its replay then fails differently or not at all, and it is not kept.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import attrs

#: a field's value -> its strictly simpler values, simplest first
Simplify = Callable[[Any], tuple]
#: an action's table of them (`Action.simplest`): (field name, or a tuple of names simplified together, Simplify)
Simplest = tuple[tuple[Any, Simplify], ...]


def fewer(least: int, step: int = 1) -> Simplify:
    """Whole numbers down toward `least`: `least` itself, then halfway there, then one `step` less (values `step`
    apart from `least`, so durations drawn in whole seconds stay whole seconds)."""

    def simpler(value: Any) -> tuple:
        if not isinstance(value, int) or isinstance(value, bool) or value <= least:
            return ()
        half = least + ((value - least) // 2 // step) * step
        one_less = least + ((value - least - 1) // step) * step
        out: list[int] = []
        for v in (least, half, one_less):
            if least <= v < value and v not in out:
                out.append(v)
        return tuple(out)

    return simpler


def default(simplest: Any) -> Simplify:
    """The value `simplest` (a flag off, no extra, the admin) wherever the value is another."""

    def simpler(value: Any) -> tuple:
        return () if value == simplest else (simplest,)

    return simpler


def earlier(domain: Sequence[Any]) -> Simplify:
    """The entries of `domain` (listed simplest first) before the value, in order; none for a value not in it."""
    entries = tuple(domain)

    def simpler(value: Any) -> tuple:
        return entries[:entries.index(value)] if value in entries else ()

    return simpler


def _node_number(node: Any) -> int:
    """N of a model node's name node-N (kmodel.cluster.config.ClusterConfig.node_names), else 0."""
    if isinstance(node, str) and node.startswith("node-") and node[5:].isdigit():
        return int(node[5:])
    return 0


def earlier_node(unpinned: bool = False) -> Simplify:
    """A node toward the first one: node-1, node-2, ... up to the one before the value; with `unpinned`, "" (no
    node: the scheduler places it) first."""

    def simpler(value: Any) -> tuple:
        if unpinned and value == "":
            return ()
        nodes = tuple(f"node-{k}" for k in range(1, _node_number(value)))
        return (("",) if unpinned else ()) + nodes

    return simpler


def each(simplify: Simplify) -> Simplify:
    """A tuple simplified one position at a time, the first position first."""

    def simpler(value: Any) -> tuple:
        out = []
        for k, item in enumerate(value):
            out.extend(value[:k] + (v,) + value[k + 1:] for v in simplify(item))
        return tuple(out)

    return simpler


def one_fewer(value: Any) -> tuple:
    """A tuple with one member left out (the first first), while at least one is left."""
    if len(value) <= 1:
        return ()
    return tuple(value[:k] + value[k + 1:] for k in range(len(value)))


def variants(record: Any, table: Simplest) -> Iterator[Any]:
    """`record` (a frozen attrs value) with one entry of `table` simplified, in the table's order and each entry's
    simpler values in theirs. An entry names a field, or a tuple of fields simplified as one tuple value. A
    combination the class refuses (its validators) is left out."""
    for fields, simplify in table:
        together = isinstance(fields, tuple)
        value = tuple(getattr(record, f) for f in fields) if together else getattr(record, fields)
        for simpler in simplify(value):
            changes = dict(zip(fields, simpler)) if together else {fields: simpler}
            try:
                yield attrs.evolve(record, **changes)
            except (TypeError, ValueError):
                continue


def describe_change(before: Any, after: Any) -> str:
    """What a simplification changed, in a line: ``scale-deployment: replicas 3 -> 0`` (a nested event's fields as
    ``event.delay_ms``)."""
    changes: list[str] = []

    def diff(prefix: str, old: Any, new: Any) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            for key in old:
                if key not in ("name", "kind", "say"):
                    diff(f"{prefix}{key}.", old.get(key), new.get(key))
        elif old != new:
            changes.append(f"{prefix[:-1]} {_show(old)} -> {_show(new)}")

    diff("", before.to_json(), after.to_json())
    return f"{before.kind}: " + ", ".join(changes)


def _show(value: Any) -> str:
    if value == "":
        return '""'
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)
