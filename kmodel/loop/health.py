"""Connection health checks: how a client learns that a connection across a partition is dead.

Theory of operation
-------------------
A partition loses packets; it resets nothing. A client whose connection runs across one hears nothing
and, by itself, would wait for ever: a watch on that connection hangs until the partition heals. Real
clients do not wait. client-go configures its HTTP/2 transport with a health check
(k8s.io/apimachinery/pkg/util/net: ReadIdleTimeout 30 s, PingTimeout 15 s, the defaults of
HTTP2_READ_IDLE_TIMEOUT_SECONDS and HTTP2_PING_TIMEOUT_SECONDS): when no frame has been read on a
connection for `idle_ms`, the transport sends a PING; if nothing comes back within `ping_timeout_ms`, it
closes the connection, and every stream and request on it fails with "http2: client connection lost". The
reflector then watches again, through the next connection (kmodel's client: the next replica).

A component opts in with `Component.connection_health_check` (a `HealthCheck`); `ClientComponent` does,
with client-go's values (`kmodel.client.component.CLIENT_GO_HTTP2`). The check covers every peer the component has sent a message to.

PINGs are resolved, not sent. On a connection whose peer is reachable a PING is always answered at once,
and its only effect is to start the next idle period: nothing any component can observe. So the model
sends none. It only works out when a PING would go unanswered:

* `on_reachability_changed` runs after every partition and heal, for the endpoints that moved. For each
  health-checked client and peer that can no longer reach each other, it arms the client's timer
  ``http2-health/<peer>`` at the time the transport would give up. That is the first PING time after the
  cut plus `ping_timeout_ms`. PINGs follow the last frame heard from the peer at `idle_ms` intervals (each
  answered PING restarting the idle period), so the first one after the cut is ``heard + k * idle_ms``, the
  first such time not before the cut.
* When the two can reach each other again before the timer fires, it is cancelled. A PING already sent is
  then answered at once (it waited on the link, like everything else), which counts as hearing the peer:
  the next idle period starts at the heal.
* When the timer fires (the loop's `FireTimer`; it is an event of the client like its own timers, so the
  explorer can interleave it), the loop closes the connection: see `Loop._lose_connection`.

"Heard" is the time of the last message delivered from the peer to the client (the network's
`Link.delivered_at`), or the last answered PING.

Not modelled: a delay fault (`DelayHead`, `SlowLink`) holds a link for at most 30 s, which can also make a
PING late; the check reacts to partitions only. The API servers' own etcd client (gRPC keepalive, 30 s and
10 s in kube-apiserver) is not health-checked: a replica cut off from etcd waits for the heal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from kmodel.component import HealthCheck

if TYPE_CHECKING:  # pragma: no cover
    from kmodel.clock import Clock
    from kmodel.network import Network

#: the client's timer that fires when its transport gives up on the connection to a peer: prefix + peer
TIMER_PREFIX = "http2-health/"


def first_ping_after(heard: int, cut: int, idle_ms: int) -> int:
    """The first PING time not before `cut` of a connection last heard at `heard` (PINGs at heard + k*idle_ms,
    k >= 1: the ones before the cut were answered)."""
    if cut <= heard + idle_ms:
        return heard + idle_ms
    periods = -(-(cut - heard) // idle_ms)  # ceiling
    return heard + periods * idle_ms


class ConnectionHealth:
    """Which health-checked connections run across a partition, and when their clients give up on them."""

    def __init__(self, network: "Network", clock: "Clock") -> None:
        self._network = network
        self._clock = clock
        self._policies: dict[str, HealthCheck] = {}  # client -> its transport's check
        self._armed: dict[tuple[str, str], int] = {}  # (client, peer) -> the PING time that will go unanswered
        self._pong: dict[tuple[str, str], int] = {}  # (client, peer) -> the last PING answered after a heal

    def add_client(self, name: str, check: Optional[HealthCheck]) -> None:
        if check is not None:
            self._policies[name] = check

    @property
    def armed(self) -> dict[tuple[str, str], int]:
        """(client, peer) -> the PING time that goes unanswered, for every connection being given up on."""
        return dict(self._armed)

    def on_reachability_changed(self, moved: Iterable[str], now: int, down: dict[str, None]) -> None:
        """Arm or cancel the checks of every connection with an end among `moved` (see the module docstring)."""
        net = self._network
        policies = self._policies
        pairs: dict[tuple[str, str], None] = {}
        for e in moved:
            if e in policies:
                for peer in net.peers_of(e):
                    pairs[(e, peer)] = None
            for sender in net.senders_to(e):
                if sender in policies:
                    pairs[(sender, e)] = None
        for client, peer in sorted(pairs):
            if client == peer or client in down or peer in down:
                continue
            reachable = net.can_reach(client, peer)
            ping = self._armed.get((client, peer))
            if reachable and ping is not None:
                self._disarm(client, peer)
                if ping <= now:
                    self._pong[(client, peer)] = now  # the waiting PING is answered at once
            elif not reachable and ping is None:
                check = policies[client]
                heard = max(net.delivered_at(peer, client), self._pong.get((client, peer), 0))
                ping = first_ping_after(heard, now, check.idle_ms)
                self._armed[(client, peer)] = ping
                self._clock.set_at(client, TIMER_PREFIX + peer, ping + check.ping_timeout_ms)

    def fired(self, client: str, peer: str) -> None:
        """The client's timer for `peer` fired (the loop closes the connection)."""
        self._armed.pop((client, peer), None)
        self._pong.pop((client, peer), None)

    def on_crash(self, name: str) -> None:
        """`name` crashed: its own checks are gone with its timers, and checks of connections to it are moot
        (they were reset)."""
        for client, peer in [k for k in self._armed if name in k]:
            self._disarm(client, peer)
        for key in [k for k in self._pong if name in k]:
            del self._pong[key]

    def _disarm(self, client: str, peer: str) -> None:
        del self._armed[(client, peer)]
        self._clock.cancel(client, TIMER_PREFIX + peer)
