"""The kmodel_operator fixture: an operator explored from pytest with the plugin's options; a violation fails the
test with the steps and the operator's requests, and leaves a served trace that replays in-model to its digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("kopf")

from kmodel.operator import actions as a  # noqa: E402
from kmodel.serve.recording import read_recording, replay  # noqa: E402

KILLED_BETWEEN_WRITES = [a.KillOperator(at_write=1), a.ApplyObject("websites", "a", {"content": "x"})]


def test_a_violation_fails_the_test_with_the_operators_requests_and_a_replayable_trace(kmodel_operator) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        kmodel_operator("kopf run --standalone examples/operators/kopf_buggy.py",
                        manifests=["examples/operators/kopf.yaml"],
                        invariants=["examples.operators.websites:INVARIANTS"], actions=KILLED_BETWEEN_WRITES,
                        settle_s=4, reproduce=0, minimize=False)
    said = str(failed.value)
    assert "invariant one-configmap-per-website violated" in said
    assert "create configmaps default -> 201" in said
    report = json.loads(Path(said.split("report: ")[-1].strip()).read_text())
    trace = read_recording(Path(report["violation"]["trace"]))
    assert replay(trace) == trace["digest"] == report["violation"]["digest"]
