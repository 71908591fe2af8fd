"""Field errors and the 422 Invalid message, as k8s.io/apimachinery/pkg/util/validation/field prints them.

A FieldError is (type, field path, bad value, detail). `str(error)` is Go's `Error()`:
`spec.replicas: Invalid value: -1: must be greater than or equal to 0`. Bad values print as Go's
ErrorBody prints them: strings quoted (%q), numbers and bools bare, a map[string]string as
`map[string]string{"app":"web"}`; a value that Go would print with %#v (a struct) is passed as GoValue
holding that text. `invalid_message` builds `Deployment.apps "web" is invalid: ...`, joining several
errors as `[a, b]` and dropping repeated messages, as utilerrors.Aggregate does.
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

import attrs

from .quantity import Quantity


class ErrorType(enum.Enum):
    """field.ErrorType: value is the Status cause type, `text` the words Error() prints."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}
# Types whose message never shows the value.
_NO_VALUE = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT = _Omit()


@attrs.frozen
class GoValue:
    """A bad value given as the exact text Go prints for it (%#v of a struct, say)."""

    text: str


@attrs.frozen
class FieldError:
    type: ErrorType
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """ErrorBody(): the message without the field path."""
        if self.type in _NO_VALUE or self.value is OMIT:
            s = self.type.text
        else:
            s = f"{self.type.text}: {go_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, OMIT, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, OMIT, detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, value, "")


def not_found(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, field, value, "")


def not_supported(field: str, value: Any, valid: Sequence[str]) -> FieldError:
    detail = ("supported values: " + ", ".join(go_quote(v) for v in valid)) if valid else ""
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def go_quote(s: str) -> str:
    """strconv.Quote."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_value(value: Any) -> str:
    """How ErrorBody prints a bad value."""
    if value is None:
        return "null"
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, Quantity):  # a fmt.Stringer
        return str(value)
    if isinstance(value, dict):
        return go_string_map(value)
    if isinstance(value, (list, tuple)):
        return go_string_slice(value)
    return repr(value)


def go_string_map(m: dict | None) -> str:
    """%#v of a map[string]string (Go prints map keys sorted)."""
    if m is None:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{go_quote(k)}:{go_quote(m[k])}" for k in sorted(m)) + "}"


def go_string_slice(items: Sequence[str] | None) -> str:
    """%#v of a []string."""
    if not items:  # the model does not tell a nil slice from an empty one; decoding yields nil
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(x)) for x in items) + "}"


def aggregate(errors: Sequence[FieldError]) -> str:
    """utilerrors.Aggregate.Error(): one message, or `[a, b]` with repeats dropped."""
    if len(errors) == 1:
        return str(errors[0])
    seen: list[str] = []
    for e in errors:
        msg = str(e)
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def invalid_message(group_kind: str, name: str, errors: Sequence[FieldError]) -> str:
    """NewInvalid's message: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: ...`."""
    if not errors:
        return f"{group_kind} {go_quote(name)} is invalid"
    return f"{group_kind} {go_quote(name)} is invalid: {aggregate(errors)}"


def invalid_status(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> dict:
    """The metav1.Status the API server returns for 422 Invalid (details.causes one per error)."""
    group_kind = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        details["group"] = group
    details["causes"] = [{"reason": e.type.value, "message": e.body(), "field": e.field} for e in errors]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": invalid_message(group_kind, name, errors),
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }
