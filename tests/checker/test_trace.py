"""The trace file: written atomically, read back equal, and refused with one clear line when unusable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kmodel.checker.actions import ApplyDeployment, Compact, CrashMidReconcile, RunFair, Settle
from kmodel.checker.replay import replay
from kmodel.checker.trace import (FORMAT, FORMAT_V1, LEGACY_BOOT_REVISION, Trace, TraceError, Violation, fitted,
                                  read_trace, trace_from_json, upgrade_v1, write_trace)
from kmodel.cli import main
from kmodel.cluster import ClusterConfig

FIXTURES = Path(__file__).parent / "fixtures"
REGRESSIONS = Path(__file__).parents[1] / "regressions"
TRACE = Trace(ClusterConfig(nodes=2, apiservers=2), (RunFair(15_000), ApplyDeployment("web", 1), Settle(60_000)),
              expect={"fail": "x"}, violation=Violation("x", "boom", 1), boot_revision=29)


def test_round_trip(tmp_path):
    path = write_trace(TRACE, tmp_path / "t.json")
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["actions"][1]["say"].startswith("kubectl apply")
    assert read_trace(path) == TRACE
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]  # no temporary file left behind


def test_a_version_2_trace_without_a_boot_revision_is_this_models():
    data = TRACE.to_json()
    assert data["boot_revision"] == 29
    del data["boot_revision"]
    assert trace_from_json(data).boot_revision is None


def test_a_version_1_trace_without_a_boot_revision_was_recorded_on_a_model_that_booted_at_the_legacy_revision():
    data = {**TRACE.to_json(), "format": FORMAT_V1}
    del data["boot_revision"]
    assert trace_from_json(data).boot_revision == LEGACY_BOOT_REVISION == 15
    assert upgrade_v1(data)["boot_revision"] == 15 and "boot_revision" not in data  # a new dict
    assert upgrade_v1({**data, "boot_revision": 29})["boot_revision"] == 29


def test_version_1_settles_meant_false_for_the_switches_whose_default_is_true_now():
    data = {**TRACE.to_json(), "format": FORMAT_V1}
    data["actions"] = [{"name": "settle", "bound_ms": 60_000}, {"name": "settle", "check_at_once": True},
                       {"name": "run", "ms": 1_000}]
    first, second, run = trace_from_json(data).actions
    assert first == Settle(60_000, check_at_once=False, release_holds=False, finish_removals=False)
    assert second == Settle(check_at_once=True, release_holds=False, finish_removals=False)
    assert run == RunFair(1_000)
    # version 2: a missing switch is today's default
    v2 = trace_from_json({**data, "format": FORMAT})
    assert v2.actions[0] == Settle(60_000) and Settle(60_000).check_at_once and Settle().finish_removals


def test_a_version_1_crash_mid_reconcile_named_its_component_process():
    data = {**TRACE.to_json(), "format": FORMAT_V1,
            "actions": [{"name": "crash-mid-reconcile", "process": "kube-controller-manager", "writes": 2}]}
    assert trace_from_json(data).actions == (CrashMidReconcile("kube-controller-manager", writes=2),)
    with pytest.raises(TraceError, match="action 0: .*process"):  # version 2 knows the field by its name only
        trace_from_json({**data, "format": FORMAT})


def test_the_version_1_fixture_reads_as_its_version_2_regression_and_replays_the_same(tmp_path):
    """tests/checker/fixtures holds a regression seed as it was written in version 1; the regression folder
    holds it rewritten as version 2 (by reading and writing it): the same trace, the same run."""
    v1_path = FIXTURES / "crash-mid-reconcile-lagging-cache-broken-watch.v1.json"
    v2_path = REGRESSIONS / "crash-mid-reconcile-lagging-cache-broken-watch.json"
    assert json.loads(v1_path.read_text())["format"] == FORMAT_V1
    assert json.loads(v2_path.read_text())["format"] == FORMAT
    old, new = read_trace(v1_path), read_trace(v2_path)
    assert old == new
    assert write_trace(old, tmp_path / "t.json").read_text() == v2_path.read_text()
    assert replay(old, record_messages=False).digest == replay(new, record_messages=False).digest


def test_fitted_moves_compactions_by_the_difference_in_boot_revisions_and_nothing_else():
    old = Trace(ClusterConfig(), (RunFair(1_000), Compact(70), Compact(40), Settle(60_000)), boot_revision=15)
    moved = fitted(old, 29)
    assert moved.actions == (RunFair(1_000), Compact(84), Compact(54), Settle(60_000))
    assert moved.boot_revision == 29
    assert fitted(moved, 29) == moved
    assert fitted(Trace(ClusterConfig(), (Compact(70),)), 29).actions == (Compact(70),)  # this model's own


@pytest.mark.parametrize("text, words", [
    ("", "truncated"),
    ('{"format": "kmodel-trace/2", "actions": [', "truncated"),
    ("not json at all", "not valid JSON"),
    ('{"format": "kmodel-trace/9", "config": {}, "actions": [], "expect": "pass"}', "unsupported trace format"),
    ('{"format": "kmodel-trace/2", "config": {"nodez": 1}, "actions": [], "expect": "pass"}', "unknown fields"),
    ('{"format": "kmodel-trace/2", "config": {}, "actions": [{"name": "x"}], "expect": "pass"}', "action 0"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [{"name": "x"}], "expect": "pass"}', "action 0"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [{"name": "settle", "bound_ms": 0}], "expect": "pass"}',
     "action 0: settle: bound_ms must be at least 1, not 0"),
    ('[]', "no JSON object"),
    ('{"format": "kmodel-trace/2", "config": {}, "actions": [], "expect": "maybe"}', "'expect'"),
    ('{"format": "kmodel-trace/2", "config": {}, "actions": [], "expect": "pass", "boot_revision": -3}',
     "'boot_revision' must be a whole number of at least 0, not -3"),
    ('{"format": "kmodel-trace/2", "config": {"nodes": -1}, "actions": [], "expect": "pass"}',
     "config: nodes must be at least 0, not -1"),
    ('{"format": "kmodel-trace/2", "config": {"seed": "x"}, "actions": [], "expect": "pass"}',
     "config: seed must be a whole number, not 'x'"),
    ('{"format": "kmodel-trace/2", "config": {"apiservers": true}, "actions": [], "expect": "pass"}',
     "config: apiservers must be a whole number, not True"),
    ('{"format": "kmodel-trace/2", "config": {"components": "kubelet"}, "actions": [], "expect": "pass"}',
     "config: components must be a list of strings"),
    ('{"format": "kmodel-trace/2", "config": {"cluster_cidr": "10.0.0.0/33"}, "actions": [], "expect": "pass"}',
     "config: cluster_cidr must be a network"),
    ('{"format": "kmodel-trace/2", "config": {}, "actions": [{"name": "run", "ms": -5}], "expect": "pass"}',
     "action 0: run: ms must be at least 1, not -5"),
])
def test_unusable_files(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceError, match=words):
        read_trace(path)


def test_replay_exit_2_one_line(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "kmodel-trace/2", "actions": [')
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "truncated" in err and "Traceback" not in err
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
    assert main(["replay", "--variant", "nope", str(path)]) == 2


def test_leader_elect_is_written_for_a_lone_electing_copy_and_a_trace_without_it_elects_only_with_several():
    """A trace recorded before a lone kube-controller-manager and kube-scheduler elected lacks the field: it replays
    without election where it ran one of each, with it where it ran several (which always elected)."""
    from kmodel.checker.trace import config_from_json, config_to_json

    data = config_to_json(ClusterConfig())
    assert data["leader_elect"] is True and config_from_json(data) == ClusterConfig()
    older = {k: v for k, v in data.items() if k != "leader_elect"}
    assert config_from_json(older) == ClusterConfig(leader_elect=False)
    assert "leader_elect" not in config_to_json(ClusterConfig(leader_elect=False))
    several = config_to_json(ClusterConfig(controller_managers=2))
    assert "leader_elect" not in several and config_from_json(several).leader_elect is True
    with pytest.raises(TraceError, match="leader-elect=false runs one kube-controller-manager"):
        config_from_json({**older, "controller_managers": 2, "leader_elect": False})


def test_leader_elect_option_takes_a_kubernetes_boolean_and_refuses_several_copies_without_election(capsys):
    for argv in (["--leader-elect=maybe"], ["--leader-elect=false", "--controller-managers", "2"]):
        try:
            code = main(["check", "--examples", "1", *argv])
        except SystemExit as exc:  # argparse's refusal
            code = exc.code
        assert code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "leader-elect" in err and "Traceback" not in err


@pytest.mark.parametrize("flag", ["gc_monitors_custom_resources", "gc_monitors_every_resource"])
def test_a_garbage_collector_flag_is_written_when_on_and_a_trace_without_it_replays_with_it_off(flag):
    """A trace recorded before the model's GC did what the flag says lacks the flag: it replays as it ran."""
    from kmodel.checker.trace import config_from_json, config_to_json

    data = config_to_json(ClusterConfig())
    assert data[flag] is True and config_from_json(data) == ClusterConfig()
    off = ClusterConfig(**{flag: False})
    assert flag not in config_to_json(off)
    older = {k: v for k, v in data.items() if k != flag}
    assert getattr(config_from_json(older), flag) is False
