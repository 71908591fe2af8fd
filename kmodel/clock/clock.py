"""Logical time and timers.

Theory of operation
-------------------
Time is an integer number of logical milliseconds, `Clock.now`, that only the loop moves forward
(`advance_to`). Nothing in kmodel reads a wall clock.

A timer belongs to an owner (an endpoint name) and has a name that is unique for that owner: setting a
timer that already exists replaces it (as re-arming a Go ``time.Timer`` does), cancelling a timer that does
not exist is a no-op. A timer is *due* when its due time is at or before `now`. The clock never fires
anything: the loop asks for due timers and fires one at a time, calling `pop` to remove it.

The order of timers is (due, owner, name), a total order on plain values, so nothing depends on string
hashing or object identity. Timers are kept twice: `_timers[owner][name] = (due, seq)` says what is set,
and a heap of (due, owner, name, seq) says what comes first. Replacing or cancelling a timer leaves its
old heap entry behind; entries whose seq no longer matches are skipped when met (lazy deletion), and the
heap is rebuilt when stale entries outnumber live ones, so memory stays proportional to the live timers.

Listing the due timers walks only the part of the heap whose due time is <= now (a heap's children are
never earlier than their parent), so its cost depends on how many timers are due, not on how many exist.
"""

from __future__ import annotations

import heapq
from typing import Optional

TimerKey = tuple[int, str, str]  # (due, owner, name)


