"""`ClientComponent`: a component that reaches the cluster through one `ApiClient` (`self.client`), and hands
it what the network tells the component about its peers: a stream closed, a peer's connections reset, a
message refused. Those are the client's business (its watches and its requests); the component's own
inputs (messages, timers, work) stay its own to route."""

from __future__ import annotations

from typing import Any

from kmodel.component import Component, Out


class ClientComponent(Component):
    """A Component whose peer news goes to `self.client` (an ApiClient the subclass sets in __init__)."""

    client: Any

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        self.client.on_stream_closed(now, stream, out)

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        self.client.on_connection_reset(now, peer, arriving, out)

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        self.client.on_send_refused(now, dst, payload, out)
