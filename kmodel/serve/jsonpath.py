"""The JSONPath of a CustomResourceDefinition's additionalPrinterColumns, evaluated on an object's JSON.

A column's ``jsonPath`` is a "simple" path (apiextensions validates it so): fields after dots (``.spec.replicas``,
with ``\\.`` for a dot inside a key: ``.metadata.labels.app\\.kubernetes\\.io/name``), list indexes (``[0]``), the
wildcard ``[*]``, and filters on a field's value (``[?(@.type=="Ready")]``), as client-go's util/jsonpath reads
them. `first(doc, path)` is the first value found, as the CRD table convertor prints only the first result.
A path outside this subset finds nothing (its cell is empty), never an error.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

#: one step: a field name (dots escaped with a backslash), or a bracket: index, wildcard or filter
_STEP = re.compile(r"""\.((?:\\.|[^.\[\\])+)|\[(\d+|\*|\?\(@\.([\w-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\))\]""")
MISSING = object()


def steps(path: str) -> list[tuple[str, Any]]:
    """The steps of `path`: ("field", name), ("index", n), ("all", None) or ("filter", (field, value)); an empty
    list when the path is not one this evaluator reads."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            return []
        name, bracket, key, dq, sq = m.groups()
        if name is not None:
            out.append(("field", name.replace("\\.", ".")))
        elif bracket == "*":
            out.append(("all", None))
        elif bracket.isdigit():
            out.append(("index", int(bracket)))
        else:
            out.append(("filter", (key, dq if dq is not None else sq)))
        pos = m.end()
    return out


def _walk(value: Any, todo: list[tuple[str, Any]]) -> Iterator[Any]:
    if not todo:
        yield value
        return
    (kind, arg), rest = todo[0], todo[1:]
    if kind == "field":
        if isinstance(value, dict) and arg in value:
            yield from _walk(value[arg], rest)
    elif kind == "index":
        if isinstance(value, (list, tuple)) and arg < len(value):
            yield from _walk(value[arg], rest)
    elif kind == "all":
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
        for item in items:
            yield from _walk(item, rest)
    elif isinstance(value, (list, tuple)):  # filter
        key, wanted = arg
        for item in value:
            if isinstance(item, dict) and str(item.get(key, MISSING)) == wanted:
                yield from _walk(item, rest)


def first(doc: Any, path: str) -> Any:
    """The first value `path` finds in `doc`, MISSING when it finds none."""
    todo = steps(path)
    if not todo:
        return MISSING
    return next(_walk(doc, todo), MISSING)
