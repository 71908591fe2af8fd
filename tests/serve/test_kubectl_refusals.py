"""kubectl meeting what the model cannot do, each with one clear message: logs, exec, attach and port-forward say
the model runs no containers; explain says the kind has no schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.serve import test_kubectl
from tests.serve.test_kubectl import WEB, kubectl

pytestmark = test_kubectl.pytestmark


@pytest.fixture(scope="module")
def pod(served: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A running pod of Deployment web, scaled to one."""
    manifest = tmp_path_factory.mktemp("refusals") / "web.yaml"
    manifest.write_text(WEB.replace("replicas: 3", "replicas: 1").replace("name: web\nspec", "name: one\nspec"))
    kubectl(served, "apply", "-f", str(manifest))
    kubectl(served, "rollout", "status", "deployment/one", "--timeout=60s")
    pods = json.loads(kubectl(served, "get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return next(p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith("one-"))


def no_containers(node: str, pod: str, nothing: str) -> str:
    return f"kmodel serve: the model's kubelet on node {node} runs no containers, so pod {pod} has {nothing}"


def node_of(served: Any, pod: str) -> str:
    return json.loads(kubectl(served, "get", "pod", pod, "-o", "json").stdout)["spec"]["nodeName"]


def test_logs_exec_attach_say_the_model_runs_no_containers(served: Any, pod: str) -> None:
    node = node_of(served, pod)
    for args, nothing in ((("logs", pod), "no container logs"), (("exec", pod, "--", "ls"), "no container to exec in"),
                          (("attach", pod), "no container to attach to")):
        result = kubectl(served, *args, check=False)
        assert result.returncode == 1
        assert result.stderr.strip().splitlines()[-1] == f"Error from server: {no_containers(node, pod, nothing)}"


def test_port_forward_says_the_model_runs_no_containers(served: Any, pod: str) -> None:
    result = kubectl(served, "port-forward", pod, "0:80", check=False)
    assert result.returncode == 1
    expected = no_containers(node_of(served, pod), pod, "no container to forward ports to")
    assert result.stderr.strip() == f"error: error upgrading connection: {expected}"


def test_the_pod_s_checks_come_first(served: Any, pod: str) -> None:
    other = kubectl(served, "logs", pod, "-c", "other", check=False)
    assert other.stderr.strip() == f"error: container other is not valid for pod {pod}"
    missing = kubectl(served, "logs", "nosuch", check=False)
    assert missing.stderr.strip() == 'error: error from server (NotFound): pods "nosuch" not found in namespace "default"'
    forbidden = kubectl(served, "logs", pod, check=False, user="bob")
    assert f'pods "{pod}" is forbidden: User "bob" cannot get resource "pods"' in forbidden.stderr


def test_explain_fails_with_one_line_naming_the_kind(served: Any) -> None:
    result = kubectl(served, "explain", "deployments.spec", check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: GVK map[group:apps kind:Deployment version:v1] not found in OpenAPI schema"
