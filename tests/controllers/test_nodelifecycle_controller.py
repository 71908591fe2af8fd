"""Node lifecycle and taint eviction in a cluster, with the admin standing in for the kubelets' heartbeats."""

from __future__ import annotations

import pytest

from kmodel.apiserver.wire import Preconditions, Request
from kmodel.cluster import ClusterConfig
from kmodel.cluster.cluster import Cluster
from kmodel.controllers.node_lifecycle_logic import TAINT_NODE_UNREACHABLE
from kmodel.controllers.nodelifecycle import NAME, compute_zone_state
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.controllers.tainteviction import NAME as TAINT_EVICTION
from kmodel.fixes import TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD
import attrs

from kmodel.objects import (
    Container, Lease, LeaseSpec, Node, NodeCondition, NodeStatus, ObjectMeta, Pod, PodSpec, Taint, Toleration,
)

from .cluster_helpers import admin
from .status_writer import with_status_writer, write_status

GRACE, PERIOD = 40_000, 5_000
NODES = ("node-1", "node-2", "node-3")


def ready_node(name: str) -> Node:
    cond = NodeCondition(type="Ready", status="True", last_heartbeat_time=0, last_transition_time=0)
    return Node(metadata=ObjectMeta(name=name), status=NodeStatus(conditions=(cond,)))


def bound_pod(name: str, node: str, tolerations=()) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default"),
               spec=PodSpec(node_name=node, containers=(Container(name="c", image="img"),), tolerations=tolerations))


