"""client-go's client-side rate limiter (rest.Config QPS and Burst: flowcontrol.NewTokenBucketRateLimiter).

A bucket holds at most `burst` tokens and gains `qps` a second; each request takes one, and a request that
finds the bucket empty waits for the next token (golang.org/x/time/rate's Reserve then Wait: the waits queue
up in the order the requests came, a later one never overtakes an earlier one). The bucket starts full, and a
new process starts a new one.

Kept as one integer, `full_at`: the logical ms at which the bucket would be full again. At `t` it holds
``burst - (full_at - t) / interval`` tokens (capped at `burst`), where `interval` is 1000 / qps ms, so a
request at `t` may go at ``max(t, full_at - (burst - 1) × interval)`` and leaves ``max(full_at, t) +
interval`` behind (the generic cell rate algorithm, the same bucket in other words). Integer milliseconds only,
so the result never depends on floating point.

The defaults of the components that use it (their command-line flags or component configs): kube-controller-
manager --kube-api-qps 20, --kube-api-burst 30; the kubelet's kubeAPIQPS 50, kubeAPIBurst 100; the scheduler's
clientConnection qps 50, burst 100; kube-proxy's clientConnection qps 5, burst 10; kubectl 50, burst 300.
"""

from __future__ import annotations

from typing import NamedTuple


class RateLimit(NamedTuple):
    qps: int
    burst: int

    def bucket(self) -> "TokenBucket":
        """A full bucket of this limit."""
        if self.qps <= 0 or 1000 % self.qps:
            raise ValueError(f"qps must divide 1000 (a whole number of ms per token), not {self.qps}")
        return TokenBucket(1000 // self.qps, self.burst)


CONTROLLER_MANAGER_LIMIT = RateLimit(20, 30)
KUBELET_LIMIT = RateLimit(50, 100)
SCHEDULER_LIMIT = RateLimit(50, 100)
PROXY_LIMIT = RateLimit(5, 10)
KUBECTL_LIMIT = RateLimit(50, 300)


class TokenBucket:
    """A full bucket of `burst` tokens, gaining one every `interval_ms` (`RateLimit.bucket` for a qps; the event
    spam filter's 1/300 qps is one token per 300,000 ms). See the module docstring."""

    __slots__ = ("interval_ms", "tolerance_ms", "full_at")

    def __init__(self, interval_ms: int, burst: int) -> None:
        if interval_ms < 1:
            raise ValueError(f"interval_ms must be at least 1, not {interval_ms}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, not {burst}")
        self.interval_ms = interval_ms
        self.tolerance_ms = (burst - 1) * interval_ms
        self.full_at = 0  # full from the start

    def reserve(self, now: int) -> int:
        """Take the next token for a request made at `now`; returns the logical ms at which it may be sent."""
        full_at = self.full_at
        at = full_at - self.tolerance_ms
        if at < now:
            at = now
        self.full_at = (full_at if full_at > now else now) + self.interval_ms
        return at

    def try_take(self, now: int) -> bool:
        """Take a token if one is there at `now` (flowcontrol's TryAccept); False, and nothing taken, if not."""
        if self.full_at - self.tolerance_ms > now:
            return False
        self.reserve(now)
        return True
