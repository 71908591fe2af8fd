"""Actions are data: each has a stable name, a readable line and a JSON form that reads back equal."""

from __future__ import annotations

import json
import re

import pytest

from kmodel.checker.actions import (
    AddNode, ApplyDeployment, ApplyPod, ApplyService, Compact, CrashMidReconcile, CrashProcess, DeleteObject, FailContainer, Fault, Fire, LoseNode, RemoveNode, RestartProcess, RunEvents, RunFair, ScaleDeployment, Settle, deployment_manifest,
)
from kmodel.checker.action_json import ACTIONS, action_from_json
from tests.checker.test_workload_actions import WORKLOAD_EXAMPLES
from tests.checker.test_access_actions import ACCESS_EXAMPLES
from tests.checker.test_crd_rules import CRD_EXAMPLES
from tests.checker.test_own_crd_rules import OWN_CRD_EXAMPLES
from tests.checker.test_statefulset_actions import EXAMPLES as STATEFULSET_EXAMPLES
from tests.checker.test_patch_rules import EXAMPLES as PATCH_EXAMPLES
from tests.checker.test_job_actions import EXAMPLES as JOB_EXAMPLES
from tests.checker.test_collide_rules import EXAMPLES as COLLIDE_EXAMPLES
from tests.checker.test_etcd_client_rules import EXAMPLES as ETCD_CLIENT_EXAMPLES
from tests.checker.test_workload_depth import EXAMPLES as WORKLOAD_DEPTH_EXAMPLES
from tests.checker.test_api_depth_rules import EXAMPLES as API_DEPTH_EXAMPLES
from tests.checker.test_config_data_rules import EXAMPLES as CONFIG_DATA_EXAMPLES
from tests.checker.test_infra_depth_rules import EXAMPLES as INFRA_DEPTH_EXAMPLES
from tests.checker.test_address_rules import EXAMPLES as ADDRESS_EXAMPLES
from tests.checker.test_namespace_rules import EXAMPLES as NAMESPACE_EXAMPLES
from tests.checker.test_restart_rules import EXAMPLES as RESTART_EXAMPLES
from kmodel.checker.fault_actions import ApplyProbedApp, FailLiveness, FlapReadiness, RebootNode, StallWatch
from kmodel.checker.leader_actions import PauseProcess
from kmodel.loop.events import BreakStream, Crash, DelayHead, Deliver, FailRequest, Partition, Work

EXAMPLES = [
    ApplyDeployment("web", 2, 500, True), ApplyPod("debug", "node-1", True), ScaleDeployment("api", 3), ApplyService("web"),
    DeleteObject("deployments", "web"), AddNode(), RemoveNode("node-2"), LoseNode("node-3"),
    Fire((Deliver("scheduler", "apiserver-0"), Work("kubectl"))), Fault(Partition(("kubelet/node-1", "etcd"))),
    Fault(DelayHead("etcd", "apiserver-1", 10_000)), Fault(BreakStream("scheduler/watch-1")),
    Fault(Crash("controller/deployment")), Compact(42), FailContainer("node-1", "web-x", "app"), RunFair(5000), RunEvents(12),
    Settle(60_000), Settle(60_000, check_at_once=True, release_holds=True, finish_removals=True),
    CrashProcess(), RestartProcess(), CrashMidReconcile("kube-controller-manager"),
    CrashMidReconcile(), CrashMidReconcile("controller/deployment", writes=2),
    *WORKLOAD_EXAMPLES,
    *ACCESS_EXAMPLES,
    *CRD_EXAMPLES,
    *OWN_CRD_EXAMPLES,
    *STATEFULSET_EXAMPLES,
    *PATCH_EXAMPLES,
    *JOB_EXAMPLES,
    *COLLIDE_EXAMPLES,
    *ETCD_CLIENT_EXAMPLES,
    *WORKLOAD_DEPTH_EXAMPLES,
    *API_DEPTH_EXAMPLES,
    *CONFIG_DATA_EXAMPLES,
    *INFRA_DEPTH_EXAMPLES,
    *ADDRESS_EXAMPLES,
    *NAMESPACE_EXAMPLES,
    *RESTART_EXAMPLES,
    StallWatch("controller/nodelifecycle/watch-2", "apiserver-0", "controller/nodelifecycle", 600_000),
    Fault(FailRequest("kubelet/node-1", "apiserver-0", 429, retry_after_seconds=1)),
    ApplyProbedApp(), FlapReadiness("node-1", "web-x", "app", 15_000), PauseProcess("kube-controller-manager", 30),
    FailLiveness("node-2", "web-y", "app"), RebootNode("node-1"),
]


