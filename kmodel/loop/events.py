"""Loop events: every choice the explorer can make, as small attrs values with a name and a JSON form.

A trace is a list of these; replaying a trace is calling `Loop.step` on each again. Each event has:

* `name`: one readable line (``deliver scheduler -> apiserver-0``), also its ``str()``;
* `to_json()`: a dict of plain JSON values with a ``"kind"`` key; `event_from_json` (or `LoopEvent.from_json`)
  turns it back into the event; `stable_json()` is the canonical text (sorted keys, no spaces) that the
  loop's digest hashes.

Progress events (listed by `Loop.enabled_events`): `Deliver`, `FireTimer`, `Work`, `AdvanceTime`.
Faults (applied by `Loop.step` like any other event; the parameterless ones are listed by
`Loop.enabled_faults`): `Partition`, `Heal`, `HealAll`, `ReleaseAll`, `DropHead`, `DelayHead`, `SlowLink`,
`BreakStream`, `Crash`, `Restart`, `FailRequest`.

Events are frozen (hashable, safe to keep in traces). Frozen attrs instances are slower to create, so the
loop caches the events it lists (one `Deliver` per link, one `FireTimer` per timer name) instead of
building new ones on every step.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Iterable

import attrs


def _sorted_names(endpoints: Iterable[str]) -> tuple[str, ...]:
    if isinstance(endpoints, str):
        raise TypeError("give a collection of endpoint names, not one string")
    return tuple(sorted(set(endpoints)))


class Record:
    """A value with one readable line (`name`, also its str()) and a JSON form whose canonical text
    (`stable_json`: sorted keys, no spaces) is what digests hash. Loop events and checker actions are Records."""

    kind: ClassVar[str] = ""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def stable_json(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))


class LoopEvent(Record):
    """Base of all loop events."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            d[field.name] = list(value) if isinstance(value, tuple) else value
        return d

    @staticmethod
    def from_json(data: dict[str, Any]) -> "LoopEvent":
        return event_from_json(data)


@attrs.frozen
class Deliver(LoopEvent):
    """Deliver the message at the head of link src -> dst."""

    kind: ClassVar[str] = "deliver"
    src: str
    dst: str

    @property
    def name(self) -> str:
        return f"deliver {self.src} -> {self.dst}"


@attrs.frozen
class FireTimer(LoopEvent):
    """Fire `owner`'s due timer `timer`."""

    kind: ClassVar[str] = "fire_timer"
    owner: str
    timer: str

    @property
    def name(self) -> str:
        return f"fire timer {self.timer!r} of {self.owner}"


@attrs.frozen
class Work(LoopEvent):
    """Let `component` work one queued item."""

    kind: ClassVar[str] = "work"
    component: str

    @property
    def name(self) -> str:
        return f"work {self.component}"


@attrs.frozen
class AdvanceTime(LoopEvent):
    """Move logical time forward to `to_ms` (never past the next timer or delay release)."""

    kind: ClassVar[str] = "advance_time"
    to_ms: int

    @property
    def name(self) -> str:
        return f"advance time to {self.to_ms} ms"


@attrs.frozen
class Partition(LoopEvent):
    """Cut `endpoints` off from every other endpoint (they can still reach each other)."""

    kind: ClassVar[str] = "partition"
    endpoints: tuple[str, ...] = attrs.field(converter=_sorted_names)

    @property
    def name(self) -> str:
        return f"partition {{{', '.join(self.endpoints)}}} from the rest"


@attrs.frozen
class Heal(LoopEvent):
    """Reconnect `endpoints` to the main side."""

    kind: ClassVar[str] = "heal"
    endpoints: tuple[str, ...] = attrs.field(converter=_sorted_names)

    @property
    def name(self) -> str:
        return f"heal {{{', '.join(self.endpoints)}}}"


@attrs.frozen
class HealAll(LoopEvent):
    """End every partition."""

    kind: ClassVar[str] = "heal_all"

    @property
    def name(self) -> str:
        return "heal all partitions"


@attrs.frozen
class ReleaseAll(LoopEvent):
    """End every delay: each held link (DelayHead, SlowLink) is released now."""

    kind: ClassVar[str] = "release_all"

    @property
    def name(self) -> str:
        return "release every delayed link"


@attrs.frozen
class DropHead(LoopEvent):
    """Lose the message at the head of link src -> dst."""

    kind: ClassVar[str] = "drop_head"
    src: str
    dst: str

    @property
    def name(self) -> str:
        return f"drop head of {self.src} -> {self.dst}"


@attrs.frozen
class DelayHead(LoopEvent):
    """Hold link src -> dst (its head and, FIFO, everything behind it) for `delay_ms` from now."""

    kind: ClassVar[str] = "delay_head"
    src: str
    dst: str
    delay_ms: int

    @property
    def name(self) -> str:
        return f"delay {self.src} -> {self.dst} by {self.delay_ms} ms"


@attrs.frozen
class SlowLink(LoopEvent):
    """Hold link src -> dst for `delay_ms` from now, whatever is on it (a slow path between two endpoints):
    what is on it and what is sent on it meanwhile waits, in FIFO order. `DelayHead` is the same hold, taken
    on a message in flight; this one needs none, so a path can be slowed before anything travels on it."""

    kind: ClassVar[str] = "slow_link"
    src: str
    dst: str
    delay_ms: int

    @property
    def name(self) -> str:
        return f"slow down {self.src} -> {self.dst} for {self.delay_ms} ms"


