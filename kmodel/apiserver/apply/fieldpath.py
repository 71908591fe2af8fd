"""Field paths and field sets (structured-merge-diff's fieldpath package): what managedFields records.

A path is a tuple of path elements, each a pair: ``("f", name)`` a struct field or map entry, ``("k", keys)`` an
item of an associative list (keys: the compact JSON of its key fields, sorted), ``("v", value)`` an item of a set
list (its compact JSON), ``("i", n)`` an item of a list by index. A field set is a frozenset of paths.

`walk(value, shape)` reads an object (its JSON form) once and returns:

* its nodes: every path in it (struct fields, map entries, list items, down to scalars and atomic values), each
  with its value where it is a leaf (a scalar or an atomic node), for `compare`;
* its field set, as typed.ToFieldSet builds it: every leaf, every list item and map entry, and a struct field
  only where it is null or an empty object.

FieldsV1 is the JSON form of a set: ``{"f:spec": {"f:replicas": {}}}``; a node that is in the set and has
children in it too carries ``".": {}``. Paths print as fieldpath.Path.String does: ``.spec.replicas``,
``.spec.containers[name="nginx"].image``, ``.metadata.finalizers[="a"]``, ``[0]``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from kmodel.apiserver.apply.schema import KEY_DEFAULTS, LIST, SET, ASSOCIATIVE, SCALAR, Shape, shape_of_value

Path = tuple
FieldSet = frozenset
_INNER = object()  # a node with children: its value is not compared
_TYPE_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def compact(value: Any) -> str:
    """Go's json.Marshal of a value, keys sorted (map keys as encoding/json orders them)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def item_element(shape: Shape, item: Any, index: int) -> tuple:
    """The path element of a list item: its keys, its value, or its index."""
    if shape.list_type == SET:
        return ("v", compact(item))
    if shape.list_type == ASSOCIATIVE and isinstance(item, dict):
        keys = {}
        for key in shape.keys:
            value = item.get(key, KEY_DEFAULTS.get(key))
            if value is not None:
                keys[key] = value
        if keys:
            return ("k", compact(keys))
    return ("i", index)


def walk(value: Any, shape: Shape) -> tuple[dict[Path, Any], set[Path]]:
    """(nodes, field set) of an object's JSON form; see the module docstring."""
    nodes: dict[Path, Any] = {}
    members: set[Path] = set()
    _walk(value, shape, (), nodes, members)
    return nodes, members


def _walk(value: Any, shape: Shape, path: Path, nodes: dict, members: set) -> None:
    shape = shape_of_value(shape, value)
    if shape.kind == SCALAR or shape.atomic or value is None:
        nodes[path] = value
        members.add(path)
        return
    if shape.kind == LIST:
        if not isinstance(value, list):
            nodes[path] = value
            members.add(path)
            return
        nodes[path] = _INNER
        item_shape = shape.item()
        for n, item in enumerate(value):
            child = path + (item_element(shape, item, n),)
            _walk(item, item_shape, child, nodes, members)
            members.add(child)
        return
    if not isinstance(value, dict):
        nodes[path] = value
        members.add(path)
        return
    nodes[path] = _INNER
    for key, item in value.items():
        child_shape, is_field = shape.child(key)
        child = path + (("f", key),)
        _walk(item, child_shape, child, nodes, members)
        if not is_field or item is None or (isinstance(item, dict) and not item):
            members.add(child)


def compare(old: Mapping[Path, Any], new: Mapping[Path, Any]) -> tuple[set, set, set]:
    """(added, modified, removed) between two objects' nodes, as typed.Compare: a node only one side has is added
    or removed, a leaf (on both sides) whose value differs is modified; a granular list or map that was null is
    neither (its items are added)."""
    added = {p for p in new if p not in old}
    removed = {p for p in old if p not in new}
    modified = {p for p, v in new.items() if p in old and v is not _INNER and old[p] is not _INNER
                and not _same(v, old[p])}
    return added, modified, removed


def _same(a: Any, b: Any) -> bool:
    return a is b or (a == b and type(a) is type(b))


def under(paths: Iterable[Path], prefix: Path) -> set:
    """The paths at or beneath `prefix`."""
    n = len(prefix)
    return {p for p in paths if p[:n] == prefix}


# -- FieldsV1 -----------------------------------------------------------------------------------------------

def _element_text(pe: tuple) -> str:
    kind, value = pe
    return f"{kind}:{value}"


def _element_of(text: str) -> tuple:
    kind, _, value = text.partition(":")
    if kind not in _TYPE_RANK:
        raise ValueError(f"unknown path element {text!r}")
    return (kind, int(value) if kind == "i" else value)


def element_key(pe: tuple) -> tuple:
    """The order of path elements: fields, then keys, values and indices, each by its value."""
    return (_TYPE_RANK[pe[0]], pe[1])


def to_fields_v1(paths: Iterable[Path]) -> dict:
    """A field set as FieldsV1 JSON."""
    tree: dict = {}
    for path in paths:
        node = tree
        for pe in path:
            node = node.setdefault(pe, {})
        node[None] = True  # a member
    return _emit(tree, top=True)


def _emit(node: dict, top: bool = False) -> dict:
    out: dict = {}
    children = sorted((k for k in node if k is not None), key=element_key)
    if node.get(None) and children and not top:
        out["."] = {}
    for pe in children:
        out[_element_text(pe)] = _emit(node[pe])
    return out


def from_fields_v1(data: Any) -> FieldSet:
    """The field set of a FieldsV1 JSON object (ValueError when it is not one)."""
    out: set = set()
    if not isinstance(data, Mapping):
        raise ValueError("fieldsV1 must be an object")
    _read(data, (), out)
    return frozenset(out)


def _read(node: Mapping, path: Path, out: set) -> None:
    for text, child in node.items():
        if text == ".":
            out.add(path)
            continue
        if not isinstance(child, Mapping):
            raise ValueError(f"fieldsV1 entry {text!r} must be an object")
        sub = path + (_element_of(text),)
        if not child:
            out.add(sub)
        else:
            _read(child, sub, out)


# -- printing -----------------------------------------------------------------------------------------------

def path_string(path: Path) -> str:
    """fieldpath.Path.String(): ``.spec.containers[name="nginx"].image``."""
    parts = []
    for kind, value in path:
        if kind == "f":
            parts.append("." + value)
        elif kind == "k":
            keys = json.loads(value)
            parts.append("[" + ",".join(f"{k}={compact(keys[k])}" for k in sorted(keys)) + "]")
        elif kind == "v":
            parts.append(f"[={value}]")
        else:
            parts.append(f"[{value}]")
    return "".join(parts)


def iteration_key(path: Path) -> tuple:
    """The order fieldpath.Set.Iterate visits paths in: at each level a set's members before its children, each
    group in element order."""
    last = len(path) - 1
    return tuple((0 if n == last else 1, element_key(pe)) for n, pe in enumerate(path))
