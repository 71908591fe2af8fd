"""Load and dump API objects in Kubernetes' JSON shape, and the API server's strict decoding.

`decode(data)` is what the API server does with a request body: resolve apiVersion/kind, convert every
field with Go's encoding/json rules (as forked in sigs.k8s.io/json: case-sensitive keys), report the FIRST
type error the way Go prints it (`json: cannot unmarshal string into Go struct field
DeploymentSpec.spec.replicas of type int32`), and under strict field validation report every unknown field
(`strict decoding error: unknown field "spec.replicass"`). Both are 400 BadRequest, wrapped as
`Deployment in version "v1" cannot be handled as a Deployment: <cause>` (apiserver transformDecodeError).
`decode` then applies defaulting, as the codec does in Kubernetes.

`load(data)` is the same conversion without defaulting; it raises DecodeError instead of returning it.
`dump(obj)` writes the JSON shape with empty and None fields omitted, map keys sorted (as Go marshals maps).
"""

from __future__ import annotations

import json as _json
from typing import Any

from . import apiextensions, apps, authorization, batch, coordination, core, discovery, rbac, scheduling, secrets  # noqa: F401  (importing registers the kinds)
from .frozendict import EMPTY_MAP, FrozenDict, freeze, thaw
from .logical_time import TimeFormatError, format_micro_time, format_time, parse_time
from .quantity import Quantity, QuantityError, quantity
from .registry import kind_info, lookup
from .schema import WireType, fields_by_json, fields_of

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_TYPEMETA_GO = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


