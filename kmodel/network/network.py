"""The network: named endpoints, one FIFO link per ordered pair, partitions, streams and network faults.

Theory of operation
-------------------
An *endpoint* is a name (``"apiserver-0"``, ``"scheduler"``, ``"kubelet/node-1"``). Between every ordered
pair of endpoints there is at most one *link*, a FIFO queue created on first use, as one HTTP/2 connection
carries everything from one process to another in order. `send` appends a `Message` to the tail of the
link src→dst; `deliver` pops its head. The network never calls anyone: the loop asks which links are
deliverable, picks one, pops the head and hands the message to the destination component.

A link is *deliverable* when all of these hold:

* it is non-empty;
* its two endpoints can reach each other (`Reachability`: partitions);
* it is not held by a delay fault (`delay_head`: the whole link waits until a logical time, because FIFO
  means everything behind the head waits too; `hold_link` holds a link with or without messages on it, a
  slow path; the loop calls `release(now)` as time advances);
* its destination is up (a crashed endpoint receives nothing: `set_down` empties the links into it and
  later sends to it are refused).

Messages on a link between partitioned endpoints stay where they are and become deliverable again on heal;
a fault may still drop them.

Keeping the cost per event flat
-------------------------------
Nothing here scans all links. The set of deliverable links (`_ready`, a dict used as an ordered set) is
updated incrementally: a send makes a link ready only when it was empty; a deliver un-readies it only when
it becomes empty; a partition, heal, crash or delay re-examines only the links touching the endpoints
concerned. A round-robin queue of ready links (`_rr`) gives `run_fair` its next link in O(1) amortised,
and `deliverable_links()` sorts only the ready links, never the idle ones.

Streams
-------
A message may carry a *stream id*, a string naming a long-lived exchange such as a watch (an HTTP/2
stream): the first message on a stream opens it between its sender (the opener) and its destination (the
peer); later messages must go between the same two endpoints, in either direction. A stream ends when an
end closes it (`close_stream`), when a fault breaks it (the same call: an HTTP/2 RST_STREAM or a TCP reset),
or when one of its ends crashes (`set_down`). Ending a stream removes its in-flight messages in both
directions; the caller (the loop) tells the live ends. Sends on an ended stream are discarded, as writes to
a reset stream are, so stream ids must not be reused; an opener may reuse its ids after it restarts (the
network forgets the ended streams it opened when it comes back up, since its peers were told at the crash).

Communication graph
-------------------
Every send counts one message for its ordered pair (`communication_counts`), whether or not it is later
delivered; `communication_graph()` builds a `networkx.DiGraph` from those counts for invariants such as
"every message has an API server at one end".

Determinism
-----------
Message ids come from a counter; every collection that is iterated is a dict (insertion-ordered) or a list,
and every list handed out is sorted, so no order depends on string hashing.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import Any, Iterable, Optional

import networkx as nx

from kmodel.network.message import Message
from kmodel.network.reachability import Reachability

LinkKey = tuple[str, str]

#: `Network.send` returns this when the destination is down (connection refused). The message is gone.
REFUSED = "refused"


class NetworkError(ValueError):
    """A misuse of the network: unknown endpoint, empty link, a stream used between the wrong endpoints."""


class Link:
    """One FIFO link src→dst, and when it is held by a delay fault, the logical time it is held until."""

    __slots__ = ("key", "src", "dst", "queue", "held_until", "delivered_at", "delivered_id")

    def __init__(self, src: str, dst: str) -> None:
        self.key: LinkKey = (src, dst)
        self.src = src
        self.dst = dst
        self.queue: deque[Message] = deque()
        self.held_until: Optional[int] = None
        self.delivered_at = 0  # logical time of the last delivery (what a health check calls "heard")
        self.delivered_id = 0  # id of the last message delivered (0: none)


class Network:
    """Endpoints, links, partitions, streams; faults applied as plain method calls by the loop."""

    def __init__(self) -> None:
        self.reachability = Reachability()
        self._endpoints: dict[str, None] = {}
        self._down: dict[str, None] = {}
        self._links: dict[LinkKey, Link] = {}
        self._out: dict[str, dict[str, Link]] = {}  # src -> dst -> link (every link ever used)
        self._in: dict[str, dict[str, Link]] = {}  # dst -> src -> link
        self._nonempty: dict[LinkKey, Link] = {}
        self._ready: dict[LinkKey, Link] = {}
        self._rr: deque[LinkKey] = deque()  # round-robin order of ready links; may hold stale keys
        self._queued: dict[LinkKey, None] = {}  # keys currently in _rr
        self._releases: list[tuple[int, str, str]] = []  # heap of (held_until, src, dst), lazily pruned
        self._next_id = 0
        self._counts: dict[LinkKey, int] = {}
        # Streams.
        self._streams: dict[str, tuple[str, str]] = {}  # open stream -> (opener, peer)
        self._streams_of: dict[str, dict[str, None]] = {}  # endpoint -> its open streams
        self._in_flight_on: dict[str, int] = {}  # stream -> messages in flight on it (absent: 0)
        self._ended: dict[str, str] = {}  # ended stream -> opener
        self._ended_by_opener: dict[str, dict[str, None]] = {}
        #: Messages discarded because they were sent on a stream that had already ended.
        self.discarded_on_ended_streams = 0

    # -- endpoints -----------------------------------------------------------------------------------

    def add_endpoint(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise NetworkError(f"an endpoint is a non-empty string, not {name!r}")
        if name in self._endpoints:
            raise NetworkError(f"endpoint {name!r} already exists")
        self._endpoints[name] = None
        self._out[name] = {}
        self._in[name] = {}

    @property
    def endpoints(self) -> list[str]:
        return sorted(self._endpoints)

    def has_endpoint(self, name: str) -> bool:
        return name in self._endpoints

    def is_down(self, name: str) -> bool:
        return name in self._down

    def senders_to(self, endpoint: str) -> list[str]:
        """The endpoints that have ever sent `endpoint` a message (a link to it exists), sorted."""
        return sorted(self._in[endpoint])

    # -- sending and delivering (the hot path) ----------------------------------------------------------

    def send(self, src: str, dst: str, payload: Any, stream: Optional[str] = None) -> Message | str | None:
        """Put a message at the tail of the link src→dst.

        Returns the new `Message`; `REFUSED` if `dst` is down (the message is lost; a new stream is ended at
        once, and the caller should tell its opener); None if `stream` has already ended (discarded).
        """
        key = (src, dst)
        link = self._links.get(key)
        if link is None:
            link = self._new_link(src, dst)
        counts = self._counts
        counts[key] = counts.get(key, 0) + 1
        if stream is not None:
            ends = self._streams.get(stream)
            if ends is not None and (ends == key or (ends[0] == dst and ends[1] == src)):
                # _admit_on_stream for a stream already open between these two ends (every watch event)
                in_flight = self._in_flight_on
                in_flight[stream] = in_flight.get(stream, 0) + 1
            elif not self._admit_on_stream(src, dst, stream):
                return None
        if dst in self._down:
            if stream is not None:
                self._end_stream(stream)
            return REFUSED
        self._next_id += 1
        msg = Message(self._next_id, src, dst, payload, stream)
        queue = link.queue
        queue.append(msg)
        if len(queue) == 1:
            self._nonempty[key] = link
            if link.held_until is None and not self.reachability.partitioned:
                # _refresh, inlined for the common case: a link that is not held, with no partition anywhere
                # and its destination up (checked above), is deliverable now
                if key not in self._ready:
                    self._ready[key] = link
                    if key not in self._queued:
                        self._rr.append(key)
                        self._queued[key] = None
            else:
                self._refresh(link)
        return msg

    def deliver(self, src: str, dst: str, now: int = 0) -> Message:
        """Pop and return the head of the deliverable link src→dst (delivered at logical time `now`)."""
        key = (src, dst)
        link = self._ready.get(key)
        if link is None:
            raise NetworkError(f"link {src} -> {dst} is not deliverable")
        link.delivered_at = now
        queue = link.queue
        msg = queue.popleft()
        link.delivered_id = msg.id
        if not queue:
            del self._ready[key]
            del self._nonempty[key]
        elif key not in self._queued:
            self._rr.append(key)
            self._queued[key] = None
        stream = msg.stream
        if stream is not None:
            in_flight = self._in_flight_on  # _left_stream, inlined
            n = in_flight[stream] - 1
            if n:
                in_flight[stream] = n
            else:
                del in_flight[stream]
        return msg

    def next_fair_link(self) -> Optional[LinkKey]:
        """The deliverable link that has waited longest in round-robin order (taken off the rotation;
        `deliver` puts it back at the end if it still has messages), or None."""
        rr = self._rr
        queued = self._queued
        ready = self._ready
        while rr:
            key = rr.popleft()
            del queued[key]
            if key in ready:
                return key
        return None

    # -- inspection --------------------------------------------------------------------------------------

    def is_deliverable(self, src: str, dst: str) -> bool:
        return (src, dst) in self._ready

    @property
    def has_deliverable(self) -> bool:
        return bool(self._ready)

    def deliverable_links(self) -> list[LinkKey]:
        """Deliverable links, sorted by (src, dst)."""
        return sorted(self._ready)

    def nonempty_links(self) -> list[LinkKey]:
        """Links with messages in flight (deliverable or not), sorted by (src, dst)."""
        return sorted(self._nonempty)

    def in_flight(self, src: str, dst: str) -> tuple[Message, ...]:
        """The messages on link src→dst, head first."""
        link = self._links.get((src, dst))
        return tuple(link.queue) if link is not None else ()

    def has_in_flight(self, src: str, dst: str) -> bool:
        return (src, dst) in self._nonempty

    @property
    def has_in_flight_anywhere(self) -> bool:
        """Is any message in flight on any link (deliverable or not)?"""
        return bool(self._nonempty)

    def head(self, src: str, dst: str) -> Message:
        """The message at the head of the non-empty link src→dst (without copying the queue)."""
        link = self._nonempty.get((src, dst))
        if link is None:
            raise NetworkError(f"link {src} -> {dst} is empty")
        return link.queue[0]

    def delivered_at(self, src: str, dst: str) -> int:
        """The logical time of the last delivery on link src→dst (0: none yet)."""
        link = self._links.get((src, dst))
        return link.delivered_at if link is not None else 0

    def delivered_id(self, src: str, dst: str) -> int:
        """The id of the last message delivered on link src→dst (0: none yet); ids grow with every send."""
        link = self._links.get((src, dst))
        return link.delivered_id if link is not None else 0

    def peers_of(self, endpoint: str) -> list[str]:
        """The endpoints `endpoint` has ever sent a message to (a link from it exists), sorted."""
        return sorted(self._out[endpoint])

    def in_flight_count(self) -> int:
        return sum(len(link.queue) for link in self._nonempty.values())

    def held_until(self, src: str, dst: str) -> Optional[int]:
        link = self._links.get((src, dst))
        return link.held_until if link is not None else None

    @property
    def link_count(self) -> int:
        return len(self._links)

    @property
    def messages_sent(self) -> int:
        """How many messages were given ids (the last id handed out)."""
        return self._next_id

    def can_reach(self, a: str, b: str) -> bool:
        return self.reachability.can_reach(a, b)

    # -- communication graph -------------------------------------------------------------------------

    def communication_counts(self) -> dict[LinkKey, int]:
        """Messages sent per ordered pair (src, dst), sorted by pair."""
        return {key: self._counts[key] for key in sorted(self._counts)}

    @property
    def pairs_talked(self) -> int:
        """How many ordered pairs (src, dst) have sent at least one message."""
        return len(self._counts)

    def pairs_since(self, known: int) -> list[tuple[LinkKey, int]]:
        """The pairs that first talked after the first `known` ones (in the order they first talked), each with
        its message count: what is new on the communication graph since a reader saw `known` pairs."""
        return [(key, self._counts[key]) for key in itertools.islice(self._counts, known, None)]

    def communication_graph(self) -> nx.DiGraph:
        """Who sent to whom: a DiGraph over all endpoints, edge attribute ``messages`` = messages sent."""
        graph = nx.DiGraph()
        graph.add_nodes_from(sorted(self._endpoints))
        for (src, dst), n in self.communication_counts().items():
            graph.add_edge(src, dst, messages=n)
        return graph

    # -- partitions ------------------------------------------------------------------------------------

    def partition(self, endpoints: Iterable[str]) -> list[str]:
        """Cut `endpoints` off from all other endpoints; returns them sorted."""
        endpoints = self._known(endpoints)
        moved = self.reachability.partition(endpoints)
        self._refresh_around(moved)
        return moved

    def heal(self, endpoints: Iterable[str]) -> list[str]:
        """Reconnect `endpoints` to the main side; returns the endpoints that moved, sorted."""
        moved = self.reachability.heal(self._known(endpoints))
        self._refresh_around(moved)
        return moved

    def heal_all(self) -> list[str]:
        moved = self.reachability.heal_all()
        self._refresh_around(moved)
        return moved

    @property
    def partitioned(self) -> bool:
        return self.reachability.partitioned

    # -- message faults ------------------------------------------------------------------------------

    def drop_head(self, src: str, dst: str) -> Message:
        """Lose the message at the head of link src→dst (deliverable or not); returns it."""
        link = self._nonempty.get((src, dst))
        if link is None:
            raise NetworkError(f"link {src} -> {dst} has no message to drop")
        msg = link.queue.popleft()
        if not link.queue:
            del self._nonempty[link.key]
            self._ready.pop(link.key, None)
        if msg.stream is not None:
            self._left_stream(msg.stream)
        return msg

    def delay_head(self, src: str, dst: str, until_ms: int) -> None:
        """Hold the whole link src→dst (FIFO: the head and everything behind it) until logical time
        `until_ms`; a later delay replaces an earlier one. The loop calls `release(now)` as time passes."""
        if (src, dst) not in self._nonempty:
            raise NetworkError(f"link {src} -> {dst} has no message to delay")
        self.hold_link(src, dst, until_ms)

    def hold_link(self, src: str, dst: str, until_ms: int) -> None:
        """Hold the link src→dst until logical time `until_ms` whether or not anything is on it (a slow path):
        what is on it and what is sent on it meanwhile waits. A later hold replaces an earlier one."""
        link = self._links.get((src, dst))
        if link is None:
            link = self._new_link(src, dst)
        link.held_until = until_ms
        heapq.heappush(self._releases, (until_ms, src, dst))
        self._refresh(link)

    def unhold_link(self, src: str, dst: str, until_ms: int) -> bool:
        """End the hold of src→dst now if it is the one set until `until_ms` (a later hold, set since, stays);
        returns whether it ended. Its messages become deliverable again."""
        link = self._links.get((src, dst))
        if link is None or link.held_until != until_ms:
            return False
        link.held_until = None
        self._refresh(link)
        return True

    @property
    def has_held_links(self) -> bool:
        """Is some link held by a delay now?"""
        return self.next_release() is not None

    def release_all(self) -> list[LinkKey]:
        """End every delay now; returns the links released, sorted."""
        released = []
        while self._releases:
            until, src, dst = heapq.heappop(self._releases)
            link = self._links[(src, dst)]
            if link.held_until == until:
                link.held_until = None
                self._refresh(link)
                released.append(link.key)
        return sorted(released)

    def next_release(self) -> Optional[int]:
        """The earliest time a held link is released, or None."""
        releases = self._releases
        while releases:
            until, src, dst = releases[0]
            if self._links[(src, dst)].held_until == until:
                return until
            heapq.heappop(releases)  # stale: replaced by a later delay, or already released
        return None

    def latest_release(self) -> Optional[int]:
        """The latest time a held link is released, or None."""
        links = self._links
        return max((until for until, src, dst in self._releases if links[(src, dst)].held_until == until),
                   default=None)

    def release(self, now: int) -> None:
        """Release every link held until `now` or earlier."""
        releases = self._releases
        while releases and releases[0][0] <= now:
            until, src, dst = heapq.heappop(releases)
            link = self._links[(src, dst)]
            if link.held_until == until:
                link.held_until = None
                self._refresh(link)

    # -- streams -------------------------------------------------------------------------------------

    def open_streams(self) -> list[str]:
        return sorted(self._streams)

    @property
    def has_open_streams(self) -> bool:
        return bool(self._streams)

    def stream_ends(self, stream: str) -> Optional[tuple[str, str]]:
        """(opener, peer) of an open stream, or None."""
        return self._streams.get(stream)

    def open_stream(self, stream: str, opener: str, peer: str) -> None:
        """Open `stream` before its first message (a gRPC watch exists from the call that creates it, not from
        its first event), so a crash of either end ends it and the other end is told."""
        if stream in self._streams or stream in self._ended:
            raise NetworkError(f"stream {stream!r} was opened before")
        self._streams[stream] = (opener, peer)
        self._streams_of.setdefault(opener, {})[stream] = None
        self._streams_of.setdefault(peer, {})[stream] = None

    def is_ended(self, stream: str) -> bool:
        return stream in self._ended

    def close_stream(self, stream: str) -> tuple[str, str]:
        """End an open stream (closed by an end, or broken by a fault): remove its messages in flight in
        both directions. Returns its (opener, peer) so the caller can tell the ends."""
        ends = self._streams.get(stream)
        if ends is None:
            raise NetworkError(f"stream {stream!r} is not open")
        self._end_stream(stream)
        return ends

    def streams_between(self, a: str, b: str) -> list[tuple[str, str, str]]:
        """The open streams between `a` and `b` (either one the opener), as sorted (stream, opener, peer)."""
        found = []
        for stream in self._streams_of.get(a, ()):
            ends = self._streams[stream]
            if ends == (a, b) or ends == (b, a):
                found.append((stream, *ends))
        return sorted(found)

    def drop_between(self, a: str, b: str) -> int:
        """Lose every message outside a stream on the links a→b and b→a (a connection between them closed:
        its requests and answers in flight are gone); returns how many. Streams are ended by `close_stream`."""
        dropped = 0
        for key in ((a, b), (b, a)):
            link = self._links.get(key)
            if link is None or not link.queue:
                continue
            kept = deque(m for m in link.queue if m.stream is not None)
            dropped += len(link.queue) - len(kept)
            link.queue = kept
            if not kept:
                del self._nonempty[key]
            self._refresh(link)
        return dropped

    # -- crash and restart -------------------------------------------------------------------------------

    def set_down(self, endpoint: str) -> list[tuple[str, str, str]]:
        """Mark `endpoint` crashed: drop every message in flight to it, end every stream it is an end of.
        Returns the ended streams as sorted (stream, opener, peer) triples so the caller can tell the live
        ends. Messages it sent before crashing that are not on a stream stay in flight."""
        if endpoint not in self._endpoints:
            raise NetworkError(f"unknown endpoint {endpoint!r}")
        self._down[endpoint] = None
        broken = []
        for stream in sorted(self._streams_of.get(endpoint, ())):
            opener, peer = self._streams[stream]
            self._end_stream(stream)
            broken.append((stream, opener, peer))
        for link in self._in[endpoint].values():
            while link.queue:
                msg = link.queue.popleft()
                if msg.stream is not None:
                    self._left_stream(msg.stream)
            self._nonempty.pop(link.key, None)
            self._ready.pop(link.key, None)
        return broken

    def set_up(self, endpoint: str) -> None:
        """Mark `endpoint` restarted; it may reuse the stream ids it opened before."""
        if endpoint not in self._endpoints:
            raise NetworkError(f"unknown endpoint {endpoint!r}")
        self._down.pop(endpoint, None)
        for stream in self._ended_by_opener.pop(endpoint, {}):
            del self._ended[stream]
        for link in self._in[endpoint].values():
            self._refresh(link)

    # -- internals ---------------------------------------------------------------------------------------

    def _new_link(self, src: str, dst: str) -> Link:
        if src not in self._endpoints:
            raise NetworkError(f"unknown endpoint {src!r}")
        if dst not in self._endpoints:
            raise NetworkError(f"unknown endpoint {dst!r}")
        link = Link(src, dst)
        self._links[link.key] = link
        self._out[src][dst] = link
        self._in[dst][src] = link
        return link

    def _known(self, endpoints: Iterable[str]) -> list[str]:
        endpoints = list(endpoints)
        for e in endpoints:
            if e not in self._endpoints:
                raise NetworkError(f"unknown endpoint {e!r}")
        return endpoints

    def _refresh(self, link: Link) -> None:
        """Recompute whether one link is deliverable and update the ready set and rotation."""
        key = link.key
        ok = (
            bool(link.queue)
            and link.held_until is None
            and link.dst not in self._down
            and self.reachability.can_reach(link.src, link.dst)
        )
        if ok:
            if key not in self._ready:
                self._ready[key] = link
                if key not in self._queued:
                    self._rr.append(key)
                    self._queued[key] = None
        else:
            self._ready.pop(key, None)

    def _refresh_around(self, endpoints: list[str]) -> None:
        for e in endpoints:
            for link in self._out[e].values():
                if link.queue:
                    self._refresh(link)
            for link in self._in[e].values():
                if link.queue:
                    self._refresh(link)

    def _admit_on_stream(self, src: str, dst: str, stream: str) -> bool:
        """Check a message may travel on `stream`, opening the stream on first use; False if it ended."""
        ends = self._streams.get(stream)
        if ends is None:
            if stream in self._ended:
                self.discarded_on_ended_streams += 1
                return False
            if not isinstance(stream, str):
                raise NetworkError(f"a stream id is a string, not {stream!r}")
            self._streams[stream] = (src, dst)
            self._streams_of.setdefault(src, {})[stream] = None
            self._streams_of.setdefault(dst, {})[stream] = None
        elif not ((src, dst) == ends or (dst, src) == ends):
            raise NetworkError(f"stream {stream!r} runs between {ends[0]} and {ends[1]}, not {src} -> {dst}")
        self._in_flight_on[stream] = self._in_flight_on.get(stream, 0) + 1
        return True

    def _left_stream(self, stream: str) -> None:
        n = self._in_flight_on[stream] - 1
        if n:
            self._in_flight_on[stream] = n
        else:
            del self._in_flight_on[stream]

    def _end_stream(self, stream: str) -> None:
        """Mark a stream ended (opened or not) and purge its messages from both links."""
        ends = self._streams.pop(stream, None)
        if ends is None:  # a new stream refused at its first send
            return
        opener, peer = ends
        self._ended[stream] = opener
        self._ended_by_opener.setdefault(opener, {})[stream] = None
        for e in ends:
            of = self._streams_of[e]
            del of[stream]
            if not of:
                del self._streams_of[e]
        if self._in_flight_on.pop(stream, 0):
            for key in ((opener, peer), (peer, opener)):
                link = self._links.get(key)
                if link is not None and link.queue:
                    link.queue = deque(m for m in link.queue if m.stream != stream)
                    if not link.queue:
                        del self._nonempty[key]
                    self._refresh(link)
