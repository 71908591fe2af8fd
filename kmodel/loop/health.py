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
reflector then relists after its backoff, through the next connection (kmodel's client: the next replica).

A component opts in with `Component.connection_health_check` (a `HealthCheck`); `ClientComponent` does,
with client-go's values (`kmodel.client.component.CLIENT_GO_HTTP2`), and so does every API server replica
for its connection to etcd, with its etcd client's gRPC keepalive (30 s, then 10 s for the answer:
`kmodel.apiserver.replica.ETCD_CLIENT_KEEPALIVE`; gRPC's keepalive pings are HTTP/2 PINGs). The check covers
the peers it names (`HealthCheck.peers`), or else every peer the component has sent a message to.

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

Dialing across a partition. A connection that dies (given up on, or reset by a crash) is replaced by a new
one when the client next sends to that peer, and a client's first message to a peer opens its first. Across
a partition the dial cannot complete: client-go's dialer gives up after `dial_timeout_ms` (30 s,
transport/cache.go's net.Dialer), and whatever waits on the connection fails. So `on_send_across` (the loop
calls it for every message a health-checked client sends across a partition) arms the client's timer
``dial-timeout/<peer>`` when no connection to the peer is up ("up": a message from the peer was delivered
since the last one died), and a heal before it fires cancels it (the retransmitted SYN gets through). Firing
it does what giving up on a connection does, with the reason "dial tcp: i/o timeout".

