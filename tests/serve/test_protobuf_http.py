"""Protobuf over HTTP: a built-in kind's create, update and delete bodies may be protobuf (answered in JSON), a
custom resource's are 415 as upstream answers, and a client that accepts protobuf only is answered 406."""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from kmodel.serve.protobuf import MEDIA_TYPE
from kmodel.serve.session import ServeSession
from tests.serve.test_protobuf import protobuf_body
from tests.serve.test_robust_http import CONFIGMAPS, Connection, assert_status, assert_still_serving, session  # noqa: F401

PROTOBUF = f"Content-Type: {MEDIA_TYPE}\r\n"
CRD = Path(__file__).resolve().parents[2] / "examples" / "crd.yaml"


def configmap(name: str, data: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_create_update_and_delete_with_protobuf_bodies(session: ServeSession) -> None:
    conn = Connection(session)
    conn.request("POST", CONFIGMAPS, protobuf_body(configmap("pb", {"a": "b"})), PROTOBUF)
    code, headers, created = conn.answer()
    assert code == 201 and headers["content-type"] == "application/json"
    assert (created["metadata"]["name"], created["data"]) == ("pb", {"a": "b"})
    updated = configmap("pb", {"a": "c"})
    updated["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    conn.request("PUT", CONFIGMAPS + "/pb", protobuf_body(updated), PROTOBUF)
    code, _, answer = conn.answer()
    assert code == 200 and answer["data"] == {"a": "c"}
    # a stale precondition in the protobuf DeleteOptions is honoured: 409, then a delete without one
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": "1"}}
    conn.request("DELETE", CONFIGMAPS + "/pb", protobuf_body(options), PROTOBUF)
    assert_status(conn.answer(), 409, "Conflict")
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    conn.request("DELETE", CONFIGMAPS + "/pb", protobuf_body(options), PROTOBUF)
    assert conn.answer()[0] == 200
    assert_still_serving(conn)
    conn.close()


def test_a_client_accepting_protobuf_only_is_not_acceptable(session: ServeSession) -> None:
    conn = Connection(session)
    conn.request("GET", CONFIGMAPS, headers=f"Accept: {MEDIA_TYPE}\r\n")
    assert_status(conn.answer(), 406, "NotAcceptable", "only the following media types are accepted: application/json")
    conn.request("GET", CONFIGMAPS, headers=f"Accept: {MEDIA_TYPE},application/json\r\n")  # kubectl's
    code, headers, listed = conn.answer()
    assert code == 200 and headers["content-type"] == "application/json" and listed["kind"] == "ConfigMapList"
    conn.close()


def test_a_custom_resource_takes_no_protobuf_body(session: ServeSession) -> None:
    conn = Connection(session)
    conn.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 json.dumps(yaml.safe_load(CRD.read_text())).encode(), "Content-Type: application/json\r\n")
    assert conn.answer()[0] == 201
    databases = "/apis/example.com/v1/namespaces/default/databases"
    deadline = time.monotonic() + 30
    while True:  # until the CRD is established and its resource served
        conn.request("GET", databases)
        if conn.answer()[0] == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    body = protobuf_body(configmap("not-a-database", {}))
    conn.request("POST", databases, body, PROTOBUF)
    assert_status(conn.answer(), 415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - accepted media types include: "
                  "application/json, application/yaml")
    assert_still_serving(conn)
    conn.close()
