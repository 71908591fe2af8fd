"""A small example of the component pattern: a counter server and a client that retries and watches.

`CounterServer` keeps a counter. A request ``("incr", client, req)`` adds one and is answered
``("ok", req, value)``; a client's request ids increase, and the server remembers the last one it applied
per client, so a retried request is answered again without counting twice (an idempotent retry, as a
Kubernetes client resubmits with the same resourceVersion precondition). A request ``("watch",)`` on a
stream opens a watch: the server answers ``("value", v)`` on that stream now and after every change, until
the stream ends. The counter and the applied request ids are its "disk": they survive a crash; the open
watches are in memory and do not.

`CounterClient` has a work queue of increments (`enqueue`). While it has queued increments and no request
outstanding, `has_work()` is true, and `work()` sends the next request and sets a retry timer; the timer
resends the same request until the answer comes. It also keeps a watch open on the server and reopens it,
with a fresh stream id, one retry period after the stream ends. Its next request id is on "disk" so request ids never
repeat after a restart; the queue, the outstanding request and the watch are in memory.

`Pinger` and `Echo` are the smallest pair that talks: the loop benchmark uses them.

Both are driven by hand in tests/loop/test_example_by_hand.py, and by the loop in the other loop tests.
"""

from __future__ import annotations

from typing import Optional

from kmodel.component.effects import Out
from kmodel.component.protocol import Component
from kmodel.network.message import Message

RETRY_TIMER = "retry"
REWATCH_TIMER = "rewatch"


class CounterServer(Component):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        # Disk.
        self.value = 0
        self.applied: dict[str, int] = {}  # client -> last request id applied
        # Memory.
        self.watches: dict[str, str] = {}  # stream -> client, in the order they were opened

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        kind = msg.payload[0]
        if kind == "incr":
            _, client, req = msg.payload
            if req > self.applied.get(client, 0):
                self.applied[client] = req
                self.value += 1
                for stream, watcher in self.watches.items():
                    out.send(watcher, ("value", self.value), stream)
            out.send(msg.src, ("ok", req, self.value))
        elif kind == "watch":
            self.watches[msg.stream] = msg.src
            out.send(msg.src, ("value", self.value), msg.stream)

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        self.watches.pop(stream, None)

    def crash(self) -> None:
        self.watches = {}


class CounterClient(Component):
    def __init__(self, name: str, server: str, retry_ms: int = 100) -> None:
        super().__init__(name)
        self.server = server
        self.retry_ms = retry_ms
        # Disk.
        self.next_req = 1
        # Memory.
        self._forget()

    def _forget(self) -> None:
        self.queued = 0
        self.outstanding: Optional[int] = None
        self.acked: list[tuple[int, int]] = []  # (request id, value) answers, in order
        self.watch_stream: Optional[str] = None
        self.watch_count = 0
        self.seen: list[int] = []  # values seen on the watch

    def enqueue(self, n: int = 1) -> None:
        """Queue `n` increments (an input from outside the model, like a user's kubectl)."""
        self.queued += n

    def start(self, now: int, out: Out) -> None:
        self._open_watch(out)

    def has_work(self) -> bool:
        return self.queued > 0 and self.outstanding is None

    def work(self, now: int, out: Out) -> None:
        self.queued -= 1
        self.outstanding = self.next_req
        self.next_req += 1
        self._request(out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        kind = msg.payload[0]
        if kind == "ok":
            _, req, value = msg.payload
            if req == self.outstanding:
                self.outstanding = None
                self.acked.append((req, value))
                out.cancel_timer(RETRY_TIMER)
        elif kind == "value" and msg.stream == self.watch_stream:
            self.seen.append(msg.payload[1])

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if name == RETRY_TIMER and self.outstanding is not None:
            self._request(out)
        elif name == REWATCH_TIMER and self.watch_stream is None:
            self._open_watch(out)

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        # Reopen after a pause, as client-go's reflector backs off: reopening at once would spin on a
        # server that is down (each refusal is reported within the same step).
        if stream == self.watch_stream:
            self.watch_stream = None
            out.set_timer(REWATCH_TIMER, self.retry_ms)

    def crash(self) -> None:
        self._forget()

    def _request(self, out: Out) -> None:
        out.send(self.server, ("incr", self.name, self.outstanding))
        out.set_timer(RETRY_TIMER, self.retry_ms)

    def _open_watch(self, out: Out) -> None:
        self.watch_count += 1
        self.watch_stream = f"{self.name}#watch-{self.watch_count}"
        out.send(self.server, ("watch",), self.watch_stream)


class Echo(Component):
    """Answers every message with the same payload (the other half of a ping-pong)."""

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        out.send(msg.src, msg.payload)


class Pinger(Component):
    """Sends 0 to `peer` on start and, on each answer n, sends n + 1 until `rounds` answers came back."""

    def __init__(self, name: str, peer: str, rounds: int) -> None:
        super().__init__(name)
        self.peer = peer
        self.rounds = rounds
        self.received = 0

    def start(self, now: int, out: Out) -> None:
        if self.rounds > 0:
            out.send(self.peer, 0)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.received += 1
        if self.received < self.rounds:
            out.send(self.peer, msg.payload + 1)
