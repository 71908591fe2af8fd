"""The scheduler component: binding through the API, FitError reporting, requeueing, the assume cache."""

from __future__ import annotations

import attrs

from kmodel.apiserver.wire import Request, Response, Status
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.component import Out
from kmodel.scheduler.component import Scheduler, updated_conditions
from kmodel.objects import PodCondition
from kmodel.scheduler.queue import ClusterEvent, SchedulingQueue, backoff_duration
from tests.scheduler.helpers import allocatable, node, pod

PORTS_MSG = "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
NO_VICTIMS = " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."


def node_manifest(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110") -> dict:
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": res, "allocatable": res}}


def pod_manifest(name: str, *, host_port: int = 0, cpu: str = "", grace: int | None = None) -> dict:
    c: dict = {"name": "web", "image": "nginx:1.27-alpine"}
    if host_port:
        c["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    spec: dict = {"containers": [c]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def scheduler_cluster(*nodes: dict) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=len(nodes), components=("scheduler",)))
    cluster.apply(nodes)
    return cluster


def condition(p, type_="PodScheduled"):
    return next((c for c in p.status.conditions if c.type == type_), None)


def events(cluster: Cluster, reason: str) -> list:
    return [e for e in cluster.objects("events") if e.reason == reason]


def test_binds_pending_pods_through_pods_binding():
    cluster = scheduler_cluster(node_manifest("node-1"), node_manifest("node-2"))
    cluster.apply([pod_manifest("a"), pod_manifest("b")])
    cluster.run(2_000)
    pods = {p.metadata.name: p for p in cluster.objects("pods")}
    assert all(p.spec.node_name in ("node-1", "node-2") for p in pods.values())
    assert condition(pods["a"]).status == "True"
    bindings = [r for r in cluster.audit if r.subresource == "binding"]
    assert [(r.user, r.verb, r.resource, r.name, r.code) for r in bindings] == [
        ("system:kube-scheduler", "create", "pods", "a", 201), ("system:kube-scheduler", "create", "pods", "b", 201)]
    messages = sorted(e.message for e in events(cluster, "Scheduled"))
    assert messages == sorted(f"Successfully assigned default/{n} to {pods[n].spec.node_name}" for n in "ab")
    assert all(e.source.component == "default-scheduler" for e in events(cluster, "Scheduled"))


def test_host_port_third_replica_stays_pending_until_a_node_is_added():
    cluster = scheduler_cluster(node_manifest("node-1"), node_manifest("node-2"))
    cluster.apply([pod_manifest(f"web-{i}", host_port=80) for i in range(3)])
    cluster.run(5_000)
    pods = cluster.objects("pods")
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]
    assert sorted(p.spec.node_name for p in bound) == ["node-1", "node-2"]
    assert len(pending) == 1
    cond = condition(pending[0])
    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert cond.message.startswith(PORTS_MSG)
    assert cond.message == PORTS_MSG + NO_VICTIMS  # upstream appends the DefaultPreemption PostFilter message
    failed = events(cluster, "FailedScheduling")
    assert [(e.type, e.message, e.involved_object.name) for e in failed] == [
        ("Warning", cond.message, pending[0].metadata.name)]

    # the 5-minute flush retries it; the condition is unchanged, so it is not written again
    cluster.run(6 * 60_000)
    patches = [r for r in cluster.audit if r.subresource == "status" and r.user == "system:kube-scheduler"]
    assert len(patches) == 1
    assert len(events(cluster, "FailedScheduling")) == 2
    assert not cluster.get("pods", "default", pending[0].metadata.name).spec.node_name

    # a new node is a cluster event NodePorts registered: the pod moves and is bound there
    cluster.apply([node_manifest("node-3")])
    cluster.run_for(3_000)
    assert cluster.get("pods", "default", pending[0].metadata.name).spec.node_name == "node-3"


def test_pending_pod_moves_when_a_conflicting_pod_is_deleted():
    cluster = scheduler_cluster(node_manifest("node-1"))
    # grace 0: no kubelet runs here to finish a graceful deletion (a terminating pod keeps its port)
    cluster.apply([pod_manifest("a", host_port=80, grace=0), pod_manifest("b", host_port=80, grace=0)])
    cluster.run(2_000)
    first = next(p for p in cluster.objects("pods") if p.spec.node_name)
    other = next(p for p in cluster.objects("pods") if not p.spec.node_name)
    cluster.submit(Delete("pods", "default", first.metadata.name))
    cluster.run_for(5_000)  # well under 5 minutes: the AssignedPodDelete event moved it
    assert cluster.get("pods", "default", other.metadata.name).spec.node_name == "node-1"


def test_resources_too_many_pods_and_insufficient_cpu():
    cluster = scheduler_cluster(node_manifest("node-1", cpu="4", pods="1"), node_manifest("node-2", cpu="1"))
    cluster.apply([pod_manifest("big", cpu="2")])
    cluster.run(2_000)
    assert cluster.get("pods", "default", "big").spec.node_name == "node-1"
    cluster.apply([pod_manifest("big2", cpu="2")])
    cluster.run_for(2_000)
    p = cluster.get("pods", "default", "big2")
    assert not p.spec.node_name
    assert condition(p).message == ("0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods." + NO_VICTIMS)


def test_untolerated_taint_says_preemption_is_not_helpful():
    tainted = node_manifest("node-1")
    tainted["spec"] = {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
    cluster = scheduler_cluster(tainted)
    cluster.apply([pod_manifest("a")])
    cluster.run(2_000)
    assert condition(cluster.get("pods", "default", "a")).message == (
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


# -- the component driven by hand ------------------------------------------------------------------------------


def _synced_scheduler(*nodes) -> Scheduler:
    s = Scheduler("scheduler", ["apiserver-0"])
    s.pods.has_synced = s.nodes.has_synced = True
    for n in nodes:
        s.nodes.indexer.upsert(n)
        s._node_added(0, n, Out())
    return s


def _add_pending(s: Scheduler, p) -> None:
    p = attrs.evolve(p, spec=attrs.evolve(p.spec, scheduler_name="default-scheduler"))
    s.pods.indexer.upsert(p)
    s._pod_added(0, p, Out())


def _requests(out: Out) -> list[Request]:
    return [e.payload for e in out.effects if isinstance(getattr(e, "payload", None), Request)]


def test_assumed_pod_takes_the_last_free_slot_before_the_binding_is_answered():
    s = _synced_scheduler(node("node-1", allocatable(4000, 8 << 30, 1)))
    _add_pending(s, pod("a", uid="ua"))
    _add_pending(s, pod("b", uid="ub"))
    out = Out()
    s.work(0, out)
    s.work(0, out)  # the first binding has not been answered and the informer still shows "a" pending
    reqs = _requests(out)
    assert [(r.subresource, r.name) for r in reqs if r.subresource == "binding"] == [("binding", "a")]
    patch = next(r for r in reqs if r.subresource == "status")
    assert patch.name == "b"
    assert "1 Too many pods" in patch.body["status"]["conditions"][0]["message"]
    assert s.queue.where("default/b") == "unschedulable"
    assert s.cache.assumed == {"ua": "node-1"}


def test_binding_error_forgets_the_assumption_and_backs_off():
    s = _synced_scheduler(node("node-1", allocatable(4000, 8 << 30, 1)))
    _add_pending(s, pod("a", uid="ua"))
    out = Out()
    s.work(0, out)
    bind = next(r for r in _requests(out) if r.subresource == "binding")
    pending = s.client._pending[bind.id]
    pending.on_done(5, Response(bind.id, 409, Status(409, "Conflict", "boom")), Out())
    assert s.cache.assumed == {}
    assert len(s.cache.infos["node-1"].pods) == 0
    assert s.queue.where("default/a") == "backoff"
    assert s.queue.next_wakeup(5) == 2_000  # backoff until 5 + 1 000 ms, flushed at the next 1 s tick


def test_updated_conditions_only_when_changed():
    c = PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message="m")
    first = updated_conditions((), c, 10)
    assert first[0].last_transition_time == 10
    assert updated_conditions(first, c, 20) is None
    again = updated_conditions(first, PodCondition(type="PodScheduled", status="False", reason="Unschedulable",
                                                   message="other"), 30)
    assert again[0].last_transition_time == 10 and again[0].message == "other"


# -- the queue -------------------------------------------------------------------------------------------------


def test_backoff_doubles_up_to_ten_seconds():
    assert [backoff_duration(n) for n in range(1, 7)] == [1_000, 2_000, 4_000, 8_000, 10_000, 10_000]


def test_queue_orders_by_priority_then_time_and_moves_on_registered_events():
    q = SchedulingQueue(start=0)
    low, high = pod("low"), pod("high")
    high = attrs.evolve(high, spec=attrs.evolve(high.spec, priority=10))
    q.add(low, 0)
    q.add(high, 5)
    assert q.active == ["default/high", "default/low"]
    info = q.pop(5)
    q.add_unschedulable(info, ["NodePorts"], 5)
    assert q.move_all(ClusterEvent.NODE_LABEL, 6) == 0  # NodePorts did not register label changes
    assert q.where("default/high") == "unschedulable"
    assert q.move_all(ClusterEvent.NODE_ADD, 7) == 1
    assert q.where("default/high") == "backoff"  # still within its 1 s backoff
    assert q.next_wakeup(7) == 2_000  # expiry 1 005, flushed at the next 1 s tick
    q.flush(2_000)
    assert q.where("default/high") == "active"


def test_unschedulable_pods_are_flushed_after_five_minutes_on_the_30s_grid():
    q = SchedulingQueue(start=0)
    q.add(pod("p"), 0)
    info = q.pop(100)
    q.add_unschedulable(info, ["NodeResourcesFit"], 100)
    assert q.next_wakeup(100) == 330_000  # first 30 s tick with more than 300 s waited (300 100 < t)
    q.flush(300_000)
    assert q.where("default/p") == "unschedulable"
    q.flush(330_000)
    assert q.where("default/p") == "active"
