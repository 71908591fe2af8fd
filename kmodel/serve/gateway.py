"""The model's end of the HTTP server: a component through which outside clients' requests enter the network.

Theory of operation
-------------------
`Gateway` is a component named "http-clients" on the model's network, standing for every client process outside
the model (kubectl, the official Python client, an operator) as one machine would: the HTTP server's threads never
touch the model; they hand it `Ticket`s (through `kmodel.serve.runner`, on the model's own thread), and the gateway
sends each ticket's `Request` to an API server replica as a message, so that the request meets what any other
client's would: the link's delays and partitions, a crashed replica's refused connection, a replica's request
faults, and then the replica's whole pipeline (authentication by the ticket's bearer token, RBAC, admission,
validation, the store). What comes back is handed to the ticket:

    a Response with the request's id           the ticket's answer (an HTTP response)
    a WatchEvent on the ticket's stream         one event of the watch (a line of the chunked HTTP stream)
    a Response on the ticket's stream           the end of the watch (the server ended it, with its status)
    the stream closed or broken                 the end of the watch
    the send refused (the replica is down)      503 ServiceUnavailable, as a load balancer answers for a backend
                                                that refuses the connection
    the replica's connections reset (crash)     503 for the requests in flight to it (the answers it had sent
                                                already still arrive)

A request the network loses (a partition) is never answered by the model: the HTTP side gives up after its own
timeout (504), as a real client's does. A watch whose HTTP client went away is ended with `cancel(ticket)`: the gateway
closes the stream, as a client closing its connection does.

Replicas are chosen round robin over `replicas` by request number (deterministic: the same requests in the same
order reach the same replicas). The gateway keeps nothing a crash could lose that matters to the model (it is not crashed).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Optional, Sequence

import attrs

from kmodel.apiserver.wire import Request, Response, Status, WatchEvent
from kmodel.component import Component, Out
from kmodel.network import Message

GATEWAY = "http-clients"


def unavailable(message: str) -> Status:
    return Status(503, "ServiceUnavailable", message)


class Ticket:
    """One HTTP request handed to the model: the `Request` to send, and where its answers go.

    `on_answer(response)` gets the one answer of a request outside a watch; for a watch, `on_event(event)` gets
    each WatchEvent and `on_end(response_or_None)` the end. The callbacks run on the model's thread and must only
    hand the value over (a queue), never call into the model."""

    __slots__ = ("request", "watch", "on_answer", "on_event", "on_end", "replica", "stream", "number")

    def __init__(self, request: Request, *, on_answer: Callable[[Response], None],
                 on_event: Optional[Callable[[WatchEvent], None]] = None,
                 on_end: Optional[Callable[[Optional[Response]], None]] = None) -> None:
        self.request = request
        self.watch = request.verb == "watch"
        self.on_answer = on_answer
        self.on_event = on_event
        self.on_end = on_end
        self.replica = ""
        self.stream: Optional[str] = None
        self.number = -1  # its place among the requests submitted (a recording's)


class Gateway(Component):
    """See the module docstring."""

    def __init__(self, replicas: Sequence[str], name: str = GATEWAY) -> None:
        super().__init__(name)
        self.replicas = tuple(replicas)
        self.pending: deque[Ticket] = deque()
        self.cancelled: deque[Ticket] = deque()
        self.in_flight: dict[int, Ticket] = {}  # request id -> ticket (requests outside watches)
        self.watches: dict[str, Ticket] = {}  # stream -> ticket
        self.next_id = 1
        #: kmodel.serve.recording.Recorder of what came in, for a replay (None: not recorded)
        self.recorder: Any = None
        #: what came in: (logical time, request), in order
        self.received: list[tuple[int, Request]] = []
        #: what went out: (logical time, request id, HTTP code) of each answer outside a watch, and of each watch's
        #: end (0: the stream closed or broke), in order
        self.answered: list[tuple[int, int, int]] = []
        #: called with each request as it is sent into the model, on the model's thread (None: nobody listens)
        self.on_send: Optional[Callable[[Request], None]] = None

    def submit(self, ticket: Ticket) -> None:
        """Queue a ticket (the caller tells the loop: `loop.notify_work(gateway.name)`). Its request gets its id
        when it is sent (ids are the gateway's, in the order requests entered the model)."""
        if self.recorder is not None:
            ticket.number = self.recorder.submit(ticket.request)
        self.pending.append(ticket)

    def cancel(self, ticket: Ticket) -> None:
        """The HTTP client of a watch went away: end the watch (the caller notifies the loop)."""
        if self.recorder is not None:
            self.recorder.cancel(ticket.number)
        self.cancelled.append(ticket)

    # -- component protocol ------------------------------------------------------------------------------

    def has_work(self) -> bool:
        return bool(self.pending) or bool(self.cancelled)

    def work(self, now: int, out: Out) -> None:
        if self.cancelled:
            ticket = self.cancelled.popleft()
            stream = ticket.stream
            if stream is not None and self.watches.pop(stream, None) is not None:
                out.close_stream(stream)
            elif ticket in self.pending:  # never sent: forget it
                self.pending.remove(ticket)
            return
        ticket = self.pending.popleft()
        request = ticket.request = attrs.evolve(ticket.request, id=self.next_id)
        self.next_id += 1
        self.received.append((now, request))
        if self.on_send is not None:
            self.on_send(request)
        replica = self.replicas[request.id % len(self.replicas)]
        ticket.replica = replica
        if ticket.watch:
            stream = f"watch-{request.id}"
            ticket.stream = stream
            self.watches[stream] = ticket
            out.send(replica, request, stream)
        else:
            self.in_flight[request.id] = ticket
            out.send(replica, request)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        payload = msg.payload
        if msg.stream is not None:
            ticket = self.watches.get(msg.stream)
            if ticket is None:
                return
            if type(payload) is WatchEvent:
                ticket.on_event(payload)  # type: ignore[misc]
            else:  # the server ended the watch with its final answer
                self._end_watch(msg.stream, payload, now)
                out.close_stream(msg.stream)
            return
        if type(payload) is Response:
            ticket = self.in_flight.pop(payload.id, None)
            if ticket is not None:
                self.answered.append((now, payload.id, payload.code))
                ticket.on_answer(payload)

    def _end_watch(self, stream: str, response: Optional[Response], now: int = -1) -> None:
        ticket = self.watches.pop(stream, None)
        if ticket is not None:
            self.answered.append((now, ticket.request.id, response.code if response is not None else 0))
            ticket.on_end(response)  # type: ignore[misc]

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        self._end_watch(stream, None, now)

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        if type(payload) is Request:
            ticket = self.in_flight.pop(payload.id, None)
            if ticket is not None:
                self.answered.append((now, payload.id, 503))
                ticket.on_answer(Response(payload.id, 503, unavailable(f"connection refused by {dst}")))

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        answered = {p.id for p in arriving if type(p) is Response}
        for request_id in sorted(self.in_flight):
            ticket = self.in_flight[request_id]
            if ticket.replica == peer and request_id not in answered:
                del self.in_flight[request_id]
                self.answered.append((now, request_id, 503))
                ticket.on_answer(Response(request_id, 503, unavailable(f"connection reset by {peer}")))
        for stream in sorted(self.watches):
            if self.watches[stream].replica == peer:
                self._end_watch(stream, None, now)

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        self.on_connection_reset(now, peer, (), out)
