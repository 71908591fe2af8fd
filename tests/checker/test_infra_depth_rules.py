"""The infrastructure-depth rules: an etcd client's session, and pods placed by rare node affinity and tolerations."""

from __future__ import annotations

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.etcd_client_actions import EtcdRange, EtcdTxn
from kmodel.checker.infra_depth_actions import (
    PREFERRED, REQUIRED, TOLERATIONS, ApplyPlacedPod, FreezeNode, freezable_nodes,
)
from kmodel.checker.infra_depth_rules import FREEZE_SECONDS, HUNG_FOR_GOOD, HUNG_SECONDS
from kmodel.checker.workload_actions import TaintNodeAction
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.loop import EventNotEnabled

from tests.checker.conftest import SmallMachine
from tests.checker.test_workload_actions import run

#: one action of each kind this family adds, for tests/checker/test_actions.py's round trips
EXAMPLES = [ApplyPlacedPod("debug-1", "node-1", 1, 1, 1, 1, True), FreezeNode("node-2", 5)]


@pytest.fixture
def nodes() -> Cluster:
    """Two empty nodes, each of a new cluster (a test taints and fills them)."""
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(20_000)
    return cluster


def _row(table: tuple, words: str) -> int:
    return next(i for i, (w, _) in enumerate(table) if w == words)


def test_the_action_reads_as_the_pod_it_applies_and_round_trips():
    action = ApplyPlacedPod("debug-2", "node-2", _row(REQUIRED, "metadata.name NotIn {node}"), 1, 2)
    assert action.name == ("kubectl apply pod debug-2 (requires metadata.name NotIn node-2; prefers metadata.name "
                           "In node-2 (40); tolerates dedicated=other)")
    spec = action.manifest()["spec"]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-2"]}]}]}
    assert action_from_json(action.to_json()) == action
    assert "affinity" not in ApplyPlacedPod("debug-1", "node-1").manifest()["spec"]
    with pytest.raises(ValueError, match="required 8 is past its table's 8 rows"):
        ApplyPlacedPod("debug-1", "node-1", len(REQUIRED))


@pytest.mark.parametrize("required, where", [
    ("metadata.name In {node}", "node-2"),
    ("metadata.name NotIn {node}", "node-1"),
    ("an empty term or metadata.name In {node}", "node-2"),  # the empty term matches nothing; the other does
    ("disktype DoesNotExist", "somewhere"),
    ("example.com/cores Gt 2", ""),  # no node has the label: Pending
    ("example.com/cores Lt many (not an integer)", ""),  # accepted by the API, matches nothing: Pending
])
def test_the_scheduler_places_each_row_as_upstream_does(nodes, required, where):
    pod = "debug-2"
    [result] = run(nodes, ApplyPlacedPod(pod, "node-2", _row(REQUIRED, required)), 20_000)
    assert result.ok, result
    got = nodes.get("pods", "default", pod)
    if where == "somewhere":
        assert got.spec.node_name in ("node-1", "node-2")
    else:
        assert got.spec.node_name == where
        assert (got.status.phase == "Pending") == (where == "")


@pytest.mark.parametrize("tolerations, placed", [
    ("", False), ("dedicated=infra (operator left empty)", True), ("dedicated=other", False),
    ("another key, Exists", False), ("every PreferNoSchedule taint", False),
])
def test_tolerations_of_a_taint_on_the_only_node_allowed(nodes, tolerations, placed):
    """node-1 carries dedicated=infra:NoSchedule; the pod may go only to node-1."""
    run(nodes, TaintNodeAction("node-1"))
    action = ApplyPlacedPod("debug-2", "node-1", _row(REQUIRED, "metadata.name In {node}"), 0,
                            _row(TOLERATIONS, tolerations))
    [result] = run(nodes, action, 20_000)
    assert result.ok, result
    assert nodes.get("pods", "default", "debug-2").spec.node_name == ("node-1" if placed else "")


def test_a_preferred_row_wins_a_tie_between_empty_nodes(nodes):
    [result] = run(nodes, ApplyPlacedPod("debug-2", "node-1", 0, _row(PREFERRED, "metadata.name In {node} (40)")),
                   20_000)
    assert result.ok and nodes.get("pods", "default", "debug-2").spec.node_name == "node-1"


def test_each_rule_acts_on_a_machine_and_is_counted_under_its_name():
    machine = SmallMachine()
    # the machine's Stats live as long as its class (other tests' SmallMachines count into them): count from here
    before = dict(machine.stats.rules)
    machine.apply_deployment("web", 1, 0, False, False)
    machine.advance_time(15)
    machine.etcd_session([EtcdRange("own-key"), EtcdTxn("registry-key", "VERSION", "LESS", then="too-many"),
                          EtcdRange("registry", "past", 2, True)])
    machine.apply_placed_pod("debug-1", 1, 2, 0, 1)
    assert [machine.stats.rules.get(r, 0) - before.get(r, 0)
            for r in ("etcd_range", "etcd_txn", "apply_placed_pod")] == [2, 1, 1]
    assert machine.session.actions[-1].name == ("kubectl apply pod debug-1 (requires metadata.name In node-2; "
                                                "tolerates dedicated=infra (operator left empty))")
    machine.advance_time(10)
    assert machine.cluster.get("pods", "default", "debug-1").spec.node_name == "node-2"
    machine.teardown()


