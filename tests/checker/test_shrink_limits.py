"""Shrinking is bounded by counts, never by Hypothesis' five minutes (kmodel.checker.run.shrink_limits): a seed
reports the same shrunk trace on a slow machine as on a fast one, and the shrink stops once it has run
MAX_SHRINK_EVENTS model events.

The slow machine is played by a clock that jumps ten minutes at every reading of Hypothesis' engine: its own
time limit then stops shrinking after the first example, and ours must not notice."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from hypothesis.internal.conjecture import engine

import kmodel.checker.run as run
from kmodel.checker.run import CheckOptions, run_campaign

from tests.checker.conftest import PlantedMachine

OPTIONS = CheckOptions(examples=30, steps=6, seed=6, nodes=2)  # a seed whose examples reach the planted violation


class JumpingClock:
    """`time` as the engine sees it on a machine where every example takes ten minutes."""

    def __init__(self) -> None:
        self.now = time.perf_counter()

    def perf_counter(self) -> float:
        self.now += 600.0
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


def shrinking(result) -> int:
    """Examples run after the first failure (the shrink, and Hypothesis' final replay of its result)."""
    return result.stats.examples - result.stats.first_failure_at


def campaign(monkeypatch, *, slow: bool):
    with monkeypatch.context() as patch:
        if slow:
            patch.setattr(engine, "time", JumpingClock())
        return run_campaign(OPTIONS, machine=PlantedMachine)


def test_a_slow_machine_shrinks_to_the_same_trace(monkeypatch):
    fast, slow = campaign(monkeypatch, slow=False), campaign(monkeypatch, slow=True)
    assert shrinking(fast) > 3  # there was shrinking to cut short
    assert slow.stats.examples == fast.stats.examples
    assert slow.stats.trace_digest() == fast.stats.trace_digest()
    assert slow.failure.actions == fast.failure.actions


def test_without_the_count_hypothesis_time_limit_cuts_the_shrink_short(monkeypatch):
    # the control: Hypothesis' own limit, on the slow clock, stops at its first check
    @contextmanager
    def hypothesis_own(stats, **options) -> Iterator[None]:
        yield

    fast = campaign(monkeypatch, slow=False)
    monkeypatch.setattr(run, "shrink_limits", hypothesis_own)
    slow = campaign(monkeypatch, slow=True)
    assert shrinking(slow) < shrinking(fast)
    assert slow.stats.trace_digest() != fast.stats.trace_digest()


def test_shrinking_stops_once_its_model_events_are_spent(monkeypatch):
    unlimited = run_campaign(OPTIONS, machine=PlantedMachine)
    monkeypatch.setattr(run, "MAX_SHRINK_EVENTS", 1_000)  # under half of what this shrink runs unlimited
    some = run_campaign(OPTIONS, machine=PlantedMachine)
    monkeypatch.setattr(run, "MAX_SHRINK_EVENTS", 1)
    none = run_campaign(OPTIONS, machine=PlantedMachine)
    for result in (unlimited, some, none):
        assert result.failure is not None and result.failure.violation.invariant == "no-web-deployment"
    # with one event to spend: Hypothesis replays the failure it starts from, stops, and replays it as its result
    assert shrinking(none) == 2
    assert shrinking(none) < shrinking(some) < shrinking(unlimited)
    # the report's record of it
    assert not unlimited.shrink.budget_reached and unlimited.shrink.events < unlimited.shrink.events_budget
    assert some.shrink.budget_reached and none.shrink.budget_reached and some.shrink.events >= 1_000
    for result in (unlimited, some, none):
        record = result.shrink
        assert record.found_in == result.stats.first_failure_at and record.examples == shrinking(result)
        assert record.actions == len(result.failure.actions) <= record.shrunk_actions
        assert record.to_json()["simplified"] == list(record.simplified)  # report.json's list of them


def test_hypothesis_own_limits_are_restored_afterwards():
    before = (engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS)
    run_campaign(OPTIONS, machine=PlantedMachine)
    assert (engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS) == before
    assert type(engine.MAX_SHRINKING_SECONDS) is int
