"""The Job invariants, each holding on runs where it should and failing on a state that breaks it."""

from __future__ import annotations

import attrs

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
JOB_INVARIANTS = ("job-pods-counted-once", "job-finalizer-after-counting", "job-complete-has-its-completions")


def stepped(cluster: Cluster, until_ms: int, memos: dict) -> list:
    """Run to `until_ms` one event at a time, checking the Job invariants after each step."""
    found = []
    while cluster.now < until_ms and cluster.loop.enabled_events():
        cluster.loop.step(cluster.loop.enabled_events()[0])
        for name in JOB_INVARIANTS:
            found += [(name, m) for m in REGISTRY[name].check(cluster, memos.setdefault(name, {}))]
    return found


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
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "manual-1", "namespace": "default", "labels": dict(owner.spec.template.metadata.labels),
        "finalizers": [JOB_TRACKING_FINALIZER], "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "Job", "name": "manual", "uid": owner.metadata.uid,
            "controller": True}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    assert call(c, "create", "pods", "default", body=pod).code == 201
    c.run_for(20 * S)
    assert c.get("pods", "default", "manual-1").status.phase == "Succeeded"
    memo: dict = {}
    assert check(c, "job-finalizer-after-counting", memo) == []
    release = {"metadata": {"finalizers": []}}
    assert call(c, "patch", "pods", "default", "manual-1", body=release).code == 200
    found = check(c, "job-finalizer-after-counting", memo)
    assert len(found) == 1 and "pod default/manual-1 (Succeeded) lost its batch.kubernetes.io/job-tracking " \
                               "finalizer while Job default/manual did not list it" in found[0]


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
