"""The node lifecycle controller's zones: a zone whose last node leaves (handleDisruption, addPodEvictorForNewZone)."""

from __future__ import annotations

from pathlib import Path

from kmodel.cluster import Cluster, ClusterConfig, Delete
from kmodel.component import Out
from kmodel.controllers.nodelifecycle import (
    EVICTION_LIMITER_QPS, NAME, STATE_FULL_DISRUPTION, STATE_INITIAL, STATE_NONE, STATE_NORMAL,
    NodeLifecycleController, _Pass,
)
from kmodel.objects import NodeCondition
from kmodel.objects.yaml_io import load_yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ZONE_A = ":\x00:zone-a"  # nodetopology.GetZoneKey of a node labelled topology.kubernetes.io/zone=zone-a
READY = NodeCondition(type="Ready", status="True")
UNKNOWN = NodeCondition(type="Ready", status="Unknown")


def test_deleting_the_only_node_of_a_zone_keeps_the_monitor_running():
    c = Cluster(ClusterConfig(nodes=2))
    c.apply(load_yaml((EXAMPLES / "nodes" / "node-big.yaml").read_text()))
    c.run_for(60_000)
    controller = c.loop.components[NAME]
    assert controller.zone_states[ZONE_A] == STATE_FULL_DISRUPTION  # big-1 has no kubelet: never Ready
    c.submit(Delete("nodes", "", "big-1"))
    c.run_for(5_000)
    passes = controller.passes
    c.run_for(115_000)  # a KeyError in handleDisruption here once stopped every later pass
    assert c.get("nodes", "", "big-1") is None
    assert controller.passes >= passes + 20  # a pass every 5 s
    # the walk that drops zones with no nodes stops at the first zone not fully disrupted: "" sorts first
    assert controller.zone_states == {"": STATE_NORMAL, ZONE_A: STATE_NONE}
    assert controller.zone_qps[""] == EVICTION_LIMITER_QPS


def _controller(states: dict[str, str]) -> NodeLifecycleController:
    controller = NodeLifecycleController(["apiserver-0"])
    for zone, state in states.items():
        controller.zone_states[zone] = state
        controller.zone_qps[zone] = EVICTION_LIMITER_QPS
    return controller


def _handle(controller: NodeLifecycleController, zones: dict[str, list]) -> None:
    p = _Pass([])
    p.zones = zones
    controller._handle_disruption(0, Out(), p)


def test_a_zone_with_no_nodes_before_the_first_zone_not_fully_disrupted_is_dropped():
    live = "r:\x00:zone-b"  # sorts after ZONE_A
    controller = _controller({ZONE_A: STATE_NORMAL, live: STATE_NORMAL})
    _handle(controller, {live: [READY]})
    assert controller.zone_states == {live: STATE_NORMAL}


def test_a_zone_with_no_nodes_after_the_stop_keeps_the_zero_state_and_its_rate():
    controller = _controller({"": STATE_NORMAL, ZONE_A: STATE_NORMAL})
    _handle(controller, {"": [READY]})
    assert controller.zone_states == {"": STATE_NORMAL, ZONE_A: STATE_NONE}
    assert controller.zone_qps[ZONE_A] == EVICTION_LIMITER_QPS
    _handle(controller, {"": [READY]})  # and again: nothing to change
    assert controller.zone_states[ZONE_A] == STATE_NONE


def test_exiting_master_disruption_with_a_zone_gone():
    controller = _controller({"": STATE_FULL_DISRUPTION, ZONE_A: STATE_FULL_DISRUPTION})
    controller.zone_qps = {"": 0.0, ZONE_A: 0.0}
    _handle(controller, {"": [READY]})  # ZONE_A has no nodes now: dropped ("" was fully disrupted)
    assert controller.zone_states == {"": STATE_NORMAL}
    assert controller.zone_qps[""] == EVICTION_LIMITER_QPS


def test_a_node_of_a_dropped_zone_brings_the_zone_back_with_a_fresh_rate():
    controller = _controller({})
    controller.zone_qps[ZONE_A] = 0.0  # the dropped zone's old queue, stopped
    controller._zone_seen(ZONE_A)
    assert controller.zone_states[ZONE_A] == STATE_INITIAL
    assert controller.zone_qps[ZONE_A] == EVICTION_LIMITER_QPS
    controller._zone_seen(ZONE_A)  # known now: unchanged
    assert controller.zone_states[ZONE_A] == STATE_INITIAL


def test_entering_master_disruption_stops_every_zone():
    controller = _controller({"": STATE_NORMAL, ZONE_A: STATE_NORMAL})
    _handle(controller, {"": [UNKNOWN], ZONE_A: [UNKNOWN]})
    assert controller.zone_states == {"": STATE_FULL_DISRUPTION, ZONE_A: STATE_FULL_DISRUPTION}
    assert controller.zone_qps == {"": 0.0, ZONE_A: 0.0}


def test_a_node_s_zone_key_from_its_labels_shared_or_plain():
    from kmodel.controllers.nodelifecycle import zone_key
    from kmodel.objects import Node, ObjectMeta, frozen_map

    labels = {"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "z"}
    shared = frozen_map(labels)
    for _ in range(2):  # the second look answered for the very same map
        assert zone_key(Node(metadata=ObjectMeta(name="n", labels=shared))) == "r:\x00:z"
    assert zone_key(Node(metadata=ObjectMeta(name="n", labels=dict(labels)))) == "r:\x00:z"
    assert zone_key(Node(metadata=ObjectMeta(name="n", labels=frozen_map({"a": "b"})))) == ""
