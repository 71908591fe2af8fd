"""The Job invariants, each holding on runs where it should and failing on a state that breaks it."""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.apiserver.authentication import service_account_token
from kmodel.cluster import DEFAULT_COMPONENTS, Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete
from kmodel.invariants.registry import LIVENESS, REGISTRY, SAFETY, registered
from kmodel.objects import dump
from kmodel.objects.batch import JOB_TRACKING_FINALIZER

from tests.controllers.test_job_controller import failing, job
from tests.invariants.test_invariants import call

S = 1000
#: a cluster without the Job controller, so that a test can set a Job's state by hand
NO_JOB_CONTROLLER = tuple(name for name in DEFAULT_COMPONENTS if name != "job")
JOB_INVARIANTS = ("job-pods-counted-once", "job-finalizer-after-counting", "job-complete-has-its-completions",
                  "job-indexes-counted-once", "job-completed-indexes-kept")


def stepped(cluster: Cluster, until_ms: int, memos: dict) -> list:
    """Run to `until_ms` one event at a time, checking the Job invariants after each step."""
    found = []
    while cluster.now < until_ms and cluster.loop.enabled_events():
        cluster.loop.step(cluster.loop.enabled_events()[0])
        for name in JOB_INVARIANTS:
            found += [(name, m) for m in REGISTRY[name].check(cluster, memos.setdefault(name, {}))]
    return found


def owned_pod(owner: Any, name: str, *, annotations: dict | None = None, tracked: bool = True) -> dict:
    """A pod the Job `owner` controls and selects, as its controller would make it (with the tracking finalizer when
    `tracked`), for a test to create by hand."""
    meta = owner.metadata
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default", "labels": dict(owner.spec.template.metadata.labels),
        "annotations": annotations or {}, "finalizers": [JOB_TRACKING_FINALIZER] if tracked else [],
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta.name, "uid": meta.uid,
                             "controller": True}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}


#: the Job controller's token: the releases job-finalizer-after-counting judges are its own
AS_JOB_CONTROLLER = service_account_token("job-controller")


def check(cluster: Cluster, name: str, memo: dict) -> list[str]:
    return list(REGISTRY[name].check(cluster, memo))


def test_the_invariants_are_registered_with_their_kinds():
    assert {inv.name for inv in registered(SAFETY)} >= set(JOB_INVARIANTS)
    assert "finished-jobs-release-pods" in {inv.name for inv in registered(LIVENESS)}


def test_they_hold_while_jobs_complete_fail_and_are_deleted():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("work")))
    c.submit(Apply(job("flaky", completions=1, parallelism=1, backoffLimit=1, annotations=failing())))
    c.submit(Apply(job("slow", completions=2, parallelism=2, activeDeadlineSeconds=8,
                       annotations={"kmodel.io/run-seconds": "100"})))
    memos: dict = {}
    assert stepped(c, 60 * S, memos) == []
    c.submit(Delete("jobs", "default", "work"))
    assert stepped(c, c.now + 30 * S, memos) == []
    assert list(REGISTRY["finished-jobs-release-pods"].check(c, {})) == []


def _finished_job(c: Cluster) -> object:
    c.submit(Apply(job("one", completions=1, parallelism=1)))
    c.run_for(30 * S)
    return c.get("jobs", "default", "one")


def test_counted_once_fails_when_a_job_counts_a_pod_it_never_had():
    c = Cluster(ClusterConfig(nodes=1, components=DEFAULT_COMPONENTS))
    done = _finished_job(c)
    memo: dict = {}
    assert check(c, "job-pods-counted-once", memo) == []
    status = dump(attrs.evolve(done, status=attrs.evolve(done.status, succeeded=2)))["status"]
    assert call(c, "update", "jobs", "default", "one", subresource="status",
                body={**dump(done), "status": status}).code == 200
    assert check(c, "job-pods-counted-once", memo) == [
        "Job default/one counts 2 succeeded pods (status.succeeded 2 + 0 uncounted) but only 1 of its pods ever "
        "succeeded"]
    assert check(c, "job-complete-has-its-completions", {}) == []


def test_complete_fails_without_the_successful_pods_behind_it():
    c = Cluster(ClusterConfig(nodes=1, components=NO_JOB_CONTROLLER))
    c.submit(Apply(job("fake", completions=2, parallelism=1)))
    c.run_for(2 * S)
    fake = c.get("jobs", "default", "fake")
    conditions = [{"type": "Complete", "status": "True"}, {"type": "Failed", "status": "True"}]
    assert call(c, "update", "jobs", "default", "fake", subresource="status",
                body={**dump(fake), "status": {"succeeded": 2, "conditions": conditions}}).code == 200
    assert check(c, "job-complete-has-its-completions", {}) == [
        "Job default/fake is Complete with status.succeeded 2 and 0 pods that ever succeeded, wanting 2",
        "Job default/fake is both Complete and Failed"]


