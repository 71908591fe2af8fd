"""A real operator against `kmodel serve`: kopf (`kopf run --standalone`, its own process) reconciles a custom
resource to completion, then again after every outside client's connection was partitioned for a logical minute
while the object changed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kopf")
kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client  # noqa: E402

from kmodel.cluster.kubectl import Patch  # noqa: E402

from .kube_client import api_client, eventually  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OPERATOR = Path(__file__).with_name("kopf_operator.py")
SPEED = 10.0  # the fast_served fixture's (conftest.py)


def test_kopf_converges_and_converges_again_after_a_partition(fast_served: Any) -> None:
    fast = fast_served
    api = api_client(fast.kubeconfig)
    crd = yaml.safe_load((EXAMPLES / "crd.yaml").read_text())
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    custom = client.CustomObjectsApi(api)
    assert eventually(lambda: any(g.name == "example.com" for g in client.ApisApi(api).get_api_versions().groups), 30)
    env = {**os.environ, "KUBECONFIG": str(fast.kubeconfig)}
    kopf = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "-n", "default", str(OPERATOR)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        database = yaml.safe_load((EXAMPLES / "objects" / "database.yaml").read_text())
        created = custom.create_namespaced_custom_object("example.com", "v1", "default", "databases", database)
        assert created["metadata"]["resourceVersion"]

        def reconciled(replicas: int) -> bool:
            obj = custom.get_namespaced_custom_object("example.com", "v1", "default", "databases", "orders")
            return obj.get("status", {}).get("phase") == "Ready" and obj["status"].get("replicas") == replicas \
                and obj["metadata"]["annotations"].get("example.com/reconciled-replicas") == str(replicas)

        assert eventually(lambda: reconciled(2), 60), "kopf did not reconcile the new Database"
        session = fast.session
        code, answer = session.control("admin-token", {"action": "partition", "target": "http-clients"})
        assert code == 200, answer
        # meanwhile a user inside the cluster changes the object (the model's own kubectl is not cut off)
        session.model.call(lambda: session.cluster.submit(
            Patch("databases", "default", "orders", {"spec": {"replicas": 4}})))
        time.sleep(60 / SPEED)  # a logical minute
        assert session.control("admin-token", {"action": "heal", "target": "http-clients"})[0] == 200
        assert eventually(lambda: reconciled(4), 60), "kopf did not reconcile the change made during the partition"
    finally:
        kopf.send_signal(signal.SIGINT)
        try:
            output = kopf.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            kopf.kill()
            output = kopf.communicate()[0]
    assert "Handler 'reconcile' succeeded" in output
    assert "Traceback" not in output, output
