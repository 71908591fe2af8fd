"""`kmodel principles`: the page it writes from a set of runs, and its usage errors (the runs themselves are
real `kmodel check` processes, too slow for a test: reports/principles.md is their committed result)."""

from __future__ import annotations

import json

import pytest

from kmodel.cli import main
from kmodel.variants import VARIANTS, variant
from kmodel.principles.page import Run, principles_table, write_page


def _trace(tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"format": "kmodel-trace/1"}))
    return str(path)


def test_a_variant_caught_on_four_seeds_is_caught_and_its_shortest_trace_is_kept(tmp_path):
    v = variant("blind-writes")
    runs = [Run(v.name, s, 10.0 + s, 1, "occ-no-lost-update", "lost", _trace(tmp_path, f"t{s}"), 20 - s, True)
            for s in (1, 2, 3, 4)]
    runs.append(Run(v.name, 5, 30.0, 0))
    out = tmp_path / "reports" / "principles.md"
    table, problems = principles_table(runs, out, out.parent / "principles")
    row = next(line for line in table.splitlines() if "`blind-writes`" in line)
    assert "yes: 4/5 seeds" in row
    assert "12.5 s" in row  # median of 11, 12, 13, 14
    assert "16 actions (seed 4)" in row
    assert (out.parent / "principles" / "blind-writes.json").exists()
    assert problems == []


def test_a_run_that_is_too_slow_or_finds_another_invariant_does_not_count(tmp_path):
    v = variant("direct-calls")
    runs = [Run(v.name, 1, 61.0, 1, "api-single-contract", "", _trace(tmp_path, "a"), 5, True),
            Run(v.name, 2, 5.0, 1, "settles", "", _trace(tmp_path, "b"), 5, True),
            Run(v.name, 3, 5.0, 1, "api-single-contract", "", _trace(tmp_path, "c"), 5, False),
            Run(v.name, 4, 5.0, 1, "api-single-contract", "", _trace(tmp_path, "d"), 5, True)]
    table, problems = principles_table(runs, tmp_path / "p.md", tmp_path / "principles")
    assert "NO: 1/4 seeds" in table
    assert problems and problems[0].startswith("direct-calls: caught on 1/4 seeds")


def test_the_default_failing_is_a_problem_and_the_page_says_so(tmp_path):
    runs = [Run("default", 1, 3.0, 0), Run("default", 2, 3.0, 1, "no-ip-leak", "leak", None, 9, True)]
    page = tmp_path / "principles.md"
    problems = write_page(page, runs, "| costs |\n", "", [1, 2])
    text = page.read_text()
    assert "passes: 1/2 seeds" in text
    assert problems == ["default seed 2: no-ip-leak leak"]
    assert "- default seed 2: no-ip-leak leak" in text
    assert "| costs |" in text


def test_every_anti_pattern_names_where_it_switches_and_what_it_breaks():
    for v in VARIANTS:
        if v.name not in ("default", "polling"):
            assert v.expect, v.name
            assert v.where.startswith("kmodel/"), v.name


@pytest.mark.parametrize("argv, needle", [
    (["principles", "--seeds", "one"], "--seeds must be comma-separated whole numbers"),
    (["principles", "--variants", "nope"], "unknown variant 'nope'"),
    (["principles", "--jobs", "0"], "--jobs must be at least 1"),
])
def test_bad_usage_is_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_kmodel_variants_lists_each_with_what_it_changes(capsys):
    assert main(["variants"]) == 0
    out = capsys.readouterr().out
    for v in VARIANTS:
        assert v.name in out
    assert "changes:" in out and "expect:" in out


def test_what_polling_breaks_is_a_finding_replayed_under_watch_not_a_problem(tmp_path):
    from pathlib import Path

    trace = Path(__file__).resolve().parents[1] / "regressions" / "variant-polling-node-deleted-between-polls.json"
    runs = [Run("polling", 1, 20.0, 1, "no-cidr-leak", "node IPAM holds 10.244.3.0/24", str(trace), 7, True),
            Run("polling", 2, 15.0, 0)]
    page = tmp_path / "principles.md"
    (tmp_path / "principles").mkdir()
    (tmp_path / "principles" / "polling-seed4.json").write_text("{}")  # an earlier page's finding
    problems = write_page(page, runs, "| costs |\n", "", [1, 2])
    text = page.read_text()
    assert problems == []
    assert not (tmp_path / "principles" / "polling-seed4.json").exists()
    assert "breaks no-cidr-leak on 1 (see below); passes: 1/2 seeds" in text
    finding = next(line for line in text.splitlines() if line.startswith("- seed 1: no-cidr-leak"))
    assert "polling-seed1.json" in finding and finding.endswith("under watch it passes)")
    assert (tmp_path / "principles" / "polling-seed1.json").exists()


def test_the_costs_section_shows_its_plot_or_says_why_there_is_none(tmp_path, monkeypatch):
    from kmodel.principles import command, costs

    monkeypatch.setattr(costs, "measure", lambda nodes: [])
    monkeypatch.setattr(costs, "table_markdown", lambda rows: "TABLE\n")
    page = tmp_path / "principles.md"
    monkeypatch.setattr(costs, "plot_png", lambda rows, path: True)
    assert command.costs_section([10], page) == ("TABLE\n", "![watch versus polling](principles/watch-vs-polling.png)\n")
    monkeypatch.setattr(costs, "plot_png", lambda rows, path: False)
    monkeypatch.setattr(costs, "plot_unavailable", lambda: "matplotlib is not installed (pip install 'kmodel[plot]')")
    table, line = command.costs_section([10], page)
    assert line == "(No plot: matplotlib is not installed (pip install 'kmodel[plot]').)\n"
    assert command.costs_section([], page) == ("Not measured (--cost-nodes none).\n", "")