def test_finalizer_after_counting_fails_when_a_finished_pod_is_released_uncounted():
    c = Cluster(ClusterConfig(nodes=1, components=NO_JOB_CONTROLLER))  # nobody counts
    c.submit(Apply(job("manual", completions=1, parallelism=1)))
    c.run_for(2 * S)
    owner = c.get("jobs", "default", "manual")
    assert call(c, "create", "pods", "default", body=owned_pod(owner, "manual-1")).code == 201
    c.run_for(20 * S)
    assert c.get("pods", "default", "manual-1").status.phase == "Succeeded"
    memo: dict = {}
    assert check(c, "job-finalizer-after-counting", memo) == []
    release = {"metadata": {"finalizers": []}}
    assert call(c, "patch", "pods", "default", "manual-1", body=release, token=AS_JOB_CONTROLLER).code == 200
    found = check(c, "job-finalizer-after-counting", memo)
    assert len(found) == 1 and "pod default/manual-1 (Succeeded) lost its batch.kubernetes.io/job-tracking " \
                               "finalizer while Job default/manual did not list it" in found[0]


def test_finalizer_after_counting_leaves_a_users_removal_of_the_finalizer_to_the_user():
    c = Cluster(ClusterConfig(nodes=1, components=NO_JOB_CONTROLLER))
    c.submit(Apply(job("manual", completions=1, parallelism=1)))
    c.run_for(2 * S)
    owner = c.get("jobs", "default", "manual")
    assert call(c, "create", "pods", "default", body=owned_pod(owner, "manual-1")).code == 201
    c.run_for(20 * S)
    memo: dict = {}
    assert check(c, "job-finalizer-after-counting", memo) == []
    # an administrator's `kubectl edit` removing the finalizer: the audit trail says who released the pod
    assert call(c, "patch", "pods", "default", "manual-1", body={"metadata": {"finalizers": []}}).code == 200
    assert check(c, "job-finalizer-after-counting", memo) == []


def test_finished_jobs_release_pods_fails_while_a_finished_jobs_pod_keeps_the_finalizer():
    c = Cluster(ClusterConfig(nodes=1, components=NO_JOB_CONTROLLER))  # nobody releases it
    c.submit(Apply(job("one", completions=1, parallelism=1)))
    c.run_for(2 * S)
    owner = c.get("jobs", "default", "one")
    status = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    assert call(c, "update", "jobs", "default", "one", subresource="status",
                body={**dump(owner), "status": status}).code == 200
    held = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "one-x", "namespace": "default", "finalizers": [JOB_TRACKING_FINALIZER], "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "Job", "name": "one", "uid": owner.metadata.uid, "controller": True}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    assert call(c, "create", "pods", "default", body=held).code == 201
    assert list(REGISTRY["finished-jobs-release-pods"].check(c, {})) == [
        "pod default/one-x still holds batch.kubernetes.io/job-tracking though its Job has finished"]


# -- Indexed Jobs ------------------------------------------------------------------------------------------------

def test_they_hold_while_indexed_jobs_complete_fail_and_are_deleted():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("idx", completions=4, parallelism=2, completionMode="Indexed")))
    c.submit(Apply(job("idx-flaky", completions=2, parallelism=2, backoffLimit=1, completionMode="Indexed",
                       annotations=failing())))
    memos: dict = {}
    assert stepped(c, 60 * S, memos) == []
    assert c.get("jobs", "default", "idx").status.completed_indexes == "0-3"
    c.submit(Delete("jobs", "default", "idx"))
    assert stepped(c, c.now + 30 * S, memos) == []
    assert list(REGISTRY["finished-jobs-release-pods"].check(c, {})) == []


def _indexed_without_controller(completions: int = 3) -> tuple[Cluster, Any]:
    """A cluster with an Indexed Job nobody manages, and one pod of it with index 0 that succeeds; the Job."""
    c = Cluster(ClusterConfig(nodes=1, components=NO_JOB_CONTROLLER))
    c.submit(Apply(job("manual", completions=completions, parallelism=1, completionMode="Indexed")))
    c.run_for(2 * S)
    owner = c.get("jobs", "default", "manual")
    pod = owned_pod(owner, "manual-0-a", annotations={"batch.kubernetes.io/job-completion-index": "0"})
    assert call(c, "create", "pods", "default", body=pod).code == 201
    c.run_for(20 * S)
    assert c.get("pods", "default", "manual-0-a").status.phase == "Succeeded"
    return c, c.get("jobs", "default", "manual")


