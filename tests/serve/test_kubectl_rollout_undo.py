"""`kubectl rollout undo` and `rollout history` of a StatefulSet against `kmodel serve`: kubectl lists the set's
ControllerRevisions by its selector, picks the one before the newest and patches the set's template back with
the revision's data (a strategic merge patch with `$patch: replace`); the controller then renumbers that
revision and rolls the pods back to it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.serve.test_kubectl import MIN_MINOR, kubectl, kubectl_minor

pytestmark = pytest.mark.skipif(kubectl_minor() < MIN_MINOR, reason=f"needs kubectl 1.{MIN_MINOR} or later")

DB = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: nginx:1.27
"""


def images(served: Any) -> list[str]:
    out = kubectl(served, "get", "pods", "-l", "app=db", "-o",
                  "jsonpath={range .items[*]}{.spec.containers[0].image}{'\\n'}{end}").stdout
    return sorted(out.split())


def wait_for(served: Any, wanted: list[str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while images(served) != wanted:
        assert time.monotonic() < deadline, images(served)
        time.sleep(0.5)


def test_rollout_undo_of_a_statefulset_restores_the_previous_template(served: Any, tmp_path: Any) -> None:
    manifest = tmp_path / "db.yaml"
    manifest.write_text(DB)
    kubectl(served, "apply", "-f", str(manifest))
    kubectl(served, "rollout", "status", "statefulset/db", "--timeout=60s")
    kubectl(served, "set", "image", "statefulset/db", "db=nginx:1.28")
    kubectl(served, "rollout", "status", "statefulset/db", "--timeout=60s")
    wait_for(served, ["nginx:1.28"] * 2)
    history = kubectl(served, "rollout", "history", "statefulset/db").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    table = kubectl(served, "get", "controllerrevisions").stdout.splitlines()
    assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert sorted(line.split()[1:3] for line in table[1:]) == [["statefulset.apps/db", "1"],
                                                              ["statefulset.apps/db", "2"]]
    undo = kubectl(served, "rollout", "undo", "statefulset/db")
    assert "statefulset.apps/db rolled back" in undo.stdout
    kubectl(served, "rollout", "status", "statefulset/db", "--timeout=60s")
    wait_for(served, ["nginx:1.27"] * 2)
    history = kubectl(served, "rollout", "history", "statefulset/db").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]
    kubectl(served, "delete", "statefulset", "db")
