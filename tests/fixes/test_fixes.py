"""Fixes (kmodel.fixes): the registry, the switch in the configuration and traces, the CLI, and each fix
taking out its bug: its regression traces fail on the default model and pass with it on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kmodel.checker.replay import replay
from kmodel.checker.trace import TraceError, config_from_json, config_to_json, read_trace
from kmodel.cli import main
from kmodel.cluster import ClusterConfig
from kmodel.fixes import FIXES, NAMES, check_fixes

ROOT = Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "regressions"


def test_registry_names_places_and_traces_exist():
    assert len(set(NAMES)) == len(NAMES)
    for f in FIXES:
        assert (ROOT / f.where.split(" ")[0]).is_file(), f.where
        assert f.traces
        for name in f.traces:
            trace = read_trace(REGRESSIONS / name)
            assert trace.expected_invariant in f.invariants, name  # the bug's trace, expected to fail


def test_config_keeps_each_fix_once_in_registry_order_and_refuses_unknown_ones():
    assert ClusterConfig(fixes=tuple(reversed(NAMES)) + NAMES[:1]).fixes == NAMES
    with pytest.raises(ValueError, match="unknown fix 'no-such-fix'; fixes: "):
        ClusterConfig(fixes=("no-such-fix",))
    assert check_fixes([]) == ()


def test_config_takes_all_or_a_comma_separated_string_as_the_command_line_does():
    assert ClusterConfig(fixes="all").fixes == NAMES
    assert ClusterConfig(fixes=("all",)).fixes == NAMES
    assert ClusterConfig(fixes=f"{NAMES[1]}, {NAMES[0]}").fixes == NAMES[:2]
    assert ClusterConfig(fixes=NAMES[0]).fixes == NAMES[:1]
    with pytest.raises(ValueError, match="unknown fix 'al'; fixes: "):
        ClusterConfig(fixes="al")


def test_trace_config_round_trips_fixes_and_refuses_unknown_ones():
    config = ClusterConfig(fixes=NAMES)
    data = config_to_json(config)
    assert data["fixes"] == list(NAMES)
    assert config_from_json(data) == config
    with pytest.raises(TraceError, match="unknown fix"):
        config_from_json({**data, "fixes": ["no-such-fix"]})
    with pytest.raises(TraceError, match="fixes must be a list of strings"):
        config_from_json({**data, "fixes": "deployment-refresh-annotations"})
    assert config_from_json({k: v for k, v in data.items() if k != "fixes"}).fixes == ()  # older traces


#: traces that fire a controller's retries at the times of its rate limiter's back-off, event by event, past the
#: 60 s its fix caps them at: with the fix on, those retries come earlier, so the trace is replayed leniently (the
#: events not enabled are skipped; its request faults still fail the tries that come)
FIRES_RETRIES_THE_FIX_MOVES = {
    "deployment-dropped-after-max-retries-while-its-leader-renews.json",
    "endpoints-dropped-after-max-retries-while-its-leader-renews.json"}
#: traces whose burst after a restart the fix holds up: the consistent first list reads etcd over the link the
#: trace holds, so the restarted component's events that follow its list are not enabled; replayed leniently
WAITS_ON_THE_LINK_THE_TRACE_HOLDS = {"stale-scheduler-binds-two-pods-on-one-host-port.json"}
#: traces whose pods the fix names otherwise: an API server draws every create's generated name and uid from one
#: random source per replica, and the fix moves the creates that draw from it, so the trace's container failures
#: name pods that do not exist with the fix on; replayed leniently (those steps are skipped)
NAMES_PODS_OTHERWISE = {"kubelet-restarted-against-a-lagging-cache-reruns-a-deleted-pod-on-a-host-port.json"}


@pytest.mark.parametrize("fix, trace", [(f.name, t) for f in FIXES for t in f.traces])
def test_each_fix_takes_out_its_bug_on_its_traces(fix, trace):
    loaded = read_trace(REGRESSIONS / trace)
    without = replay(loaded, record_messages=False)
    assert without.violation is not None and without.violation.invariant == loaded.expected_invariant
    lenient = trace in FIRES_RETRIES_THE_FIX_MOVES | WAITS_ON_THE_LINK_THE_TRACE_HOLDS | NAMES_PODS_OTHERWISE
    # else strict: it fits
    with_fix = replay(loaded, record_messages=False, fixes=(fix,), lenient=lenient)
    assert with_fix.violation is None, with_fix.violation
    assert lenient or with_fix.skipped == 0


#: (fix, another bug's trace) where the fix moves the interleaving the trace needs, not that bug: the nodeipam
#: fix's second list after the controller manager restarts changes what is in flight when the store is compacted
#: in the node trace; the consistent first list reads every informer's first list at boot from etcd, not from
#: the watch caches, which moves what is in flight when the store is compacted in both compaction traces
MOVES_THE_INTERLEAVING = {
    ("nodeipam-release-by-owner", "apiserver-cache-keeps-a-node-deleted-at-the-compaction-revision.json"),
    ("reflector-consistent-first-list", "apiserver-cache-keeps-a-node-deleted-at-the-compaction-revision.json"),
    ("reflector-consistent-first-list", "apiserver-cache-keeps-a-service-deleted-at-the-compaction-revision.json")}
#: (fix, trace) where the fix takes out what led to the other bug (none today)
TAKES_OUT_THE_CAUSE: set[tuple[str, str]] = set()


def test_a_fix_leaves_the_other_bugs_alone():
    """Each fix touches its own bug only: every other fix's trace still fails with all the fixes but its own on
    (one replay per trace, all the other fixes at once: none of them, alone or together, takes that bug out)."""
    for other in FIXES:
        for name in other.traces:
            on = tuple(f.name for f in FIXES if f is not other and (f.name, name) not in
                       MOVES_THE_INTERLEAVING | TAKES_OUT_THE_CAUSE and name not in f.traces)
            trace = read_trace(REGRESSIONS / name)
            result = replay(trace, record_messages=False, fixes=on)
            assert result.violation is not None and result.violation.invariant == trace.expected_invariant, \
                (on, name)


def test_fix_option_takes_names_lists_and_all():
    from kmodel.fixes.command import fixes_from

    assert fixes_from([NAMES[-1], f" {NAMES[0]} ,"]) == (NAMES[0], NAMES[-1])  # registry order
    assert fixes_from(["all"]) == fixes_from([",".join(NAMES)]) == NAMES
    assert fixes_from(None) == ()


def test_no_fix_leaves_one_out_of_all_in_any_order():
    import argparse

    from kmodel.errors import KmodelUsageError
    from kmodel.fixes.command import add_fix_option, fixes_from

    parser = argparse.ArgumentParser()
    add_fix_option(parser, "explore")
    args = parser.parse_args(["--no-fix", f"{NAMES[1]},{NAMES[2]}", "--fix", "all", "--no-fix", NAMES[-1]])
    assert fixes_from(args.fix) == tuple(n for n in NAMES if n not in (NAMES[1], NAMES[2], NAMES[-1]))
    assert fixes_from(parser.parse_args(["--no-fix", NAMES[0]]).fix) == ()  # nothing named: nothing on
    with pytest.raises(KmodelUsageError, match="unknown fix 'bogus'"):
        fixes_from(parser.parse_args(["--fix", "all", "--no-fix", "bogus"]).fix)


def test_fixes_command_lists_every_fix(capsys):
    assert main(["fixes"]) == 0
    out = capsys.readouterr().out
    for f in FIXES:
        assert f.name in out and f"fixes {', '.join(f.invariants)}" in out


@pytest.mark.parametrize("argv", [
    ["check", "--examples", "1", "--fix", "no-such-fix"],
    ["replay", str(REGRESSIONS / FIXES[0].traces[0]), "--fix", "no-such-fix"],
    ["simulate", "-f", str(ROOT / "examples" / "web-service.yaml"), "--fix", "no-such-fix"],
])
def test_an_unknown_fix_is_one_line_and_exit_2(argv, capsys, tmp_path):
    if argv[0] == "check":
        argv = [*argv, "--report", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown fix 'no-such-fix'; fixes: " in err


def test_replay_with_a_fix_exits_0_on_the_bug_trace(capsys):
    f = FIXES[0]
    path = str(REGRESSIONS / f.traces[0])
    assert main(["replay", "--quiet", path]) == 1
    assert main(["replay", "--quiet", "--lenient", "--fix", f.name, path]) == 0
    out = capsys.readouterr().out
    assert "lenient: 0 of 7 steps lost some or all of their events" in out and "passed: 7 steps" in out


def test_replay_lenient_skips_what_the_model_no_longer_enables(tmp_path, capsys):
    """A trace whose recorded event is not enabled is refused (exit 2, naming --lenient); --lenient skips it."""
    data = json.loads((REGRESSIONS / FIXES[0].traces[0]).read_text())
    data["actions"].insert(len(data["actions"]) - 1, {"name": "fault", "event": {"kind": "drop_head", "src": "kubectl",
                                                                               "dst": "apiserver-1"}})
    data["expect"] = "pass"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    assert main(["replay", "--quiet", str(path)]) == 2
    assert "--lenient" in capsys.readouterr().err
    assert main(["replay", "--quiet", "--lenient", str(path)]) == 1
    assert "lenient: 1 of 8 steps lost" in capsys.readouterr().out


def test_replay_refuses_a_compaction_past_the_store_and_lenient_skips_it(tmp_path, capsys):
    data = json.loads((REGRESSIONS / FIXES[0].traces[0]).read_text())
    data["actions"].insert(len(data["actions"]) - 1, {"name": "compact", "revision": 10**6})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    assert main(["replay", "--quiet", str(path)]) == 2
    err = capsys.readouterr().err
    assert "cannot compact at revision 1000034" in err and len(err.strip().splitlines()) == 1  # moved by 49 - 15
    assert main(["replay", "--quiet", "--lenient", str(path)]) == 1
    assert "lenient: 1 of" in capsys.readouterr().out


def test_check_with_fixes_reports_them(tmp_path):
    folder = tmp_path / "r"
    assert main(["check", "--examples", "2", "--steps", "3", "--seed", "1", "--fix", "all",
                 "--report", str(folder)]) == 0
    report = json.loads((folder / "report.json").read_text())
    assert report["fixes"] == list(NAMES)
    assert "Fixes on" in (folder / "report.md").read_text()
