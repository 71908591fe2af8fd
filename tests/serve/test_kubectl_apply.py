"""kubectl's server-side apply and diff against `kmodel serve` (kubectl 1.27 or later): `kubectl apply --server-side
-f examples/`, `kubectl diff -f examples/`, a conflict with another manager and --force-conflicts, each answered as
a Kubernetes 1.31 API server answers them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import serve
from tests.serve.test_kubectl import EXAMPLES, KUBECTL, MIN_MINOR, example_objects, kubectl, kubectl_minor

pytestmark = pytest.mark.skipif(kubectl_minor() < MIN_MINOR,
                                reason=f"needs kubectl 1.{MIN_MINOR} or later (.ci/run installs one if none)")
assert KUBECTL is not None or kubectl_minor() < MIN_MINOR

CHECKOUT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  replicas: 2
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: checkout
        image: nginx:1.27
"""


def managers_of(served: Any, *what: str) -> dict[str, dict]:
    """manager/operation -> fieldsV1 of an object, as `kubectl get -o json --show-managed-fields` shows them."""
    obj = json.loads(kubectl(served, "get", *what, "-o", "json", "--show-managed-fields").stdout)
    return {f"{m['manager']}/{m['operation']}": m["fieldsV1"] for m in obj["metadata"].get("managedFields", [])}


def test_the_examples_apply_server_side_and_then_diff_clean(tmp_path: Path) -> None:
    """`kubectl apply --server-side -f examples/` applies every object as manager "kubectl"; applying again
    changes nothing, and `kubectl diff -f examples/` then finds no difference (exit 0, no output)."""
    for served in serve(tmp_path, speed=5.0):
        applied = kubectl(served, "apply", "--server-side", "-f", str(EXAMPLES))
        lines = applied.stdout.splitlines()
        assert sorted(line.rsplit(" ", 1)[0] for line in lines) == example_objects()
        assert all(line.endswith(" serverside-applied") for line in lines) and applied.stderr == ""
        fields = managers_of(served, "deployment", "web")
        assert list(fields) == ["kubectl/Apply"]
        assert fields["kubectl/Apply"]["f:spec"]["f:replicas"] == {}
        again = kubectl(served, "apply", "--server-side", "-f", str(EXAMPLES))
        assert again.stdout.splitlines() == lines
        diff = kubectl(served, "diff", "-f", str(EXAMPLES), check=False)
        assert (diff.returncode, diff.stdout, diff.stderr) == (0, "", "")


def test_diff_shows_what_an_apply_would_change_and_changes_nothing(served: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "checkout.yaml"
    manifest.write_text(CHECKOUT)
    new = kubectl(served, "diff", "-f", str(manifest), check=False)  # a dry-run create
    assert new.returncode == 1, new.stderr
    assert "+kind: Deployment" in new.stdout and "+  replicas: 2" in new.stdout
    assert "resourceVersion" not in new.stdout  # a dry-run create is never given one
    assert kubectl(served, "get", "deployment", "checkout", check=False).returncode == 1
    kubectl(served, "apply", "-f", str(manifest))
    manifest.write_text(CHECKOUT.replace("replicas: 2", "replicas: 4"))
    changed = kubectl(served, "diff", "-f", str(manifest), check=False)  # a dry-run patch
    assert changed.returncode == 1, changed.stderr
    removed = [line for line in changed.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in changed.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-  generation: 1", "-  replicas: 2"]
    assert added == ["+  generation: 2", "+  replicas: 4"]
    live = json.loads(kubectl(served, "get", "deployment", "checkout", "-o", "json").stdout)
    assert (live["spec"]["replicas"], live["metadata"]["generation"]) == (2, 1)
    kubectl(served, "delete", "-f", str(manifest))


def test_a_server_side_apply_conflicts_with_client_side_apply_until_forced(served: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "cart.yaml"
    manifest.write_text(CHECKOUT.replace("checkout", "cart2"))
    kubectl(served, "apply", "-f", str(manifest))
    assert "kubectl-client-side-apply/Update" in managers_of(served, "deployment", "cart2")
    manifest.write_text(CHECKOUT.replace("checkout", "cart2").replace("replicas: 2", "replicas: 3"))
    refused = kubectl(served, "apply", "--server-side", "-f", str(manifest), check=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                                     'using apps/v1: .spec.replicas\nPlease review the fields above')
    forced = kubectl(served, "apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert forced.stdout.strip() == "deployment.apps/cart2 serverside-applied"
    fields = managers_of(served, "deployment", "cart2")
    assert fields["kubectl/Apply"]["f:spec"]["f:replicas"] == {}
    live = json.loads(kubectl(served, "get", "deployment", "cart2", "-o", "json").stdout)
    assert live["spec"]["replicas"] == 3
    kubectl(served, "delete", "-f", str(manifest))


def test_dry_run_server_writes_nothing(served: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "dry.yaml"
    manifest.write_text(CHECKOUT.replace("checkout", "dry"))
    created = kubectl(served, "apply", "--server-side", "--dry-run=server", "-f", str(manifest))
    assert created.stdout.strip() == "deployment.apps/dry serverside-applied (server dry run)"
    assert kubectl(served, "get", "deployment", "dry", check=False).returncode == 1
    kubectl(served, "apply", "-f", str(manifest))
    deleted = kubectl(served, "delete", "-f", str(manifest), "--dry-run=server")
    assert deleted.stdout.strip() == 'deployment.apps "dry" deleted (server dry run)'
    assert kubectl(served, "get", "deployment", "dry").returncode == 0
    kubectl(served, "delete", "-f", str(manifest))
