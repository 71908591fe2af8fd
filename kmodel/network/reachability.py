"""Who can reach whom: network partitions as a small networkx graph over *sides*.

Theory of operation
-------------------
Every endpoint stands on a side. At the start, and after `heal_all`, every endpoint is on side 0. Two
endpoints can talk when they stand on the same side, or on two sides joined by an edge of `graph` (a
`networkx.Graph` whose nodes are side numbers). `partition(S)` moves every endpoint of S to a fresh side
with no edges: S can still talk among itself but not to anyone else, which is the classic "cut this set
off from the rest". `heal(S)` moves the endpoints of S back to side 0; `heal_all()` puts everyone back.

Sides, not endpoints, are the graph's nodes on purpose: a full mesh of endpoints would hold n² edges for
a cluster of thousands of endpoints, while a partition of S here costs O(|S|) and a reachability check is
two dict look-ups (and, only if there are several sides, one edge look-up). Endpoints never partitioned
are not stored at all (absent means side 0), so a healthy network stores nothing.

Side numbers come from a counter, so they are deterministic; empty sides are removed from the graph.
"""

from __future__ import annotations

from typing import Iterable

import networkx as nx


class Reachability:
    """The partition state of the network: each endpoint's side, and which sides are joined."""

    def __init__(self) -> None:
        self.graph: nx.Graph = nx.Graph()
        self.graph.add_node(0)
        self._side: dict[str, int] = {}  # endpoint -> side, only for endpoints off side 0
        self._members: dict[int, dict[str, None]] = {}  # side -> its endpoints (side 0 not kept)
        self._next_side = 1
        #: True when some endpoint is cut off from side 0 (kept with `_side`: read before every send)
        self.partitioned = False

    def side_of(self, endpoint: str) -> int:
        return self._side.get(endpoint, 0)

    def can_reach(self, a: str, b: str) -> bool:
        side = self._side
        if not side:
            return True
        sa = side.get(a, 0)
        sb = side.get(b, 0)
        return sa == sb or self.graph.has_edge(sa, sb)

    def partition(self, endpoints: Iterable[str]) -> list[str]:
        """Cut `endpoints` off from everyone else onto a fresh side; returns the endpoints moved, sorted."""
        moved = sorted(set(endpoints))
        if not moved:
            return moved
        side = self._next_side
        self._next_side += 1
        self.graph.add_node(side)
        self._members[side] = {}
        for endpoint in moved:
            self._move(endpoint, side)
        return moved

    def heal(self, endpoints: Iterable[str]) -> list[str]:
        """Put `endpoints` back on side 0; returns the endpoints that moved, sorted."""
        moved = sorted(e for e in set(endpoints) if e in self._side)
        for endpoint in moved:
            self._move(endpoint, 0)
        return moved

    def heal_all(self) -> list[str]:
        """Put every endpoint back on side 0; returns the endpoints that moved, sorted."""
        return self.heal(list(self._side))

    def sides(self) -> list[list[str]]:
        """The sides other than side 0, each as a sorted list of endpoints, in side order (for reports)."""
        return [sorted(self._members[s]) for s in sorted(self._members)]

    def _move(self, endpoint: str, side: int) -> None:
        old = self._side.get(endpoint, 0)
        if old == side:
            return
        if old:
            members = self._members[old]
            del members[endpoint]
            if not members:
                del self._members[old]
                self.graph.remove_node(old)
        if side:
            self._side[endpoint] = side
            self._members[side][endpoint] = None
        else:
            del self._side[endpoint]
        self.partitioned = bool(self._side)
