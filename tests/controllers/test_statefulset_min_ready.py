"""A StatefulSet's pod that is Ready but not yet available for minReadySeconds, both sides of the
statefulset-healthy-means-available fix (kmodel.fixes): Kubernetes 1.31's isHealthy asks Running and Ready only,
so a condemned pod not yet available is not the first unhealthy pod and blocks the scale-down
(kubernetes/kubernetes#123918); #130909 (1.34) makes a pod healthy only once it is available. And both sides of
statefulset-recheck-when-available: a sync that stops at a replica not yet available asks for no re-check when a
condemned pod, available, keeps availableReplicas equal to replicas."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Scale
from kmodel.controllers.statefulset_logic import REVISION_LABEL, new_pod, plan
from kmodel.fixes import STATEFULSET_HEALTHY_MEANS_AVAILABLE, STATEFULSET_RECHECK_WHEN_AVAILABLE
from kmodel.objects import PodCondition, PodStatus, load, with_defaults

from .test_statefulset import S, names, statefulset

MIN_READY = 5


def _set(replicas: int, policy: str = "OrderedReady") -> Any:
    manifest = statefulset(replicas, policy=policy)
    manifest["spec"]["minReadySeconds"] = MIN_READY
    return with_defaults(load(manifest))


def _ready_since(sts: Any, ordinal: int, since: int, *, ready: bool = True, revision: str = "") -> Any:
    """Pod `<set>-<ordinal>`, Running, its Ready condition `ready` since `since` (ms)."""
    pod = new_pod(sts, ordinal)
    if revision:
        pod = attrs.evolve(pod, metadata=attrs.evolve(
            pod.metadata, labels={**pod.metadata.labels, REVISION_LABEL: revision}))
    ready_condition = PodCondition(type="Ready", status="True" if ready else "False", last_transition_time=since)
    return attrs.evolve(pod, status=PodStatus(phase="Running", conditions=(ready_condition,)))


def _deleted(p: Any) -> list[str]:
    return [pod.metadata.name for step in p.steps for pod in step.deletes]


@pytest.mark.parametrize("fixed, deleted_before_available", [(False, []), (True, ["web-1"])])
def test_a_condemned_pod_ready_but_not_yet_available_blocks_the_scale_down_unless_healthy_means_available(
        fixed, deleted_before_available):
    sts = _set(1)
    pods = [_ready_since(sts, 0, 0), _ready_since(sts, 1, 10 * S)]
    # 2 s after web-1 turned ready: not available for minReadySeconds (5 s) yet
    assert _deleted(plan(sts, pods, 12 * S, healthy_means_available=fixed)) == deleted_before_available
    # ready for more than minReadySeconds: deleted either way
    assert _deleted(plan(sts, pods, 16 * S, healthy_means_available=fixed)) == ["web-1"]


@pytest.mark.parametrize("fixed", [False, True])
def test_a_condemned_pod_not_ready_is_the_first_unhealthy_pod_and_goes_either_way(fixed):
    sts = _set(1)
    pods = [_ready_since(sts, 0, 0), _ready_since(sts, 1, 10 * S, ready=False)]
    assert _deleted(plan(sts, pods, 12 * S, healthy_means_available=fixed)) == ["web-1"]


@pytest.mark.parametrize("fixed, deleted", [(False, ["web-0"]), (True, [])])
def test_a_parallel_rolling_update_waits_for_an_updated_replica_to_be_available_only_with_the_fix(fixed, deleted):
    """#119234: 1.31's rolling update goes on past an updated replica that is Ready but not yet available (with
    OrderedReady processReplica waits for availability first); with the fix it waits."""
    sts = _set(2, "Parallel")
    pods = [_ready_since(sts, 0, 0, revision="web-old"), _ready_since(sts, 1, 10 * S)]
    assert _deleted(plan(sts, pods, 12 * S, healthy_means_available=fixed)) == deleted
    assert _deleted(plan(sts, pods, 16 * S, healthy_means_available=fixed)) == ["web-0"]


@pytest.mark.parametrize("fixed, left", [(False, ["web-0"]), (True, [])])
def test_scaled_to_zero_while_its_pod_is_ready_but_not_yet_available(fixed, left):
    """The route of tests/regressions/statefulset-scaled-down-keeps-a-pod-ready-but-not-yet-available.json on a
    cluster: the sync that found web-0 Pending brings the set back 5 s later, the pod turns ready at once, and the
    scale to 0 a second later blocks on it; by 1.31's rules nothing syncs the set again once the pod is available."""
    fixes = (STATEFULSET_HEALTHY_MEANS_AVAILABLE,) if fixed else ()
    c = Cluster(ClusterConfig(nodes=1, fixes=fixes))
    c.run(15 * S)  # the node registered and ready: the pod runs at the instant it is bound
    manifest = statefulset(1)
    manifest["spec"]["minReadySeconds"] = MIN_READY
    c.submit(Apply(manifest))
    c.run(c.now + 1 * S)
    assert c.get("pods", "default", "web-0").status.phase == "Running"
    c.submit(Scale("statefulsets", "default", "web", 0))
    c.run(c.now + 120 * S)
    assert names(c) == left


@pytest.mark.parametrize("healthy_means_available", [False, True])
def test_a_sync_stopped_at_a_replica_not_yet_available_says_when_it_will_be(healthy_means_available):
    sts = _set(1)
    pods = [_ready_since(sts, 0, 10 * S), _ready_since(sts, 1, 0)]
    decided = plan(sts, pods, 12 * S, healthy_means_available=healthy_means_available)
    assert _deleted(decided) == []  # web-1 waits for web-0
    assert decided.status.available_replicas == 1 == sts.spec.replicas  # web-1 counts: no re-check from the status
    assert decided.available_in_ms == 3 * S  # web-0 ready since 10 s, available after 15 s
    assert plan(sts, pods, 15 * S).available_in_ms == 0  # exactly minReadySeconds: not yet (strictly after)
    later = plan(sts, pods, 15 * S + 1)
    assert later.available_in_ms is None and _deleted(later) == ["web-1"]


def test_a_sync_stopped_at_a_pod_not_ready_or_without_min_ready_seconds_names_no_wait():
    sts = _set(2)
    assert plan(sts, [_ready_since(sts, 0, 0), _ready_since(sts, 1, 10 * S, ready=False)], 12 * S).available_in_ms is None
    no_min = with_defaults(load(statefulset(2)))
    assert plan(no_min, [_ready_since(no_min, 0, 10 * S)], 12 * S).available_in_ms is None


@pytest.mark.parametrize("fixed, left", [(False, ["web-0", "web-1"]), (True, ["web-0"])])
def test_scaled_down_while_a_re_created_replica_is_not_yet_available(fixed, left):
    """The route of tests/regressions/statefulset-scaled-down-while-a-replica-is-not-yet-available.json on a
    cluster: web-0 deleted and the set scaled to 1 at once; the re-created web-0 turns ready while a re-check 5 s
    later already waits, and at that re-check availableReplicas (web-1's) equals replicas."""
    fixes = (STATEFULSET_RECHECK_WHEN_AVAILABLE,) if fixed else ()
    c = Cluster(ClusterConfig(nodes=1, fixes=fixes))
    c.run(15 * S)
    manifest = statefulset(2)
    manifest["spec"]["minReadySeconds"] = MIN_READY
    c.submit(Apply(manifest))
    c.run(c.now + 30 * S)
    assert names(c) == ["web-0", "web-1"]
    c.submit(Delete("pods", "default", "web-0"))
    c.submit(Scale("statefulsets", "default", "web", 1))
    c.run(c.now + 120 * S)
    assert names(c) == left