def test_every_kind_has_an_example():
    assert {a.kind for a in EXAMPLES} == set(ACTIONS)


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.kind)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    assert data["name"] == action.kind
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()
    assert action.name and str(action) == action.name


def test_readable_names():
    assert Fire((Deliver("a", "b"), Work("c"))).name == "deliver a -> b; work c"
    assert ScaleDeployment("web", 2).name == "kubectl scale deployment web --replicas=2"


def test_bad_actions_are_refused():
    with pytest.raises(ValueError, match="unknown action"):
        action_from_json({"name": "teleport"})
    with pytest.raises(ValueError, match="scale-deployment: the field 'replicas' is missing"):
        action_from_json({"name": "scale-deployment", "app": "web"})
    # each field is checked against its type and least value, in one line that names it
    for data, message in [
        ({"name": "scale-deployment", "app": "web", "replicas": "many"}, "replicas must be a whole number, not 'many'"),
        ({"name": "scale-deployment", "app": "web", "replicas": True}, "replicas must be a whole number, not True"),
        ({"name": "scale-deployment", "app": "web", "replicas": -1}, "replicas must be at least 0, not -1"),
        ({"name": "apply-deployment", "app": "web", "replicas": 1, "host_port": 1}, "host_port must be true or false"),
        ({"name": "run", "ms": 0}, "run: ms must be at least 1, not 0"),
        ({"name": "run", "ms": 10, "extra": 1}, r"run: unknown fields \['extra'\]"),
        ({"name": "fault", "event": {"kind": "delay_head", "src": "a", "dst": "b", "delay_ms": 0}},
         "delay_head: delay_ms must be at least 1, not 0"),
        ({"name": "fault", "event": {"kind": "crash", "component": 7}}, "crash: component must be a string, not 7"),
        ({"name": "fault", "event": "crash"}, "an event is a JSON object, not str"),
    ]:
        with pytest.raises(ValueError, match=message):
            action_from_json(data)


def test_deployment_manifest_shape():
    m = deployment_manifest("web", 2, 500, True)
    container = m["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"][0]["hostPort"] == 8080 and container["resources"]["requests"]["cpu"] == "500m"
    assert "resources" not in deployment_manifest("web", 1, 0, False)["spec"]["template"]["spec"]["containers"][0]


def test_a_settle_finishes_a_node_removal_whose_delete_failed():
    from kmodel.cluster import Cluster, ClusterConfig

    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(20_000)
    cluster.loop.step(Partition(("etcd",)))
    RemoveNode("node-2").apply(cluster)
    cluster.run_for(70_000)  # the API server times out on etcd: `kubectl delete node` fails
    [result] = [r for r in cluster.kubectl.results if r.command.resource == "nodes"]
    assert result.response.code >= 500 and cluster.get("nodes", "", "node-2") is not None
    Settle(60_000, finish_removals=True).apply(cluster)  # heals etcd, deletes the Node again
    assert cluster.get("nodes", "", "node-2") is None
    cluster.run_for(1_000)
    Settle(60_000, finish_removals=True).apply(cluster)  # nothing left to finish: no second delete
    assert len([r for r in cluster.kubectl.results if r.command.resource == "nodes"]) == 2


def test_kube_controller_manager_crashes_and_restarts_as_one_process():
    from kmodel.cluster import Cluster, ClusterConfig
    from kmodel.loop import EventNotEnabled

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(5_000)
    members = cluster.controller_manager
    assert "controller/replicaset" in members and "scheduler" not in members and len(members) >= 7
    CrashProcess().apply(cluster)
    assert not any(cluster.loop.is_up(n) for n in members) and cluster.loop.is_up("scheduler")
    with pytest.raises(EventNotEnabled, match="not a running process"):
        CrashProcess().apply(cluster)
    RestartProcess().apply(cluster)
    assert all(cluster.loop.is_up(n) for n in members)
    with pytest.raises(EventNotEnabled, match="it is not down"):
        RestartProcess().apply(cluster)  # not enabled: a replay that reaches it has diverged (TraceDiverged)
    assert CrashProcess().name == "crash kube-controller-manager (every controller in it)"