def _write_status(c: Cluster, job: Any, **status: Any) -> Any:
    body = {**dump(job), "status": {**dump(job).get("status", {}), **status}}
    answer = call(c, "update", "jobs", "default", "manual", subresource="status", body=body)
    assert answer.code == 200
    return answer.body


def test_indexes_counted_once_fails_for_an_index_no_pod_succeeded_for_or_a_miscount():
    c, owner = _indexed_without_controller()
    memo: dict = {}
    owner = _write_status(c, owner, completedIndexes="0", succeeded=1)
    assert check(c, "job-indexes-counted-once", memo) == []
    owner = _write_status(c, owner, completedIndexes="0,1", succeeded=2)
    assert check(c, "job-indexes-counted-once", memo) == [
        "Job default/manual lists index 1 in status.completedIndexes, but no pod of the Job with that index ever "
        "succeeded"]
    _write_status(c, owner, completedIndexes="0", succeeded=2)
    assert check(c, "job-indexes-counted-once", memo) == [
        "Job default/manual has status.succeeded 2 but status.completedIndexes '0' lists 1 indexes"]


def test_indexes_counted_once_fails_for_an_index_past_completions():
    c, owner = _indexed_without_controller(completions=1)
    _write_status(c, owner, completedIndexes="0,3", succeeded=2)
    found = check(c, "job-indexes-counted-once", {})
    assert found[0] == ("Job default/manual's status.completedIndexes '0,3' is not a list of increasing distinct "
                        "indexes below completions 1")


def test_completed_indexes_kept_fails_when_an_index_is_lost():
    c, owner = _indexed_without_controller()
    memo: dict = {}
    owner = _write_status(c, owner, completedIndexes="0", succeeded=1)
    assert check(c, "job-completed-indexes-kept", memo) == []
    _write_status(c, owner, completedIndexes="", succeeded=0)
    found = check(c, "job-completed-indexes-kept", memo)
    assert len(found) == 1 and found[0].endswith(
        "Job default/manual's status.completedIndexes went from '0' to '', losing 0")


def test_finalizer_after_counting_takes_a_succeeded_pod_counted_by_its_index():
    c, owner = _indexed_without_controller()
    memo: dict = {}
    _write_status(c, owner, completedIndexes="0", succeeded=1)
    release = {"metadata": {"finalizers": []}}
    assert call(c, "patch", "pods", "default", "manual-0-a", body=release).code == 200
    assert check(c, "job-finalizer-after-counting", memo) == []


def test_finalizer_after_counting_fails_for_an_indexed_pod_released_before_its_index_is_listed():
    c, _ = _indexed_without_controller()
    release = {"metadata": {"finalizers": []}}
    assert call(c, "patch", "pods", "default", "manual-0-a", body=release, token=AS_JOB_CONTROLLER).code == 200
    found = check(c, "job-finalizer-after-counting", {})
    assert len(found) == 1 and "pod default/manual-0-a (Succeeded) lost its" in found[0]


def test_finalizer_after_counting_takes_an_indexed_pod_with_no_index_to_count():
    c, owner = _indexed_without_controller(completions=1)
    pod = owned_pod(owner, "manual-9-a", annotations={"batch.kubernetes.io/job-completion-index": "9"})
    assert call(c, "create", "pods", "default", body=pod).code == 201
    c.run_for(20 * S)
    release = {"metadata": {"finalizers": []}}
    assert call(c, "patch", "pods", "default", "manual-9-a", body=release).code == 200
    assert check(c, "job-finalizer-after-counting", {}) == []


def test_they_hold_while_a_job_is_suspended_and_resumed():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("s", completions=3, parallelism=2, completionMode="Indexed",
                       annotations={"kmodel.io/run-seconds": "10"})))
    memos: dict = {}
    assert stepped(c, 4 * S, memos) == []
    for suspend, until in ((True, 10 * S), (False, 80 * S)):
        assert call(c, "patch", "jobs", "default", "s", body={"spec": {"suspend": suspend}}).code == 200
        assert stepped(c, until, memos) == []
    assert c.get("jobs", "default", "s").status.completed_indexes == "0-2"