def test_a_frozen_node_runs_nothing_until_it_thaws_and_is_not_frozen_twice():
    machine = SmallMachine()
    before = machine.stats.rules.get("freeze_node", 0)  # the Stats are the class's, shared with other tests
    machine.apply_deployment("web", 2, 0, False, False)
    machine.advance_time(15)
    machine.freeze_node(1, 20)
    assert machine.session.actions[-1].name == "freeze node-2 for 20 s (its VM stopped)"
    loop = machine.cluster.loop
    frozen = [e for e in loop.components if loop.is_paused(e)]
    assert frozen == machine.cluster.endpoints_of("node-2") and {"kubelet/node-2", "proxy/node-2"} <= set(frozen)
    assert freezable_nodes(machine.cluster) == ["node-1"]
    with pytest.raises(EventNotEnabled, match="cannot freeze 'node-2'"):
        FreezeNode("node-2", 1).apply(machine.cluster)
    machine.advance_time(21)
    assert not any(loop.is_paused(e) for e in loop.components)
    assert machine.stats.rules["freeze_node"] == before + 1
    assert action_from_json(FreezeNode("node-2", 20).to_json()) == FreezeNode("node-2", 20)
    machine.teardown()


@pytest.mark.parametrize("runs, phase, restarts", [(0, "Running", 0), (1, "Succeeded", 0), (2, "Running", 2),
                                                   (3, "Succeeded", 0), (4, "Failed", 0)])
def test_a_placed_pod_runs_and_restarts_as_its_policy_and_exit_code_say(nodes, runs, phase, restarts):
    """A run-to-completion pod's process exits after 5 s (kmodel.kubelet.completion): OnFailure restarts an
    exit of 1 (at once, then after the kubelet's back-off of 10 s: twice in the 25 s after the first start),
    Never leaves the pod Failed."""
    pinned = _row(REQUIRED, "metadata.name In {node}")
    [result] = run(nodes, ApplyPlacedPod("debug-2", "node-1", pinned, runs=runs), 20_000)
    assert result.ok, result
    nodes.run_for(10_000)
    pod = nodes.get("pods", "default", "debug-2")
    assert (pod.status.phase, pod.status.container_statuses[0].restart_count) == (phase, restarts)


def test_a_pod_on_the_hosts_network_has_its_nodes_address_and_its_port_as_host_port(nodes):
    [result] = run(nodes, ApplyPlacedPod("debug-2", "node-1", _row(REQUIRED, "metadata.name In {node}"),
                                         host_network=True), 20_000)
    assert result.ok, result
    pod = nodes.get("pods", "default", "debug-2")
    node = nodes.get("nodes", "", "node-1")
    assert pod.status.phase == "Running"
    assert pod.status.pod_ip == pod.status.host_ip == next(a.address for a in node.status.addresses
                                                            if a.type == "InternalIP")
    assert pod.spec.containers[0].ports[0].host_port == 80


def test_a_pod_on_the_hosts_network_is_in_the_rotation_of_web_and_the_client_reaches_it_at_its_nodes_address(nodes):
    """The Service web selects the pod (app=web) and no ReplicaSet adopts it: the in-cluster client's request to
    web goes to node-2's own address, where the data plane finds the host-network pod by its port."""
    from kmodel.checker.actions import ApplyService
    from kmodel.traffic.client import VIA_SERVICE, client_name

    pinned = _row(REQUIRED, "metadata.name In {node}")
    action = ApplyPlacedPod("debug-2", "node-2", pinned, host_network=True)
    assert action.name == "kubectl apply pod debug-2 (requires metadata.name In node-2; hostNetwork, app=web)"
    assert action.manifest()["metadata"]["labels"] == {"run": "debug-2", "app": "web"}
    assert ApplyPlacedPod("debug-2", "node-2").manifest()["metadata"]["labels"] == {"run": "debug-2"}
    results = run(nodes, action, 20_000) + run(nodes, ApplyService("web"), 20_000)
    assert all(r.ok for r in results), results
    pod = nodes.get("pods", "default", "debug-2")
    assert not pod.metadata.owner_references
    client = nodes.loop.components[client_name("node-1")]
    route = client.route("default/web")
    assert (route.via, route.destinations) == (VIA_SERVICE, (f"{pod.status.pod_ip}:80",))
    assert pod.status.pod_ip == pod.status.host_ip
    reached = client.deliver(route.destinations[0])
    assert reached is not None and (reached.name, reached.node) == ("debug-2", "node-2")
    nodes.run_for(10_000)
    assert client.last["default/web"].ok


def test_a_node_hung_for_good_is_removed_while_its_processes_are_stopped():
    machine = SmallMachine()
    machine.apply_deployment("web", 2, 0, False, False)
    machine.advance_time(15)
    before = {r: machine.stats.rules.get(r, 0) for r in ("freeze_node", "remove_node")}
    loop = machine.cluster.loop
    machine.freeze_node(1, HUNG_FOR_GOOD)
    freeze, remove = machine.session.actions[-2:]
    assert (freeze.name, remove.name) == (f"freeze node-2 for {HUNG_SECONDS} s (its VM stopped)",
                                          "remove node-2 (stop its machine, kubectl delete node)")
    assert machine.cluster.nodes == ["node-1"]
    assert not any(loop.is_paused(e) for e in loop.components)  # the pause ended with the processes
    assert all(not loop.is_up(e) for e in machine.cluster.endpoints_of("node-2"))
    assert [machine.stats.rules.get(r, 0) - before[r] for r in before] == [1, 1]
    # with one node left, none can be removed: the draw freezes it for FREEZE_SECONDS' longest stop instead
    machine.freeze_node(0, HUNG_FOR_GOOD)
    assert machine.session.actions[-1].name == f"freeze node-1 for {FREEZE_SECONDS[-2]} s (its VM stopped)"
    machine.teardown()
