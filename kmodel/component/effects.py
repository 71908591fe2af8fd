"""Effects: what a component asks for, as data, collected in an `Out`.

A handler never acts on the world; it appends effects to the `out` object it is handed (the shape of
stateright's ``Out``):

    out.send(dst, payload, stream=None)       -> Send(dst, payload, stream)
    out.set_timer(name, delay_ms)             -> SetTimer(name, delay_ms=delay_ms)
    out.set_timer(name, at=t)                 -> SetTimer(name, at=t)       (absolute logical time)
    out.cancel_timer(name)                    -> CancelTimer(name)
    out.close_stream(stream)                  -> CloseStream(stream)
    out.exit_process(members, restart_ms)     -> ExitProcess(members, restart_ms)
    out.act_for(owner, other)                 -> ActFor(owner, other's effects)

`out.effects` is the list of effect values in the order they were asked for; the loop applies them in that
order after the handler returns. Tests read it directly (``assert out.effects == [Send("b", 1)]``).

Why an `out` object and not a returned list: the two cost the same within measurement noise
(``python benchmarks/bench_loop.py --effects`` compares them), while frozen attrs effects cost about twice
as much to create. So the choice is made on legibility: an `out` cannot be forgotten in a
``return`` on some branch, gives handlers short helpers, and is the shape of stateright's actors.

Effects are slotted attrs classes that are not frozen (frozen ones cost twice as much to create on this
hot path); treat them as read-only values.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs


@attrs.define(slots=True)
class Send:
    """Send `payload` to endpoint `dst`, on `stream` if given (the first message on a stream opens it)."""

    dst: str
    payload: Any
    stream: Optional[str] = None


@attrs.define(slots=True)
class SetTimer:
    """Set (or replace) the caller's timer `name`, `delay_ms` from now or at absolute time `at`."""

    name: str
    delay_ms: Optional[int] = None
    at: Optional[int] = None


@attrs.define(slots=True)
class CancelTimer:
    """Cancel the caller's timer `name` (no-op if it is not set)."""

    name: str


@attrs.define(slots=True)
class CloseStream:
    """Close `stream`: its in-flight messages are dropped and the other end is told."""

    stream: str


@attrs.define(slots=True)
class ExitProcess:
    """The caller's process exits (klog.Fatalf): `members`, the components it runs (the caller among them), crash
    once the handler's other effects are applied, and each starts again `restart_after_ms` later, as the kubelet
    or systemd restarts a process that exited (the loop's timer RESTART_TIMER, kmodel.loop)."""

    members: tuple[str, ...]
    restart_after_ms: int


@attrs.define(slots=True)
class ActFor:
    """Effects asked for by code of another component of the caller's process, run within the caller's handler:
    the loop applies them, in place, as `owner`'s (its sends are from `owner`, its timers `owner`'s). A process's
    shared informers calling the handlers its controllers registered (kmodel.controllers.shared_informers) is
    the one such call: the handler queues a key on the controller's queue, arms the controller's timer."""

    owner: str
    effects: list


Effect = Send | SetTimer | CancelTimer | CloseStream | ExitProcess | ActFor


class Out:
    """Collects the effects one handler call asks for."""

    __slots__ = ("effects",)

    def __init__(self) -> None:
        self.effects: list[Effect] = []

    def send(self, dst: str, payload: Any, stream: Optional[str] = None) -> None:
        self.effects.append(Send(dst, payload, stream))

    def set_timer(self, name: str, delay_ms: Optional[int] = None, *, at: Optional[int] = None) -> None:
        if (delay_ms is None) == (at is None):
            raise ValueError(f"timer {name!r}: give exactly one of delay_ms and at")
        self.effects.append(SetTimer(name, delay_ms, at))

    def cancel_timer(self, name: str) -> None:
        self.effects.append(CancelTimer(name))

    def close_stream(self, stream: str) -> None:
        self.effects.append(CloseStream(stream))

    def exit_process(self, members: tuple[str, ...], restart_after_ms: int) -> None:
        self.effects.append(ExitProcess(tuple(members), restart_after_ms))

    def act_for(self, owner: str, other: "Out") -> None:
        """Append what `other` collected, as `owner`'s effects (see `ActFor`); nothing when it is empty."""
        if other.effects:
            self.effects.append(ActFor(owner, other.take()))

    def take(self) -> list[Effect]:
        """Return the effects collected so far and start a new, empty list."""
        effects = self.effects
        self.effects = []
        return effects
