"""Go's encoding/json answer to a document unmarshalled into a map[string]interface{}: the error text, or None.

Validation quotes it where upstream does (a dockerconfigjson Secret's data: `json.Unmarshal(data,
&map[string]interface{}{})`). Go checks the whole input's syntax first (checkValid), so a syntax error wins over
a type error; its scanner's messages name the byte where the input went wrong and what it was looking for:

    unexpected end of JSON input                                   the input stops inside a value
    invalid character 'x' looking for beginning of value           where a value starts
    invalid character 'x' looking for beginning of object key string
    invalid character 'x' after object key                         where ':' belongs
    invalid character 'x' after object key:value pair              where ',' or '}' belongs
    invalid character 'x' after array element                      where ',' or ']' belongs
    invalid character 'x' after top-level value                    data after the document
    invalid character '\\n' in string literal                       a control character in a string
    invalid character 'x' in string escape code                    a backslash escape Go does not know
    json: cannot unmarshal array into Go value of type map[string]interface {}

A JSON `null` unmarshals into a map without an error. Python's decoder finds the same first bad byte; its
message says which of Go's it is.
"""

from __future__ import annotations

import json
from typing import Any, Optional

_MAP = "map[string]interface {}"
#: Python's decoder message (its start) -> what Go's scanner was looking for at that byte
_CONTEXTS = (
    ("Expecting value", "looking for beginning of value"),
    ("Expecting property name enclosed in double quotes", "looking for beginning of object key string"),
    ("Expecting ':' delimiter", "after object key"),
    ("Extra data", "after top-level value"),
    ("Invalid control character", "in string literal"),
    ("Invalid \\escape", "in string escape code"),
)


def _quote_char(c: str) -> str:
    """Go's quoteChar: the byte in single quotes, escaped as strconv.Quote escapes it."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    return "'" + json.dumps(c)[1:-1] + "'"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array"}.get(type(value), "object")


def _innermost(text: str, pos: int) -> str:
    """The container open at `pos`: '{' or '[' (strings skipped)."""
    stack, in_string, escaped = [], False, False
    for c in text[:pos]:
        if in_string:
            escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            in_string = True
        elif c in "{[":
            stack.append(c)
        elif c in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def unmarshal_error(data: bytes) -> Optional[str]:
    """Go's error from json.Unmarshal(data, &map[string]interface{}{}), or None when it succeeds."""
    text = data.decode("utf-8", errors="replace")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        return _syntax(text, e)
    if value is None or isinstance(value, dict):
        return None
    return f"json: cannot unmarshal {_kind(value)} into Go value of type {_MAP}"


def _no_constant(name: str) -> Any:
    raise json.JSONDecodeError("Expecting value", name, 0)


def _syntax(text: str, e: json.JSONDecodeError) -> str:
    pos = e.pos if e.doc == text else text.find(e.doc)  # NaN, Infinity: Go knows no such word
    if e.msg.startswith("Unterminated string") or pos >= len(text):
        return "unexpected end of JSON input"
    if e.msg.startswith("Invalid control character") or e.msg.startswith("Invalid \\escape"):
        pos = e.pos if e.msg.startswith("Invalid control") else e.pos + 1
    char = _quote_char(text[pos])
    if e.msg.startswith("Expecting ',' delimiter"):
        where = "after object key:value pair" if _innermost(text, pos) == "{" else "after array element"
        return f"invalid character {char} {where}"
    where = next((go for py, go in _CONTEXTS if e.msg.startswith(py)), "looking for beginning of value")
    return f"invalid character {char} {where}"
