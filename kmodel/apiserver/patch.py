"""Patches applied to the JSON form of an object: JSON merge patch (RFC 7386, kubectl patch --type=merge), JSON
patch (RFC 6902, --type=json) and strategic merge patch (--type=strategic, kubectl apply's patches).

Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) merges maps as a merge patch does, but a list
whose field has a patch merge key merges item by item, matched by that key, instead of being replaced; a list of
scalars with the merge strategy (metadata.finalizers) is a union. Directives: ``$patch: replace`` (replace the
map), ``$patch: delete`` (delete the map, or the list item it is in), ``$retainKeys`` (drop the keys not listed),
``$deleteFromPrimitiveList/<field>`` (take values out of a scalar list), ``$setElementOrder/<field>`` (the order of
the merged list). The merge keys are upstream's struct tags for the kinds the model has, looked up by field name
(`MERGE_KEYS`), which is what those tags amount to for these kinds.
"""

from __future__ import annotations

import copy
from typing import Any, Optional


class PatchError(ValueError):
    """A patch that cannot be applied; `code` is the HTTP status upstream answers with (400 or 422)."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# -- JSON patch ---------------------------------------------------------------------------------------------

def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'invalid JSON pointer "{path}"', 400)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], op: str, path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"{op} operation does not apply: doc is missing path: \"{path}\"")
    return node


def _get(doc: Any, path: str, op: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, last = _parent(doc, parts, op, path), parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}"')


def _add(doc: Any, path: str, value: Any, op: str = "add") -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(doc, parts, op, path), parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}"')
    else:
        raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}"')
    return doc


def _remove(doc: Any, path: str, op: str = "remove") -> Any:
    parts = _pointer(path)
    parent, last = _parent(doc, parts, op, path), parts[-1] if parts else ""
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}"')
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: apply the operations in order to a copy of `target` (PatchError when one does not apply)."""
    if not isinstance(operations, list):
        raise PatchError("the JSON patch must be a list of operations", 400)
    doc = copy.deepcopy(target)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise PatchError("a JSON patch operation must be an object with op and path", 400)
        op, path = operation["op"], operation["path"]
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation.get("value")))
        elif op == "remove":
            doc = _remove(doc, path)
        elif op == "replace":
            _get(doc, path, op)
            doc = _add(_remove(doc, path, op), path, copy.deepcopy(operation.get("value")), op) if path else \
                copy.deepcopy(operation.get("value"))
        elif op in ("move", "copy"):
            value = copy.deepcopy(_get(doc, operation.get("from", ""), op))
            if op == "move":
                doc = _remove(doc, operation.get("from", ""), op)
            doc = _add(doc, path, value, op)
        elif op == "test":
            if _get(doc, path, op) != operation.get("value"):
                raise PatchError(f'testing value {path} failed: test failed')
        else:
            raise PatchError(f'Unexpected kind: {op}', 400)
    return doc


# -- strategic merge patch ----------------------------------------------------------------------------------

#: field name -> patch merge key of the lists with patchStrategy "merge" in the kinds the model has (upstream's
#: struct tags); "ports" is keyed by containerPort in a container and by port in a Service (see `_merge_key`)
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "imagePullSecrets": "name",
    "hostAliases": "ip", "conditions": "type", "addresses": "type", "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey", "resourceClaims": "name", "podIPs": "ip", "hostIPs": "ip",
    "ports": "port",
}
#: scalar lists merged as sets (patchStrategy "merge" on a list of strings)
MERGED_SCALAR_LISTS = ("finalizers",)
_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_ORDER = "$setElementOrder/"


def _merge_key(field: str, *lists: Any) -> Optional[str]:
    key = MERGE_KEYS.get(field)
    if field == "ports":
        items = [i for lst in lists if isinstance(lst, list) for i in lst if isinstance(i, dict)]
        if any("containerPort" in i for i in items):
            return "containerPort"
    return key


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Apply a strategic merge patch to `target` (a JSON object); returns the new object."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object", 400)
    result = _merge_map(target if isinstance(target, dict) else {}, patch)
    return {} if result is None else result


def _merge_map(target: dict, patch: dict) -> Optional[dict]:
    directive = patch.get(_DIRECTIVE)
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != _DIRECTIVE}
    out = dict(target)
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key == _DIRECTIVE or key == _RETAIN:
            continue
        if key.startswith(_ORDER):
            orders[key[len(_ORDER):]] = value if isinstance(value, list) else []
            continue
        if key.startswith(_DELETE_FROM):
            field = key[len(_DELETE_FROM):]
            drop = value if isinstance(value, list) else []
            if isinstance(out.get(field), list):
                out[field] = [v for v in out[field] if v not in drop]
            continue
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            merged = _merge_map(out.get(key) if isinstance(out.get(key), dict) else {}, value)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        elif isinstance(value, list):
            out[key] = _merge_list(key, out.get(key), value)
        else:
            out[key] = value
    for field, order in orders.items():
        if isinstance(out.get(field), list):
            out[field] = _ordered(field, out[field], order)
    retain = patch.get(_RETAIN)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_list(field: str, current: Any, patch: list) -> list:
    current = current if isinstance(current, list) else []
    if field in MERGED_SCALAR_LISTS:
        return current + [v for v in patch if v not in current]
    key = _merge_key(field, current, patch)
    if key is None or not all(isinstance(i, dict) for i in patch):
        if len(patch) == 1 and isinstance(patch[0], dict) and patch[0].get(_DIRECTIVE) == "replace":
            return []
        return patch
    out = list(current)
    for item in patch:
        if item.get(_DIRECTIVE) == "replace":
            return [i for i in patch if i.get(_DIRECTIVE) != "replace"]
        match = next((n for n, c in enumerate(out) if isinstance(c, dict) and key in item
                      and c.get(key) == item.get(key)), None)
        if item.get(_DIRECTIVE) == "delete":
            if match is not None:
                del out[match]
            continue
        if match is None:
            out.append({k: v for k, v in item.items() if k != _DIRECTIVE})
        else:
            merged = _merge_map(out[match], item)
            if merged is None:
                del out[match]
            else:
                out[match] = merged
    return out


def _ordered(field: str, items: list, order: list) -> list:
    """`items` in the order `$setElementOrder` gives (items it does not name keep their place after those)."""
    key = _merge_key(field, items)
    if key is None:
        rank = {repr(v): n for n, v in enumerate(order)}
        return sorted(items, key=lambda v: rank.get(repr(v), len(rank)))
    rank = {repr(o.get(key)): n for n, o in enumerate(order) if isinstance(o, dict)}
    return sorted(items, key=lambda v: rank.get(repr(v.get(key)) if isinstance(v, dict) else "", len(rank)))
