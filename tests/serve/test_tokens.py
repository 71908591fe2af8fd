"""`kubectl create token` and `kubectl auth whoami` against `kmodel serve`: kubectl 1.32 sends the TokenRequest and
the SelfSubjectReview as protobuf (authentication.k8s.io/v1 is vendored); the token it prints authenticates as the
ServiceAccount, whom RBAC then refuses or allows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .kube_client import grant, raw
from .test_kubectl import kubectl, kubectl_minor

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client  # noqa: E402

pytestmark = pytest.mark.skipif(kubectl_minor() < 28, reason="kubectl auth whoami needs kubectl 1.28 or later")
ROBOT = "system:serviceaccount:default:default"


def test_kubectl_create_token_prints_a_token_that_acts_as_the_service_account(served: Any) -> None:
    token = kubectl(served, "create", "token", "default").stdout.strip()
    assert token and "\n" not in token
    whoami = json.loads(kubectl(served, f"--token={token}", "auth", "whoami", "-o", "json").stdout)
    assert whoami["kind"] == "SelfSubjectReview" and whoami["status"]["userInfo"]["username"] == ROBOT
    assert "system:serviceaccounts" in whoami["status"]["userInfo"]["groups"]
    refused = kubectl(served, f"--token={token}", "get", "configmaps", check=False)
    assert refused.returncode == 1
    assert f'User "{ROBOT}" cannot list resource "configmaps"' in refused.stderr
    grant(served, "read-configmaps", client.RbacV1Subject(kind="ServiceAccount", name="default", namespace="default"),
          client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["list"]))
    assert kubectl(served, f"--token={token}", "get", "configmaps").returncode == 0


def test_kubectl_auth_whoami_names_the_contexts_user(served: Any) -> None:
    table = kubectl(served, "auth", "whoami", user="alice").stdout.splitlines()
    assert table[0].split() == ["ATTRIBUTE", "VALUE"] and table[1].split() == ["Username", "alice"]


def test_a_self_subject_review_posted_as_json_answers_who_the_requester_is(served: Any) -> None:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}}
    code, text = raw(served, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=body, user="bob")
    assert code == 201 and json.loads(text)["status"]["userInfo"] == {
        "username": "bob", "groups": ["system:authenticated"]}
    listed = [r["name"] for r in json.loads(raw(served, "GET", "/apis/authentication.k8s.io/v1")[1])["resources"]]
    assert listed == ["selfsubjectreviews"]
