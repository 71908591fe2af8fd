"""The StatefulSet controller: identities <set>-<ordinal>, OrderedReady and Parallel, scale-down from the highest
ordinal, one pod per identity, failed pods replaced, status, rolling update; and its pure plan."""

from __future__ import annotations

from pathlib import Path

import attrs
from typing import Any

from kmodel.apiserver.authentication import service_account_name
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch, Scale
from kmodel.controllers.statefulset_logic import (
    POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL, parent_and_ordinal, plan, update_revision,
)
from kmodel.objects import load, load_yaml, with_defaults

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
S = 1000
SA = service_account_name("statefulset-controller")


def statefulset(replicas: int = 3, *, policy: str = "", cpu: str = "", name: str = "web") -> dict:
    container: dict[str, Any] = {"name": "app", "image": "app:1"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {
        "serviceName": name, "replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}},
    }
    if policy:
        spec["podManagementPolicy"] = policy
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def names(c: Cluster) -> list[str]:
    return sorted(p.metadata.name for p in c.objects("pods", "default"))


def controller_requests(c: Cluster, verb: str) -> list[str]:
    """The pods the controller created or deleted (its Successful<Verb> events), oldest first."""
    reason = "SuccessfulCreate" if verb == "create" else "SuccessfulDelete"
    events = sorted((e for e in c.objects("events", "default") if e.reason == reason
                     and e.involved_object.kind == "StatefulSet"), key=lambda e: e.first_timestamp)
    assert all(e.count == 1 for e in events)
    return [e.message.split()[2] for e in events]


def test_the_example_runs_three_pods_with_their_identities_and_a_status_that_says_so():
    c = Cluster(ClusterConfig(nodes=2))
    c.apply(load_yaml((EXAMPLES / "statefulset.yaml").read_text()))
    c.run(60 * S)
    sts = c.get("statefulsets", "default", "web")
    assert names(c) == ["web-0", "web-1", "web-2"]
    for pod in c.objects("pods", "default"):
        ordinal = parent_and_ordinal(pod.metadata.name)[1]
        assert pod.status.phase == "Running"
        assert pod.metadata.labels[POD_NAME_LABEL] == pod.metadata.name
        assert pod.metadata.labels[POD_INDEX_LABEL] == str(ordinal)
        assert pod.metadata.labels[REVISION_LABEL] == update_revision(sts)
        assert (pod.spec.hostname, pod.spec.subdomain) == (pod.metadata.name, "web")
        [ref] = pod.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller) == ("StatefulSet", "web", sts.metadata.uid, True)
    s = sts.status
    assert (s.replicas, s.ready_replicas, s.available_replicas, s.current_replicas, s.updated_replicas) == (3,) * 5
    assert s.observed_generation == sts.metadata.generation and s.current_revision == s.update_revision
    assert controller_requests(c, "create") == ["web-0", "web-1", "web-2"]


def test_ordered_ready_creates_the_next_ordinal_only_once_the_lower_one_is_running_and_ready():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(3, cpu="100")))  # no node has room: web-0 stays Pending
    c.run(60 * S)
    assert names(c) == ["web-0"]
    assert c.get("statefulsets", "default", "web").status.replicas == 1


def test_parallel_creates_every_ordinal_without_waiting():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(3, policy="Parallel", cpu="100")))
    c.run(60 * S)
    assert names(c) == ["web-0", "web-1", "web-2"]
    assert all(p.status.phase == "Pending" for p in c.objects("pods", "default"))


def test_scale_down_removes_the_highest_ordinal_first_and_waits_for_it_to_be_gone():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(3)))
    c.run(60 * S)
    c.submit(Scale("statefulsets", "default", "web", 1))
    c.run(c.now + 120 * S)
    assert names(c) == ["web-0"]
    assert controller_requests(c, "delete") == ["web-2", "web-1"]
    deletes = [r for r in c.audit.records if r.user == SA and r.verb == "delete" and r.resource == "pods"]
    gone = [r for r in c.audit.records if r.verb == "delete" and r.name == "web-2" and r.code == 200]
    # web-1's delete came after web-2's object was removed (the kubelet's final delete of it)
    assert deletes[1].revision > max(r.revision for r in gone)
    assert c.get("statefulsets", "default", "web").status.replicas == 1


def test_a_deleted_pod_is_created_again_only_after_the_old_object_is_gone():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(2)))
    c.run(60 * S)
    old = c.get("pods", "default", "web-1")
    c.submit(Delete("pods", "default", "web-1"))
    c.run(c.now + 60 * S)
    new = c.get("pods", "default", "web-1")
    assert new is not None and new.metadata.uid != old.metadata.uid and new.status.phase == "Running"
    assert controller_requests(c, "create") == ["web-0", "web-1", "web-1"]