class Heartbeats:
    """The admin renewing the Leases of the nodes still alive, every 10 s (as kubelets do)."""

    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.alive = set(NODES)
        self.last: dict[str, int] = {}

    def renew(self) -> None:
        now = self.c.now
        self.c.apply([Lease(metadata=ObjectMeta(name=n, namespace="kube-node-lease"),
                            spec=LeaseSpec(holder_identity=n, lease_duration_seconds=40, renew_time=now))
                      for n in sorted(self.alive)])
        for n in self.alive:
            self.last[n] = now

    def run_until(self, t: int, watch=None) -> None:
        while self.c.now < t:
            self.renew()
            step = min(t, (self.c.now // 10_000 + 1) * 10_000)
            while self.c.now < step:
                self.c.run(min(step, self.c.now + 1_000))
                if watch:
                    watch()


def ready_status(c: Cluster, name: str) -> str:
    node = c.get("nodes", "", name)
    return next(x.status for x in node.status.conditions if x.type == "Ready")


def taint(c: Cluster, name: str, key: str, effect: str = "NoExecute"):
    return next((t for t in c.get("nodes", "", name).spec.taints if t.key == key and t.effect == effect), None)


@pytest.fixture
def cluster():
    c, writer = with_status_writer(ClusterConfig(components=("nodelifecycle",)))
    c.status_writer = writer
    c.apply([ready_node(n) for n in NODES])
    c.apply([bound_pod("p", "node-1"), bound_pod("stay", "node-2"),
             bound_pod("q", "node-1", tolerations=(Toleration(key=TAINT_NODE_UNREACHABLE, operator="Exists",
                                                              effect="NoExecute", toleration_seconds=60),))])
    return c


def test_silent_node_goes_unknown_is_tainted_and_its_pods_evicted_after_300s(cluster):
    c = cluster
    hb = Heartbeats(c)
    seen = {}

    def watch():
        if "unknown" not in seen and ready_status(c, "node-1") == "Unknown":
            seen["unknown"] = c.now

    hb.run_until(20_000)
    hb.alive.discard("node-1")
    last = hb.last["node-1"]
    hb.run_until(120_000, watch)
    # never before the grace period; at most one period to observe the renewal and one to check
    assert last + GRACE < seen["unknown"] <= last + GRACE + 2 * PERIOD + 1_000
    node = c.get("nodes", "", "node-1")
    ready = next(x for x in node.status.conditions if x.type == "Ready")
    assert (ready.reason, ready.message) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert {x.type for x in node.status.conditions if x.status == "Unknown"} >= {"Ready", "MemoryPressure",
                                                                                "DiskPressure", "PIDPressure"}
    t = taint(c, "node-1", TAINT_NODE_UNREACHABLE)
    assert t is not None and taint(c, "node-1", TAINT_NODE_UNREACHABLE, "NoSchedule") is not None
    assert ready_status(c, "node-2") == "True" and not c.get("nodes", "", "node-2").spec.taints
    events = [(e.reason, e.message) for e in c.objects("events")]
    assert ("NodeNotReady", "Node node-1 status is now: NodeNotReady") in events
    # the pod tolerating 60 s goes first; the default 300 s toleration holds p until then
    hb.run_until(t.time_added + 55_000)
    assert c.get("pods", "default", "q").metadata.deletion_timestamp is None
    hb.run_until(t.time_added + 70_000)
    assert c.get("pods", "default", "q").metadata.deletion_timestamp is not None
    hb.run_until(t.time_added + 295_000)
    assert c.get("pods", "default", "p").metadata.deletion_timestamp is None
    hb.run_until(t.time_added + 320_000)
    p = c.get("pods", "default", "p")
    assert p.metadata.deletion_timestamp is not None
    assert any(x.type == "DisruptionTarget" and x.reason == "DeletionByTaintManager" for x in p.status.conditions)
    assert ("TaintManagerEviction", "Marking for deletion Pod default/p") in [
        (e.reason, e.message) for e in c.objects("events")]
    assert c.get("pods", "default", "stay").metadata.deletion_timestamp is None


def test_node_back_before_the_toleration_runs_out_is_untainted_and_nothing_evicted(cluster):
    c = cluster
    hb = Heartbeats(c)
    hb.run_until(20_000)
    hb.alive.discard("node-1")
    hb.run_until(90_000)
    assert taint(c, "node-1", TAINT_NODE_UNREACHABLE) is not None
    hb.alive.add("node-1")  # the Lease moves again, but Ready stays Unknown until the kubelet posts it
    hb.run_until(200_000)
    assert taint(c, "node-1", TAINT_NODE_UNREACHABLE) is not None
    node = c.get("nodes", "", "node-1")
    fresh = NodeCondition(type="Ready", status="True", last_heartbeat_time=c.now, last_transition_time=c.now)
    write_status(c, c.status_writer, "nodes", attrs.evolve(
        node, metadata=attrs.evolve(node.metadata, resource_version=""),
        status=attrs.evolve(node.status, conditions=(fresh,))))
    hb.run_until(230_000)
    assert ready_status(c, "node-1") == "True"
    assert not c.get("nodes", "", "node-1").spec.taints
    hb.run_until(500_000)
    assert c.get("pods", "default", "p").metadata.deletion_timestamp is None
    assert ("TaintManagerEviction", "Cancelling deletion of Pod default/p") in [
        (e.reason, e.message) for e in c.objects("events")]


def test_all_nodes_silent_is_master_disruption_no_taints_no_evictions(cluster):
    c = cluster
    hb = Heartbeats(c)
    hb.run_until(20_000)
    hb.alive.clear()
    hb.run_until(150_000)
    assert all(ready_status(c, n) == "Unknown" for n in NODES)
    assert all(taint(c, n, TAINT_NODE_UNREACHABLE) is None for n in NODES)
    assert c.get("pods", "default", "q").metadata.deletion_timestamp is None
    assert c.loop.components[NAME].zone_qps[""] == 0


def test_zone_states():
    t = NodeCondition(type="Ready", status="True")
    u = NodeCondition(type="Ready", status="Unknown")
    assert compute_zone_state([u, u]) == (2, "FullDisruption")
    assert compute_zone_state([t, u, u, u]) == (3, "PartialDisruption")
    assert compute_zone_state([t, t, u, u]) == (2, "Normal")


def test_heard_log_records_heartbeat_changes_when_they_reach_the_informers(cluster):
    """The heard log (read by the eviction-timing invariant) has the time a heartbeat change *reached* the
    controller, which is what upstream's probeTimestamp follows, not the time it was written; it survives a
    crash, and a restart is marked in it."""
    from kmodel.loop.events import SlowLink

    c = cluster
    ctl = c.loop.components[NAME]

    def heard(node: str) -> list[int]:
        return [t for t, n in ctl.heard if n == node]

    hb = Heartbeats(c)
    hb.run_until(20_000)
    assert ctl.heard[0] == (0, None)
    assert heard("node-1") and heard("node-1")[-1] == hb.last["node-1"]
    # a renewTime older than one already seen is no heartbeat
    before = heard("node-1")
    c.apply([Lease(metadata=ObjectMeta(name="node-1", namespace="kube-node-lease"),
                   spec=LeaseSpec(holder_identity="node-1", renew_time=5_000))])
    c.run(c.now + 1_000)
    assert heard("node-1") == before
    # a renewal held on the way to the controller is heard when it arrives
    for apiserver in c.config.apiserver_names():
        c.loop.step(SlowLink(apiserver, SHARED_INFORMERS, 10_000))  # its informers' watches come this way
    written = c.now
    hb.renew()
    c.run(written + 5_000)
    assert heard("node-1") == before
    c.run(written + 12_000)
    assert heard("node-1")[-1] >= written + 10_000
    # a Ready heartbeat change is heard too
    node = c.get("nodes", "", "node-2")
    fresh = attrs.evolve(next(x for x in node.status.conditions if x.type == "Ready"), last_heartbeat_time=c.now)
    write_status(c, c.status_writer, "nodes", attrs.evolve(
        node, metadata=attrs.evolve(node.metadata, resource_version=""),
        status=attrs.evolve(node.status, conditions=(fresh,))))
    at = c.now
    c.run(c.now + 1_000)
    assert heard("node-2")[-1] == at
    # a restart: the log is kept, the restart marked, every node with a Ready condition heard again
    kept = list(ctl.heard)
    c.crash(NAME)
    c.run(c.now + 1_000)
    c.restart(NAME)
    restarted = c.now
    c.run(c.now + 1_000)
    assert ctl.heard[:len(kept)] == kept
    assert (restarted, None) in ctl.heard[len(kept):]
    assert all(heard(n)[-1] >= restarted for n in NODES)


def test_a_zone_whose_nodes_are_all_relabelled_away_is_dropped_without_harm(cluster):
    """A node moved into a zone of its own and back: the zone it leaves behind has no node, and the pass that
    meets it (after a zone that is not fully disrupted, which stops the loop that deletes empty zones) reads Go's
    zero state for it, as upstream's map lookup does, and sets no rate for it. (Upstream walks its zones in a
    random order, so a later pass deletes it; the model walks them sorted, and "" comes first: the empty zone
    stays, in a state that means nothing.)"""
    from kmodel.cluster.kubectl import Patch

    c = cluster
    ctl = c.loop.components[NAME]
    zone = "topology.kubernetes.io/zone"
    hb = Heartbeats(c)
    hb.run_until(20_000)
    c.submit(Patch("nodes", "", "node-3", {"metadata": {"labels": {zone: "zone-a"}}}))
    hb.run_until(40_000)
    assert sorted(ctl.zone_states) == ["", ":\x00:zone-a"]
    c.submit(Patch("nodes", "", "node-3", {"metadata": {"labels": {zone: None}}}))
    hb.run_until(60_000)  # used to raise KeyError in handleDisruption
    assert ctl.zone_states == {"": "Normal", ":\x00:zone-a": ""}


def _made_again_during_the_eviction(fixed: bool, before_verb: str):
    """Taint eviction evicts p (bound to a node tainted NoExecute, no toleration); just before its `before_verb`
    request for p goes out, p is force-deleted and made again under its name (unbound, as a StatefulSet's pod is
    made). Returns the cluster, the taint eviction's requests for p, and the evicted pod's uid."""
    fixes = (TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD,) if fixed else ()
    c = Cluster(ClusterConfig(components=("nodelifecycle",), fixes=fixes))
    tainted = attrs.evolve(ready_node("node-1"), spec=attrs.evolve(
        ready_node("node-1").spec, taints=(Taint(key="example.com/drain", effect="NoExecute"),)))
    c.apply([tainted, ready_node("node-2")])
    c.run(1_000)
    c.apply([bound_pod("p", "node-1")])
    controller = c.loop.components[TAINT_EVICTION]
    send = controller.client.request
    evicted_uid: list[str] = []
    sent: list[tuple[str, object]] = []

    def request(now, out, verb, resource, **fields):
        if resource == "pods" and fields.get("name") == "p" and not fields.get("informer"):
            if verb == before_verb and not evicted_uid:
                evicted_uid.append(c.get("pods", "default", "p").metadata.uid)
                gone = c.replicas[0].pipeline.handle(
                    Request(-1, "delete", "pods", "default", "p", token="admin-token", grace_period_seconds=0),
                    now=now, replica="test")
                assert gone.ok, gone
                assert admin(c, "create", "pods", body=bound_pod("p", "")).ok
            sent.append((verb, fields.get("body")))
        return send(now, out, verb, resource, **fields)

    controller.client.request = request
    c.run(10_000)
    assert evicted_uid, "taint eviction never got to p"
    return c, sent, evicted_uid[0]


@pytest.mark.parametrize("before_verb", ["get", "delete"])
def test_without_the_fix_taint_eviction_deletes_a_pod_made_again_under_the_evicted_ones_name(before_verb):
    """Upstream's addConditionAndDeletePod GETs and deletes by name: the pod made again under p's name after the
    eviction was decided is marked DisruptionTarget and deleted in the evicted pod's stead."""
    c, sent, evicted = _made_again_during_the_eviction(False, before_verb)
    again = c.get("pods", "default", "p")
    assert again is None or (again.metadata.uid != evicted and again.metadata.deletion_timestamp is not None)
    assert ("delete", None) in sent  # by name, no precondition


@pytest.mark.parametrize("before_verb", ["get", "delete"])
def test_with_the_fix_taint_eviction_spares_a_pod_made_again_under_the_evicted_ones_name(before_verb):
    """tainteviction-evict-only-the-scheduled-pod: a GET answering another pod of the name ends the eviction,
    and a delete carries the evicted pod's uid as a precondition (409 for the pod made again)."""
    c, sent, evicted = _made_again_during_the_eviction(True, before_verb)
    again = c.get("pods", "default", "p")
    assert again is not None and again.metadata.uid != evicted
    assert again.metadata.deletion_timestamp is None
    assert not any(x.type == "DisruptionTarget" for x in again.status.conditions)
    deletes = [body for verb, body in sent if verb == "delete"]
    if before_verb == "delete":  # the GET saw the evicted pod: the delete went out, with its uid
        assert deletes and all(body == Preconditions(evicted, "") for body in deletes)
    else:  # the GET saw the pod made again: nothing to evict
        assert deletes == []
