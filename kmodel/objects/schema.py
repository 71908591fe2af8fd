"""Field descriptors: how each attrs field of an API kind maps to its JSON name and wire type.

Every field of every kind is declared with `fld(type, ...)`. The codec (load, dump, strict decode) walks
these descriptors instead of hand-written per-kind code, so adding a field is one line. Each wire type
carries the Go type name Kubernetes prints in decoding errors ("int32", "[]v1.Container", ...).

Zero values follow Go: a non-pointer struct field defaults to a shared empty instance (safe: instances are
immutable), a pointer field (`ptr=True`) defaults to None, lists to (), maps to EMPTY_MAP.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from .frozendict import EMPTY_MAP


@attrs.frozen
class WireType:
    """A JSON wire type: tag is one of int, str, bool, quantity, intstr, time, microtime, raw, list, map,
    struct; go is the Go type name used in error messages."""

    tag: str
    go: str
    item: "WireType | None" = None
    cls: Any = None


INT32 = WireType("int", "int32")
INT64 = WireType("int", "int64")
STRING = WireType("str", "string")
BOOL = WireType("bool", "bool")
QUANTITY = WireType("quantity", "resource.Quantity")
INT_OR_STRING = WireType("intstr", "intstr.IntOrString")
TIME = WireType("time", "v1.Time")
MICRO_TIME = WireType("microtime", "v1.MicroTime")
RAW = WireType("raw", "interface {}")
STRINGS = WireType("list", "[]string", STRING)
STRING_MAP = WireType("map", "map[string]string", STRING)
RESOURCE_LIST = WireType("map", "v1.ResourceList", QUANTITY)


def enum_string(go: str) -> WireType:
    """A Go named string type (v1.Protocol, v1.RestartPolicy, ...)."""
    return WireType("str", go)


def list_of(item: WireType) -> WireType:
    return WireType("list", "[]" + item.go, item)


def struct(cls: type) -> WireType:
    return WireType("struct", "v1." + cls.__name__, cls=cls)


@attrs.frozen
class FieldInfo:
    """What the codec needs about one attrs field."""

    name: str  # the Python attribute
    json: str  # the JSON key
    type: WireType
    ptr: bool  # Go pointer: None means absent; a present empty struct still dumps as {}
    keep: bool  # Go field without omitempty: dump even the zero value


_META_KEY = "kmodel"
_CAMEL = re.compile(r"_([a-z0-9])")


def _zero(t: WireType, ptr: bool) -> Any:
    if ptr:
        return None
    if t.tag == "int":
        return 0
    if t.tag == "str":
        return ""
    if t.tag == "bool":
        return False
    if t.tag == "list":
        return ()
    if t.tag == "map":
        return EMPTY_MAP
    if t.tag == "struct":
        return t.cls()
    return None


def fld(t: WireType, json: str | None = None, *, ptr: bool = False, keep: bool = False, default: Any = attrs.NOTHING) -> Any:
    """Declare an API field of wire type t; json defaults to the camelCase of the attribute name."""
    if default is attrs.NOTHING:
        default = _zero(t, ptr)
    return attrs.field(default=default, metadata={_META_KEY: (json, t, ptr, keep)})


_FIELDS: dict[type, tuple[FieldInfo, ...]] = {}
_BY_JSON: dict[type, dict[str, FieldInfo]] = {}


def fields_of(cls: type) -> tuple[FieldInfo, ...]:
    """The API fields of an attrs kind, in declaration order (cached)."""
    got = _FIELDS.get(cls)
    if got is None:
        infos = []
        for a in attrs.fields(cls):
            json, t, ptr, keep = a.metadata[_META_KEY]
            if json is None:
                json = _CAMEL.sub(lambda m: m.group(1).upper(), a.name)
            infos.append(FieldInfo(a.name, json, t, ptr, keep))
        got = _FIELDS[cls] = tuple(infos)
        _BY_JSON[cls] = {f.json: f for f in got}
    return got


def fields_by_json(cls: type) -> dict[str, FieldInfo]:
    fields_of(cls)
    return _BY_JSON[cls]
