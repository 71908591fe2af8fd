"""Secrets, ServiceAccounts and their tokens, Jobs and `kubectl auth can-i` against `kmodel serve`, with kubectl and
the official Python client. kubectl 1.32 sends `create secret generic`, `create job`, `create serviceaccount`,
`create token` and `auth can-i` as protobuf; the server reads the built-in kinds', the TokenRequest's and the
SelfSubjectAccessReview's (authentication.k8s.io/v1 and authorization.k8s.io/v1 are vendored; `create token` is
tested in test_tokens.py). The creates also go through `-o json --dry-run=client | kubectl create -f -` here, and
the review is posted as JSON too (docs/serve.md)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from .kube_client import api_client, eventually, raw
from .test_kubectl import KUBECTL, MIN_MINOR, kubectl, kubectl_minor

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

needs_kubectl = pytest.mark.skipif(kubectl_minor() < MIN_MINOR, reason=f"needs kubectl 1.{MIN_MINOR} or later")


def piped(served: Any, *create: str) -> subprocess.CompletedProcess:
    """kubectl create ... -o json --dry-run=client | kubectl create -f - (the JSON route past protobuf)."""
    manifest = kubectl(served, "create", *create, "-o", "json", "--dry-run=client").stdout
    return subprocess.run([KUBECTL, "--kubeconfig", str(served.kubeconfig), "create", "-f", "-"], input=manifest,
                          capture_output=True, text=True, timeout=60)


@needs_kubectl
def test_kubectl_creates_a_secret_and_lists_it_with_upstreams_columns(served: Any) -> None:
    assert piped(served, "secret", "generic", "s", "--from-literal=p=q").stdout.strip() == "secret/s created"
    assert kubectl(served, "get", "secret", "s", "-o", "jsonpath={.data.p}").stdout == "cQ=="
    table = kubectl(served, "get", "secrets").stdout.splitlines()
    assert table[0].split() == ["NAME", "TYPE", "DATA", "AGE"] and table[1].split()[:3] == ["s", "Opaque", "1"]
    direct = kubectl(served, "create", "secret", "generic", "t", "--from-literal=p=q")  # sent as protobuf
    assert direct.stdout.strip() == "secret/t created"
    assert kubectl(served, "get", "secret", "t", "-o", "jsonpath={.data.p}").stdout == "cQ=="


@needs_kubectl
def test_kubectl_creates_a_job_that_completes(served: Any) -> None:
    assert piped(served, "job", "j", "--image=busybox").stdout.strip() == "job.batch/j created"
    kubectl(served, "wait", "--for=condition=complete", "job/j", "--timeout=60s")
    row = kubectl(served, "get", "jobs", "j").stdout.splitlines()
    assert row[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row[1].split()[:3] == ["j", "Complete", "1/1"]
    pods = json.loads(kubectl(served, "get", "pods", "-l", "job-name=j", "-o", "json").stdout)["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]


def test_a_self_subject_access_review_answers_what_kubectl_auth_can_i_asks(served: Any) -> None:
    """kubectl auth can-i sends its review as protobuf; the JSON review it stands for is answered."""
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "secrets", "namespace": "default"}}}
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    for user, allowed in (("admin", True), ("bob", False)):
        code, text = raw(served, "POST", path, body=body, user=user)
        assert code == 201 and json.loads(text)["status"]["allowed"] is allowed


@needs_kubectl
def test_kubectl_auth_can_i_is_answered_from_its_protobuf_review(served: Any) -> None:
    for user, answer in (("admin", "yes"), ("bob", "no")):
        asked = kubectl(served, "auth", "can-i", "get", "secrets", check=False, user=user)
        assert asked.stdout.strip() == answer, asked.stderr


def test_a_service_account_token_from_the_python_client_authenticates_as_the_service_account(served: Any) -> None:
    core = client.CoreV1Api(api_client(served.kubeconfig))
    core.create_namespaced_service_account("default", client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="robot")))
    answer = core.create_namespaced_service_account_token("robot", "default", client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)))
    token = answer.status.token
    assert token and answer.status.expiration_timestamp is not None
    assert not token.startswith("eyJ")  # the client holds a token of this run, never the model's
    cfg = api_client(served.kubeconfig).configuration
    cfg.api_key, cfg.refresh_api_key_hook = {"BearerToken": f"Bearer {token}"}, None
    robot = client.CoreV1Api(client.ApiClient(cfg))
    with pytest.raises(ApiException) as refused:
        robot.list_namespaced_pod("default")
    assert refused.value.status == 403
    assert 'User "system:serviceaccount:default:robot" cannot list resource "pods"' in \
        json.loads(refused.value.body)["message"]
    assert eventually(lambda: core.read_namespaced_service_account("default", "default"))  # the controller's


def test_a_job_from_the_python_client_counts_its_pods(served: Any) -> None:
    batch = client.BatchV1Api(api_client(served.kubeconfig))
    template = client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy="Never", containers=[
        client.V1Container(name="c", image="busybox")]))
    batch.create_namespaced_job("default", client.V1Job(metadata=client.V1ObjectMeta(name="pair"),
                                                        spec=client.V1JobSpec(completions=2, parallelism=2,
                                                                              template=template)))
    done = eventually(lambda: (j := batch.read_namespaced_job("pair", "default")).status.succeeded == 2 and j,
                      timeout=40)
    assert done and [c.type for c in done.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    assert done.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": done.metadata.uid}
