"""service-reachability: holds on the default model once settled, and catches a request that reaches no ready
pod of its Service (a kube-proxy that is down keeps stale rules; a client that kept a pod's IP)."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Scale
from kmodel.invariants.registry import LIVENESS, REGISTRY

S = 1000


def check(cluster: Cluster) -> list[str]:
    return list(REGISTRY["service-reachability"].check(cluster, {}))


def web(variant: str = "default", replicas: int = 2) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=3, variant=variant))
    cluster.run(15 * S)
    cluster.submit(Apply(deployment_manifest("web", replicas, 0, False)))
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 30 * S)
    return cluster


def test_it_is_registered_as_a_liveness_invariant_of_the_network_model():
    inv = REGISTRY["service-reachability"]
    assert inv.kind == LIVENESS and inv.principle == "network model"
    assert inv.guarantee.startswith("Every request an in-cluster client sends to a Service that has ready pods")


def test_it_holds_on_the_default_model_through_scaling_and_a_rolling_update():
    cluster = web()
    assert check(cluster) == []
    cluster.submit(Scale("deployments", "default", "web", 4))
    cluster.run(cluster.now + 30 * S)
    assert check(cluster) == []
    cluster.submit(Apply(deployment_manifest("web", 4, 500, False)))
    cluster.run(cluster.now + 60 * S)
    assert check(cluster) == []
    assert cluster.loop.components["traffic/node-1"].last["default/web"].ok


def test_a_service_without_ready_pods_or_without_a_service_asks_nothing():
    cluster = web(replicas=0)
    assert check(cluster) == []  # web has no pods
    cluster.submit(Apply(deployment_manifest("api", 1, 0, False)))
    cluster.run(cluster.now + 20 * S)
    assert check(cluster) == []  # api has ready pods but no Service


def test_it_catches_stale_rules_of_a_kube_proxy_that_is_down_and_holds_again_once_it_is_back():
    cluster = web(replicas=1)
    cluster.crash("proxy/node-1")
    cluster.submit(Apply(deployment_manifest("web", 1, 500, False)))  # the pod is replaced
    cluster.run(cluster.now + 60 * S)
    [message] = check(cluster)
    assert message.startswith("traffic/node-1's request to service default/web goes to ")
    assert "(via service), where no running pod answers, though 1 of its pods are ready" in message
    cluster.restart("proxy/node-1")
    cluster.run(cluster.now + 5 * S)
    assert check(cluster) == []


def test_it_catches_a_request_that_goes_nowhere_though_pods_are_ready():
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.run(15 * S)
    cluster.crash("proxy/node-1")  # down before the Service exists: node-1 never gets its rules
    cluster.submit(Apply(deployment_manifest("web", 1, 0, False)))
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 30 * S)
    [message] = check(cluster)
    assert "goes nowhere (no such service), though 1 of its pods are ready" in message


def test_it_catches_the_hardcoded_pod_ip_client_once_the_remembered_pod_is_gone():
    cluster = web("hardcoded-pod-ip", replicas=1)
    assert check(cluster) == []  # the remembered pod is still there
    cluster.submit(Scale("deployments", "default", "web", 0))
    cluster.run(cluster.now + 30 * S)
    assert check(cluster) == []  # no ready pods: nothing to reach
    cluster.submit(Scale("deployments", "default", "web", 2))
    cluster.run(cluster.now + 30 * S)
    [message] = check(cluster)
    assert "(via pod-ip), where no running pod answers, though 2 of its pods are ready" in message


def test_a_client_that_is_down_is_not_judged():
    cluster = web("hardcoded-pod-ip", replicas=1)
    cluster.submit(Apply(deployment_manifest("web", 1, 500, False)))
    cluster.run(cluster.now + 60 * S)
    assert check(cluster)
    cluster.crash("traffic/node-1")
    assert check(cluster) == []
    cluster.restart("traffic/node-1")  # a restarted client resolves again
    cluster.run(cluster.now + 5 * S)
    assert check(cluster) == []


def test_a_static_pod_behind_a_service_is_reached_under_its_static_uid_and_counts_as_its_mirror_pod():
    from kmodel.objects import Container, ObjectMeta, Pod, PodSpec, frozen_map

    static = Pod(metadata=ObjectMeta(name="web", namespace="default", labels=frozen_map({"app": "web"})),
                 spec=PodSpec(containers=(Container(name="app", image="nginx"),)))
    cluster = Cluster(ClusterConfig(nodes=2, static_pods=(("node-2", (static,)),)))
    cluster.run(15 * S)
    cluster.submit(Apply(service_manifest("web")))
    cluster.run(cluster.now + 30 * S)
    mirror = cluster.get("pods", "default", "web-node-2")
    assert mirror.status.pod_ip and mirror.metadata.annotations["kubernetes.io/config.mirror"]
    reached = cluster.loop.components["traffic/node-1"].last["default/web"].reached
    assert reached.name == "web-node-2" and reached.uid != mirror.metadata.uid
    assert check(cluster) == []
