"""The sans-IO component protocol.

Theory of operation
-------------------
A component is a state machine with a name, which is also its network endpoint (``"scheduler"``,
``"kubelet/node-1"``). It is only ever *called*: each call hands it one input and an `Out` to collect the
effects it wants (see `kmodel.component.effects`). It never delivers, never reads a clock, never sleeps;
the time it is given (`now`, logical milliseconds) is the only time it knows. So the same component can be
driven by the loop, by the explorer through the loop, or by a unit test that calls the handlers by hand.

The inputs, each a separate loop event:

    start(now, out)                    first start, and again after every restart
    on_message(now, msg, out)          a `Message` (msg.src, msg.payload, msg.stream, msg.id) was delivered
    on_timer(now, name, out)           this component's timer `name` fell due and fired
    on_stream_closed(now, stream, out) a stream it is an end of was closed by the peer or broken by a fault
    on_connection_reset(now, peer, arriving, out)
                                       `peer`'s process crashed: its machine's kernel reset the connections
                                       (told to every live component that ever sent it a message and reaches
                                       it); what this component sent it and awaits an answer to is lost,
                                       unless the answer is among `arriving` (the payloads outside streams
                                       `peer` sent it before crashing, still on their way, delivered later)
    on_connection_lost(now, peer, reason, out)
                                       this component's transport gave up on its connection to `peer` (its
                                       `connection_health_check` found the connection dead across a
                                       partition, or its dial there timed out; kmodel.loop.health; `reason` is
                                       the transport's error): the streams between it and `peer` have ended
                                       with that error (it is not told of each: this call covers them), what
                                       was in flight on it is lost, and what it sent `peer` and awaits an
                                       answer to never gets one
    on_send_refused(now, dst, payload, out)
                                       a message outside any stream that this component just sent (`payload`)
                                       was refused: `dst`'s process is down (a reachable machine answers a
                                       connection to a port nobody listens on at once); it was never delivered
    work(now, out)                     do one queued item; only called while has_work() is true

`has_work()` says whether a queued item is waiting (a controller's work queue). The loop asks it after
every call into the component, so it must be cheap and must depend only on the component's own state.
"Let component Z work one item" is its own event, so the explorer can interleave work with deliveries.

Crashes: `crash()` drops everything held in memory; the loop has already stopped delivering to the
component, cancelled its timers and broken its streams. What survives (a kubelet's checkpoint files, etcd's
disk) is the component's choice: keep it in attributes that `crash()` does not reset. A restart calls
`start(now, out)` again. The default `crash()` raises, so a component must opt in to being crashed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import attrs

from kmodel.component.effects import Out
from kmodel.network.message import Message


@attrs.frozen
class HealthCheck:
    """A transport's connection health check (kmodel.loop.health): PING the peer after `idle_ms` without a frame
    from it, and give the connection up when no answer came `ping_timeout_ms` after the PING."""

    idle_ms: int
    ping_timeout_ms: int
    #: how long a dial may take (kmodel.loop.health: a dial across a partition never completes)
    dial_timeout_ms: int = 30_000
    #: the peers whose connections it checks; None: every peer the component sends messages to
    peers: Optional[tuple[str, ...]] = None
    #: the error a connection given up on reports (`Component.on_connection_lost`'s reason)
    lost_reason: str = "http2: client connection lost"

    def covers(self, peer: str) -> bool:
        return self.peers is None or peer in self.peers


class Component:
    """Base class with do-nothing handlers; subclasses override what they need."""

    #: does it reconcile through the API, writing objects toward what it wants (controllers, the scheduler,
    #: kubelets)? Those are the processes a crash between two writes of one sync can leave half done
    #: (the checker's crash_mid_reconcile fault picks among them).
    reconciles: bool = False
    #: how its transport checks its connections' health (None: it does not; a connection across a partition
    #: then waits for the heal). See kmodel.loop.health.
    connection_health_check: ClassVar[Optional[HealthCheck]] = None

    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, now: int, out: Out) -> None:
        """Set initial timers, send initial requests (also called on restart)."""

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        """Handle one delivered message."""

    def on_timer(self, now: int, name: str, out: Out) -> None:
        """Handle one fired timer."""

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        """Handle the end of a stream this component is an end of (not called for its own close)."""

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        """Handle `peer`'s connections breaking (its process crashed; see the module docstring)."""

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        """Handle this component's transport giving up on its connection to `peer` (see the module docstring)."""

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        """Handle a message just sent to `dst` being refused (its process is down; see the module docstring)."""

    def has_work(self) -> bool:
        """Whether a queued item is waiting for `work`."""
        return False

    def work(self, now: int, out: Out) -> None:
        """Do one queued item."""
        raise NotImplementedError(f"{type(self).__name__} has no work queue")

    def fail_next_request(self, src: str, fault: Any) -> None:
        """Answer the next request from `src` with the error `fault` describes (the loop's FailRequest). Only
        a server that answers requests can (an API server replica: `answers_request_faults`)."""
        raise NotImplementedError(f"{type(self).__name__} answers no requests")

    @classmethod
    def answers_request_faults(cls) -> bool:
        return cls.fail_next_request is not Component.fail_next_request

    def latest_deadline(self, now: int) -> Optional[int]:
        """The latest logical time at which something this component keeps behind one timer of its own comes
        due (a work queue's delayed keys wait behind the earliest one's timer), or None when the loop's timers
        show all it waits for. `Loop.latest_deadline` asks it."""
        return None

    def crash(self) -> None:
        """Forget all in-memory state (keep only what a real process would find on disk)."""
        raise NotImplementedError(f"{type(self).__name__} does not model crashes; override crash()")

    @classmethod
    def supports_crash(cls) -> bool:
        return cls.crash is not Component.crash

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