def test_a_template_change_rolls_out_from_the_highest_ordinal():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(3)))
    c.run(60 * S)
    c.submit(Patch("statefulsets", "default", "web",
                   {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}))
    c.run(c.now + 120 * S)
    sts = c.get("statefulsets", "default", "web")
    assert [p.spec.containers[0].image for p in sorted(c.objects("pods", "default"), key=lambda p: p.metadata.name)] \
        == ["app:2"] * 3
    assert controller_requests(c, "delete") == ["web-2", "web-1", "web-0"]
    assert sts.status.current_revision == sts.status.update_revision == update_revision(sts)
    assert sts.status.updated_replicas == sts.status.current_replicas == 3


def test_deleting_the_set_lets_the_garbage_collector_remove_its_pods():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(statefulset(2)))
    c.run(60 * S)
    c.submit(Delete("statefulsets", "default", "web"))
    c.run(c.now + 60 * S)
    assert names(c) == [] and c.get("statefulsets", "default", "web") is None


def test_spec_fields_other_than_replicas_template_and_strategy_are_immutable():
    c = Cluster(ClusterConfig(nodes=1, components=()))
    c.submit(Apply(statefulset(1)))
    c.submit(Patch("statefulsets", "default", "web", {"spec": {"serviceName": "other"}}))
    c.run(5 * S)
    response = c.kubectl.results[-1].response
    assert response.code == 422 and "spec: Forbidden: updates to statefulset spec for fields other than" \
        in response.body.message


# -- the pure plan -------------------------------------------------------------------------------------------

def _sts(replicas: int, policy: str = "OrderedReady") -> Any:
    return with_defaults(load(statefulset(replicas, policy=policy)))


def test_plan_ordered_ready_stops_at_the_first_replica_not_running_and_ready():
    sts = _sts(3)
    p = plan(sts, [], 0)
    assert [[pod.metadata.name for pod in s.creates] for s in p.steps] == [["web-0"]]
    p = plan(_sts(3, "Parallel"), [], 0)
    assert [[pod.metadata.name for pod in s.creates] for s in p.steps] == [["web-0", "web-1", "web-2"]]


def _running(sts: Any, ordinal: int, phase: str = "Running", ready: bool = True) -> Any:
    from kmodel.controllers.statefulset_logic import new_pod
    from kmodel.objects import PodCondition, PodStatus
    pod = new_pod(sts, ordinal)
    conditions = (PodCondition(type="Ready", status="True" if ready else "False"),)
    return attrs.evolve(pod, status=PodStatus(phase=phase, conditions=conditions))


def test_plan_deletes_a_failed_pod_and_leaves_its_replacement_to_a_later_sync():
    """kubernetes/kubernetes#123809 (1.31; 1.28-1.30 patch releases): processReplica deletes a Failed or Succeeded
    replica unless it is already being deleted, and returns: no create in the same sync, no Recreating* event."""
    sts = _sts(2)
    for phase in ("Failed", "Succeeded"):
        failed = _running(sts, 0, phase, ready=False)
        p = plan(sts, [failed, _running(sts, 1)], 0)
        assert [([d.metadata.name for d in s.deletes], [c.metadata.name for c in s.creates]) for s in p.steps] == \
            [(["web-0"], [])]
        terminating = attrs.evolve(failed, metadata=attrs.evolve(failed.metadata, deletion_timestamp=1))
        assert plan(sts, [terminating, _running(sts, 1)], 0).steps == ()  # not deleted again, not replaced yet
    parallel = _sts(2, "Parallel")
    p = plan(parallel, [_running(parallel, 0, "Failed", ready=False)], 0)
    assert [([d.metadata.name for d in s.deletes], [c.metadata.name for c in s.creates]) for s in p.steps] == \
        [(["web-0"], []), ([], ["web-1"])]


def test_plan_scale_down_deletes_the_highest_ordinal_once_every_replica_is_healthy():
    sts = _sts(1)
    pods = [_running(sts, i) for i in range(3)]
    assert [[d.metadata.name for d in s.deletes] for s in plan(sts, pods, 0).steps] == [["web-2"]]
    pods[2] = attrs.evolve(pods[2], metadata=attrs.evolve(pods[2].metadata, deletion_timestamp=1))
    assert plan(sts, pods, 0).steps == ()  # web-1 waits until web-2 is gone
    pods[0] = _running(sts, 0, ready=False)
    assert plan(_sts(1), pods[:2], 0).steps == ()  # an unready replica blocks the scale-down