def test_a_compaction_the_store_cannot_take_is_not_enabled():
    """A replayed compaction past the store's newest revision, or at or below its last compaction, is a trace that
    does not fit this model (TraceDiverged), not an etcd error inside the model (model-error)."""
    from kmodel.checker.actions import Compact
    from kmodel.cluster import Cluster, ClusterConfig
    from kmodel.loop import EventNotEnabled

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(5_000)
    newest = cluster.store.revision
    assert not Compact(newest + 1).fits(cluster)
    with pytest.raises(EventNotEnabled, match=f"cannot compact at revision {newest + 1}: the store is at revision "
                                              f"{newest}, compacted at 0"):
        Compact(newest + 1).apply(cluster)
    Compact(newest - 2).apply(cluster)
    assert cluster.store.compact_revision == newest - 2
    assert not Compact(newest - 2).fits(cluster) and Compact(newest).fits(cluster)
    with pytest.raises(EventNotEnabled, match="compacted at"):
        Compact(newest - 3).apply(cluster)


def test_crash_mid_reconcile_waits_for_the_process_to_be_half_way_through_a_sync():
    from kmodel.checker.actions import is_mid_reconcile
    from kmodel.cluster import Cluster, ClusterConfig

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(10_000)
    assert not is_mid_reconcile(cluster, "kube-controller-manager")  # quiet
    ApplyDeployment("web", 2).apply(cluster)
    audit_before = len(cluster.audit)
    CrashMidReconcile("kube-controller-manager").apply(cluster)
    assert not any(cluster.loop.is_up(n) for n in cluster.controller_manager)
    # it ran only until a controller had a write out: the Deployment exists, its pods do not yet
    assert cluster.get("deployments", "default", "web") is not None
    assert len(cluster.audit) > audit_before and not cluster.objects("pods", "default")


def _quiet_cluster_with_web():
    from kmodel.cluster import Cluster, ClusterConfig

    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyDeployment("web", 1).apply(cluster)
    cluster.run(30_000)
    assert len(cluster.objects("pods", "default")) == 1
    return cluster


def test_crash_mid_reconcile_of_the_first_reconciler_hits_the_controller_acting_on_a_change():
    cluster = _quiet_cluster_with_web()
    ScaleDeployment("web", 3).apply(cluster)
    CrashMidReconcile().apply(cluster)
    # the deployment controller was first to write (its scale of the ReplicaSet): kube-controller-manager is down,
    # nothing else is, and the ReplicaSet was not scaled by the time it crashed
    assert not any(cluster.loop.is_up(n) for n in cluster.controller_manager)
    assert cluster.loop.is_up("scheduler") and cluster.loop.is_up("kubelet/node-1")
    (rs,) = cluster.objects("replicasets", "default")
    assert rs.spec.replicas == 1


def test_crash_mid_reconcile_at_a_later_write_lets_the_earlier_ones_land():
    from kmodel.checker.actions import writes_outstanding

    cluster = _quiet_cluster_with_web()
    ApplyDeployment("web", 1, cpu_millis=500).apply(cluster)  # a new template: a new ReplicaSet, then more writes
    first = cluster.now
    CrashMidReconcile("controller/deployment", writes=2).apply(cluster)
    assert not cluster.loop.is_up("controller/deployment")
    # its first write (the new ReplicaSet) was answered before the crash; the second is still out
    assert len(cluster.objects("replicasets", "default")) == 2
    assert cluster.now >= first
    assert CrashMidReconcile("controller/deployment", writes=2).name == \
        "crash kube-controller-manager while write 2 of controller/deployment's next reconcile is out"
    assert writes_outstanding(cluster, "controller/deployment") == []  # a crashed client holds nothing


