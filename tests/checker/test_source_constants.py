"""A campaign's draws do not depend on which of the user's modules are loaded, nor on their literals.

Hypothesis now and then draws a constant it harvested from every "local" module loaded at that moment (see
kmodel.checker.run.no_source_constants). These tests load a fresh local module full of integer literals
between two runs of one seeded Hypothesis test and compare what the runs drew.
"""

from __future__ import annotations

import importlib
import sys

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from kmodel.checker.run import no_source_constants


def _draws() -> list[int]:
    drawn: list[int] = []

    @seed(5)
    @settings(max_examples=300, database=None, deadline=None)
    @given(st.integers(0, 2**40))
    def probe(n: int) -> None:
        drawn.append(n)

    probe()
    return drawn


@pytest.fixture
def load_literals(tmp_path, monkeypatch):
    """Import a local module (outside site-packages, not a test file) whose source holds 200 integer
    literals; it leaves sys.modules when the test ends."""
    loaded: list[str] = []

    def load(name: str) -> None:
        (tmp_path / f"{name}.py").write_text(
            "VALUES = (" + ", ".join(str(7_000_000_000 + 13 * i) for i in range(200)) + ")\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.import_module(name)  # stays loaded while the test draws (Hypothesis looks at sys.modules)
        loaded.append(name)

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


def test_draws_ignore_the_literals_of_modules_loaded_in_between(load_literals):
    with no_source_constants():
        before = _draws()
    load_literals("kmodel_probe_literals_a")
    with no_source_constants():
        after = _draws()
    assert after == before


def test_without_it_hypothesis_draws_the_new_literals(load_literals):
    # Why the guard exists: left alone, Hypothesis' draws change once a local module is loaded, and some
    # of them are that module's literals.
    _draws()  # Hypothesis harvests what is loaded now
    before = _draws()
    load_literals("kmodel_probe_literals_b")
    after = _draws()
    assert after != before
    assert any(7_000_000_000 <= n < 7_000_000_000 + 13 * 200 and (n - 7_000_000_000) % 13 == 0 for n in after)
