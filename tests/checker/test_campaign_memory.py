"""A failing campaign holds one failing session at a time: those Hypothesis shrinks from are disposed as soon as
a later one fails (its stored tracebacks still reach them; a failing campaign example is a large cluster)."""

from __future__ import annotations

import gc

from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import Session


def live_sessions() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Session and "cluster" in o.__dict__)


def test_a_shrinking_campaign_keeps_only_its_last_failing_session_alive():
    counts: list[tuple[int, int]] = []

    def on_example(stats) -> None:
        counts.append((sum(stats.violations.values()), live_sessions()))

    result = run_campaign(CheckOptions(variant="edge-triggered", seed=4), on_example=on_example)
    assert result.failure is not None
    failures = max(f for f, _ in counts)
    assert failures >= 3  # Hypothesis shrank through several failing examples
    # at most: the example starting now, the last one that failed, and one Hypothesis has not let go of yet
    assert max(n for _, n in counts) <= 3, counts
