"""The example operators' pairs, each run unchanged against served clusters (short budgets): a planted mistake is
found from the actions that show it (kept in the test, as a failing run keeps them in actions.json), and the
correct version passes the same actions. All four runs go at the same time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kopf")
pytest.importorskip("kubernetes")

from kmodel.operator import actions as a  # noqa: E402

KOPF = ("kopf run --standalone examples/operators/kopf_{}.py", "examples/operators/kopf.yaml", ())
#: ready once it holds its Lease (after each restart too: a new holder)
CLIENT = ("python examples/operators/client_{}.py", "examples/operators/client.yaml",
          ("--operator-ready", "lease:default/shard-operator"))
#: a crash between the ConfigMap's create and the status patch (kopf_buggy.py's mistake)
KILLED_BETWEEN_WRITES = [a.KillOperator(at_write=1), a.ApplyObject("websites", "a", {"content": "x"})]
#: a Shard deleted while the operator is down (client_buggy.py's mistake: the DELETED event is never seen)
DELETED_WHILE_DOWN = [a.ApplyObject("shards", "a", {"replicas": 1}), a.Wait(2.0), a.KillOperator(),
                      a.DeleteObject("shards", "a")]


def start(pair: tuple, version: str, report: Path, actions: Path) -> subprocess.Popen:
    command, manifests, extra = pair  # the manifests' CRD names the invariants (kmodel.dev/invariants)
    return subprocess.Popen([sys.executable, "-m", "kmodel", "check", "--operator", command.format(version),
                             "--operator-manifests", manifests, "--report", str(report), *extra,
                             "--operator-settle", "4", "--operator-actions", str(actions), "--reproduce", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


#: (pair, the actions that show its planted mistake, the invariant that says it)
CASES = {"kopf": (KOPF, KILLED_BETWEEN_WRITES, "one-configmap-per-website"),
         "client": (CLIENT, DELETED_WHILE_DOWN, "shard-configmaps")}


def test_each_planted_mistake_is_found_and_each_correct_version_passes(tmp_path: Path) -> None:
    """The four runs go at once: each mostly waits (for its operator, its settle), so together they take about as
    long as the slowest."""
    runs = {}
    for name, (pair, actions, _) in CASES.items():
        given = tmp_path / f"{name}-actions.json"
        given.write_text(json.dumps({"actions": [x.to_json() for x in actions]}))
        for version in ("buggy", "correct"):
            runs[name, version] = start(pair, version, tmp_path / f"{name}-{version}", given)
    outs = {key: (run.communicate(timeout=180)[0], run.returncode) for key, run in runs.items()}
    for name, (_, _, invariant) in CASES.items():
        buggy_out, buggy_code = outs[name, "buggy"]
        assert buggy_code == 1, buggy_out
        assert f"invariant {invariant} violated in 1 of 1 runs" in buggy_out
        correct_out, correct_code = outs[name, "correct"]
        assert correct_code == 0, correct_out
        assert "no invariant violated in 1 runs" in correct_out
