"""Validation ratcheting of custom objects (CRDValidationRatcheting: beta and on by default in Kubernetes 1.30
to 1.32, GA in 1.33), as apiextensions-apiserver pkg/apiserver/validation/ratcheting.go does it.

Theory of operation
-------------------
An UPDATE (or patch, or status write) of a custom object is validated against the CRD's schema as a create
is, walking the new object, but each schema node also carries the value the old object had at the same place
(its correlated old value, a `Node`). Once a node is checked, the errors found at it and beneath it are
dropped when the node is unchanged: upstream turns them into warnings, which the model does not send. So a
value the update left as it was may keep breaking a schema tightened since it was written; a changed value,
or one the old object did not have, is validated as usual.

Correlation (ratchetingValueValidator.SubPropertyValidator / correlateOldValueForChildAtNewIndex):

* a property correlates with the old object's property of the same name, when the old object has it;
* a list item correlates by index (the same position in the old list) when the list has no
  `x-kubernetes-list-type`, by its keys (`x-kubernetes-list-map-keys`) when the list type is `map`, and not
  at all for `set` and `atomic` lists: their items are validated as new ones.

Unchanged (CachedDeepEqual, k8s.io/apiserver/pkg/cel/common/equality.go): both null; two scalars of the same
JSON type and value (reflect.DeepEqual on the decoded JSON: 3 and 3.0 are an int64 and a float64, so they
differ); two lists of the same length whose items were all correlated and are all unchanged, or, for a list
whose items are not correlated (`set`, `atomic`), that are equal as a whole (reflect.DeepEqual: upstream
treats a non-correlatable list as a unit), while an item of a `map` list with no old item makes its list
changed; two objects with the same number of keys, both empty or every old key a property the walk
correlated and unchanged. A key the walk did not visit (one no schema declares under
`x-kubernetes-preserve-unknown-fields`, or beneath a node whose type was wrong) makes its object count as
changed: upstream's comparison is built from the nodes its walk visited.
"""

from __future__ import annotations

from typing import Any, Optional

LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"


class Node:
    """A schema node's new value and its correlated old value, with the children the walk correlated."""

    __slots__ = ("old", "new", "children", "map_list", "_unchanged")

    def __init__(self, old: Any, new: Any) -> None:
        self.old = old
        self.new = new
        self.children: dict[Any, Node] = {}
        self.map_list = False  # a list of x-kubernetes-list-type map: an uncorrelated item makes it changed
        self._unchanged: Optional[bool] = None

    def property(self, key: str, value: Any) -> Optional["Node"]:
        """The node of property `key` (new value `value`), or None when the old object lacks it."""
        if not isinstance(self.old, dict) or key not in self.old:
            return None
        child = self.children[key] = Node(self.old[key], value)
        return child

    def item(self, schema: dict, index: int, value: Any) -> Optional["Node"]:
        """The node of list item `index` (new value `value`) of a list whose schema is `schema`, or None when
        no old item correlates with it."""
        old = self.old
        if not isinstance(old, (list, tuple)) or not isinstance(self.new, (list, tuple)):
            return None
        list_type = schema.get(LIST_TYPE)
        if list_type == "map":
            self.map_list = True
            found = _by_keys(old, tuple(schema.get(LIST_MAP_KEYS) or ()), value)
        elif list_type in ("set", "atomic"):
            return None  # not correlatable by item: the list ratchets only as a whole
        else:
            found = old[index] if index < len(old) else _NONE
        if found is _NONE:
            return None
        child = self.children[index] = Node(found, value)
        return child

    def unchanged(self) -> bool:
        """Whether the new value equals the old one, as upstream's CachedDeepEqual decides it."""
        if self._unchanged is None:
            self._unchanged = self._compare()
        return self._unchanged

    def _compare(self) -> bool:
        old, new = self.old, self.new
        if old is None or new is None:
            return old is None and new is None
        old_list, new_list = isinstance(old, (list, tuple)), isinstance(new, (list, tuple))
        if old_list or new_list:
            if not (old_list and new_list) or len(old) != len(new):
                return False
            for i in range(len(new)):
                if i not in self.children:
                    # upstream: a list none of whose items correlates is compared whole; a map list is changed
                    return not self.map_list and deep_equal(old, new)
                if not self.children[i].unchanged():
                    return False
            return True
        old_map, new_map = isinstance(old, dict), isinstance(new, dict)
        if old_map or new_map:
            if not (old_map and new_map) or len(old) != len(new):
                return False
            if not old:
                return True
            return len(self.children) == len(old) and all(
                k in self.children and self.children[k].unchanged() for k in old)
        return same_scalar(old, new)


_NONE = object()


def _by_keys(old: Any, keys: tuple[str, ...], value: Any) -> Any:
    """The old item of a map-type list with the same values at the list's keys as `value`, or _NONE."""
    if not keys or not isinstance(value, dict):
        return _NONE
    wanted = tuple(value.get(k, _NONE) for k in keys)
    for item in old:
        if isinstance(item, dict) and all(
                k in item and wanted[i] is not _NONE and same_scalar(item[k], wanted[i]) for i, k in enumerate(keys)):
            return item
    return _NONE


def deep_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of two decoded JSON values: lists item by item, objects key by key, scalars as
    `same_scalar`."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(
            deep_equal(a[k], b[k]) for k in a)
    return same_scalar(a, b)


def same_scalar(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of two decoded JSON scalars: the same Go type and value. Decoded JSON's Python types
    (bool, int, float, str) stand one for one for Go's (bool, int64, float64, string)."""
    return type(a) is type(b) and a == b
