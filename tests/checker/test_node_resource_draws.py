"""The draws about what a node offers: a pod sized to the ephemeral storage a node has left fits there and one MiB
more does not (the kubelet reports its root filesystem as the Node's ephemeral-storage); a pod asking for an
extended resource carries the limit such a resource needs, so the API server takes it and it waits, Pending, for a
node that offers it."""

from __future__ import annotations

from kmodel.checker.collide_rules import SIZED
from tests.checker.conftest import SmallMachine


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

