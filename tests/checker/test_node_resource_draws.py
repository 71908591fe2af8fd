"""The draws about what a node offers: a pod sized to the ephemeral storage a node has left fits there and one MiB
more does not (the kubelet reports its root filesystem as the Node's ephemeral-storage); a pod asking for an
extended resource carries the limit such a resource needs, so the API server takes it and it waits, Pending, for a
node that offers it; a core count label_node sets is what a Gt node-affinity term compares; a pod tolerating a
cordoned node's taint, as a DaemonSet's do, goes onto a cordoned node; label_pod picks a pod the scheduler has
not placed first, and the label change sends it back to be scheduled."""

from __future__ import annotations

import pytest

from kmodel.checker.collide_rules import SIZED
from kmodel.checker.infra_depth_actions import REQUIRED, TOLERATIONS, ApplyPlacedPod
from kmodel.checker.workload_actions import LABEL_CORES, NODE_LABELS, CordonNode, LabelNode
from kmodel.scheduler.component import Scheduler
from tests.checker.conftest import SmallMachine
from tests.checker.test_infra_depth_rules import _row, nodes  # noqa: F401 (nodes: a fixture)
from tests.checker.test_workload_actions import run



def test_a_pod_sized_to_the_ephemeral_storage_a_node_has_left_fits_and_one_mib_more_does_not():
    machine = SmallMachine()
    node = machine.cluster.nodes[0]
    storage = SIZED.index("ephemeral-storage")
    outcomes = []
    for pod, fit in (("debug-1", 0), ("debug-2", 1)):
        machine.apply_pod_near_capacity(pod, 0, storage, fit, True, False)
        machine.advance_time(10)
        got = machine.cluster.get("pods", "default", pod)
        outcomes.append((machine.session.actions[-2].quantity, got.status.phase, got.status.reason))
    left = machine.cluster.get("nodes", "", node).status.allocatable["ephemeral-storage"].value() // (1024 * 1024)
    assert outcomes == [(f"{left}Mi", "Running", ""), ("1Mi", "Failed", "OutOfephemeral-storage")]
    machine.teardown()


def test_a_pod_asking_for_an_extended_resource_is_taken_with_its_limit_and_waits_for_a_node_offering_it():
    machine = SmallMachine()
    machine.apply_pod_near_capacity("debug-1", 0, SIZED.index("example.com/dongle"), 0, False, False)
    machine.advance_time(10)
    sent = machine.session.actions[-2]
    assert sent.manifest()["spec"]["containers"][0]["resources"] == {
        "requests": {"example.com/dongle": "1"}, "limits": {"example.com/dongle": "1"}}
    got = machine.cluster.get("pods", "default", "debug-1")
    assert got is not None and got.status.phase == "Pending" and not got.spec.node_name
    machine.teardown()


def test_a_gt_term_places_the_pod_on_the_node_label_node_gave_a_core_count(nodes):
    assert (LABEL_CORES, "4") in NODE_LABELS
    gt = _row(REQUIRED, f"{LABEL_CORES} Gt 2")
    [result] = run(nodes, ApplyPlacedPod("debug-1", "node-1", gt), 20_000)
    assert result.ok and nodes.get("pods", "default", "debug-1").spec.node_name == ""  # no node has it: Pending
    run(nodes, LabelNode("node-2", LABEL_CORES, "4"), 20_000)
    assert nodes.get("pods", "default", "debug-1").spec.node_name == "node-2"


@pytest.mark.parametrize("tolerations, placed", [("", False), ("a cordoned node", True)])
def test_only_a_pod_tolerating_the_unschedulable_taint_goes_onto_a_cordoned_node(nodes, tolerations, placed):
    run(nodes, CordonNode("node-1"))
    action = ApplyPlacedPod("debug-2", "node-1", _row(REQUIRED, "metadata.name In {node}"), 0,
                            _row(TOLERATIONS, tolerations))
    [result] = run(nodes, action, 20_000)
    assert result.ok, result
    assert nodes.get("pods", "default", "debug-2").spec.node_name == ("node-1" if placed else "")


def test_label_pod_picks_a_pod_the_scheduler_has_not_placed_first_and_the_change_requeues_it():
    machine = SmallMachine()
    machine.apply_pod("debug-1", 0, False)  # placed by the scheduler, and first by name
    machine.apply_placed_pod("debug-2", 0, _row(REQUIRED, f"{LABEL_CORES} Gt 2"), 0, 0)  # no node matches
    machine.advance_time(15)
    assert machine.cluster.get("pods", "default", "debug-1").spec.node_name
    [scheduler] = [c for c in machine.cluster.loop.components.values() if isinstance(c, Scheduler)]
    assert scheduler.queue.where("default/debug-2") == "unschedulable"
    attempts = scheduler.queue.unschedulable["default/debug-2"].attempts
    machine.label_pod(0)
    assert machine.session.actions[-1].pod == "debug-2"
    machine.advance_time(5)
    assert machine.cluster.get("pods", "default", "debug-2").metadata.labels.get("app") == "web"
    # moved out of the unschedulable pods (NodeAffinity registers a pod update) and tried again: still no node
    assert scheduler.queue.unschedulable["default/debug-2"].attempts == attempts + 1
    machine.teardown()
