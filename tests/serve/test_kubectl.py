"""kubectl (Debian's kubernetes-client, or any kubectl on PATH) against `kmodel serve`: apply, rollout status,
get -o wide and -o json, scale, delete, each checked against what the model holds."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.serve.conftest import serve

KUBECTL = shutil.which("kubectl")
#: kubectl from 1.27 on asks the server to validate fields (OpenAPI v3's fieldValidation); older ones need OpenAPI
#: v2 schemas, which the server does not serve
MIN_MINOR = 27


def kubectl_minor() -> int:
    if KUBECTL is None:
        return 0
    out = subprocess.run([KUBECTL, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30)
    try:
        return int(json.loads(out.stdout)["clientVersion"]["minor"].rstrip("+"))
    except (ValueError, KeyError):
        return 0


pytestmark = pytest.mark.skipif(kubectl_minor() < MIN_MINOR,
                                reason=f"needs kubectl 1.{MIN_MINOR} or later (.ci/run installs one if none)")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEB = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
"""


def kubectl(served: Any, *args: str, check: bool = True, user: str = "") -> subprocess.CompletedProcess:
    context = ("--context", user) if user else ()
    result = subprocess.run([KUBECTL, "--kubeconfig", str(served.kubeconfig), *context, *args], capture_output=True,
                            text=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_apply_rollout_get_scale_delete(served: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "web.yaml"
    manifest.write_text(WEB)
    applied = kubectl(served, "apply", "-f", str(manifest))
    assert applied.stdout.strip() == "deployment.apps/web created"
    kubectl(served, "rollout", "status", "deployment/web", "--timeout=60s")
    pods = json.loads(kubectl(served, "get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    nodes = {n["metadata"]["name"]: n for n in json.loads(kubectl(served, "get", "nodes", "-o", "json").stdout)["items"]}
    assert len(pods) == 3
    wide = kubectl(served, "get", "pods", "-l", "app=web", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    rows = {line.split()[0]: line.split() for line in wide[1:]}
    for pod in pods:
        row = rows[pod["metadata"]["name"]]
        ip, node = row[5], row[6]
        assert row[1:3] == ["1/1", "Running"]
        assert ip == pod["status"]["podIP"] and node == pod["spec"]["nodeName"]
        assert ipaddress.ip_address(ip) in ipaddress.ip_network(nodes[node]["spec"]["podCIDR"])
    assert kubectl(served, "scale", "deployment/web", "--replicas=1").stdout.strip() == "deployment.apps/web scaled"
    assert json.loads(kubectl(served, "get", "deployment", "web", "-o", "json").stdout)["spec"]["replicas"] == 1
    kubectl(served, "rollout", "status", "deployment/web", "--timeout=60s")
    # a second apply of the changed manifest: kubectl's strategic merge patch
    manifest.write_text(WEB.replace("nginx:1.27", "nginx:1.28"))
    assert kubectl(served, "apply", "-f", str(manifest)).stdout.strip() == "deployment.apps/web configured"
    image = json.loads(kubectl(served, "get", "deployment", "web", "-o", "json").stdout)
    assert image["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
    deleted = kubectl(served, "delete", "-f", str(manifest))
    assert deleted.stdout.strip() == 'deployment.apps "web" deleted'
    missing = kubectl(served, "get", "deployment", "web", check=False)
    assert missing.returncode == 1
    assert 'Error from server (NotFound): deployments.apps "web" not found' in missing.stderr


def test_patch_and_get_the_scale_subresource(served: Any, tmp_path: Path) -> None:
    """kubectl patch --subresource=scale with each patch type, and kubectl get --subresource=scale's table."""
    manifest = tmp_path / "scaled.yaml"
    manifest.write_text(WEB.replace("name: web", "name: scaled").replace("app: web", "app: scaled")
                        .replace("replicas: 3", "replicas: 1"))
    kubectl(served, "apply", "-f", str(manifest))

    def replicas() -> int:
        return json.loads(kubectl(served, "get", "deployment", "scaled", "-o", "json").stdout)["spec"]["replicas"]

    for kind, patch, wanted in (("strategic", '{"spec":{"replicas":2}}', 2), ("merge", '{"spec":{"replicas":3}}', 3),
                                ("json", '[{"op":"replace","path":"/spec/replicas","value":0}]', 0)):
        out = kubectl(served, "patch", "deployment", "scaled", "--subresource=scale", "--type", kind, "-p", patch)
        assert out.stdout.strip() == "scale.autoscaling/scaled patched", kind
        assert replicas() == wanted, kind
    refused = kubectl(served, "patch", "deployment", "scaled", "--subresource=scale", "-p",
                      '{"spec":{"replicas":-1}}', check=False)
    assert refused.returncode == 1
    assert 'The Scale "scaled" is invalid: spec.replicas: Invalid value: -1' in refused.stderr
    table = kubectl(served, "get", "deployment", "scaled", "--subresource=scale").stdout.splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "AVAILABLE", "AGE"] and table[1].split()[:2] == ["scaled", "0"]
    kubectl(served, "delete", "-f", str(manifest))


def example_objects() -> list[str]:
    """What `kubectl apply -f examples/` reports for each object of the top level, e.g. "deployment.apps/web"."""
    def group(api_version: str) -> str:  # kubectl names the core group's kinds without one
        return "." + api_version.split("/")[0] if "/" in api_version else ""

    return sorted(f"{doc['kind'].lower()}{group(doc['apiVersion'])}/{doc['metadata']['name']}"
                  for path in sorted(EXAMPLES.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc)


def test_the_examples_apply_in_one_kubectl_apply_and_roll_out_on_three_nodes(tmp_path: Path) -> None:
    """`kmodel serve --nodes 3`, then `kubectl apply -f examples/` (not recursive: the top level, a small
    application) creates every object, `kubectl rollout status deployment/web` succeeds, the StatefulSet's pods
    come up, and `kubectl get pods -o wide` shows each pod with an IP from its node's podCIDR."""
    for served in serve(tmp_path, speed=5.0):
        applied = kubectl(served, "apply", "-f", str(EXAMPLES))
        assert sorted(line.rsplit(" ", 1)[0] for line in applied.stdout.splitlines()) == example_objects()
        assert all(line.endswith(" created") for line in applied.stdout.splitlines()) and applied.stderr == ""
        rolled = kubectl(served, "rollout", "status", "deployment/web", "--timeout=60s")
        assert 'deployment "web" successfully rolled out' in rolled.stdout
        kubectl(served, "rollout", "status", "statefulset/web", "--timeout=60s")
        kubectl(served, "rollout", "status", "deployment/storefront", "--timeout=60s")
        kubectl(served, "rollout", "status", "deployment/cart", "-n", "shop", "--timeout=60s")
        nodes = json.loads(kubectl(served, "get", "nodes", "-o", "json").stdout)["items"]
        cidrs = {n["metadata"]["name"]: ipaddress.ip_network(n["spec"]["podCIDR"]) for n in nodes}
        assert sorted(cidrs) == ["node-1", "node-2", "node-3"]
        wide = kubectl(served, "get", "pods", "-A", "-o", "wide").stdout.splitlines()
        assert wide[0].split()[:8] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
        rows = [line.split() for line in wide[1:]]
        names = {(row[0], row[1]) for row in rows}
        assert {("default", f"web-{i}") for i in range(3)} <= names  # the StatefulSet's pods
        # the Deployment web's pods (web-<template hash>-<suffix>)
        assert len([n for ns, n in names if ns == "default" and n.startswith("web-") and n.count("-") == 2]) == 3
        for row in rows:
            ip, node = row[6], row[7]
            assert row[3] == "Running" and ipaddress.ip_address(ip) in cidrs[node], row


def test_forbidden_user_and_invalid_manifest(served: Any, tmp_path: Path) -> None:
    forbidden = kubectl(served, "get", "pods", check=False, user="bob")
    assert forbidden.returncode == 1 and "Error from server (Forbidden)" in forbidden.stderr
    assert 'User "bob" cannot list resource "pods"' in forbidden.stderr
    # the admin impersonating bob meets bob's RBAC; bob may not impersonate anyone
    as_bob = kubectl(served, "--as", "bob", "get", "pods", check=False)
    assert as_bob.returncode == 1 and 'User "bob" cannot list resource "pods"' in as_bob.stderr
    bob_as_admin = kubectl(served, "--as", "admin", "get", "pods", check=False, user="bob")
    assert bob_as_admin.returncode == 1
    assert 'users "admin" is forbidden: User "bob" cannot impersonate resource "users"' in bob_as_admin.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    invalid = kubectl(served, "apply", "-f", str(bad), check=False)
    assert invalid.returncode == 1 and "is invalid" in invalid.stderr and "metadata.name" in invalid.stderr