class Clock:
    """Logical milliseconds and the timers set by endpoints."""

    def __init__(self, now: int = 0) -> None:
        if not isinstance(now, int):
            raise TypeError("logical time is an int of milliseconds")
        self.now = now
        self._timers: dict[str, dict[str, tuple[int, int]]] = {}
        self._heap: list[tuple[int, str, str, int]] = []
        self._seq = 0
        self._live = 0

    # -- setting and cancelling ----------------------------------------------------------------------

    def set_at(self, owner: str, name: str, at: int) -> None:
        """Set (or replace) timer `name` of `owner` to fall due at absolute logical time `at`."""
        if not isinstance(at, int):
            raise TypeError(f"timer {owner}/{name}: due time must be an int, not {at!r}")
        owned = self._timers.get(owner)
        if owned is None:
            owned = self._timers[owner] = {}
        if name not in owned:
            self._live += 1
        self._seq += 1
        owned[name] = (at, self._seq)
        heapq.heappush(self._heap, (at, owner, name, self._seq))
        if len(self._heap) > 64 and len(self._heap) > 2 * self._live:
            self._compact()

    def set_after(self, owner: str, name: str, delay_ms: int) -> int:
        """Set (or replace) a timer `delay_ms` after now; returns its due time."""
        if not isinstance(delay_ms, int) or delay_ms < 0:
            raise ValueError(f"timer {owner}/{name}: delay must be an int >= 0, not {delay_ms!r}")
        at = self.now + delay_ms
        self.set_at(owner, name, at)
        return at

    def cancel(self, owner: str, name: str) -> bool:
        """Cancel a timer; returns whether it was set."""
        owned = self._timers.get(owner)
        if owned is None or name not in owned:
            return False
        del owned[name]
        if not owned:
            del self._timers[owner]
        self._live -= 1
        return True

    def cancel_owner(self, owner: str) -> int:
        """Cancel every timer of `owner` (a crash); returns how many there were."""
        owned = self._timers.pop(owner, None)
        if not owned:
            return 0
        self._live -= len(owned)
        return len(owned)

    def pop(self, owner: str, name: str) -> int:
        """Remove a due timer that is being fired; returns its due time."""
        owned = self._timers.get(owner)
        entry = owned.get(name) if owned is not None else None
        if entry is None:
            raise KeyError(f"no timer {name!r} set by {owner!r}")
        if entry[0] > self.now:
            raise ValueError(f"timer {owner}/{name} is due at {entry[0]}, not yet at {self.now}")
        self.cancel(owner, name)
        return entry[0]

    # -- reading ---------------------------------------------------------------------------------------

    def due_at(self, owner: str, name: str) -> Optional[int]:
        owned = self._timers.get(owner)
        entry = owned.get(name) if owned is not None else None
        return entry[0] if entry is not None else None

    def timers_of(self, owner: str) -> dict[str, int]:
        """The timers `owner` has set, name -> due time, sorted by name."""
        owned = self._timers.get(owner, {})
        return {name: owned[name][0] for name in sorted(owned)}

    def __len__(self) -> int:
        return self._live

    def next_due(self) -> Optional[int]:
        """The earliest due time of any timer (possibly already past), or None."""
        top = self._top()
        return top[0] if top is not None else None

    def earliest_due(self) -> Optional[TimerKey]:
        """The first due timer in (due, owner, name) order, or None if none is due now."""
        # _top, inlined, stopping at the first entry not due (the fair runner asks before every event): a
        # stale entry later than now is left for later, as no live one can come before it
        heap = self._heap
        now = self.now
        timers = self._timers
        while heap:
            due, owner, name, seq = heap[0]
            if due > now:
                return None
            owned = timers.get(owner)
            if owned is not None:
                entry = owned.get(name)
                if entry is not None and entry[1] == seq:
                    return (due, owner, name)
            heapq.heappop(heap)
        return None

    def due_timers(self) -> list[TimerKey]:
        """Every timer due now, sorted by (due, owner, name)."""
        heap = self._heap
        now = self.now
        found = []
        stack = [0] if heap else []
        while stack:
            i = stack.pop()
            due, owner, name, seq = heap[i]
            if due > now:
                continue  # its whole subtree is later
            if self._is_live(owner, name, seq):
                found.append((due, owner, name))
            j = 2 * i + 1
            if j < len(heap):
                stack.append(j)
                if j + 1 < len(heap):
                    stack.append(j + 1)
        found.sort()
        return found

    def latest_due(self) -> Optional[int]:
        """The latest due time of any timer set, or None (walks every timer: for rare questions)."""
        return max((due for owned in self._timers.values() for due, _ in owned.values()), default=None)

    def next_due_after_now(self) -> Optional[int]:
        """The earliest due time strictly after now (where an advance of time may stop), or None."""
        heap = self._heap
        now = self.now
        best = None
        stack = [0] if heap else []
        while stack:
            i = stack.pop()
            due, owner, name, seq = heap[i]
            if due > now:
                if (best is None or due < best) and self._is_live(owner, name, seq):
                    best = due
                    continue
                if best is not None and due >= best:
                    continue  # nothing in this subtree beats best
            j = 2 * i + 1
            if j < len(heap):
                stack.append(j)
                if j + 1 < len(heap):
                    stack.append(j + 1)
        return best

    # -- time ------------------------------------------------------------------------------------------

    def advance_to(self, t: int) -> None:
        """Move logical time forward to `t` (never backward). Fires nothing."""
        if not isinstance(t, int):
            raise TypeError(f"logical time is an int of milliseconds, not {t!r}")
        if t < self.now:
            raise ValueError(f"time only moves forward: now is {self.now}, asked for {t}")
        self.now = t

    # -- internals ---------------------------------------------------------------------------------------

    def _is_live(self, owner: str, name: str, seq: int) -> bool:
        owned = self._timers.get(owner)
        if owned is None:
            return False
        entry = owned.get(name)
        return entry is not None and entry[1] == seq

    def _top(self) -> Optional[TimerKey]:
        heap = self._heap
        while heap:
            due, owner, name, seq = heap[0]
            if self._is_live(owner, name, seq):
                return (due, owner, name)
            heapq.heappop(heap)
        return None

    def _compact(self) -> None:
        self._heap = [e for e in self._heap if self._is_live(e[1], e[2], e[3])]
        heapq.heapify(self._heap)
