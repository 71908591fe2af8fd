"""`ClientComponent`: a component that reaches the cluster through one `ApiClient` (`self.client`), and hands
it what the network tells the component about its peers: a stream closed, a peer's connections reset, a
message refused, its transport giving up on a connection. Those are the client's business (its watches and its
requests); the component's own inputs (messages, timers, work) stay its own to route.

Its transport is client-go's, HTTP/2 with the connection health check client-go configures
(`CLIENT_GO_HTTP2`; kmodel.loop.health)."""

from __future__ import annotations

from typing import Any, Optional

from kmodel.component import Component, HealthCheck, Out

#: client-go's HTTP/2 health check: k8s.io/apimachinery/pkg/util/net's readIdleTimeoutSeconds (30) and
#: pingTimeoutSeconds (15), the defaults of HTTP2_READ_IDLE_TIMEOUT_SECONDS and HTTP2_PING_TIMEOUT_SECONDS; its dialer's
#: timeout (30 s, k8s.io/client-go/transport/cache.go)
CLIENT_GO_HTTP2 = HealthCheck(idle_ms=30_000, ping_timeout_ms=15_000, dial_timeout_ms=30_000)


class ClientComponent(Component):
    """A Component whose peer news goes to `self.client` (an ApiClient the subclass sets in __init__)."""

    client: Any
    connection_health_check = CLIENT_GO_HTTP2
    #: what invariants may read of it (kmodel.invariants.records): its API client
    RECORDS: frozenset[str] = frozenset({"client"})

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        self.client.on_stream_closed(now, stream, out)

    def latest_deadline(self, now: int) -> Optional[int]:
        return self.client.latest_deadline()

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        self.client.on_connection_reset(now, peer, arriving, out)

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        self.client.on_connection_lost(now, peer, reason, out)

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        self.client.on_send_refused(now, dst, payload, out)
