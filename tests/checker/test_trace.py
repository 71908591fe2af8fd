"""The trace file: written atomically, read back equal, and refused with one clear line when unusable."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.actions import ApplyDeployment, Compact, RunFair, Settle
from kmodel.checker.trace import (FORMAT, LEGACY_BOOT_REVISION, Trace, TraceError, Violation, fitted, read_trace,
                                  trace_from_json, write_trace)
from kmodel.cli import main
from kmodel.cluster import ClusterConfig

TRACE = Trace(ClusterConfig(nodes=2, apiservers=2), (RunFair(15_000), ApplyDeployment("web", 1), Settle(60_000)),
              expect={"fail": "x"}, violation=Violation("x", "boom", 1), boot_revision=29)


def test_round_trip(tmp_path):
    path = write_trace(TRACE, tmp_path / "t.json")
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["actions"][1]["say"].startswith("kubectl apply")
    assert read_trace(path) == TRACE
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]  # no temporary file left behind


def test_a_trace_without_a_boot_revision_was_recorded_on_a_model_that_booted_at_the_legacy_revision():
    data = TRACE.to_json()
    assert data["boot_revision"] == 29
    del data["boot_revision"]
    assert trace_from_json(data).boot_revision == LEGACY_BOOT_REVISION == 15


def test_fitted_moves_compactions_by_the_difference_in_boot_revisions_and_nothing_else():
    old = Trace(ClusterConfig(), (RunFair(1_000), Compact(70), Compact(40), Settle(60_000)), boot_revision=15)
    moved = fitted(old, 29)
    assert moved.actions == (RunFair(1_000), Compact(84), Compact(54), Settle(60_000))
    assert moved.boot_revision == 29
    assert fitted(moved, 29) == moved
    assert fitted(Trace(ClusterConfig(), (Compact(70),)), 29).actions == (Compact(70),)  # this model's own


@pytest.mark.parametrize("text, words", [
    ("", "truncated"),
    ('{"format": "kmodel-trace/1", "actions": [', "truncated"),
    ("not json at all", "not valid JSON"),
    ('{"format": "kmodel-trace/9", "config": {}, "actions": [], "expect": "pass"}', "unsupported trace format"),
    ('{"format": "kmodel-trace/1", "config": {"nodez": 1}, "actions": [], "expect": "pass"}', "unknown fields"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [{"name": "x"}], "expect": "pass"}', "action 0"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [], "expect": "maybe"}', "'expect'"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [], "expect": "pass", "boot_revision": -3}',
     "'boot_revision' must be a whole number of at least 0, not -3"),
    ('{"format": "kmodel-trace/1", "config": {"nodes": -1}, "actions": [], "expect": "pass"}',
     "config: nodes must be at least 0, not -1"),
    ('{"format": "kmodel-trace/1", "config": {"seed": "x"}, "actions": [], "expect": "pass"}',
     "config: seed must be a whole number, not 'x'"),
    ('{"format": "kmodel-trace/1", "config": {"apiservers": true}, "actions": [], "expect": "pass"}',
     "config: apiservers must be a whole number, not True"),
    ('{"format": "kmodel-trace/1", "config": {"components": "kubelet"}, "actions": [], "expect": "pass"}',
     "config: components must be a list of strings"),
    ('{"format": "kmodel-trace/1", "config": {"cluster_cidr": "10.0.0.0/33"}, "actions": [], "expect": "pass"}',
     "config: cluster_cidr must be a network"),
    ('{"format": "kmodel-trace/1", "config": {}, "actions": [{"name": "run", "ms": -5}], "expect": "pass"}',
     "action 0: run: ms must be at least 1, not -5"),
])
def test_unusable_files(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceError, match=words):
        read_trace(path)


def test_replay_exit_2_one_line(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "kmodel-trace/1", "actions": [')
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "truncated" in err and "Traceback" not in err
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
    assert main(["replay", "--variant", "nope", str(path)]) == 2
