"""The two value operations of an apply (structured-merge-diff's typed.Merge and RemoveItems), on JSON forms.

`merge(live, config, shape)`: the applied configuration over the live object. Structs and maps merge key by key;
scalars and atomic nodes are replaced by the configuration's; an associative list merges item by item, matched
by its keys, and a set list value by value: items only the live list has keep their place, the configuration's
come in its order (mergingWalker.visitListItems).

`remove(value, shape, paths, kept)`: the value without the nodes at `paths` (the fields an applier owned before
and neither it nor anyone else owns now), except a node beneath which a kept path still lies (another
manager's field inside a removed item keeps the item, with only what is owned).
"""

from __future__ import annotations

import copy
from typing import Any, Collection

from kmodel.apiserver.apply.fieldpath import Path, item_element
from kmodel.apiserver.apply.schema import LIST, SCALAR, Shape, shape_of_value


def merge(live: Any, config: Any, shape: Shape) -> Any:
    """`config` applied over `live` (neither is changed)."""
    shape = shape_of_value(shape, config)
    if live is None or shape.kind == SCALAR or shape.atomic or config is None:
        return copy.deepcopy(config)
    if shape.kind == LIST:
        if not isinstance(live, list) or not isinstance(config, list):
            return copy.deepcopy(config)
        return _merge_list(live, config, shape)
    if not isinstance(live, dict) or not isinstance(config, dict):
        return copy.deepcopy(config)
    out = dict(live)
    for key, value in config.items():
        child, _ = shape.child(key)
        out[key] = merge(live.get(key), value, child) if key in live else copy.deepcopy(value)
    return out


def _merge_list(live: list, config: list, shape: Shape) -> list:
    item_shape = shape.item()
    live_keyed = {item_element(shape, item, n): item for n, item in enumerate(live)}
    config_order = [(item_element(shape, item, n), item) for n, item in enumerate(config)]
    config_keys = {pe for pe, _ in config_order}
    if any(pe[0] == "i" for pe in config_keys):
        return copy.deepcopy(config)  # items without keys: the list is replaced, as an atomic one
    out: list = []
    taken = 0  # the configuration's items emitted so far
    for n, item in enumerate(live):
        pe = item_element(shape, item, n)
        if pe not in config_keys:
            out.append(item)
            continue
        # a shared item: the configuration's items up to it come first, in its order
        while taken < len(config_order):
            cpe, citem = config_order[taken]
            taken += 1
            out.append(merge(live_keyed.get(cpe), citem, item_shape))
            if cpe == pe:
                break
    for cpe, citem in config_order[taken:]:
        out.append(merge(live_keyed.get(cpe), citem, item_shape))
    return out


def remove(value: Any, shape: Shape, paths: Collection[Path], kept: Collection[Path]) -> Any:
    """`value` without the nodes at `paths`, but with any node that is a prefix of a path in `kept`."""
    if not paths:
        return value
    prefixes = {p[:n] for p in kept for n in range(len(p) + 1)}
    return _remove(value, shape, (), set(paths), prefixes)


def _remove(value: Any, shape: Shape, path: Path, paths: set, prefixes: set) -> Any:
    shape = shape_of_value(shape, value)
    if shape.kind == SCALAR or shape.atomic:
        return value
    if shape.kind == LIST and isinstance(value, list):
        item_shape, out = shape.item(), []
        for n, item in enumerate(value):
            child = path + (item_element(shape, item, n),)
            if child in paths and child not in prefixes:
                continue
            out.append(_remove(item, item_shape, child, paths, prefixes))
        return out
    if isinstance(value, dict):
        out_map = {}
        for key, item in value.items():
            child = path + (("f", key),)
            if child in paths and child not in prefixes:
                continue
            child_shape, _ = shape.child(key)
            out_map[key] = _remove(item, child_shape, child, paths, prefixes)
        return out_map
    return value
