"""The model's thread: the model cluster run in real time, the only thread that touches it.

Theory of operation
-------------------
The model is sans-IO and its time is logical. `ModelThread` runs it against the wall clock: logical milliseconds
follow the wall clock's since the start, times `speed`. Each turn of its loop

1. runs what other threads posted (`post(fn)`: an HTTP request's ticket handed to the gateway, a watch
   cancelled, a control action), in the order posted, then what was scheduled for the logical time reached
   (`schedule(at_ms, fn)`: a `--fault`);
2. runs the model fairly (`Loop.run_fair`, with the checker's busy-instant rule so a hot loop cannot hold the clock)
   up to the logical time the wall clock has reached, in slices of at most `SLICE_EVENTS` events so that new
   requests are taken in between, and moves the clock on to that time when the model falls quiet;
3. calls `on_progress` (the live invariant checks) when events were applied, at most every `progress_interval_s`;
4. sleeps until the next timer or scheduled action falls due (in wall time), a post wakes it, or `MAX_SLEEP_S` passed.

A model that falls behind the wall clock (a burst of work) catches up by running without sleeping; one more than
`MAX_LAG_MS` behind lets the debt go (the clock restarts from where the model is), so a long burst does not make
every timer fire at once afterwards.

`call(fn)` runs `fn` on the model's thread and returns its result to the caller (for reads of the model from
outside: a report, a control endpoint). A function that raises stops nothing: its exception goes back to the
caller. An exception inside the model (a bug) stops the thread; `error` keeps it and `stop` re-raises nothing.
"""

from __future__ import annotations

import heapq
import queue
import threading
import time
from typing import Any, Callable, Optional

from kmodel.loop.events import AdvanceTime

SLICE_EVENTS = 2_000
MAX_SLEEP_S = 0.05
MAX_LAG_MS = 1_000
#: events at one logical instant before the clock moves on anyway (the checker's value; Loop.run_fair)
BUSY_INSTANT = 5_000


class ModelThread:
    """Runs `cluster` in real time on a thread of its own. See the module docstring."""

    def __init__(self, cluster: Any, *, speed: float = 1.0, on_progress: Optional[Callable[[], None]] = None,
                 progress_interval_s: float = 0.25) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be > 0 (got {speed})")
        self.cluster = cluster
        self.speed = speed
        #: called on the model's thread after events were applied, at most every progress_interval_s (live checks)
        self.on_progress = on_progress
        #: kmodel.serve.recording.Recorder: what the thread does to the model, for a replay
        self.recorder: Any = None
        self.progress_interval_s = progress_interval_s
        self._last_progress = 0.0
        self._events_seen = 0
        #: (logical time, sequence, fn): what must run when the model's clock reaches a time (scheduled faults)
        self._scheduled: list[tuple[int, int, Callable[[], None]]] = []
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._main, name="kmodel-model", daemon=True)
        self.error: Optional[BaseException] = None
        self._wall0 = 0.0
        self._logical0 = 0

    # -- other threads --------------------------------------------------------------------------------------

    def start(self) -> None:
        self._wall0 = time.monotonic()
        self._logical0 = self.cluster.now
        self._thread.start()

    def post(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the model's thread at its next turn (fire and forget)."""
        self._inbox.put(fn)
        self._wake.set()

    def call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Run `fn` on the model's thread and return its result (or raise its exception)."""
        done = threading.Event()
        box: list = [None, None]

        def run() -> None:
            try:
                box[0] = fn()
            except BaseException as exc:  # handed back to the caller
                box[1] = exc
            done.set()

        self.post(run)
        if not done.wait(timeout):
            raise TimeoutError("the model's thread did not answer in time")
        if box[1] is not None:
            raise box[1]
        return box[0]

    def schedule(self, at_ms: int, fn: Callable[[], None]) -> None:
        """Run `fn` on the model's thread once the model's clock reaches logical time `at_ms` (before start, or on
        the model's thread)."""
        heapq.heappush(self._scheduled, (at_ms, len(self._scheduled), fn))

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # -- the model's thread ---------------------------------------------------------------------------------

    def logical_target(self) -> int:
        """The logical time the wall clock has reached."""
        return self._logical0 + int((time.monotonic() - self._wall0) * 1000 * self.speed)

    def _drain(self) -> None:
        inbox = self._inbox
        while True:
            try:
                fn = inbox.get_nowait()
            except queue.Empty:
                return
            fn()

    def _main(self) -> None:
        loop = self.cluster.loop
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                self._drain()
                target = self.logical_target()
                if target - loop.now > MAX_LAG_MS:
                    # too far behind: let the debt go, the wall clock counts again from where the model is
                    self._wall0 = time.monotonic()
                    self._logical0 = target = loop.now
                scheduled = self._scheduled
                while scheduled and scheduled[0][0] <= loop.now:
                    heapq.heappop(scheduled)[2]()
                if scheduled and scheduled[0][0] < target:
                    target = scheduled[0][0]  # stop there: what is scheduled runs at its time
                applied = loop.run_fair(target, max_events=SLICE_EVENTS, busy_instant=BUSY_INSTANT)
                if self.recorder is not None:
                    self.recorder.run(target, SLICE_EVENTS, BUSY_INSTANT, applied)
                self._progress(loop)
                if applied >= SLICE_EVENTS:
                    continue  # more to do now: take new posts, then go on
                advance = AdvanceTime(target)
                if target > loop.now and loop.is_enabled(advance):
                    if self.recorder is not None:
                        self.recorder.advance(target)
                    loop.step(advance)
                    continue
                self._sleep(loop)
        except BaseException as exc:  # a bug in the model: keep it for the report, stop serving
            self.error = exc

    def _progress(self, loop: Any) -> None:
        if self.on_progress is None or loop.events_applied == self._events_seen:
            return
        wall = time.monotonic()
        if wall - self._last_progress >= self.progress_interval_s:
            self._last_progress, self._events_seen = wall, loop.events_applied
            self.on_progress()

    def _sleep(self, loop: Any) -> None:
        dues = [d for d in (loop.clock.next_due_after_now(), loop.network.next_release()) if d is not None]
        if self._scheduled:
            dues.append(self._scheduled[0][0])
        delay = MAX_SLEEP_S
        if dues:
            delay = min(delay, max(0.001, (min(dues) - self.logical_target()) / 1000 / self.speed))
        self._wake.wait(delay)
