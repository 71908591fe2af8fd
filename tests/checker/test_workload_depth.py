"""Workload depth actions and rules (kmodel/checker/workload_depth_actions.py, workload_depth_rules.py): each
action round-trips through JSON and does on a small cluster what its kubectl command does (and upstream's
controllers then do), and each rule fires on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment, ScaleDeployment
from kmodel.checker.workload_actions import LabelNode, TaintNodeAction
from kmodel.checker.workload_depth_rules import _replicated_pods
from kmodel.checker.workload_depth_actions import (
    SCALE_DOWN_COSTS, ApplyBatchJob, ApplyStatefulSetStrategy, ApplyTolerantPod, SetNodeSelector, SuspendJob, WaitForJob,
    batch_job_manifest, job_finished_or_gone,
)
from kmodel.cluster import Cluster, ClusterConfig

from tests.checker.conftest import SmallMachine
from tests.checker.test_job_actions import codes

EXAMPLES = [ApplyBatchJob(), ApplyBatchJob(3, 3, True, True, True, 2, 2, True, 2), SuspendJob("batch", False),
            WaitForJob("report", 5), ApplyTolerantPod("debug-1", "node-1", 5), ApplyStatefulSetStrategy(3, True, 1, 4),
            SetNodeSelector("api", 2)]


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()


def test_bad_depth_actions_are_refused():
    with pytest.raises(ValueError, match="parallelism must be at least 1"):
        action_from_json({"name": "apply-batch-job", "parallelism": 0})


def batch(cluster: Cluster):
    return cluster.get("jobs", "default", "batch")


def conditions(job) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in job.status.conditions}


def test_a_work_queue_job_completes_once_a_pod_succeeded_and_none_runs():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyBatchJob(completions=1, parallelism=2).apply(cluster)  # COMPLETIONS[1]: none
    cluster.run_for(1_000)  # kubectl's request reaches the API server
    assert "completions" not in batch_job_manifest(ApplyBatchJob(1).shape)["spec"]
    WaitForJob("batch", 60).apply(cluster)
    job = batch(cluster)
    assert conditions(job)["Complete"][0] == "True" and job.status.succeeded == 2


def test_a_job_past_its_deadline_fails_deadline_exceeded_and_a_ttl_set_later_deletes_it():
    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyBatchJob(deadline=1).apply(cluster)  # 3 s, shorter than the pod's 5 s run
    cluster.run_for(1_000)
    WaitForJob("batch", 30).apply(cluster)
    assert conditions(batch(cluster))["Failed"] == ("True", "DeadlineExceeded")
    ApplyBatchJob(deadline=1, ttl=1).apply(cluster)  # ttlSecondsAfterFinished 0, set on the finished Job
    cluster.run_for(5_000)
    assert cluster.objects("jobs", "default") == [] and job_finished_or_gone(cluster, "batch")


def test_an_on_failure_job_fails_once_its_restarts_reach_the_backoff_limit():
    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyBatchJob(fails=True, on_failure=True, backoff_limit=1).apply(cluster)
    cluster.run_for(1_000)
    WaitForJob("batch", 60).apply(cluster)
    assert conditions(batch(cluster))["Failed"] == ("True", "BackoffLimitExceeded")


def test_a_suspended_job_runs_nothing_until_resumed():
    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyBatchJob(suspend=True).apply(cluster)
    cluster.run_for(10_000)
    assert cluster.objects("pods", "default") == []
    assert conditions(batch(cluster))["Suspended"] == ("True", "JobSuspended")
    SuspendJob("batch", False).apply(cluster)
    WaitForJob("batch", 60).apply(cluster)
    job = batch(cluster)
    assert conditions(job)["Suspended"] == ("False", "JobResumed") and conditions(job)["Complete"][0] == "True"
    ApplyBatchJob(completions=2).apply(cluster)  # completions are immutable
    SuspendJob("nothing").apply(cluster)
    cluster.run_for(2_000)
    assert codes(cluster)[-2:] == [422, 404]


def test_a_waiting_user_stops_at_the_timeout():
    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyBatchJob(suspend=True).apply(cluster)
    cluster.run_for(1_000)
    start = cluster.now
    WaitForJob("batch", 7).apply(cluster)
    assert cluster.now == start + 7_000 and not job_finished_or_gone(cluster, "batch")


def pod_names(cluster: Cluster) -> list[str]:
    return sorted(p.metadata.name for p in cluster.objects("pods", "default"))


def test_a_pod_tolerating_a_no_execute_taint_for_a_while_is_evicted_after_it():
    cluster = Cluster(ClusterConfig(nodes=1))
    node = cluster.nodes[0]
    ApplyTolerantPod("debug-1", node, 0).apply(cluster)  # for 5 s
    ApplyTolerantPod("debug-2", node, 3).apply(cluster)  # for ever
    cluster.run_for(10_000)
    TaintNodeAction(node, effect="NoExecute").apply(cluster)
    cluster.run_for(3_000)
    assert pod_names(cluster) == ["debug-1", "debug-2"]
    cluster.run_for(10_000)
    assert pod_names(cluster) == ["debug-2"]


def test_an_eviction_is_cancelled_when_the_taint_goes():
    cluster = Cluster(ClusterConfig(nodes=1))
    node = cluster.nodes[0]
    ApplyTolerantPod("debug-1", node, 1).apply(cluster)  # for 30 s
    cluster.run_for(10_000)
    TaintNodeAction(node, effect="NoExecute").apply(cluster)
    cluster.run_for(10_000)
    TaintNodeAction(node, effect="NoExecute", remove=True).apply(cluster)
    cluster.run_for(40_000)
    assert pod_names(cluster) == ["debug-1"]


def images(cluster: Cluster) -> dict[str, str]:
    return {p.metadata.name: p.spec.containers[0].image for p in cluster.objects("pods", "default")}


def test_a_statefulset_on_delete_keeps_its_pods_until_they_are_deleted_and_a_partition_keeps_the_lower_ones():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyStatefulSetStrategy(3, False, 0, 0).apply(cluster)  # OnDelete
    cluster.run_for(60_000)
    ApplyStatefulSetStrategy(3, False, 1, 0).apply(cluster)  # a new image: nothing is replaced
    cluster.run_for(30_000)
    assert set(images(cluster).values()) == {"nginx:1.25"}
    ApplyStatefulSetStrategy(3, False, 1, 1).apply(cluster)  # RollingUpdate partition 1: db-1 and db-2 roll
    cluster.run_for(60_000)
    assert images(cluster) == {"db-0": "nginx:1.25", "db-1": "nginx:1.26", "db-2": "nginx:1.26"}
    ApplyStatefulSetStrategy(3, True, 1, 1).apply(cluster)  # podManagementPolicy is immutable
    cluster.run_for(2_000)
    assert codes(cluster)[-1] == 422


def replica_sets(cluster: Cluster, app: str) -> list[int]:
    return sorted(rs.spec.replicas for rs in cluster.objects("replicasets", "default")
                  if rs.metadata.name.startswith(app + "-"))


def test_a_rollout_no_node_takes_stays_in_progress_and_scales_in_proportion():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 4).apply(cluster)
    cluster.run_for(30_000)
    SetNodeSelector("web", 1).apply(cluster)  # disktype=ssd: no node has it
    cluster.run_for(30_000)
    assert replica_sets(cluster, "web") == [2, 3]  # 25 % of 4: one more pod than wanted, one less available
    # 8 + maxSurge 2 = 10 allowed, 5 to add: each ReplicaSet grows to its size * 10 / 5 (its max-replicas
    # annotation), as upstream's getReplicaSetFraction: 3 -> 6 and 2 -> 4
    ScaleDeployment("web", 8).apply(cluster)
    cluster.run_for(10_000)
    assert replica_sets(cluster, "web") == [4, 6]
    LabelNode(cluster.nodes[0], "disktype", "ssd").apply(cluster)
    cluster.run_for(120_000)
    assert replica_sets(cluster, "web") == [0, 8]


def test_every_depth_rule_fires_on_a_machine():
    machine = SmallMachine()
    machine.apply_pod("debug-1", 1, False)
    machine.advance_time(10)
    fires = {"apply_batch_job": lambda: machine.apply_batch_job(0, 1, False, False, False, 0, 0, False, 0),
             "suspend_job": lambda: machine.suspend_job(0, True),
             "wait_for_job": lambda: machine.wait_for_job(0, 5),
             "apply_tolerant_pod": lambda: machine.apply_tolerant_pod("debug-2", 0, 4),
             "taint_node_of_pod": lambda: machine.taint_node_of_pod(0, False),
             "apply_statefulset_strategy": lambda: machine.apply_statefulset_strategy(2, False, 1, 1),
             "set_node_selector": lambda: machine.set_node_selector("web", 1)}
    for name, fire in fires.items():
        before = machine.stats.rules.get(name, 0)
        fire()
        assert machine.stats.rules[name] == before + 1, name
    kinds = {a.kind for a in machine.session.actions}
    assert {"apply-batch-job", "suspend-job", "wait-for-job", "apply-tolerant-pod", "taint-node"} <= kinds


def test_a_pod_made_cheapest_is_the_one_a_scale_down_deletes_and_an_invalid_cost_is_refused():
    machine = SmallMachine()
    machine.apply_deployment("web", 3, 0, False, False)
    machine.advance_time(30)
    pods = [pod for _, pod in _replicated_pods(machine)]
    assert len(pods) == 3
    machine.annotate_and_scale_down(1, SCALE_DOWN_COSTS.index("-100"))
    machine.advance_time(30)
    left = {p.metadata.name for p in machine.cluster.objects("pods", "default")}
    assert left == set(pods) - {pods[1]}  # the cheapest goes, whatever else ranks the pods
    since = len(machine.cluster.kubectl.results)
    machine.annotate_and_scale_down(0, SCALE_DOWN_COSTS.index("008"))
    machine.advance_time(30)
    annotate, scale = machine.cluster.kubectl.results[since:since + 2]
    assert (annotate.response.code, annotate.response.body.message.rpartition(": ")[2]) == (
        422, "must be a 32bit integer")
    assert scale.ok and len(machine.cluster.objects("pods", "default")) == 1
    assert machine.stats.rules["annotate_and_scale_down"] == 4  # two actions each time


def test_wait_for_unschedulable_runs_only_over_an_unschedulable_pod_and_gets_it_tried_again():
    """The rule's precondition holds only while a pod is Pending, Unschedulable; its wait outlasts the scheduler's
    5 minutes in the unschedulable pods, so the pod is tried again (a second FailedScheduling) though no event of the
    cluster woke it."""
    from kmodel.checker.workload_depth_rules import UNSCHEDULABLE_WAIT_MS, _unschedulable_pods

    machine = SmallMachine()
    machine.advance_time(5)
    assert not _unschedulable_pods(machine)
    machine.apply_pod_shape("debug-1", 0, (0, 0, 7, 0))  # an empty term or more than 2 cores: no node matches
    machine.advance_time(5)
    assert _unschedulable_pods(machine)
    scheduler = machine.cluster.loop.components["scheduler"]
    assert "default/debug-1" in scheduler.queue.unschedulable
    tried = scheduler.queue.unschedulable["default/debug-1"].attempts
    machine.wait_for_unschedulable()
    assert machine.session.actions[-1].ms == UNSCHEDULABLE_WAIT_MS
    assert scheduler.queue.unschedulable["default/debug-1"].attempts == tried + 1
    machine.teardown()


def test_apply_tolerant_pod_of_the_untolerated_row_taints_a_node_first_when_none_is():
    """The row that does not tolerate the taint meets it: with no node tainted the rule taints the drawn node first,
    and that node's kubelet refuses the pod at admission (TaintToleration); with a node tainted, it pins there."""
    import kmodel.kubelet.component as kubelet_component
    from kmodel.checker.workload_depth_rules import UNTOLERATED, _no_execute_nodes

    refused = []
    admit = kubelet_component.admit

    def recorded(pod, active, node, **kwargs):
        rejection = admit(pod, active, node, **kwargs)
        refused.append((pod.metadata.name, rejection and rejection.reason))
        return rejection

    machine = SmallMachine()
    machine.advance_time(5)
    machine.apply_tolerant_pod("debug-1", 0, 1)  # a row that tolerates: no taint added
    assert machine.session.actions[-1].kind == "apply-tolerant-pod" and not _no_execute_nodes(machine)
    kubelet_component.admit = recorded
    try:
        machine.apply_tolerant_pod("debug-2", 1, UNTOLERATED)
        assert [a.kind for a in machine.session.actions[-2:]] == ["taint-node", "apply-tolerant-pod"]
        node = machine.session.actions[-1].node
        assert machine.session.actions[-2].node == node == machine.cluster.nodes[1]
        machine.advance_time(5)
    finally:
        kubelet_component.admit = admit
    assert ("debug-2", "TaintToleration") in refused
    machine.teardown()
