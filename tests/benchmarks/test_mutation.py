"""benchmarks/mutator.py and benchmarks/mutation.py without a full run: the mutator finds each kind of mutant and
leaves out what its rules exclude, every mutant applies and parses, the sample is a function of the seed, ids
survive edits elsewhere in the file, and a workspace copy imports its own kmodel, takes a mutant and gets its
file back."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import mutation  # noqa: E402
import mutator  # noqa: E402

SOURCE = '''\
"""A module docstring."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from os import path

LIMIT: int = 3


def fits(n: int, names: list[str]) -> bool:
    """A docstring."""
    assert n >= 0, "n is never negative"
    if n < LIMIT and not names:
        print(f"fits {n + 1}")
        return True
    total = sum(names, 7)
    if total > 0:
        raise ValueError(f"too many: {n == 1}")
    return False


class Box:
    size = 1

    def __repr__(self) -> str:
        return f"Box({self.size == 2})"

    def grow(self) -> None:
        self.size += 1
        return
'''


def points(source: str = SOURCE) -> list[mutator.Mutant]:
    return mutator.mutation_points("kmodel/proxy/example.py", source)


def test_each_operator_is_found_where_the_code_has_one():
    found = {(m.operator, m.original, m.replacement) for m in points()}
    assert ("compare", "n < LIMIT", "(n <= LIMIT)") in found
    assert ("boolean", "n < LIMIT and not names", "(n < LIMIT or not names)") in found
    assert ("boolean", "not names", "(names)") in found
    assert ("boolean", "True", "False") in found
    assert ("constant", "3", "4") in found and ("constant", "3", "2") in found
    assert ("drop", "total = sum(names, 7)", "pass") in found
    assert ("swap-args", "names, 7", "7, names") in found
    assert any(m.operator == "early-return" and m.scope == "fits" and m.line == 12 for m in points())
    assert {m.operator for m in points()} == set(mutator.OPERATORS)


def test_the_exclusion_rules_leave_out_messages_annotations_asserts_and_descriptions():
    mutants = points()
    lines = {m.line for m in mutants if m.operator != "early-return"}
    assert 12 not in lines  # the assert
    assert 14 not in lines  # a print of an f-string: neither dropped nor its `n + 1` touched
    assert 18 not in {m.line for m in mutants if m.operator != "drop"}  # the raise's message
    assert not any(m.scope.endswith("__repr__") for m in mutants)
    assert not any(m.line in (4, 5) for m in mutants)  # the TYPE_CHECKING block
    assert not any(m.line == 10 for m in mutants)  # annotations of the signature
    assert not any(m.original.startswith('"""') for m in mutants)  # docstrings
    assert not any(m.operator == "drop" and m.line == 30 for m in mutants)  # a function's last bare return
    assert any(m.operator == "drop" and m.line == 29 for m in mutants)
    assert not any(m.operator == "drop" and m.scope == "" for m in mutants)  # only function bodies lose statements


def test_every_mutant_applies_parses_and_changes_only_its_own_place():
    original = ast.dump(ast.parse(SOURCE))
    for m in points():
        assert mutator.check(m, SOURCE) is None, m
        mutated = mutator.apply(m, SOURCE)
        assert ast.dump(ast.parse(mutated)) != original, m
        before, after = SOURCE.splitlines(), mutated.splitlines()
        assert before[:m.line - 1] == after[:m.line - 1], m  # everything before the mutant is untouched
        tail = len(before) - m.end_line
        if m.operator != "early-return" and tail:
            assert before[-tail:] == after[-tail:], m  # and everything after it


def test_ids_are_unique_and_survive_an_edit_elsewhere_in_the_file():
    ids = [m.ident for m in points()]
    assert len(ids) == len(set(ids))
    shifted = points("# a comment\n\n" + SOURCE)
    assert [m.ident for m in shifted] == ids
    assert [m.line for m in shifted] == [m.line + 2 for m in points()]


def test_columns_are_bytes_so_text_after_a_non_ascii_character_is_spliced_right():
    source = 'def f(x):\n    return "é" if x < 2 else "ü"\n'
    [compare] = [m for m in points(source) if m.operator == "compare"]
    assert mutator.apply(compare, source) == 'def f(x):\n    return "é" if (x <= 2) else "ü"\n'


def test_the_sample_is_a_function_of_the_seed():
    population, texts = mutation.all_mutants(ROOT, ("proxy", "ipam"))
    assert population == sorted(population, key=mutator.Mutant.sort_key)
    first = mutation.sample(population, texts, 12, seed=1)
    assert mutation.sample(population, texts, 12, seed=1) == first
    assert mutation.sample(population, texts, 12, seed=2) != first
    assert len(first) == 12 and {m.package for m in first} <= {"proxy", "ipam"}
    assert all(mutator.check(m, texts[m.path]) is None for m in first)


def test_a_smaller_sample_is_the_start_of_a_larger_one_in_run_order():
    """Mutants run in the shuffled order, so the first k done of a run are `--sample k`'s: a run stopped part way
    (or resumed) is still a uniform sample."""
    population, texts = mutation.all_mutants(ROOT, ("proxy", "ipam"))
    assert mutation.sample(population, texts, 12, seed=1)[:5] == mutation.sample(population, texts, 5, seed=1)


def test_a_run_resumes_only_from_the_same_code_and_options(tmp_path):
    tree = mutation.tree_digest(ROOT)
    m = mutator.Mutant("kmodel/loop/loop.py", 3, 4, 3, 9, "drop", "x = 1", "pass", "f", ident="abc")
    row = {**{k: getattr(m, k) for k in mutator.Mutant.__dataclass_fields__}, "before": "x = 1", "after": "pass",
           "unit": {"kind": "failed", "detail": "", "seconds": 1.0},
           "checker": {"kind": "invariant", "detail": "settles: ...", "seconds": 2.0}}
    run = {"seed": 1, "population": 9, "packages": ["loop"], "checker_args": ["--seed", "1"], "tree": tree,
           "checker_only_unit_killed": False, "results": [row]}
    path = tmp_path / "run.json"
    path.write_text(__import__("json").dumps(run))
    kept = mutation.resumable(str(path), tree, 1, ["--seed", "1"], False)
    assert list(kept) == ["abc"] and kept["abc"].checker.kind == "invariant"
    with pytest.raises(mutation.UsageError, match="made on other code"):
        mutation.resumable(str(path), "0" * 16, 1, ["--seed", "1"], False)
    with pytest.raises(mutation.UsageError, match="give the same options"):
        mutation.resumable(str(path), tree, 2, ["--seed", "1"], False)


def test_a_mutant_goes_into_the_copy_and_comes_back_out(tmp_path):
    population, texts = mutation.all_mutants(ROOT, ("proxy",))
    [m] = mutation.sample(population, texts, 1, seed=1)
    ws = mutation.Workspace(ROOT, sys.executable)  # checks the copy imports its own kmodel
    try:
        copy = ws.dir / m.path
        assert copy.read_text() == texts[m.path]
        cached = Path(importlib.util.cache_from_source(str(copy)))
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(b"stale")
        ws.write(m.path, mutator.apply(m, texts[m.path]))
        assert copy.read_text() != texts[m.path] and not cached.exists()
        ast.parse(copy.read_text())
        ws.write(m.path, texts[m.path])
        assert copy.read_text() == texts[m.path]
        assert (ROOT / m.path).read_text() == texts[m.path]  # the repository itself is never written
    finally:
        ws.remove()
    assert not ws.dir.exists()


def test_the_listing_and_bad_usage(capsys):
    assert mutation.main(["--packages", "proxy", "--sample", "3", "--seed", "1", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("3 of ") and len(out) == 4
    assert mutation.main(["--packages", "proxy,nothing", "--list"]) == 2
    assert "unknown nothing" in capsys.readouterr().err


@pytest.mark.parametrize("reason", ["", 3])
def test_an_exclusions_file_must_give_each_id_a_reason(tmp_path, reason):
    bad = tmp_path / "exclusions.json"
    bad.write_text(f'{{"abc": {reason!r}}}'.replace("'", '"'))
    with pytest.raises(mutation.UsageError, match="non-empty reason"):
        mutation.read_exclusions(str(bad))


def test_a_reprint_from_json_sets_explained_survivors_apart(tmp_path, capsys):
    m = mutator.Mutant("kmodel/loop/loop.py", 3, 4, 3, 9, "drop", "x = 1", "pass", "f", ident="abc")
    unit_killed = {"kind": "failed", "detail": "FAILED t", "seconds": 1.0}
    survived = {"kind": "survived", "detail": "", "seconds": 2.0}
    row = {**{k: getattr(m, k) for k in mutator.Mutant.__dataclass_fields__}, "before": "x = 1", "after": "pass"}
    run = {"seed": 1, "population": 9, "packages": ["loop"], "checker_args": ["--seed", "1"],
           "results": [{**row, "unit": unit_killed, "checker": survived}]}
    path = tmp_path / "run.json"
    path.write_text(__import__("json").dumps(run))
    reasons = tmp_path / "exclusions.json"
    reasons.write_text('{"abc": "a reason"}')
    assert mutation.main(["--from-json", str(path)]) == 0
    assert "(gaps): 1" in capsys.readouterr().out
    assert mutation.main(["--from-json", str(path), "--exclusions", str(reasons)]) == 0
    out = capsys.readouterr().out
    assert "(gaps): 0" in out and "why: a reason" in out and "0/0" in out


def test_every_excluded_id_is_a_mutation_point_of_the_model_with_a_reason():
    population, _ = mutation.all_mutants(mutation.ROOT, mutation.MODEL_PACKAGES)
    known = {m.ident for m in population}
    stale = sorted(set(mutation.EXCLUSIONS) - known)
    assert not stale, f"EXCLUSIONS names mutants the model no longer has: {stale}"
    assert all(reason.strip() for reason in mutation.EXCLUSIONS.values())
