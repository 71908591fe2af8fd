"""converges-endpoints owes no Endpoints to a Service that a finalizer keeps in a Terminating namespace: the
NamespaceLifecycle admission plugin refuses the endpoints controller's create there. Anywhere else a Service
without Endpoints is still a failure."""

from __future__ import annotations

from kmodel.cluster import DEFAULT_COMPONENTS, Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.invariants.registry import REGISTRY

from tests.invariants.test_invariants import call

S = 1000


def _service(namespace: str, finalizers: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "shop", "namespace": namespace, "finalizers": finalizers},
            "spec": {"selector": {"app": "shop"}, "ports": [{"port": 80, "targetPort": 80}]}}


def check(cluster: Cluster) -> list[str]:
    return list(REGISTRY["converges-endpoints"].check(cluster, {}))


def test_a_held_service_of_a_terminating_namespace_is_owed_no_endpoints():
    cluster = Cluster(ClusterConfig(nodes=1))
    assert call(cluster, "create", "namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": "team"}}).code == 201
    assert call(cluster, "create", "services", "team", body=_service("team", ["example.com/hold"])).code == 201
    cluster.run(cluster.now + 10 * S)
    assert cluster.get("endpoints", "team", "shop") is not None and check(cluster) == []
    cluster.submit(Delete("namespaces", "", "team"))
    cluster.run(cluster.now + 60 * S)
    held = cluster.get("services", "team", "shop")
    assert held is not None and held.metadata.deletion_timestamp is not None
    assert cluster.get("endpoints", "team", "shop") is None  # the namespace controller deleted it
    assert check(cluster) == []


def test_a_service_of_a_live_namespace_without_endpoints_still_fails():
    no_endpoints = tuple(c for c in DEFAULT_COMPONENTS if c != "endpoints")
    cluster = Cluster(ClusterConfig(nodes=1, components=no_endpoints))
    assert call(cluster, "create", "services", "default", body=_service("default", [])).code == 201
    cluster.run(cluster.now + 10 * S)
    assert check(cluster) == ["service default/shop has no Endpoints, not what its 0 selected pods imply"]
