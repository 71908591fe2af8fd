"""client-go's work queue (util/workqueue): one entry per key, FIFO, delayed and rate-limited adds.

Theory of operation
-------------------
The queue is the Type of workqueue/queue.go: `queue` (a FIFO of keys), `dirty` (keys waiting to be
processed) and `processing` (keys handed out by `get` and not yet `done`):

* `add(key)`: nothing if the key is already dirty; otherwise it becomes dirty and, unless it is being
  processed, joins the FIFO. So a key appears at most once in the queue, and a key added while a worker
  holds it is processed again (once) after `done`.
* `get()`: the head of the FIFO moves to processing (None when empty).
* `done(key)`: processing ends; if the key was added meanwhile it rejoins the FIFO.

Delays (delaying_queue.go): `add_after(now, out, key, delay_ms)` keeps the key waiting until `now + delay`
(a key already waiting keeps the earlier of its two times) on one timer of the owning component
(``<name>/delay``), which the component forwards to `on_timer`. Rate limiting (rate_limiting_queue.go with
default_rate_limiters.go's DefaultControllerRateLimiter): `add_rate_limited` waits the longer of
``base × 2^failures`` (5 ms × 2^n, capped at 1000 s, where failures counts the key's earlier rate-limited
adds since the last `forget(key)`: ItemExponentialFailureRateLimiter) and the wait for a token of the
queue's overall bucket (10 a second, 100 at once: BucketRateLimiter). Every rate-limited add takes a token,
even when its own back-off is the longer wait, as MaxOfRateLimiter asks both. Everything is in logical
milliseconds.

Not modelled: shutdown and metrics.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Hashable, Optional

from kmodel.client.rate_limiter import RateLimit
from kmodel.component import Out

BASE_DELAY_MS = 5
MAX_DELAY_MS = 1_000_000
#: the default controller rate limiter's overall bucket: rate.NewLimiter(rate.Limit(10), 100)
OVERALL_LIMIT = RateLimit(qps=10, burst=100)


class ItemExponentialFailureRateLimiter:
    """Per key: base × 2^failures, capped (workqueue.NewItemExponentialFailureRateLimiter(5ms, 1000s))."""

    def __init__(self, base_ms: int = BASE_DELAY_MS, max_ms: int = MAX_DELAY_MS) -> None:
        self.base_ms = base_ms
        self.max_ms = max_ms
        self.failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> int:
        exp = self.failures.get(key, 0)
        self.failures[key] = exp + 1
        if exp >= 64:
            return self.max_ms
        return min(self.base_ms * (1 << exp), self.max_ms)

    def forget(self, key: Hashable) -> None:
        self.failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self.failures.get(key, 0)


class WorkQueue:
    """A rate-limiting work queue. See the module docstring."""

    def __init__(self, name: str = "queue", rate_limiter: Optional[ItemExponentialFailureRateLimiter] = None):
        self.name = name
        self.timer = f"{name}/delay"
        self.rate_limiter = rate_limiter if rate_limiter is not None else ItemExponentialFailureRateLimiter()
        self.bucket = OVERALL_LIMIT.bucket()
        self.queue: deque = deque()
        self.dirty: dict[Hashable, None] = {}
        self.processing: dict[Hashable, None] = {}
        self.waiting: dict[Hashable, int] = {}  # key -> when it is ready
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = 0
        self._armed: Optional[int] = None

    def __len__(self) -> int:
        return len(self.queue)

    def has_work(self) -> bool:
        return bool(self.queue)

    def add(self, key: Hashable) -> None:
        if key in self.dirty:
            return
        self.dirty[key] = None
        if key in self.processing:
            return
        self.queue.append(key)

    def get(self) -> Optional[Hashable]:
        if not self.queue:
            return None
        key = self.queue.popleft()
        self.processing[key] = None
        del self.dirty[key]
        return key

    def done(self, key: Hashable) -> None:
        del self.processing[key]
        if key in self.dirty:
            self.queue.append(key)

    # -- delays and rate limiting ------------------------------------------------------------------------------

    def add_after(self, now: int, out: Out, key: Hashable, delay_ms: int) -> None:
        if delay_ms <= 0:
            self.add(key)
            return
        ready = now + delay_ms
        current = self.waiting.get(key)
        if current is not None and current <= ready:
            return
        self.waiting[key] = ready
        self._seq += 1
        heapq.heappush(self._heap, (ready, self._seq, key))
        if self._armed is None or ready < self._armed:
            self._armed = ready
            out.set_timer(self.timer, at=ready)

    def latest_ready(self) -> Optional[int]:
        """When the last key waiting out a delay is ready, or None."""
        return max(self.waiting.values(), default=None)

    def add_rate_limited(self, now: int, out: Out, key: Hashable) -> None:
        backoff = self.rate_limiter.when(key)
        token = self.bucket.reserve(now) - now
        self.add_after(now, out, key, backoff if backoff > token else token)

    def forget(self, key: Hashable) -> None:
        self.rate_limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return self.rate_limiter.num_requeues(key)

    def on_timer(self, now: int, name: str, out: Out) -> bool:
        """Move the keys whose delay is over into the queue; False if `name` is not this queue's timer."""
        if name != self.timer:
            return False
        self._armed = None
        heap = self._heap
        while heap and heap[0][0] <= now:
            ready, _, key = heapq.heappop(heap)
            if self.waiting.get(key) == ready:
                del self.waiting[key]
                self.add(key)
        while heap and self.waiting.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        if heap:
            self._armed = heap[0][0]
            out.set_timer(self.timer, at=self._armed)
        return True

    def reset(self) -> None:
        """Forget everything (the owning component crashed)."""
        self.__init__(self.name, ItemExponentialFailureRateLimiter(self.rate_limiter.base_ms,
                                                                   self.rate_limiter.max_ms))
