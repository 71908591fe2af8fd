"""The `edge-triggered` variant: the ReplicaSet controller counts pods from events instead of re-reading them."""

from __future__ import annotations

import attrs

from kmodel.invariants.liveness import converges_replicas
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.replicaset import ReplicaSetController
from kmodel.controllers.replicaset_logic import ReplicasDiff, count_delta, desired_diff
from kmodel.variants import DEFAULT, EDGE_TRIGGERED, variant
from tests.controllers.cluster_helpers import admin, live_pods, replicaset, template
from kmodel.loop.events import DropHead
from kmodel.objects import ObjectMeta, Pod


def _pod(**status) -> Pod:
    p = Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=template().spec)
    return attrs.evolve(p, status=attrs.evolve(p.status, **status)) if status else p


def _terminating(p: Pod) -> Pod:
    return attrs.evolve(p, metadata=attrs.evolve(p.metadata, deletion_timestamp=5_000))


def rs_cluster(name: str) -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=("replicaset",), variant=name))


def controller(c: Cluster) -> ReplicaSetController:
    return next(x for x in c.components if isinstance(x, ReplicaSetController))


def crash_and_restart(c: Cluster) -> None:
    c.crash("controller/replicaset")
    c.run_for(1_000)
    c.restart("controller/replicaset")
    c.run_for(10_000)


def test_count_delta_is_the_change_one_event_reports():
    active, gone = _pod(), _terminating(_pod())
    assert count_delta(None, active) == 0  # counted when the controller's own create was answered
    assert count_delta(active, active) == 0
    assert count_delta(active, gone) == -1  # it started terminating
    assert count_delta(gone, None) == 0  # ...so its final deletion is not counted twice
    assert count_delta(active, None) == -1  # gone without being seen terminating
    assert count_delta(active, _pod(phase="Failed")) == -1
    assert count_delta(None, gone) == 0


def test_desired_diff_is_the_one_switch():
    assert desired_diff(3, 0, 3, edge_triggered=False) == ReplicasDiff()
    assert desired_diff(3, 0, 3, edge_triggered=True) == ReplicasDiff(create=3)
    assert desired_diff(2, 5, 3, edge_triggered=True) == ReplicasDiff(delete=2)
    assert desired_diff(2, 5, 3, edge_triggered=False) == ReplicasDiff(create=1)


def test_the_variant_is_registered_where_it_switches():
    v = variant(EDGE_TRIGGERED)
    assert v.where == "kmodel/controllers/replicaset.py" and v.expect == ("replicaset-within-expectations", "converges-replicas")
    assert controller(rs_cluster(EDGE_TRIGGERED)).edge_triggered
    assert not controller(rs_cluster(DEFAULT)).edge_triggered


def test_the_count_follows_the_events_while_nothing_is_missed():
    c = rs_cluster(EDGE_TRIGGERED)
    c.apply([replicaset(3)])
    c.run(5_000)
    assert len(live_pods(c)) == 3
    assert controller(c).counts == {"default/web": 3}
    victim = live_pods(c)[0].metadata.name
    assert admin(c, "delete", "pods", name=victim).code == 200  # unbound: deleted at once
    c.run_for(5_000)
    assert len(live_pods(c)) == 3 and controller(c).counts == {"default/web": 3}


def test_a_create_whose_answer_is_lost_makes_a_pod_nobody_counts():
    c = rs_cluster(EDGE_TRIGGERED)
    ctrl = controller(c)
    c.apply([replicaset(2)])
    until = c.now + 5_000

    def answer_on_its_way() -> bool:
        return any(m.payload.code == 201 for m in c.network.in_flight("apiserver-0", ctrl.name)
                   if hasattr(m.payload, "code"))

    while not answer_on_its_way():
        assert c.loop.run_fair(until, max_events=1)
    c.loop.step(DropHead("apiserver-0", ctrl.name))
    c.run_for(120_000)  # the create times out (60 s), the sync fails and is retried
    assert len(live_pods(c)) == 3 and controller(c).counts == {"default/web": 2}


def test_a_restarted_edge_triggered_controller_counts_from_zero_and_creates_too_many():
    c = rs_cluster(EDGE_TRIGGERED)
    c.apply([replicaset(3)])
    c.run(5_000)
    crash_and_restart(c)
    assert len(live_pods(c)) == 6  # the three it had, and three more: its count started from zero
    assert controller(c).counts == {"default/web": 3}
    c.run_for(60_000)
    assert len(live_pods(c)) == 6  # and it never looks again
    assert any("wants 3 replicas but has 6 live pods" in m for m in converges_replicas(c, {}))


def test_the_level_driven_controller_rereads_the_pods_after_a_restart():
    c = rs_cluster(DEFAULT)
    c.apply([replicaset(3)])
    c.run(5_000)
    crash_and_restart(c)
    assert len(live_pods(c)) == 3
    assert controller(c).counts == {}  # the default keeps no count