Not modelled: a dial's own retries (the model dials once, when the first message needs it). A delay fault
(`DelayHead`, `SlowLink`: at most 30 s, or 60 s for the checker's lag_watch_cache) never trips a check: it
stands for a slow sender whose transport still answers PINGs (an overloaded etcd), not a slow network, which
would hold the PING's answer too; the check reacts to partitions only. An API server's calls to etcd are
synchronous in the model (kmodel.apiserver.etcd_endpoint: a call to an unreachable etcd times out after etcd's
7 s), so only its etcd watch stream is given up on, and no dial of its is timed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from kmodel.component import HealthCheck

if TYPE_CHECKING:  # pragma: no cover
    from kmodel.clock import Clock
    from kmodel.network import Network

#: the client's timer that fires when its transport gives up on the connection to a peer: prefix + peer
TIMER_PREFIX = "http2-health/"
#: the client's timer that fires when its dial to a peer across a partition times out: prefix + peer
DIAL_TIMER_PREFIX = "dial-timeout/"
#: both (the loop handles these timers itself; the client never sees them)
TIMER_PREFIXES = (TIMER_PREFIX, DIAL_TIMER_PREFIX)
#: what a dial that timed out reports (`Component.on_connection_lost`'s reason; a connection given up on
#: reports its check's `HealthCheck.lost_reason`)
DIAL_TIMEOUT_REASON = "dial tcp: i/o timeout"


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
        self._naming: dict[str, list[str]] = {}  # peer -> the clients whose checks name it (HealthCheck.peers)
        self._armed: dict[tuple[str, str], int] = {}  # (client, peer) -> the PING time that will go unanswered
        self._pong: dict[tuple[str, str], int] = {}  # (client, peer) -> the last PING answered after a heal
        self._dialing: dict[tuple[str, str], int] = {}  # (client, peer) -> when its dial across a partition started
        # (client, peer) -> the network's last message id when their connection died (lost, or reset by a crash):
        # a connection is up again only once a message from the peer was delivered after it
        self._died: dict[tuple[str, str], int] = {}

    def add_client(self, name: str, check: Optional[HealthCheck]) -> None:
        if check is not None:
            self._policies[name] = check
            for peer in check.peers or ():
                naming = self._naming.setdefault(peer, [])
                if name not in naming:
                    naming.append(name)

    @property
    def armed(self) -> dict[tuple[str, str], int]:
        """(client, peer) -> the PING time that goes unanswered, for every connection being given up on."""
        return dict(self._armed)

    def checks(self, name: str, peer: str) -> bool:
        """Does `name`'s transport check its connection to `peer`?"""
        check = self._policies.get(name)
        return check is not None and check.covers(peer)

    def reason(self, client: str, timer_prefix: str) -> str:
        """What `client`'s transport reports when its timer with `timer_prefix` fires."""
        return DIAL_TIMEOUT_REASON if timer_prefix == DIAL_TIMER_PREFIX else self._policies[client].lost_reason

    def _peers(self, name: str) -> list[str]:
        """The peers whose connections `name` (health-checked) checks."""
        check = self._policies[name]
        return list(check.peers) if check.peers is not None else self._network.peers_of(name)

    @property
    def dialing(self) -> dict[tuple[str, str], int]:
        """(client, peer) -> when it started, for every dial waiting across a partition."""
        return dict(self._dialing)

    def on_send_across(self, client: str, peer: str, now: int) -> None:
        """`client` (health-checked) just sent `peer` a message across a partition. Over a connection that is up,
        its check is armed already (the partition armed it); with none (never connected, or the last one died),
        the transport is dialing, and the dial cannot complete: arm its timeout."""
        key = (client, peer)
        if key in self._armed or key in self._dialing:
            return
        if self._network.delivered_id(peer, client) > self._died.get(key, 0):
            return  # a connection that is up (armed at the partition, or given up on and being replaced)
        self._dialing[key] = now
        self._clock.set_at(client, DIAL_TIMER_PREFIX + peer, now + self._policies[client].dial_timeout_ms)

    def on_reachability_changed(self, moved: Iterable[str], now: int, down: dict[str, None]) -> None:
        """Arm or cancel the checks of every connection with an end among `moved` (see the module docstring)."""
        net = self._network
        policies = self._policies
        pairs: dict[tuple[str, str], None] = {}
        for e in moved:
            if e in policies:
                for peer in self._peers(e):
                    pairs[(e, peer)] = None
            for sender in net.senders_to(e):
                if sender in policies and policies[sender].covers(e):
                    pairs[(sender, e)] = None
            for client in self._naming.get(e, ()):
                pairs[(client, e)] = None  # a named peer it may never have sent a message to (its calls are not)
        for client, peer in sorted(pairs):
            if client == peer:
                continue
            reachable = net.can_reach(client, peer)
            if reachable and (client, peer) in self._dialing:
                del self._dialing[(client, peer)]  # the dial's retransmitted SYN gets through (or is refused)
                self._clock.cancel(client, DIAL_TIMER_PREFIX + peer)
            if client in down or peer in down:
                continue
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
        """The client's timer for `peer` fired (the loop closes the connection, or ends the dial)."""
        key = (client, peer)
        self._armed.pop(key, None)
        self._pong.pop(key, None)
        self._dialing.pop(key, None)
        self._died[key] = self._network.messages_sent

    def on_crash(self, name: str) -> None:
        """`name` crashed: its own checks are gone with its timers, checks of connections to it are moot (they
        were reset), and every connection it was an end of is dead."""
        for client, peer in [k for k in self._armed if name in k]:
            self._disarm(client, peer)
        for client, peer in [k for k in self._dialing if name in k]:
            del self._dialing[(client, peer)]
            self._clock.cancel(client, DIAL_TIMER_PREFIX + peer)
        for key in [k for k in self._pong if name in k]:
            del self._pong[key]
        mark = self._network.messages_sent
        net = self._network
        if name in self._policies:
            for peer in self._peers(name):
                self._died[(name, peer)] = mark
        for sender in net.senders_to(name):
            if sender in self._policies and self._policies[sender].covers(name):
                self._died[(sender, name)] = mark

    def _disarm(self, client: str, peer: str) -> None:
        del self._armed[(client, peer)]
        self._clock.cancel(client, TIMER_PREFIX + peer)
