"""The example operators' pairs, each run unchanged against served clusters (short budgets): a planted mistake is
found from the actions that show it (kept in the test, as a failing report keeps them) and reported with the
operator's requests beside the steps and a served trace that replays in-model to its digest; the correct version
passes the same actions and a short drawn exploration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kopf")
pytest.importorskip("kubernetes")

from kmodel.operator import actions as a  # noqa: E402

KOPF = ("kopf run --standalone examples/operators/kopf_{}.py", "examples/operators/kopf.yaml",
        "examples.operators.websites:INVARIANTS")
CLIENT = ("python examples/operators/client_{}.py", "examples/operators/client.yaml",
          "examples.operators.shards:INVARIANTS")
#: a crash between the ConfigMap's create and the status patch (kopf_buggy.py's mistake)
KILLED_BETWEEN_WRITES = [a.KillOperator(at_write=1), a.ApplyObject("websites", "a", {"content": "x"})]
#: a Shard deleted while the operator is down (client_buggy.py's mistake: the DELETED event is never seen)
DELETED_WHILE_DOWN = [a.ApplyObject("shards", "a", {"replicas": 1}), a.Wait(3.0), a.KillOperator(),
                      a.DeleteObject("shards", "a")]


def check(pair: tuple, version: str, report: Path, *extra: str) -> subprocess.CompletedProcess:
    command, manifests, invariants = pair
    return subprocess.run([sys.executable, "-m", "kmodel", "check", "--operator", command.format(version),
                           "--operator-manifests", manifests, "--invariants", invariants, "--report", str(report),
                           "--operator-settle", "4", *extra], capture_output=True, text=True, timeout=120)


def actions_file(tmp_path: Path, actions: list) -> str:
    path = tmp_path / "actions.json"
    path.write_text(json.dumps({"actions": [x.to_json() for x in actions]}))
    return str(path)


@pytest.mark.parametrize("pair, actions, invariant", [(KOPF, KILLED_BETWEEN_WRITES, "one-configmap-per-website"),
                                                      (CLIENT, DELETED_WHILE_DOWN, "shard-configmaps")],
                         ids=["kopf", "client"])
def test_the_planted_mistake_is_found_and_the_correct_version_passes(tmp_path: Path, pair: tuple, actions: list,
                                                                     invariant: str) -> None:
    given = actions_file(tmp_path, actions)
    buggy = check(pair, "buggy", tmp_path / "buggy", "--operator-actions", given, "--reproduce", "1")
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert f"invariant {invariant} violated in 1 of 1 runs" in buggy.stdout
    correct = check(pair, "correct", tmp_path / "correct", "--operator-actions", given, "--reproduce", "1")
    assert correct.returncode == 0, correct.stdout + correct.stderr
    assert "no invariant violated in 1 runs" in correct.stdout


def test_a_failing_episode_is_reported_with_the_operators_requests_and_a_replayable_trace(tmp_path: Path) -> None:
    """A drawn search of kopf_buggy.py from a seed whose first episode kills it between its two writes."""
    done = check(KOPF, "buggy", tmp_path, "--examples", "1", "--steps", "3", "--seed", "1", "--reproduce", "1")
    report = json.loads((tmp_path / "report.json").read_text())
    if done.returncode == 0:
        pytest.skip("the drawn episode did not meet the mistake this time (episodes are real)")
    violation = report["violation"]
    assert violation["invariant"] == "one-configmap-per-website"
    assert any("create configmaps default -> 201" in line for line in violation["steps"])
    replay = subprocess.run([sys.executable, "-m", "kmodel", "replay", violation["trace"]], capture_output=True,
                            text=True, timeout=120)
    assert replay.returncode == 0 and "(the same as recorded)" in replay.stdout
    assert report["startup"]["median_s"] > 0
