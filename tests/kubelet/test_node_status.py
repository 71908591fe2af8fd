"""The kubelet's Node status: what it posts and when it counts as changed (nodeStatusHasChanged)."""

from __future__ import annotations

import attrs

from kmodel.kubelet.config import KubeletConfig
from kmodel.kubelet.node_status import initial_node, status, status_changed
from kmodel.objects.core import NodeCondition

CONFIG = KubeletConfig(node="node-1", node_ip="172.18.0.2")


def test_a_status_recomputed_later_differs_only_in_heartbeats_so_it_is_unchanged():
    posted = initial_node(CONFIG, 1_000).status
    again = status(CONFIG, 11_000, posted)
    assert all(c.last_heartbeat_time == 11_000 for c in again.conditions)
    assert not status_changed(posted, again)


def test_condition_order_does_not_count_but_a_condition_status_does():
    posted = initial_node(CONFIG, 1_000).status
    assert not status_changed(posted, attrs.evolve(posted, conditions=tuple(reversed(posted.conditions))))
    unknown = tuple(attrs.evolve(c, status="Unknown", reason="NodeStatusUnknown") if c.type == "Ready" else c
                    for c in posted.conditions)
    marked = attrs.evolve(posted, conditions=unknown)
    recomputed = status(CONFIG, 50_000, marked)
    ready = next(c for c in recomputed.conditions if c.type == "Ready")
    assert (ready.status, ready.last_transition_time) == ("True", 50_000)
    assert status_changed(marked, recomputed)


def test_a_field_other_than_the_conditions_counts():
    posted = initial_node(CONFIG, 1_000).status
    assert status_changed(posted, attrs.evolve(posted, addresses=posted.addresses[:1]))
    assert status_changed(posted, attrs.evolve(posted, conditions=posted.conditions[:3]))


def test_a_condition_of_another_writer_is_kept_where_it_is():
    """As node-problem-detector's: upstream's setters update their own types in place and leave the others."""
    posted = initial_node(CONFIG, 1_000).status
    theirs = NodeCondition(type="example.com/Checked", status="True", reason="Checked", last_heartbeat_time=500)
    written = attrs.evolve(posted, conditions=(posted.conditions[0], theirs, *posted.conditions[1:]))
    recomputed = status(CONFIG, 11_000, written)
    assert [c.type for c in recomputed.conditions] == [c.type for c in written.conditions]
    assert recomputed.conditions[1] == theirs
    assert all(c.last_heartbeat_time == 11_000 for c in recomputed.conditions if c is not theirs)
    assert not status_changed(written, recomputed)
    missing = status(CONFIG, 12_000, attrs.evolve(posted, conditions=(theirs, posted.conditions[3])))
    assert [c.type for c in missing.conditions] == ["example.com/Checked", "Ready", "MemoryPressure",
                                                    "DiskPressure", "PIDPressure"]


def test_ready_is_false_while_the_runtime_network_is_not_and_turns_true_with_a_new_transition_time():
    """setters.go ReadyCondition: the runtime state's network error makes Ready False, reason KubeletNotReady, the
    error as its message; the pressure conditions are not touched."""
    posted = initial_node(CONFIG, 1_000, network_error="container runtime network not ready: x").status
    by_type = {c.type: c for c in posted.conditions}
    ready = by_type["Ready"]
    assert (ready.status, ready.reason, ready.message) == ("False", "KubeletNotReady",
                                                           "container runtime network not ready: x")
    assert by_type["MemoryPressure"].status == "False"
    configured = status(CONFIG, 5_000, posted)
    turned = next(c for c in configured.conditions if c.type == "Ready")
    assert (turned.status, turned.reason, turned.last_transition_time) == ("True", "KubeletReady", 5_000)
    assert status_changed(posted, configured)
