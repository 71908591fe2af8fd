"""Regression seeds: every tests/regressions/*.json trace is replayed, without Hypothesis, with every registered
invariant. Each file says what it must show: "expect": "pass", or {"fail": "<invariant>"} (that invariant,
and no other, must be violated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.checker.replay import replay
from kmodel.checker.trace import read_trace

TRACES = sorted(Path(__file__).parent.glob("*.json"))


def test_there_is_at_least_one_seed():
    assert TRACES


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem)
def test_regression_seed(path):
    trace = read_trace(path)
    result = replay(trace, record_messages=False)
    expected = trace.expected_invariant
    if expected is None:
        assert result.violation is None, f"{path.name} must pass, but: {result.violation}"
    else:
        assert result.violation is not None, f"{path.name} must fail with {expected}, but it passed"
        assert result.violation.invariant == expected, f"{path.name}: {result.violation}"
