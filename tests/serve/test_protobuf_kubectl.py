"""kubectl's protobuf bodies against `kmodel serve`: the `kubectl create <kind>` generators and `kubectl drain`
send protobuf (client-go's typed clients), and what they create or delete is what a real cluster shows. The
Secret and Job tests run once the server serves those kinds."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from kmodel.apiserver.resources import RESOURCES
from tests.serve import test_kubectl
from tests.serve.test_kubectl import kubectl

pytestmark = test_kubectl.pytestmark
#: what kubectl -v=8 logs of a request whose body is protobuf
PROTOBUF_BODY = "Content-Type: application/vnd.kubernetes.protobuf"


def test_create_deployment_sends_protobuf_and_rolls_out(served: Any) -> None:
    created = kubectl(served, "create", "deployment", "hello", "--image=nginx", "-v=8")
    assert PROTOBUF_BODY in created.stderr
    assert created.stdout.strip() == "deployment.apps/hello created"
    kubectl(served, "rollout", "status", "deployment/hello", "--timeout=60s")
    table = kubectl(served, "get", "deployment", "hello").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["hello", "1/1", "1", "1"]
    got = json.loads(kubectl(served, "get", "deployment", "hello", "-o", "json").stdout)
    assert got["metadata"]["labels"] == {"app": "hello"}
    assert got["spec"]["selector"] == {"matchLabels": {"app": "hello"}}
    assert got["spec"]["replicas"] == 1
    [container] = got["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nginx", "nginx")


def test_create_configmap_sends_protobuf(served: Any) -> None:
    created = kubectl(served, "create", "configmap", "cm", "--from-literal=a=b", "-v=8")
    assert PROTOBUF_BODY in created.stderr
    assert created.stdout.strip() == "configmap/cm created"
    table = kubectl(served, "get", "configmap", "cm").stdout.splitlines()
    assert table[0].split() == ["NAME", "DATA", "AGE"]
    assert table[1].split()[:2] == ["cm", "1"]
    got = json.loads(kubectl(served, "get", "configmap", "cm", "-o", "json").stdout)
    assert got["data"] == {"a": "b"} and "binaryData" not in got


def test_create_namespace_and_role_send_protobuf(served: Any) -> None:
    assert kubectl(served, "create", "namespace", "team").stdout.strip() == "namespace/team created"
    created = kubectl(served, "create", "role", "reader", "--verb=get,list", "--resource=pods", "-n", "team")
    assert created.stdout.strip() == "role.rbac.authorization.k8s.io/reader created"
    rules = json.loads(kubectl(served, "get", "role", "reader", "-n", "team", "-o", "json").stdout)["rules"]
    assert rules == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]


def test_drain_deletes_the_nodes_pods_with_a_protobuf_body(served: Any) -> None:
    kubectl(served, "create", "deployment", "drained", "--image=nginx", "--replicas=3")
    kubectl(served, "rollout", "status", "deployment/drained", "--timeout=60s")
    pods = json.loads(kubectl(served, "get", "pods", "-l", "app=drained", "-o", "json").stdout)["items"]
    node = pods[0]["spec"]["nodeName"]
    drained = kubectl(served, "drain", node, "--ignore-daemonsets", "--force", "--timeout=60s", "-v=8")
    deletes = drained.stderr.split("] DELETE ")[1:]
    assert deletes and all(PROTOBUF_BODY in d.split("] Response Status")[0] for d in deletes)
    assert f"node/{node} drained" in drained.stdout
    assert f"node/{node} cordoned" in drained.stdout
    kubectl(served, "rollout", "status", "deployment/drained", "--timeout=60s")
    after = json.loads(kubectl(served, "get", "pods", "-A", "-o", "json").stdout)["items"]
    assert not [p for p in after if p["spec"].get("nodeName") == node and not p["metadata"].get("deletionTimestamp")]
    assert json.loads(kubectl(served, "get", "node", node, "-o", "json").stdout)["spec"]["unschedulable"] is True


@pytest.mark.skipif("secrets" not in RESOURCES, reason="the server serves no Secrets yet")
def test_create_secret_generic_sends_protobuf(served: Any) -> None:
    created = kubectl(served, "create", "secret", "generic", "s", "--from-literal=p=q", "-v=8")
    assert PROTOBUF_BODY in created.stderr
    assert created.stdout.strip() == "secret/s created"
    got = json.loads(kubectl(served, "get", "secret", "s", "-o", "json").stdout)
    assert (got["type"], got["data"]) == ("Opaque", {"p": base64.b64encode(b"q").decode()})


@pytest.mark.skipif("jobs" not in RESOURCES, reason="the server serves no Jobs yet")
def test_create_job_sends_protobuf(served: Any) -> None:
    created = kubectl(served, "create", "job", "j", "--image=busybox", "-v=8")
    assert PROTOBUF_BODY in created.stderr
    assert created.stdout.strip() == "job.batch/j created"
    got = json.loads(kubectl(served, "get", "job", "j", "-o", "json").stdout)
    [container] = got["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("j", "busybox")
    assert got["spec"]["template"]["spec"]["restartPolicy"] == "Never"
