"""Resources that cannot be overcommitted (extended resources, such as a device plugin's `example.com/dongle`):
the API server refuses a container that requests one without a limit (ValidateResourceRequirements' "Limit must be
set for non overcommitable resources"), refuses a request unequal to the limit, and takes a limit alone, whose
value becomes the request (a Pod's defaults); cpu, memory and ephemeral storage may be requested without a limit."""

from __future__ import annotations

from typing import Optional

import pytest

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Raw


def pod(name: str, requests: Optional[dict] = None, limits: Optional[dict] = None) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": resources}]}}


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(ClusterConfig(nodes=1))
    c.run_for(5_000)
    return c


def create(cluster: Cluster, body: dict) -> tuple[int, str]:
    before = len(cluster.kubectl.results)
    cluster.submit(Raw("create", "pods", "default", body=body))
    cluster.run_for(1_000)
    [result] = cluster.kubectl.results[before:]
    return result.response.code, getattr(result.response.body, "message", "")


def test_an_extended_resource_requested_without_a_limit_is_refused(cluster):
    assert create(cluster, pod("a", requests={"example.com/dongle": "1"})) == (
        422, 'Pod "a" is invalid: spec.containers[0].resources.limits: '
             'Required value: Limit must be set for non overcommitable resources')


def test_an_extended_resource_limit_alone_becomes_its_request(cluster):
    assert create(cluster, pod("b", limits={"example.com/dongle": "2"}))[0] == 201
    [container] = cluster.get("pods", "default", "b").spec.containers
    assert str(container.resources.requests["example.com/dongle"]) == "2"
    assert create(cluster, pod("c", requests={"example.com/dongle": "1"}, limits={"example.com/dongle": "2"})) == (
        422, 'Pod "c" is invalid: spec.containers[0].resources.requests: '
             'Invalid value: "1": must be equal to example.com/dongle limit of 2')


def test_native_resources_may_be_requested_without_a_limit(cluster):
    assert create(cluster, pod("d", requests={"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}))[0] == 201
