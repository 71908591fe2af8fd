"""`kmodel check --keep-going`: a violation ends its example, not the run. The run explores its whole budget,
each distinct violation (its invariant and the known fix that takes it out) is minimized by replay and
reported with a trace of its own, known upstream bugs apart from new findings; exit 1 if any was found. With
several workers each keeps going and the merge unions their findings. Without the flag nothing changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import attrs
import pytest

from kmodel.checker.findings import Seen, keep_going_json, known_fix, minimize_findings
from kmodel.checker.merge import distinct_violations, merged_stats
from kmodel.checker.replay import replay
from kmodel.checker.results import write_results
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.shards import Shard, ShardOutcome, run_shard, shard_seed
from kmodel.checker.trace import read_trace
from kmodel.cli import main
from kmodel.invariants.registry import SAFETY, Invariant

from .conftest import NO_WEB, SmallMachine

REGRESSIONS = Path(__file__).parents[1] / "regressions"
#: a known upstream bug's trace: node IPAM's Pod CIDR of a node deleted between its two lists (no-cidr-leak),
#: which the fix nodeipam-release-by-owner takes out
NODEIPAM_BUG = REGRESSIONS / "nodeipam-node-deleted-between-its-two-lists.json"


def _no_debug_pod(cluster: Any, memo: dict) -> Iterator[str]:
    if cluster.get("pods", "default", "debug-1") is not None:
        yield "a pod named debug-1 exists"


NO_DEBUG = Invariant("no-debug-pod", SAFETY, "test", "No pod named debug-1.", _no_debug_pod)


class TwoMistakes(SmallMachine):
    """Two planted mistakes, each a safety invariant the rules break in a step of their own: a Deployment named
    web, a pod named debug-1."""

    extra_invariants = (NO_WEB, NO_DEBUG)


OPTIONS = CheckOptions(seed=4, examples=20, steps=8, keep_going=True)


@pytest.fixture(scope="module")
def kept_going():
    return run_campaign(OPTIONS, machine=TwoMistakes)


def test_a_run_that_keeps_going_reports_two_distinct_violations_each_minimized(kept_going, tmp_path):
    result = kept_going
    assert result.stats.examples >= OPTIONS.examples  # the whole budget, violations or not
    assert 2 <= result.stats.violating_examples < result.stats.examples
    found = {f.trace.violation.invariant: f for f in result.findings}
    assert sorted(found) == ["no-debug-pod", "no-web-deployment"]
    for finding in result.findings:
        assert finding.known_fix is None  # no known fix answers a planted invariant: new findings
        assert sum(len(f.examples) for f in result.findings) == result.stats.violating_examples
        # minimized by replay: the warm-up, the user's request and the step that delivered it
        assert finding.shrink.replays > 0 and finding.shrink.examples == 0  # Hypothesis never shrank it
        assert len(finding.trace.actions) == 3 < finding.shrink.shrunk_actions, finding.trace.actions
        again = replay(finding.trace, invariants=result.invariant_list())
        assert again.violation is not None and again.violation.invariant == finding.trace.violation.invariant
    assert result.failure is result.findings[0].trace

    report = write_results(result, tmp_path)
    assert [v["invariant"] for v in report["violations"]] == [f.trace.violation.invariant for f in result.findings]
    for v in report["violations"]:
        assert Path(v["trace"]).is_file() and v["reproduced"] and v["known_fix"] is None
        assert read_trace(Path(v["trace"])).violation.invariant == v["invariant"]
    section = report["keep_going"]
    assert section["examples_violated"] == result.stats.violating_examples and section["distinct"] == 2
    assert section["known_upstream_bugs"] == [] and len(section["new_findings"]) == 2
    md = (tmp_path / "report.md").read_text()
    assert "## Findings" in md and "### New findings" in md and "did not shrink it" in md
    assert 'id="findings"' in (tmp_path / "report.html").read_text()


def test_without_keep_going_the_run_stops_at_its_first_violation():
    result = run_campaign(attrs.evolve(OPTIONS, keep_going=False), machine=TwoMistakes)
    assert result.findings == () and result.stats.violating_examples == 0
    assert result.failure is not None and result.stats.first_failure_at < OPTIONS.examples
    assert result.shrink.events_budget > 0  # Hypothesis shrank it


def test_a_run_with_no_violation_explores_the_same_examples_with_or_without_the_flag():
    # the flag only acts on a violation: up to the first one, the same examples run and the digest is the same
    class Passing(SmallMachine):
        pass

    options = CheckOptions(seed=2, examples=6, steps=5)
    plain = run_campaign(options, machine=Passing)
    kept = run_campaign(CheckOptions(seed=2, examples=6, steps=5, keep_going=True), machine=Passing)
    assert plain.failure is None and kept.failure is None and kept.findings == ()
    assert kept.stats.trace_digest() == plain.stats.trace_digest()
    assert kept.stats.examples == plain.stats.examples


def test_a_known_upstream_bug_is_classified_by_the_fix_that_takes_it_out():
    bug = read_trace(NODEIPAM_BUG)
    assert known_fix(bug) == "nodeipam-release-by-owner"
    # a planted invariant's violation: no known fix names it, so none takes it out
    planted = run_campaign(CheckOptions(seed=1, examples=3, steps=8, keep_going=True), machine=TwoMistakes)
    assert planted.findings and known_fix(planted.findings[0].trace, invariants=planted.invariant_list()) is None

    findings = minimize_findings([Seen(4, bug), Seen(9, bug)], keep_prefix=3)
    assert len(findings) == 1  # one key: (no-cidr-leak, nodeipam-release-by-owner)
    finding = findings[0]
    assert finding.known_fix == "nodeipam-release-by-owner" and finding.examples == (4, 9)
    assert finding.shrink.found_in == 4 and len(finding.trace.actions) <= len(bug.actions)
    assert known_fix(finding.trace) == "nodeipam-release-by-owner"  # its trace agrees with its class
    violations = [{"invariant": "no-cidr-leak", "known_fix": finding.known_fix, "trace": "a.json"},
                  {"invariant": "no-debug-pod", "known_fix": None, "trace": "b.json"}]
    assert keep_going_json(7, violations) == {
        "examples_violated": 7, "distinct": 2,
        "known_upstream_bugs": [{"violation": 0, "invariant": "no-cidr-leak", "fix": "nodeipam-release-by-owner",
                                 "trace": "a.json"}],
        "new_findings": [{"violation": 1, "invariant": "no-debug-pod", "trace": "b.json"}]}


def test_the_command_exits_1_on_findings_and_lists_them(tmp_path, capsys):
    # blind-writes (an anti-pattern variant) loses an update in every example: each run's examples all end on it
    folder = tmp_path / "r"
    code = main(["check", "--keep-going", "--variant", "blind-writes", "--examples", "3", "--steps", "3",
                 "--report", str(folder)])
    out = capsys.readouterr().out
    assert code == 1
    report = json.loads((folder / "report.json").read_text())
    ran = report["figures"]["examples_run"]
    assert ran >= 3 and report["keep_going"]["examples_violated"] == ran
    assert f"keep going: {ran} of {ran} examples ended on a violation; 1 distinct: 0 known upstream bugs, " \
           "1 new finding" in out
    assert "  NEW FINDING occ-no-lost-update: no known fix takes it out" in out
    assert "VIOLATION occ-no-lost-update" in out


def test_the_command_exits_0_when_a_run_that_keeps_going_finds_nothing(tmp_path, capsys):
    folder = tmp_path / "r"
    assert main(["check", "--keep-going", "--examples", "2", "--steps", "2", "--report", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "keep going: 0 of " in out and "0 known upstream bugs, 0 new findings" in out
    report = json.loads((folder / "report.json").read_text())
    assert report["violations"] == [] and report["keep_going"]["distinct"] == 0


def test_without_the_flag_the_output_and_report_are_unchanged(tmp_path, capsys):
    folder = tmp_path / "r"
    assert main(["check", "--variant", "blind-writes", "--examples", "3", "--steps", "3",
                 "--report", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "keep going" not in out and "NEW FINDING" not in out
    report = json.loads((folder / "report.json").read_text())
    assert "keep_going" not in report and "known_fix" not in report["violations"][0]
    assert "## Findings" not in (folder / "report.md").read_text()


@pytest.mark.parametrize("argv", [["--stop-on-first"], ["--stop-on-first", "--workers", "2"]])
def test_keep_going_with_stop_on_first_is_a_usage_error(argv, tmp_path, capsys):
    assert main(["check", "--keep-going", "--examples", "1", "--report", str(tmp_path / "r"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "--keep-going explores the whole budget and --stop-on-first stops at the first violation" in err
    assert not (tmp_path / "r").exists()  # refused before anything was written


def _with_findings(outcome: ShardOutcome, **changes: Any) -> ShardOutcome:
    """`outcome` with the fields of its first finding changed."""
    return attrs.evolve(outcome, findings=({**outcome.findings[0], **changes},))


def test_the_shards_of_a_parallel_run_each_keep_going_and_the_merge_unions_their_findings():
    options = CheckOptions(seed=1, examples=4, steps=3, variant="blind-writes", keep_going=True)
    shards = [Shard(i, 2, shard_seed(1, i, 2), 2) for i in range(2)]  # a plan of two shards, small for a test
    outcomes = [run_shard(options, shard) for shard in shards]  # in this process, no Dask
    assert all(o.violating_examples == o.examples and len(o.findings) == 1 for o in outcomes)
    [(trace, shrink, fields)] = distinct_violations(outcomes)  # the same finding in both shards: one
    assert trace.violation.invariant == "occ-no-lost-update" and shrink.events_budget == 0
    assert fields == {"known_fix": None, "examples": sum(o.examples for o in outcomes),
                      "first_example": outcomes[0].findings[0]["examples"][0], "workers": 2, "found_by": [0, 1]}
    assert merged_stats(outcomes).violating_examples == sum(o.examples for o in outcomes)
    # another key in a third shard (the same invariant, as if a known fix took it out there): reported apart
    other = attrs.evolve(_with_findings(outcomes[1], known_fix="some-fix"),
                         shard=Shard(2, 3, shard_seed(1, 2, 3), 2))
    found = distinct_violations([*outcomes, other])
    assert [(f["known_fix"], f["found_by"]) for _, _, f in found] == [(None, [0, 1]), ("some-fix", [2])]


def test_a_parallel_run_that_keeps_going_reports_every_worker_s_findings(tmp_path):
    run = subprocess.run([sys.executable, "-m", "kmodel", "check", "--keep-going", "--workers", "2", "--variant",
                          "blind-writes", "--examples", "50", "--steps", "3", "--report", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["parallel"]["stop_on_first"] is False  # every worker explores its whole share
    ran = report["figures"]["examples_run"]
    assert ran >= 50 and report["keep_going"]["examples_violated"] == ran  # two shards of 25
    [violation] = report["violations"]
    assert violation["found_by"] == [0, 1] and violation["examples"] == ran and violation["known_fix"] is None
    assert "1 distinct: 0 known upstream bugs, 1 new finding" in run.stdout


def test_the_same_seed_gives_the_same_findings_under_any_hash_seed(tmp_path):
    # the findings, their traces and the digest are a function of the seed, not of Python's string hashing
    def run(hash_seed: str) -> dict:
        folder = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-m", "kmodel", "check", "--keep-going", "--variant", "hardcoded-pod-ip",
                               "--seed", "2", "--examples", "12", "--steps", "12", "--report", str(folder)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
        report = json.loads((folder / "report.json").read_text())
        traces = [Path(v["trace"]).read_text() for v in report["violations"]]
        return {"digest": report["trace_digest"], "keep_going": {**report["keep_going"], "known_upstream_bugs": None,
                                                                 "new_findings": None},
                "violations": [(v["invariant"], v["known_fix"], v["examples"], v["first_example"], v["steps"])
                               for v in report["violations"]], "traces": traces}

    assert run("0") == run("12345")