class DecodeError(Exception):
    """A request body the API server cannot decode: HTTP 400 BadRequest (404 NotFound for an unknown kind).

    message: the full message Kubernetes returns; cause: the inner error (after "cannot be handled as a
    X: "); field: the path of the first offending field ("spec.replicas", "spec.containers[0].imagee"),
    "" when none; fields: every offending path (several unknown fields); reason/code: the Status reason
    and HTTP code.
    """

    def __init__(self, message: str, *, cause: str = "", field: str = "", fields: tuple[str, ...] = (),
                 reason: str = "BadRequest", code: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause or message
        self.field = field
        self.fields = fields or ((field,) if field else ())
        self.reason = reason
        self.code = code

    def __repr__(self) -> str:
        return f"DecodeError({self.message!r})"


class _Abort(Exception):
    """An error from a custom unmarshaler (Quantity, IntOrString, Time): Go stops decoding there."""

    def __init__(self, message: str, field: str) -> None:
        self.message = message
        self.field = field


# Where a field sits, kept as a chain of (parent, key, is_index) nodes (None at the root) and written out
# as text only when an error names it: a body without errors never formats a path.
def _path_texts(node: Any) -> tuple[tuple[str, ...], str]:
    """The Go field path (struct field keys from the root, indexes left out) and the field path with
    indexes ("spec.containers[0].image") of a path node."""
    pieces = []
    while node is not None:
        pieces.append(node)
        node = node[0]
    pieces.reverse()
    gopath = []
    spath = ""
    for _, key, is_index in pieces:
        if is_index:
            spath = f"{spath}[{key}]"
        else:
            gopath.append(key)
            spath = f"{spath}.{key}" if spath else key
    return tuple(gopath), spath


class _Decoder:
    __slots__ = ("strict", "type_error", "type_error_field", "unknown")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.type_error: str | None = None
        self.type_error_field = ""
        self.unknown: list[str] = []

    def type_mismatch(self, raw: Any, t: WireType, struct_name: str, node: Any) -> None:
        if self.type_error is None:
            gopath, spath = _path_texts(node)
            self.type_error = (f"json: cannot unmarshal {_json_kind(raw)} into Go struct field "
                               f"{struct_name}.{'.'.join(gopath)} of type {t.go}")
            self.type_error_field = spath

    def struct(self, cls: type, data: dict, node: Any) -> Any:
        by_json = fields_by_json(cls)
        kwargs = {}
        struct_name = cls.__name__
        for key, raw in data.items():
            if not isinstance(key, str):
                key = _key_text(key)
            f = by_json.get(key)
            if f is None:
                if self.strict:
                    self.unknown.append(_path_texts((node, key, False))[1])
                continue
            if raw is None:  # JSON null leaves the zero value
                continue
            ok, value = self.value(f.type, raw, struct_name, (node, key, False))
            if ok:
                kwargs[f.name] = value
        return cls(**kwargs)

    def value(self, t: WireType, raw: Any, struct_name: str, node: Any) -> tuple[bool, Any]:
        tag = t.tag
        if tag == "str":
            if isinstance(raw, str):
                return True, raw
        elif tag == "int":
            if isinstance(raw, int) and not isinstance(raw, bool):
                lo, hi = _INT32 if t.go == "int32" else _INT64
                if lo <= raw <= hi:
                    return True, raw
                self._bad_number(raw, t, struct_name, node)
                return False, None
            if isinstance(raw, float):
                if raw.is_integer() and abs(raw) < 2**53:
                    # YAML->JSON conversion writes integral floats without a fraction, so Go sees an int.
                    return self.value(t, int(raw), struct_name, node)
                self._bad_number(raw, t, struct_name, node)
                return False, None
        elif tag == "bool":
            if isinstance(raw, bool):
                return True, raw
        elif tag == "struct":
            if isinstance(raw, dict):
                return True, self.struct(t.cls, raw, node)
        elif tag == "list":
            if isinstance(raw, (list, tuple)):
                item = t.item
                out = []
                for i, x in enumerate(raw):
                    if x is None:
                        out.append(_item_zero(item))
                        continue
                    ok, v = self.value(item, x, struct_name, (node, i, True))
                    out.append(v if ok else _item_zero(item))
                return True, tuple(out)
        elif tag == "map":
            if isinstance(raw, dict):
                if not raw:
                    return True, EMPTY_MAP
                item = t.item
                out = {}
                for k, x in raw.items():
                    if not isinstance(k, str):
                        k = _key_text(k)
                    if x is None:
                        out[k] = _item_zero(item)
                        continue
                    ok, v = self.value(item, x, struct_name, (node, k, True))
                    if ok:
                        out[k] = v
                return True, FrozenDict(out)
        elif tag == "quantity":
            try:
                return True, quantity(raw if not isinstance(raw, (list, dict)) else _json.dumps(raw))
            except QuantityError as e:
                raise _Abort(str(e), _path_texts(node)[1]) from None
        elif tag == "intstr":
            if isinstance(raw, str):
                return True, raw
            if isinstance(raw, int) and not isinstance(raw, bool) and _INT32[0] <= raw <= _INT32[1]:
                return True, raw
            if isinstance(raw, float) and raw.is_integer() and _INT32[0] <= raw <= _INT32[1]:
                return True, int(raw)
            desc = _json_kind(raw) if not isinstance(raw, (int, float)) or isinstance(raw, bool) else f"number {_go_number(raw)}"
            gopath, spath = _path_texts(node)
            raise _Abort(f"json: cannot unmarshal {desc} into Go struct field {struct_name}.{'.'.join(gopath)} of type int32", spath)
        elif tag in ("time", "microtime"):
            if not isinstance(raw, str):
                gopath, spath = _path_texts(node)
                raise _Abort(f"json: cannot unmarshal {_json_kind(raw)} into Go struct field "
                             f"{struct_name}.{'.'.join(gopath)} of type string", spath)
            try:
                return True, parse_time(raw)
            except TimeFormatError as e:
                raise _Abort(str(e), _path_texts(node)[1]) from None
        elif tag == "raw":
            return True, freeze(raw)
        self.type_mismatch(raw, t, struct_name, node)
        return False, None

    def _bad_number(self, raw: Any, t: WireType, struct_name: str, node: Any) -> None:
        if self.type_error is None:
            gopath, spath = _path_texts(node)
            self.type_error = (f"json: cannot unmarshal number {_go_number(raw)} into Go struct field "
                               f"{struct_name}.{'.'.join(gopath)} of type {t.go}")
            self.type_error_field = spath


def _item_zero(t: WireType) -> Any:
    tag = t.tag
    if tag == "struct":
        return t.cls()
    if tag == "str":
        return ""
    if tag == "int":
        return 0
    if tag == "bool":
        return False
    if tag in ("list",):
        return ()
    if tag == "map":
        return EMPTY_MAP
    if tag == "quantity":
        return Quantity(0, "DecimalSI", "0")
    return None


def _json_kind(raw: Any) -> str:
    """How Go's UnmarshalTypeError names a JSON value."""
    if isinstance(raw, bool):
        return "bool"
    if isinstance(raw, str):
        return "string"
    if isinstance(raw, (int, float)):
        return "number"
    if isinstance(raw, (list, tuple)):
        return "array"
    if isinstance(raw, dict):
        return "object"
    return "string"  # anything else YAML produced (dates, bytes) reaches JSON as a string


def _go_number(raw: Any) -> str:
    if isinstance(raw, float):
        text = repr(raw)
        return text[:-2] if text.endswith(".0") else text
    return str(raw)


def _key_text(key: Any) -> str:
    """YAML keys that are not strings become strings on the way to JSON (sigs.k8s.io/yaml)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _compact(data: Any) -> str:
    try:
        return _json.dumps(data, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(data)


def _resolve(data: Any) -> Any:
    """The KindInfo for a body, or a DecodeError."""
    if not isinstance(data, dict):
        cause = f"json: cannot unmarshal {_json_kind(data)} into Go value of type {_TYPEMETA_GO}"
        return DecodeError(f"couldn't get version/kind; json parse error: {cause}", cause=cause)
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            cause = (f"json: cannot unmarshal {_json_kind(value)} into Go struct field .{key} of type string")
            return DecodeError(f"couldn't get version/kind; json parse error: {cause}", cause=cause, field=key)
    if not kind:
        return DecodeError(f"Object 'Kind' is missing in '{_compact(data)}'", field="kind")
    if not api_version:
        return DecodeError(f"Object 'apiVersion' is missing in '{_compact(data)}'", field="apiVersion")
    info = lookup(api_version, kind)
    if info is None:
        version = api_version.rpartition("/")[2]
        return DecodeError(f'no matches for kind "{kind}" in version "{api_version}"', field="kind",
                           reason="NotFound", code=404) if version else DecodeError(
            f'no matches for kind "{kind}" in version "{api_version}"', field="apiVersion", reason="NotFound", code=404)
    return info


def _convert(data: Any, strict: bool) -> Any:
    info = _resolve(data)
    if isinstance(info, DecodeError):
        return info
    decoder = _Decoder(strict)
    body = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    prefix = f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
    try:
        obj = decoder.struct(info.cls, body, None)
    except _Abort as e:
        return DecodeError(prefix + e.message, cause=e.message, field=e.field)
    if decoder.type_error is not None:
        return DecodeError(prefix + decoder.type_error, cause=decoder.type_error, field=decoder.type_error_field)
    if decoder.unknown:
        cause = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in decoder.unknown)
        return DecodeError(prefix + cause, cause=cause, field=decoder.unknown[0], fields=tuple(decoder.unknown))
    return obj


def decode(data: Any, *, strict: bool = True, defaults: bool = True) -> Any:
    """The API server's decoding of a request body: the object (defaulted, unless defaults=False), or a
    DecodeError value (returned, not raised). strict=False drops unknown fields silently
    (fieldValidation=Ignore)."""
    obj = _convert(data, strict)
    if isinstance(obj, DecodeError) or not defaults:
        return obj
    from .defaults import with_defaults

    return with_defaults(obj)


def load(data: dict, *, strict: bool = True) -> Any:
    """An object from its JSON shape, as written (no defaulting); raises DecodeError."""
    obj = _convert(data, strict)
    if isinstance(obj, DecodeError):
        raise obj
    return obj


def load_struct(cls: type, data: dict, *, strict: bool = True, path: str = "") -> Any:
    """One API struct (ObjectMeta, say) from its JSON shape at `path`, without defaulting; raises DecodeError
    with the cause alone (the caller knows the kind it wraps it in)."""
    decoder = _Decoder(strict)
    if not isinstance(data, dict):
        raise DecodeError(f"json: cannot unmarshal {_json_kind(data)} into Go struct field .{path} of type "
                          f"v1.{cls.__name__}", field=path)
    try:
        obj = decoder.struct(cls, data, (None, path, False) if path else None)
    except _Abort as e:
        raise DecodeError(e.message, field=e.field) from None
    if decoder.type_error is not None:
        raise DecodeError(decoder.type_error, field=decoder.type_error_field)
    if decoder.unknown:
        cause = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in decoder.unknown)
        raise DecodeError(cause, field=decoder.unknown[0], fields=tuple(decoder.unknown))
    return obj


def dump(obj: Any) -> dict:
    """The JSON shape of a top-level object: apiVersion, kind, metadata, then its other fields."""
    to_json = getattr(obj, "to_json", None)
    if to_json is not None:  # a custom object (kmodel/objects/unstructured.py)
        return to_json()
    info = kind_info(obj)
    out: dict[str, Any] = {"apiVersion": info.api_version, "kind": info.kind}
    body = dump_struct(obj)
    out["metadata"] = body.pop("metadata", {})
    out.update(body)
    return out


def dump_struct(obj: Any) -> dict:
    """The JSON shape of any API struct, omitting None and empty fields."""
    out: dict[str, Any] = {}
    for f in fields_of(type(obj)):
        v = getattr(obj, f.name)
        if v is None:
            continue
        tag = f.type.tag
        if tag == "struct":
            d = dump_struct(v)
            if d or f.ptr or f.keep:
                out[f.json] = d
        elif tag == "list":
            if v or f.keep:
                item = f.type.item
                out[f.json] = [_dump_value(item, x) for x in v]
        elif tag == "map":
            if v:
                item = f.type.item
                out[f.json] = {k: _dump_value(item, v[k]) for k in sorted(v)}
        elif f.ptr or f.keep or v or tag in ("intstr", "quantity", "time", "microtime", "raw"):
            out[f.json] = _dump_value(f.type, v)
    return out


def _dump_value(t: WireType, v: Any) -> Any:
    tag = t.tag
    if tag == "struct":
        return dump_struct(v)
    if tag == "quantity":
        return str(v)
    if tag == "time":
        return format_time(v)
    if tag == "microtime":
        return format_micro_time(v)
    if tag == "raw":
        return thaw(v)
    if tag == "list":
        return [_dump_value(t.item, x) for x in v]
    if tag == "map":
        return {k: _dump_value(t.item, v[k]) for k in sorted(v)}
    return v
