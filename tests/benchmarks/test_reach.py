"""benchmarks/reach.py without a run: the unit tests' outcomes set beside the checker's never-taken list, the
exclusions counted apart (and reported stale when their line changed), the work list in order."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import reach  # noqa: E402
from kmodel.checker.reach import Outcome, PackageReach, Reach  # noqa: E402


def outcome(package: str, line: int, to: int | None, text: str) -> Outcome:
    return Outcome(package, f"kmodel/{package}/a.py", line, to, text)


UNIT = Reach(packages=(PackageReach("store", 0, 0, 4, 4), PackageReach("ipam", 0, 0, 1, 2)), taken=(
    outcome("store", 10, 11, "if a:"), outcome("store", 10, 12, "if a:"), outcome("store", 20, None, "for x in y:"),
    outcome("store", 30, 31, "if b:"), outcome("ipam", 5, 6, "if c:")), never=())
CHECKER_NEVER = [{"package": "store", "file": "kmodel/store/a.py", "line": 10, "to": 12, "source": "if a:"},
                 {"package": "store", "file": "kmodel/store/a.py", "line": 20, "to": None, "source": "for x in y:"},
                 {"package": "ipam", "file": "kmodel/ipam/a.py", "line": 7, "to": 8, "source": "if d:"}]


def test_the_checker_takes_what_it_never_left_and_the_rest_is_the_work_list():
    rows, stale = reach.compare(UNIT, CHECKER_NEVER, ("store", "ipam"), {})
    store, ipam = rows
    assert (store.unit, store.checker, store.excluded) == (4, 2, 0)
    assert store.work == ["kmodel/store/a.py:10 -> 12  if a:", "kmodel/store/a.py:20 -> exit  for x in y:"]
    assert (ipam.unit, ipam.checker, ipam.work) == (1, 1, [])  # an outcome the unit tests never take is no work
    assert stale == []
    assert reach.total(rows).share() == 60.0


def test_an_exclusion_is_counted_apart_and_a_stale_one_is_not_applied():
    exclusions = {"kmodel/store/a.py:20 -> exit": ("for x in y:", "only a unit test iterates an empty y"),
                  "kmodel/store/a.py:10 -> 12": ("if a and b:", "the line read otherwise when this was written")}
    (store, _), stale = reach.compare(UNIT, CHECKER_NEVER, ("store", "ipam"), exclusions)
    assert (store.unit, store.checker, store.excluded) == (4, 2, 1)
    assert store.excluded_list == [("kmodel/store/a.py:20 -> exit  for x in y:", "only a unit test iterates an empty y")]
    assert store.work == ["kmodel/store/a.py:10 -> 12  if a:"]
    assert store.share() == 50.0 and round(store.share_without_excluded()) == 67
    assert stale == ["kmodel/store/a.py:10 -> 12: the line now reads 'if a:', not 'if a and b:'"]


def test_every_exclusion_of_the_script_names_a_line_and_a_reason():
    for key, (text, why) in reach.EXCLUSIONS.items():
        assert " -> " in key and text and why, key


def test_an_exclusion_whose_code_moved_follows_it_and_one_that_is_gone_is_stale():
    moved = Reach(packages=(PackageReach("store", 0, 0, 3, 3),), taken=(
        outcome("store", 14, 15, "if a:"), outcome("store", 14, 16, "if a:"), outcome("store", 24, None, "for x in y:")),
        never=())
    checker_never = [{"package": "store", "file": "kmodel/store/a.py", "line": 14, "to": 16, "source": "if a:"}]
    exclusions = {"kmodel/store/a.py:10 -> 12": ("if a:", "four lines were added above it"),
                  "kmodel/store/a.py:30 -> 31": ("if b:", "this line is gone")}
    (store, _), stale = reach.compare(moved, checker_never, ("store", "ipam"), exclusions)
    assert store.excluded_list == [("kmodel/store/a.py:14 -> 16  if a:", "four lines were added above it")]
    assert stale == ["kmodel/store/a.py:30 -> 31: no longer an outcome ('if b:')"]


def test_an_exclusion_is_not_moved_onto_a_line_that_reads_the_same_twice():
    twice = Reach(packages=(PackageReach("store", 0, 0, 2, 2),), taken=(
        outcome("store", 14, 15, "if a:"), outcome("store", 40, 41, "if a:")), never=())
    exclusions = {"kmodel/store/a.py:10 -> 11": ("if a:", "which of the two is meant cannot be told")}
    _, stale = reach.compare(twice, [], ("store",), exclusions)
    assert stale == ["kmodel/store/a.py:10 -> 11: no longer an outcome ('if a:')"]
