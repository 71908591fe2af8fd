"""The checker's server-side applies: ApplyDeployment(server_side=True) is kubectl apply --server-side, so its
fields are owned by the manager "kubectl", and what another manager (a client-side apply) owns conflicts."""

from __future__ import annotations

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment, ScaleDeployment
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.objects import dump


def managers(cluster: Cluster) -> dict[str, str]:
    obj = cluster.get("deployments", "default", "web")
    return {m["manager"]: m["operation"] for m in dump(obj)["metadata"].get("managedFields", [])}


def run(cluster: Cluster, action, ms: int = 5_000):
    before = len(cluster.kubectl.results)
    action.apply(cluster)
    cluster.run_for(ms)
    return cluster.kubectl.results[before:]


def test_a_server_side_apply_conflicts_with_a_client_side_apply_of_another_value() -> None:
    cluster = Cluster(ClusterConfig(nodes=1))
    [created] = run(cluster, ApplyDeployment("web", 2, server_side=True))
    assert created.ok and created.response.code == 201
    assert managers(cluster) == {"kubectl": "Apply"}
    [same] = run(cluster, ApplyDeployment("web", 2, server_side=True))
    assert same.ok
    [client_side] = run(cluster, ApplyDeployment("web", 3))
    assert client_side.ok and managers(cluster) == {"kubectl": "Apply", "kubectl-client-side-apply": "Update"}
    [refused] = run(cluster, ApplyDeployment("web", 1, server_side=True))
    assert refused.response.code == 409
    assert refused.response.body.message == ('Apply failed with 1 conflict: conflict with '
                                             '"kubectl-client-side-apply" using apps/v1: .spec.replicas')
    [scaled] = run(cluster, ScaleDeployment("web", 4))
    assert scaled.ok and "kubectl-scale" in managers(cluster)
    assert cluster.get("deployments", "default", "web").spec.replicas == 4


def test_the_flag_reads_in_the_action_name_and_its_json() -> None:
    action = ApplyDeployment("web", 2, server_side=True)
    assert action.name == "kubectl apply --server-side deployment web (2 replicas)"
    assert action_from_json(action.to_json()) == action
    older = {k: v for k, v in ApplyDeployment("web", 2).to_json().items() if k != "server_side"}
    assert action_from_json(older) == ApplyDeployment("web", 2)  # a trace written before the flag still reads
