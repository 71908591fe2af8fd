"""Workload actions (kmodel/checker/workload_actions.py) and their rules: each action round-trips through JSON, does
on a small cluster what its kubectl command does, and its rule fires on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.actions import ApplyDeployment, ApplyService, DeleteObject
from kmodel.checker.action_json import action_from_json
from kmodel.checker.workload_actions import (
    INVALID_MANIFESTS, LABEL_ZONE, ApplyInvalid, ApplyPodShape, CordonNode, EditService, LabelNode, LabelPod,
    PauseDeployment, SetStrategy, TaintNodeAction, UndoRollout, pod_shape_manifest,
)
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import KUBECTL_ERROR
from kmodel.controllers.deployment_logic import REVISION_ANNOTATION

from tests.checker.conftest import SmallMachine

WORKLOAD_EXAMPLES = [
    LabelNode("node-1", LABEL_ZONE, "zone-a"), LabelNode("node-2", "disktype"),
    TaintNodeAction("node-1"), TaintNodeAction("node-2", effect="NoExecute", remove=True), CordonNode("node-1"),
    CordonNode("node-1", False), ApplyPodShape("debug-1", "", (5, 2, 3, 2)), ApplyPodShape("debug-2", "node-1"),
    LabelPod("web-abc-x"), LabelPod("web-abc-x", "web"), EditService("web", 1, 2), SetStrategy("api", 1),
    PauseDeployment("web"), PauseDeployment("web", False), UndoRollout("web"), UndoRollout("web", 2),
    ApplyInvalid(), ApplyInvalid(4, "node-1"),
]


@pytest.mark.parametrize("action", WORKLOAD_EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()


def test_bad_workload_actions_are_refused():
    for data, message in [
        ({"name": "apply-pod-shape", "pod": "p", "shape": [1, 2]}, "shape must be 4 whole numbers"),
        ({"name": "apply-pod-shape", "pod": "p", "shape": [0, 0, -1, 0]}, "shape must be 4 whole numbers"),
        ({"name": "apply-invalid", "case": -1}, "case must be at least 0"),
        ({"name": "rollout-undo", "app": "web", "to_revision": "last"}, "to_revision must be a whole number"),
    ]:
        with pytest.raises(ValueError, match=message):
            action_from_json(data)


@pytest.fixture(scope="module")
def web() -> Cluster:
    """Two nodes running Deployment web (2 replicas) and its Service; the tests below run in order on it."""
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 2).apply(cluster)
    ApplyService("web").apply(cluster)
    cluster.run(20_000)
    return cluster


def run(cluster: Cluster, action, ms: int = 10_000):
    """Apply `action`, run `ms`, and return the results of the commands it sent."""
    before = len(cluster.kubectl.results)
    action.apply(cluster)
    cluster.run_for(ms)
    return cluster.kubectl.results[before:]


def test_label_node_sets_and_removes_a_label(web):
    [r] = run(web, LabelNode("node-1", LABEL_ZONE, "zone-a"))
    assert r.ok and web.get("nodes", "", "node-1").metadata.labels[LABEL_ZONE] == "zone-a"
    run(web, LabelNode("node-1", LABEL_ZONE, ""))
    assert LABEL_ZONE not in web.get("nodes", "", "node-1").metadata.labels


def test_taint_node_adds_replaces_and_removes_as_kubectl_does(web):
    run(web, TaintNodeAction("node-2", effect="NoSchedule"))
    run(web, TaintNodeAction("node-2", effect="NoExecute"))
    taints = [(t.key, t.effect) for t in web.get("nodes", "", "node-2").spec.taints]
    assert taints == [("dedicated", "NoExecute"), ("dedicated", "NoSchedule")]  # the new taint first
    run(web, TaintNodeAction("node-2", effect="", remove=True))  # key-: every effect
    assert web.get("nodes", "", "node-2").spec.taints == ()
    [r] = run(web, TaintNodeAction("node-2", effect="", remove=True))
    assert not r.ok and r.response.body.reason == KUBECTL_ERROR and "not found" in r.response.body.message


def test_a_noexecute_taint_evicts_the_pods_that_do_not_tolerate_it(web):
    node = sorted(p.spec.node_name for p in web.objects("pods", "default") if p.spec.node_name)[0]
    there = [p.metadata.name for p in web.objects("pods", "default") if p.spec.node_name == node]
    run(web, TaintNodeAction(node, effect="NoExecute"), 30_000)
    live = {p.metadata.name for p in web.objects("pods", "default") if p.metadata.deletion_timestamp is None}
    assert not live & set(there)
    assert all(p.spec.node_name != node for p in web.objects("pods", "default") if p.metadata.name in live)
    run(web, TaintNodeAction(node, effect="", remove=True))


def test_a_cordoned_node_takes_no_new_pod_and_uncordon_frees_it(web):
    [r] = run(web, CordonNode("node-1"))
    assert r.ok and web.get("nodes", "", "node-1").spec.unschedulable
    run(web, ApplyPodShape("debug-1", "", (0, 0, 0, 0)))
    assert web.get("pods", "default", "debug-1").spec.node_name == "node-2"
    run(web, CordonNode("node-1", False))
    assert not web.get("nodes", "", "node-1").spec.unschedulable


def test_pod_shapes_carry_their_features_and_the_scheduler_reads_them(web):
    manifest = pod_shape_manifest("p", "", (5, 2, 1, 2))
    spec = manifest["spec"]
    assert [len(c["ports"]) for c in spec["containers"]] == [1, 1]
    assert spec["containers"][1]["ports"][0] == {"containerPort": 9090, "hostPort": 8080, "protocol": "SCTP"}
    assert spec["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "256Mi"}
    assert spec["nodeSelector"] == {LABEL_ZONE: "zone-a"} and spec["tolerations"][0]["tolerationSeconds"] == 30
    assert pod_shape_manifest("p", "node-1", (4, 0, 0, 0))["spec"] == {
        "containers": pod_shape_manifest("p", "", (0, 0, 0, 0))["spec"]["containers"], "hostNetwork": True,
        "nodeName": "node-1"}
    # on the host's network, in the Service web's rotation (an ingress-style pod); on the pod network, in none
    assert pod_shape_manifest("p", "", (4, 0, 0, 0))["metadata"]["labels"] == {"run": "p", "app": "web"}
    assert pod_shape_manifest("p", "", (0, 0, 0, 0))["metadata"]["labels"] == {"run": "p"}
    # a nodeSelector no node matches: the pod waits, unschedulable
    run(web, ApplyPodShape("debug-2", "", (0, 0, 2, 0)))
    pod = web.get("pods", "default", "debug-2")
    assert not pod.spec.node_name and "node affinity/selector" in pod.status.conditions[0].message
    run(web, LabelNode("node-1", "disktype", "ssd"), 20_000)  # now one does
    assert web.get("pods", "default", "debug-2").spec.node_name == "node-1"


def test_a_pod_labelled_out_of_its_replicaset_is_released_and_adopted_back(web):
    pods = sorted(p.metadata.name for p in web.objects("pods", "default")
                  if p.metadata.name.startswith("web-") and p.metadata.deletion_timestamp is None)
    chosen = pods[0]
    run(web, LabelPod(chosen), 20_000)
    pod = web.get("pods", "default", chosen)
    assert pod.metadata.owner_references == () and "app" not in pod.metadata.labels
    owned = [p for p in web.objects("pods", "default") if p.metadata.owner_references
             and p.metadata.deletion_timestamp is None]
    assert len(owned) == 2  # the ReplicaSet made another
    run(web, LabelPod(chosen, "web"), 20_000)
    owned = [p for p in web.objects("pods", "default") if p.metadata.owner_references
             and p.metadata.deletion_timestamp is None]
    assert len(owned) == 2  # adopted, then one too many deleted
    pod = web.get("pods", "default", chosen)
    assert pod is None or pod.metadata.owner_references or pod.metadata.deletion_timestamp is not None


def test_edit_service_sets_its_selector_and_ports(web):
    [r] = run(web, EditService("web", 2, 2))
    svc = web.get("services", "default", "web")
    assert r.ok and dict(svc.spec.selector) == {"app": "web", "tier": "canary"}
    assert [(p.name, p.port, p.protocol) for p in svc.spec.ports] == [("http", 80, "TCP"), ("dns", 53, "UDP")]
    assert web.get("endpoints", "default", "web").subsets == ()  # no pod has the tier
    run(web, EditService("web"))
    assert dict(web.get("services", "default", "web").spec.selector) == {"app": "web"}


def test_strategy_pause_and_rollback(web):
    run(web, SetStrategy("web", 1))
    assert web.get("deployments", "default", "web").spec.strategy.type == "Recreate"
    run(web, ApplyDeployment("web", 2, 500), 60_000)  # revision 2, rolled out by Recreate
    run(web, SetStrategy("web", 2))
    ru = web.get("deployments", "default", "web").spec.strategy.rolling_update
    assert (ru.max_surge, ru.max_unavailable) == (1, 0)
    run(web, PauseDeployment("web"))
    [r] = run(web, UndoRollout("web"))
    assert r.response.body.reason == KUBECTL_ERROR and "paused" in r.response.body.message
    run(web, PauseDeployment("web", False))
    [r] = run(web, UndoRollout("web"), 60_000)
    assert r.ok
    revisions = {rs.metadata.annotations[REVISION_ANNOTATION]: rs.spec.replicas
                 for rs in web.objects("replicasets", "default")}
    assert revisions == {"2": 0, "3": 2}  # revision 1's ReplicaSet is the new one again, as revision 3
    d = web.get("deployments", "default", "web")
    assert "pod-template-hash" not in d.spec.template.metadata.labels
    assert not d.spec.template.spec.containers[0].resources.requests  # the first template: no CPU request
    [r] = run(web, UndoRollout("web", 7))
    assert not r.ok and "unable to find specified revision 7" in r.response.body.message


@pytest.mark.parametrize("case", range(len(INVALID_MANIFESTS)))
def test_an_invalid_manifest_is_refused_and_changes_nothing(web, case):
    before = {res: [(o.metadata.name, o.metadata.resource_version) for o in web.objects(res, "default")]
              for res in ("deployments", "services", "pods")}
    nodes = [(n.metadata.name, n.spec.taints) for n in web.objects("nodes")]
    [r] = run(web, ApplyInvalid(case, "node-1"), 100)
    assert r.response.code == 422, r.response.body
    assert [(n.metadata.name, n.spec.taints) for n in web.objects("nodes")] == nodes
    after = {res: [(o.metadata.name, o.metadata.resource_version) for o in web.objects(res, "default")]
             for res in ("deployments", "services", "pods")}
    assert after == before


def test_every_workload_rule_fires_on_a_machine():
    machine = SmallMachine()
    machine.apply_deployment("web", 2, 0, False, False)
    machine.advance_time(15)
    rules = {
        "label_node": lambda: machine.label_node(0, 0), "taint_node": lambda: machine.taint_node(0, 0),
        "cordon_node": lambda: machine.cordon_node(0, False),
        "apply_pod_shape": lambda: machine.apply_pod_shape("debug-1", 0, (1, 1, 0, 1)),
        "label_pod": lambda: machine.label_pod(0), "edit_service": lambda: machine.edit_service("web", 0, 1),
        "set_strategy": lambda: machine.set_strategy("web", 1),
        "pause_deployment": lambda: machine.pause_deployment("web", False),
        "rollout_undo": lambda: machine.rollout_undo("web", 0), "apply_invalid": lambda: machine.apply_invalid(3),
    }
    for name, fire in rules.items():
        before = machine.stats.rules.get(name, 0)
        fire()
        assert machine.stats.rules[name] == before + 1, name
    kinds = [a.kind for a in machine.session.actions]
    for kind in ("label-node", "taint-node", "cordon-node", "apply-pod-shape", "label-pod", "edit-service",
                 "set-strategy", "pause-deployment", "rollout-undo", "apply-invalid"):
        assert kind in kinds
    machine.teardown()


def test_pod_shapes_with_node_affinity_are_placed_by_it():
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.run(15_000)
    run(cluster, LabelNode("node-3", "disktype", "ssd"))
    run(cluster, ApplyPodShape("debug-1", "", (0, 0, 6, 0)))  # prefers disktype=ssd
    assert cluster.get("pods", "default", "debug-1").spec.node_name == "node-3"
    [r] = run(cluster, ApplyPodShape("debug-2", "", (0, 0, 5, 0)))  # requires zone NotIn (zone-a): unlabelled fits
    assert r.ok and cluster.get("pods", "default", "debug-2").spec.node_name
    for node in ("node-1", "node-2", "node-3"):
        run(cluster, LabelNode(node, LABEL_ZONE, "zone-a"))
    run(cluster, DeleteObject("pods", "debug-2"), 40_000)
    run(cluster, ApplyPodShape("debug-2", "", (0, 0, 5, 0)))  # now no node fits
    assert not cluster.get("pods", "default", "debug-2").spec.node_name
    assert ApplyPodShape("debug-2", "", (0, 0, 4, 0)).name == ("kubectl apply pod debug-2 (requires "
                                                               "topology.kubernetes.io/zone In (zone-a,zone-b) or "
                                                               "disktype Exists)")


def test_a_named_target_port_finds_the_pods_that_name_it():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 1).apply(cluster)
    ApplyService("web").apply(cluster)
    cluster.run(20_000)
    [r] = run(cluster, EditService("web", 0, 3))  # targetPort "http": web's pods name no port
    assert r.ok and cluster.get("services", "default", "web").spec.ports[0].target_port == "http"
    assert cluster.get("endpoints", "default", "web").subsets == ()
    [r] = run(cluster, ApplyPodShape("debug-1", "", (6, 0, 0, 0)))  # a pod whose port 80 is named http
    assert r.ok and cluster.get("pods", "default", "debug-1").spec.containers[0].ports[0].name == "http"
    run(cluster, LabelPod("debug-1", "web"), 20_000)  # now selected by the Service
    [subset] = cluster.get("endpoints", "default", "web").subsets
    pod_ip = cluster.get("pods", "default", "debug-1").status.pod_ip
    assert [a.ip for a in subset.addresses] == [pod_ip] and [p.port for p in subset.ports] == [80]


def test_a_cordon_tolerating_pod_goes_to_a_cordoned_node_and_a_zero_second_toleration_is_evicted_at_once():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(15_000)
    run(cluster, CordonNode("node-1"))
    run(cluster, ApplyPodShape("debug-1", "", (0, 0, 0, 4)))  # tolerates node.kubernetes.io/unschedulable
    run(cluster, ApplyPodShape("debug-2", "", (0, 0, 0, 0)))
    assert cluster.get("pods", "default", "debug-1").spec.node_name == "node-1"
    assert not cluster.get("pods", "default", "debug-2").spec.node_name
    run(cluster, CordonNode("node-1", False), 20_000)
    run(cluster, ApplyPodShape("debug-3", "", (0, 0, 0, 5)), 20_000)  # tolerates dedicated=infra:NoExecute for 0 s
    assert cluster.get("pods", "default", "debug-3").spec.tolerations[0].operator == ""
    run(cluster, TaintNodeAction("node-1", effect="NoExecute"), 1_000)
    evicted = cluster.get("pods", "default", "debug-3")
    assert evicted is None or evicted.metadata.deletion_timestamp is not None


def test_an_empty_node_selector_term_matches_no_node_and_a_gt_term_needs_the_label():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(15_000)
    [r] = run(cluster, ApplyPodShape("debug-1", "", (0, 0, 7, 0)))  # an empty term, or cores > 2
    assert r.ok and not cluster.get("pods", "default", "debug-1").spec.node_name
    run(cluster, LabelNode("node-2", "example.com/cores", "4"), 20_000)
    assert cluster.get("pods", "default", "debug-1").spec.node_name == "node-2"
    assert "(an empty term) or example.com/cores Gt (2)" in ApplyPodShape("debug-1", "", (0, 0, 7, 0)).name


def test_an_init_containers_larger_requests_are_what_the_scheduler_counts():
    from kmodel.scheduler.framework import pod_requests

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(15_000)
    [r] = run(cluster, ApplyPodShape("debug-1", "", (0, 5, 0, 0)))
    pod = cluster.get("pods", "default", "debug-1")
    assert r.ok and [c.name for c in pod.spec.init_containers] == ["init"]
    asked = pod_requests(pod)  # the larger of the app container's and the init container's, per resource
    assert (asked.milli_cpu, asked.memory, asked.ephemeral_storage) == (1000, 64 * 1024 ** 2, 1024 ** 3)
    assert pod.spec.node_name == "node-1"
    assert "init container requests cpu=1,ephemeral-storage=1Gi,memory=64Mi" in ApplyPodShape(
        "debug-1", "", (0, 5, 0, 0)).name
