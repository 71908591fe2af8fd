"""Each invariant that used to share logic with the component it judges now computes its verdict itself: a
mistake planted in that component's logic (monkeypatched, subtly wrong as a real bug would be) is caught, and the
invariant holds on the same scenario with the logic as it is. (tests/invariants/test_oracle_imports.py keeps
invariants/ from importing such logic again.)"""

from __future__ import annotations

from kmodel.invariants._history import condition
from kmodel.invariants.registry import REGISTRY
from kmodel.checker.fault_actions import probed_kubelet
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Patch
from kmodel.controllers import deployment_logic, endpoints_logic

from tests.invariants.test_invariants import manifest

S = 1000


def check(cluster: Cluster, name: str) -> list[str]:
    return list(REGISTRY[name].check(cluster, {}))


# -- converges-endpoints: the Endpoints controller's subsets ----------------------------------------------------

def _a_pod_of_the_web_service_failing_readiness() -> tuple[Cluster, str]:
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    pod = cluster.get("pods", "default", min(p.metadata.name for p in cluster.objects("pods", "default")))
    kubelet = probed_kubelet(cluster, pod.spec.node_name, pod.metadata.name, "web", "readiness")
    kubelet.fail_probe("default", pod.metadata.name, "web", "readiness")
    cluster.run(cluster.now + 30 * S)
    pod = cluster.get("pods", "default", pod.metadata.name)
    assert pod.status.phase == "Running" and condition(pod, "Ready").status == "False"
    return cluster, pod.metadata.uid


def _listed(cluster: Cluster) -> tuple[list[str], list[str]]:
    subsets = cluster.get("endpoints", "default", "storefront").subsets
    return ([a.target_ref.uid for s in subsets for a in s.addresses],
            [a.target_ref.uid for s in subsets for a in s.not_ready_addresses])


def test_converges_endpoints_holds_with_a_running_pod_that_is_not_ready():
    cluster, uid = _a_pod_of_the_web_service_failing_readiness()
    assert uid in _listed(cluster)[1]
    assert check(cluster, "converges-endpoints") == []


def test_converges_endpoints_catches_a_controller_that_takes_running_for_ready(monkeypatch):
    # the mistake: a pod counted ready once it is Running, whatever its Ready condition says
    monkeypatch.setattr(endpoints_logic, "is_pod_ready", lambda pod: pod.status.phase == "Running")
    cluster, uid = _a_pod_of_the_web_service_failing_readiness()
    assert uid in _listed(cluster)[0]  # the mutant lists it among the ready addresses
    [found] = check(cluster, "converges-endpoints")
    assert found.startswith("service default/storefront has Endpoints")
    assert found.endswith("not what its 3 selected pods imply")


# -- converges-replicas: the Deployment controller's new ReplicaSet ---------------------------------------------

def _web_with_a_template_label_added() -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    labels = {"app": "storefront", "tier": "web"}  # the selector (app) still matches: a new template, a rollout
    template = {"metadata": {"labels": labels}}
    cluster.submit(Patch("deployments", "default", "storefront", {"spec": {"template": template}}))
    cluster.run(cluster.now + 120 * S)
    return cluster


def test_converges_replicas_holds_once_a_template_change_rolled_out():
    cluster = _web_with_a_template_label_added()
    assert check(cluster, "converges-replicas") == []
    assert {p.metadata.labels.get("tier") for p in cluster.objects("pods", "default")} == {"web"}


def test_converges_replicas_catches_a_controller_that_compares_only_the_templates_specs(monkeypatch):
    # the mistake: EqualIgnoreHash comparing the pod specs only, so a change of the template's labels finds the
    # old ReplicaSet as the new one and rolls nothing out, while the status says every replica is updated
    monkeypatch.setattr(deployment_logic, "equal_ignore_hash", lambda t1, t2: t1.spec == t2.spec)
    cluster = _web_with_a_template_label_added()
    assert {p.metadata.labels.get("tier") for p in cluster.objects("pods", "default")} == {None}
    [found] = check(cluster, "converges-replicas")
    assert found.startswith("deployment default/storefront has rolled out 3 replicas in ReplicaSet storefront-")
    assert "whose pod template is not the Deployment's (its new ReplicaSet is missing)" in found