@attrs.frozen
class BreakStream(LoopEvent):
    """Break `stream` (a reset): its in-flight messages are lost and both live ends are told."""

    kind: ClassVar[str] = "break_stream"
    stream: str

    @property
    def name(self) -> str:
        return f"break stream {self.stream}"


@attrs.frozen
class Crash(LoopEvent):
    """Crash `component`: it loses its memory, timers, streams and the messages in flight to it."""

    kind: ClassVar[str] = "crash"
    component: str

    @property
    def name(self) -> str:
        return f"crash {self.component}"


@attrs.frozen
class Restart(LoopEvent):
    """Restart a crashed `component` (its start handler runs again)."""

    kind: ClassVar[str] = "restart"
    component: str

    @property
    def name(self) -> str:
        return f"restart {self.component}"


#: the statuses `FailRequest` can make an API server answer with
REQUEST_FAULT_CODES = (429, 500, 503, 504)


@attrs.frozen
class FailRequest(LoopEvent):
    """The API server `dst` answers the next request it receives from `src` (outside a watch) with the error
    status `code` instead of its own answer: 429 TooManyRequests with Retry-After `retry_after_seconds`, 500
    InternalError, 503 ServiceUnavailable, or 504 Timeout, whose write was applied first when `applied` (the
    unknown outcome of a request that timed out on the server)."""

    kind: ClassVar[str] = "fail_request"
    src: str
    dst: str
    code: int
    applied: bool = False
    retry_after_seconds: int = 0

    @property
    def name(self) -> str:
        extra = ""
        if self.retry_after_seconds:
            extra = f", Retry-After {self.retry_after_seconds} s"
        if self.code == 504:
            extra += ", the write applied" if self.applied else ", the write not applied"
        return f"{self.dst} answers the next request of {self.src} with {self.code}{extra}"


PROGRESS_EVENTS = (Deliver, FireTimer, Work, AdvanceTime)
FAULT_EVENTS = (Partition, Heal, HealAll, ReleaseAll, DropHead, DelayHead, SlowLink, BreakStream, Crash, Restart,
                FailRequest)
EVENT_KINDS: dict[str, type[LoopEvent]] = {cls.kind: cls for cls in PROGRESS_EVENTS + FAULT_EVENTS}


#: the least value a whole-number field read from JSON may hold (per record kind, per field); absent: any
JSON_MINIMUMS: dict[str, dict[str, int]] = {
    "advance_time": {"to_ms": 0}, "delay_head": {"delay_ms": 1}, "slow_link": {"delay_ms": 1},
    "fail_request": {"code": 100, "retry_after_seconds": 0},
}

_SCALARS = {"int": int, "str": str, "bool": bool}


def at_least(least: int, **field: Any) -> Any:
    """An attrs field whose whole number, read from JSON, is at least `least` (check_json_fields reads it from
    the field's metadata); `field` is attrs.field's other arguments (a default)."""
    return attrs.field(metadata={"minimum": least}, **field)


def check_json_fields(cls: type, kind: str, fields: dict[str, Any], minimums: dict[str, int]) -> None:
    """ValueError, one line, if a field read from JSON does not fit `cls` (an attrs Record): an unknown or
    missing field, a value of the wrong type (a bool is no whole number, a whole number no bool), or a whole
    number below its least value (the field's own, declared with `at_least`, else the one in `minimums`)."""
    declared = {f.name: f for f in attrs.fields(cls)}
    unknown = sorted(set(fields) - set(declared))
    if unknown:
        raise ValueError(f"{kind}: unknown fields {unknown}; it has {sorted(declared)}")
    for name, field in declared.items():
        if name not in fields:
            if field.default is attrs.NOTHING:
                raise ValueError(f"{kind}: the field {name!r} is missing")
            continue
        value = fields[name]
        annotation = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
        optional = annotation.startswith("Optional[")
        base = annotation[len("Optional["):-1] if optional else annotation
        want = _SCALARS.get(base)
        if want is None or (optional and value is None):
            continue
        if type(value) is not want:
            raise ValueError(f"{kind}: {name} must be {_ARTICLE[base]}, not {value!r}")
        least = field.metadata.get("minimum", minimums.get(name))
        if least is not None and value < least:
            raise ValueError(f"{kind}: {name} must be at least {least}, not {value}")


_ARTICLE = {"int": "a whole number", "str": "a string", "bool": "true or false"}


def event_from_json(data: dict[str, Any]) -> LoopEvent:
    """Rebuild an event from its `to_json()` form; ValueError (one line) if it is not one."""
    if not isinstance(data, dict):
        raise ValueError(f"an event is a JSON object, not {type(data).__name__}")
    fields = dict(data)
    kind = fields.pop("kind", None)
    cls = EVENT_KINDS.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}; known: {sorted(EVENT_KINDS)}")
    check_json_fields(cls, kind, fields, JSON_MINIMUMS.get(kind, {}))
    return cls(**fields)


def is_fault(event: LoopEvent) -> bool:
    return isinstance(event, FAULT_EVENTS)
