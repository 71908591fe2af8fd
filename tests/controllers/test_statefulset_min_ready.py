"""A StatefulSet's pod that is Ready but not yet available for minReadySeconds, both sides of the
statefulset-healthy-means-available fix (kmodel.fixes): Kubernetes 1.31's isHealthy asks Running and Ready only,
so a condemned pod not yet available is not the first unhealthy pod and blocks the scale-down
(kubernetes/kubernetes#123918); #130909 (1.34) makes a pod healthy only once it is available."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Scale
from kmodel.controllers.statefulset_logic import REVISION_LABEL, new_pod, plan
from kmodel.fixes import STATEFULSET_HEALTHY_MEANS_AVAILABLE
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