def test_crash_mid_reconcile_of_the_first_reconciler_crashes_nothing_when_no_one_writes():
    from kmodel.cluster import Cluster, ClusterConfig

    cluster = Cluster(ClusterConfig(nodes=1, components=("podgc",)))
    cluster.run(10_000)
    CrashMidReconcile(max_events=50).apply(cluster)
    assert cluster.loop.is_up("controller/podgc")


def test_an_action_knows_its_fields_by_their_names_only():
    """Old field names are the version 1 upgrade's business (checker/trace.py), not the actions'."""
    old = {"name": "crash-mid-reconcile", "process": "kube-controller-manager", "max_events": 2000}
    with pytest.raises(ValueError, match="process"):
        action_from_json(old)
    renamed = {"name": "crash-mid-reconcile", "component": "kube-controller-manager", "max_events": 2000}
    assert action_from_json(renamed) == CrashMidReconcile("kube-controller-manager")


def test_a_failed_container_that_is_not_running_is_not_enabled():
    """A replayed fail_container of a container the node does not run now is a trace that does not fit this model
    (TraceDiverged, exit 2), not a CRI error inside the model (model-error); --lenient and the minimizer skip it."""
    from kmodel.checker.actions import FailContainer
    from kmodel.cluster import Cluster, ClusterConfig
    from kmodel.cluster.kubectl import Apply
    from kmodel.kubelet.pod_worker import POD_NAME_LABEL, POD_NAMESPACE_LABEL
    from kmodel.loop import EventNotEnabled

    from kmodel.checker.actions import deployment_manifest

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(15_000)
    cluster.submit(Apply(deployment_manifest("web", 1, 0, False)))
    cluster.run(cluster.now + 30_000)
    kubelet = cluster.loop.components["kubelet/node-1"]
    [running] = [c for c in kubelet.runtime.running() if c.labels.get(POD_NAMESPACE_LABEL) == "default"]
    pod = running.labels[POD_NAME_LABEL]
    assert FailContainer("node-1", pod, "app").fits(cluster)
    assert not FailContainer("node-1", "web-gone", "app").fits(cluster)
    with pytest.raises(EventNotEnabled, match="no such running container on node-1 now"):
        FailContainer("node-1", "web-gone", "app").apply(cluster)
    FailContainer("node-1", pod, "app").apply(cluster)
    assert not FailContainer("node-1", pod, "app").fits(cluster)  # it died; the kubelet has not restarted it yet


def test_a_settle_that_keeps_busy_fails_at_its_event_bound_and_one_that_converges_does_not():
    import attrs
    from pathlib import Path

    from kmodel.checker.replay import replay
    from kmodel.checker.trace import read_trace

    # the 4-step trace of the scheduler forgetting a host port: its ReplicaSet churns pods for good
    path = Path(__file__).parents[1] / "regressions" / (
        "scheduler-forgets-a-host-port-after-a-rejected-pod-and-places-pods-there-for-good.json")
    trace = read_trace(path)
    settle = trace.actions[-1]
    assert isinstance(settle, Settle) and settle.max_events == 0  # a trace from before the bound: no bound
    bounded = attrs.evolve(trace, actions=(*trace.actions[:-1], attrs.evolve(settle, bound_ms=600_000,
                                                                             max_events=8_000)))
    result = replay(bounded, record_messages=False)
    assert result.violation is not None and result.violation.invariant == "converges-replicas"
    # the bound is reached at the end of the first chunk past busy_ms (5 + 10 + 20 + 40 + 80 s); a churn that has
    # more than doubled the store is a storm, judged there without waiting for the latest deadline pending
    # (tests/checker/test_settle.py has a busy cluster that waits for it)
    judged = re.search(r"fails (\d+) s after the faults healed", result.violation.message)
    assert judged is not None and int(judged.group(1)) == 155
    assert "keeps creating objects without converging" in result.violation.message
    assert bounded.actions[-1].name.endswith("(at most 600 s, or 150 s and 8,000 events)")
    # with the fix the cluster converges within a few hundred events: the bound does not fire
    assert replay(bounded, record_messages=False, fixes=("scheduler-count-host-port-holders",)).passed
