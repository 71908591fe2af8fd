"""How server-side apply walks an object: which dicts are structs (their keys are fields) and which are maps (their
keys are entries), which lists merge item by item and by what key, and what is atomic (owned and replaced whole).

structured-merge-diff (sigs.k8s.io/structured-merge-diff/v4, the release Kubernetes 1.31 vendors) reads this from
the OpenAPI schema: ``x-kubernetes-list-type`` (atomic, set, map) with ``x-kubernetes-list-map-keys``,
``x-kubernetes-map-type`` / ``structType`` atomic, and for the built-in kinds the ``patchMergeKey`` of a list with
``patchStrategy: merge`` (an associative list keyed by it). A list with none of these is atomic.

Two sources give the same `Shape` answers: the built-in kinds' field descriptors (kmodel.objects.schema, with the
list keys of upstream's ``+listType``/``+listMapKey`` and patch-merge-key tags, `LIST_MAP_KEYS`), and a custom
resource's openAPIV3Schema. A node that neither declares (``x-kubernetes-preserve-unknown-fields``, a RAW field) is
walked as structured-merge-diff's deduced type: dicts are maps, lists atomic.
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.apiserver.patch import MERGE_KEYS, MERGED_SCALAR_LISTS
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.schema import WireType, fields_by_json

SCALAR, STRUCT, MAP, LIST = "scalar", "struct", "map", "list"
ATOMIC, SET, ASSOCIATIVE = "atomic", "set", "map"

#: item class -> the keys of its associative list where upstream's ``+listMapKey`` tags name more than the patch
#: merge key (a container's and a Service's ports are keyed by port and protocol)
LIST_MAP_KEYS = {"ContainerPort": ("containerPort", "protocol"), "ServicePort": ("port", "protocol"),
                 "EndpointPort": ("port", "protocol")}
#: a missing key field takes its schema default (structured-merge-diff v4.4): protocol defaults to TCP
KEY_DEFAULTS = {"protocol": "TCP"}
#: structs upstream tags ``+structType=atomic``: owned and replaced whole
ATOMIC_STRUCTS = frozenset({"LabelSelector"})


class Shape:
    """One node of a kind's schema. `kind`: scalar, struct, map or list; `atomic`: owned as a whole; for lists
    `list_type` (atomic, set, map) and `keys` (an associative list's key fields)."""

    kind: str = SCALAR
    atomic: bool = False
    list_type: str = ATOMIC
    keys: tuple[str, ...] = ()

    def child(self, name: str) -> tuple["Shape", bool]:
        """The shape of a struct's field or a map's entry `name`, and whether it is a declared field."""
        return DEDUCED, False

    def item(self) -> "Shape":
        """The shape of a list's items."""
        return DEDUCED

    def written_empty(self, name: str) -> bool:
        """Whether Go writes field `name` of an empty object (a struct that is not a pointer: as {}; a field
        without omitempty: as null)."""
        return False


class _Deduced(Shape):
    """A node no schema declares: a dict is a map, a list atomic, anything else a scalar (`of` picks)."""

    kind = MAP


DEDUCED = _Deduced()
_SCALAR = Shape()


def shape_of_value(shape: Shape, value: Any) -> Shape:
    """`shape`, or for a deduced node the shape its value has."""
    if shape is DEDUCED:
        if isinstance(value, dict):
            return DEDUCED
        if isinstance(value, list):
            return _ATOMIC_LIST
        return _SCALAR
    return shape


class _AtomicList(Shape):
    kind = LIST
    atomic = True


_ATOMIC_LIST = _AtomicList()


# -- built-in kinds -----------------------------------------------------------------------------------------

class _Struct(Shape):
    kind = STRUCT

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.atomic = cls.__name__ in ATOMIC_STRUCTS
        self._fields: dict[str, Shape] = {}

    def child(self, name: str) -> tuple[Shape, bool]:
        found = self._fields.get(name)
        if found is None:
            info = fields_by_json(self.cls).get(name)
            if info is None:
                return DEDUCED, False
            found = self._fields[name] = _of_wire(info.type, name)
        return found, True

    def written_empty(self, name: str) -> bool:
        info = fields_by_json(self.cls).get(name)
        return info is not None and ((info.type.tag == "struct" and not info.ptr) or info.keep)


class _Map(Shape):
    kind = MAP

    def __init__(self, item: Shape) -> None:
        self._item = item

    def child(self, name: str) -> tuple[Shape, bool]:
        return self._item, False


class _List(Shape):
    kind = LIST

    def __init__(self, item: Shape, list_type: str, keys: tuple[str, ...]) -> None:
        self._item = item
        self.list_type = list_type
        self.atomic = list_type == ATOMIC
        self.keys = keys

    def item(self) -> Shape:
        return self._item


_STRUCTS: dict[type, _Struct] = {}


def builtin_shape(cls: type) -> Shape:
    """The shape of a built-in kind (or any struct class of kmodel.objects)."""
    shape = _STRUCTS.get(cls)
    if shape is None:
        shape = _STRUCTS[cls] = _Struct(cls)
    return shape


def _of_wire(t: WireType, field: str) -> Shape:
    tag = t.tag
    if tag == "struct":
        return builtin_shape(t.cls)
    if tag == "map":
        return _Map(_of_wire(t.item, "")) if t.item is not None else DEDUCED
    if tag == "raw":
        return DEDUCED
    if tag == "list":
        item = t.item
        if item is not None and item.tag == "struct":
            keys = LIST_MAP_KEYS.get(item.cls.__name__)
            if keys is None and field in MERGE_KEYS:
                keys = (MERGE_KEYS[field],)
            if keys:
                return _List(builtin_shape(item.cls), ASSOCIATIVE, keys)
            return _List(builtin_shape(item.cls), ATOMIC, ())
        return _List(_SCALAR, SET if field in MERGED_SCALAR_LISTS else ATOMIC, ())
    return _SCALAR


# -- custom resources ---------------------------------------------------------------------------------------

class _OpenAPI(Shape):
    """A node of a CRD's openAPIV3Schema (metadata is ObjectMeta's own shape, as upstream's)."""

    def __init__(self, schema: dict, root: bool = False) -> None:
        self.schema = schema
        self.root = root
        kind = schema.get("type")
        if kind == "array":
            self.kind = LIST
            self.list_type = str(schema.get("x-kubernetes-list-type") or ATOMIC)
            self.keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
            self.atomic = self.list_type == ATOMIC
        elif kind == "object" or "properties" in schema or root:
            self.kind = STRUCT if "properties" in schema or root else MAP
            self.atomic = schema.get("x-kubernetes-map-type") == "atomic"
        else:
            self.kind = SCALAR

    def child(self, name: str) -> tuple[Shape, bool]:
        if self.root and name == "metadata":
            return builtin_shape(ObjectMeta), True
        props = self.schema.get("properties") or {}
        if name in props:
            return _OpenAPI(props[name]), True
        extra = self.schema.get("additionalProperties")
        if isinstance(extra, dict):
            return _OpenAPI(extra), False
        return DEDUCED, False

    def item(self) -> Shape:
        items = self.schema.get("items")
        return _OpenAPI(items) if isinstance(items, dict) else DEDUCED


def openapi_shape(schema: Optional[dict]) -> Shape:
    """The shape of a custom resource from its structural schema (None: every field deduced)."""
    return _OpenAPI(dict(schema or {}), root=True)
