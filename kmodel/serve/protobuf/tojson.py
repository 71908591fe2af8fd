"""A decoded message as the JSON value Kubernetes' JSON encoding gives the same Go object (the one reference
conversion from protobuf to the server's JSON dicts).

Rules, each what Go's encoding/json does with the Go type the message was generated from:

- a field's key is its proto name, which go-to-protobuf takes from the Go JSON tag, except where
  `json_fields.json` (benchmarks/regenerate_protobuf.py, from the Go sources) says otherwise: an embedded struct
  tagged ``json:",inline"`` (Volume's volumeSource, Probe's handler, ...) puts its fields into its parent's object,
  and a field whose proto name is not its JSON name (authentication/v1 BoundObjectReference's ``uID``) takes the
  JSON name;
- a field not on the wire is left out (proto2 presence: Go's encoder writes every set pointer, non-empty slice
  and map, and every value field); a value scalar field tagged omitempty is left out at its zero value ("", 0,
  false), as encoding/json leaves it out, while a pointer's zero (``replicas: 0``) stays;
- a map's keys come in sorted order, as Go's encoding/json writes them;
- int64 and int32 are JSON numbers; ``bytes`` (Secret and ConfigMap binary data) are base64 strings;
- the types with their own JSON form (`SPECIAL`): meta/v1 Time as RFC 3339 in seconds and MicroTime in
  microseconds (a zero one is null, as the Go zero time encodes), Duration as Go's duration string,
  resource.Quantity as its string, intstr.IntOrString as a number or a string, runtime.RawExtension and meta/v1
  FieldsV1 as the JSON document they carry.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
from pathlib import Path
from typing import Any, Callable

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

JSON_FIELDS = Path(__file__).with_name("json_fields.json")
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, tuple[frozenset, frozenset]]:
    """message full name -> (inline field numbers, omit-at-zero field numbers)."""
    raw = json.loads(JSON_FIELDS.read_text())
    return {name: (frozenset(entry["inline"]), frozenset(entry["omit_zero"])) for name, entry in raw.items()}


@functools.lru_cache(maxsize=1)
def _renamed() -> dict[tuple[str, int], str]:
    """(message full name, field number) -> the field's JSON name, where it is not the proto name (the types with
    a JSON form of their own, json:"-", are in SPECIAL instead)."""
    raw = json.loads(JSON_FIELDS.read_text())
    return {(name, int(number)): json_name for name, entry in raw.items()
            for number, json_name in entry["renamed"].items() if json_name != "-"}


_NO_RULES: tuple[frozenset, frozenset] = (frozenset(), frozenset())


def message_json(msg: Message) -> Any:
    """The JSON value of `msg` (a dict, or a scalar for the types in SPECIAL)."""
    special = SPECIAL.get(msg.DESCRIPTOR.full_name)
    if special is not None:
        return special(msg)
    inline, omit_zero = _table().get(msg.DESCRIPTOR.full_name, _NO_RULES)
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        if field.number in inline:
            out.update(message_json(value))
            continue
        key = _renamed().get((msg.DESCRIPTOR.full_name, field.number), field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            # in key order, as encoding/json writes a map (the runtime's own map order is not stable)
            out[key] = {k: _value(value_field, value[k]) for k in sorted(value)}
        elif field.is_repeated:
            out[key] = [_value(field, v) for v in value]
        elif field.number in omit_zero and field.type != FieldDescriptor.TYPE_MESSAGE and not value:
            continue
        else:
            out[key] = _value(field, value)
    return out


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_json(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode("ascii")
    return value


def _instant(msg: Message, fraction: bool) -> Any:
    if not msg.seconds and not msg.nanos:
        return None  # the Go zero time (metav1.Time{}) encodes as null
    at = _EPOCH + datetime.timedelta(seconds=msg.seconds)
    text = at.strftime("%Y-%m-%dT%H:%M:%S")
    if fraction:
        text += f".{msg.nanos // 1000:06d}"
    return text + "Z"


def time_json(msg: Message) -> Any:
    """meta/v1 Time: RFC 3339 in UTC, whole seconds (metav1.Time.MarshalJSON)."""
    return _instant(msg, fraction=False)


def micro_time_json(msg: Message) -> Any:
    """meta/v1 MicroTime: RFC 3339 in UTC with six fractional digits (metav1.RFC3339Micro)."""
    return _instant(msg, fraction=True)


def duration_json(msg: Message) -> str:
    """meta/v1 Duration: Go's time.Duration.String() of its nanoseconds ("1h2m3.5s", "1.5ms", "0s")."""
    return go_duration(msg.duration)


def go_duration(ns: int) -> str:
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _decimal(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return sign + text + _decimal(rest, 1_000_000_000) + "s"


def _decimal(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")


def quantity_json(msg: Message) -> str:
    """resource.Quantity: its string form (the message's one field)."""
    return msg.string


def int_or_string_json(msg: Message) -> Any:
    """intstr.IntOrString: the string when its type is 1 (String), the number otherwise."""
    return msg.strVal if msg.type == 1 else msg.intVal


def raw_json(msg: Message) -> Any:
    """runtime.RawExtension (raw) and meta/v1 FieldsV1 (Raw): the JSON document in its one bytes field (null when
    empty)."""
    raw = getattr(msg, msg.DESCRIPTOR.fields_by_number[1].name)
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise ValueError(f"the raw bytes of a {msg.DESCRIPTOR.name} are not JSON") from None


SPECIAL: dict[str, Callable[[Message], Any]] = {
    f"{META}.Time": time_json,
    f"{META}.MicroTime": micro_time_json,
    f"{META}.Duration": duration_json,
    f"{META}.FieldsV1": raw_json,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": raw_json,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": quantity_json,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": int_or_string_json,
}
