"""k8s.io/apimachinery's wait.Jitter, in the model's whole milliseconds.

Jitter(d, maxFactor) = d + rand.Float64() × maxFactor × d (a maxFactor of 0 or less means 1). Go draws from
the process's math/rand; the model draws from the process's seeded source (`ApiClient.rng`), so a run
stays a function of its seed. The result is truncated to whole milliseconds, as the model's clock counts them.
"""

from __future__ import annotations

from typing import Protocol


class RandomSource(Protocol):
    def random(self) -> float: ...


def jitter(duration_ms: int, max_factor: float, rng: RandomSource) -> int:
    """wait.Jitter(duration, maxFactor): `duration_ms` plus up to `max_factor` of itself."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration_ms + int(rng.random() * max_factor * duration_ms)
