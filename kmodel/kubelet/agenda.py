"""An agenda: keys due at logical times, behind one named component timer.

A component with many things due (pod resyncs, probe ticks) arms a single timer at the earliest due time
instead of one timer per thing, so the number of timer names stays small and each firing handles every key
that is due, in (due, scheduling order). Scheduling a key again replaces its earlier due time.
"""

from __future__ import annotations

import heapq
from typing import Hashable, Optional

from kmodel.component import Out


class Agenda:
    def __init__(self, timer: str) -> None:
        self.timer = timer
        self._heap: list[tuple[int, int, Hashable]] = []
        self._due: dict[Hashable, int] = {}
        self._seq = 0
        self._armed: Optional[int] = None

    def schedule(self, key: Hashable, at: int, out: Out) -> None:
        self._due[key] = at
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, key))
        self._arm(out)

    def cancel(self, key: Hashable) -> None:
        self._due.pop(key, None)

    def due(self, key: Hashable) -> Optional[int]:
        return self._due.get(key)

    def latest_due(self) -> Optional[int]:
        """The latest due time of a key scheduled, or None."""
        return max(self._due.values(), default=None)

    def pop_due(self, now: int, out: Out) -> list:
        """The keys due by `now` (the timer fired), in order; re-arms for the rest."""
        self._armed = None
        keys = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, key = heapq.heappop(heap)
            if self._due.get(key) == at:
                del self._due[key]
                keys.append(key)
        self._arm(out)
        return keys

    def _arm(self, out: Out) -> None:
        heap = self._heap
        while heap and self._due.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        if heap and heap[0][0] != self._armed:
            self._armed = heap[0][0]
            out.set_timer(self.timer, at=self._armed)
