"""no-overcommit as an independent oracle: it adds up what each running pod requests from the pod's spec and
what the node offers from its machine's configuration itself, so a mistake planted in the scheduler's request
arithmetic (which the kubelet's admission and the sandboxes' recorded requests share) is caught."""

from __future__ import annotations


from kmodel.invariants.registry import REGISTRY
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.kubelet import pod_worker
import importlib

from kmodel.scheduler import framework
from kmodel.scheduler.plugins import noderesources

schedule_one = importlib.import_module("kmodel.scheduler.schedule_one")

from tests.invariants.test_invariants import call

S = 1000


def _two_container_pod(name: str) -> dict:
    container = {"image": "nginx", "resources": {"requests": {"cpu": "300m"}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "a", **container}, {"name": "b", **container}]}}


def _three_pods_on_one_cpu() -> tuple[Cluster, list[str]]:
    """Three pods of 2 × 300m for a node of 1 cpu: one fits. The violations of no-overcommit after each second."""
    cluster = Cluster(ClusterConfig(nodes=1, node_cpu="1"))
    cluster.run(5 * S)
    memo: dict = {}
    for name in ("p1", "p2", "p3"):
        assert call(cluster, "create", "pods", "default", body=_two_container_pod(name)).code == 201
    found: list[str] = []
    for _ in range(30):
        cluster.run(cluster.now + S)
        found += REGISTRY["no-overcommit"].check(cluster, memo)
    return cluster, found


def test_no_overcommit_holds_when_the_scheduler_counts_every_container():
    cluster, found = _three_pods_on_one_cpu()
    assert found == []
    assert sorted(p.metadata.name for p in cluster.objects("pods", "default") if p.status.phase == "Running") == ["p1"]


def _first_container_only(pod):
    r = framework.Resource()
    r.add(pod.spec.containers[0].resources.requests)  # forgets every container but the first
    return r


def test_no_overcommit_catches_a_scheduler_and_kubelet_that_count_one_container(monkeypatch):
    for where in (framework, schedule_one, noderesources, pod_worker):
        monkeypatch.setattr(where, "pod_requests", _first_container_only)
    cluster, found = _three_pods_on_one_cpu()
    assert found[0] == ("node node-1 is overcommitted: cpu requests 1800m > allocatable 1000m (running default/p1, "
                        "default/p2, default/p3)")
