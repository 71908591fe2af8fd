"""The Job controller and the TTL-after-finished controller on a whole cluster: completions and parallelism, the
tracking finalizer, backoffLimit, activeDeadlineSeconds, OnFailure restarts, a Job without completions, deletion
of a Job and of a finished Job past its TTL."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete
from kmodel.objects.batch import JOB_TRACKING_FINALIZER

NEVER = "Never"


def job(name: str, *, completions: int | None = 3, parallelism: int | None = 2, policy: str = NEVER,
        annotations: dict | None = None, **spec) -> dict:
    body: dict = {"template": {"metadata": {"annotations": annotations or {}},
                               "spec": {"restartPolicy": policy, "containers": [{"name": "c", "image": "busybox"}]}},
                  **spec}
    if completions is not None:
        body["completions"] = completions
    if parallelism is not None:
        body["parallelism"] = parallelism
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def failing(seconds: int = 1) -> dict:
    return {"kmodel.io/exit-code": "1", "kmodel.io/run-seconds": str(seconds)}


def conditions(c: Cluster, name: str) -> dict:
    return {x.type: (x.status, x.reason) for x in c.get("jobs", "default", name).status.conditions}


def job_events(c: Cluster, name: str) -> list:
    return [(e.reason, e.message) for e in c.objects("events", "default")
            if e.involved_object.kind == "Job" and e.involved_object.name == name]


def test_a_job_runs_its_completions_at_most_parallelism_at_a_time_and_completes():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("work")))
    most = 0
    for _ in range(60):
        c.run_for(1_000)
        running = [p for p in c.objects("pods", "default") if p.status.phase not in ("Succeeded", "Failed")
                   and p.metadata.deletion_timestamp is None]
        most = max(most, len(running))
    assert most == 2
    status = c.get("jobs", "default", "work").status
    assert (status.succeeded, status.failed, status.active) == (3, 0, 0)
    assert status.completion_time is not None and status.start_time is not None
    assert conditions(c, "work") == {"SuccessCriteriaMet": ("True", ""), "Complete": ("True", "")}
    pods = c.objects("pods", "default")
    assert len(pods) == 3 and all(p.status.phase == "Succeeded" for p in pods)
    assert all(JOB_TRACKING_FINALIZER not in p.metadata.finalizers for p in pods)  # counted, then released
    uid = c.get("jobs", "default", "work").metadata.uid
    assert all(p.metadata.labels["batch.kubernetes.io/controller-uid"] == uid for p in pods)
    assert all(p.metadata.labels["batch.kubernetes.io/job-name"] == "work" for p in pods)
    assert ("Completed", "Job completed") in job_events(c, "work")


def test_pod_failures_past_the_backoff_limit_fail_the_job():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("flaky", completions=1, parallelism=1, backoffLimit=2, annotations=failing())))
    c.run_for(120_000)
    status = c.get("jobs", "default", "flaky").status
    assert status.failed == 3 and status.succeeded == 0
    assert conditions(c, "flaky") == {"FailureTarget": ("True", "BackoffLimitExceeded"),
                                      "Failed": ("True", "BackoffLimitExceeded")}
    assert ("BackoffLimitExceeded", "Job has reached the specified backoff limit") in job_events(c, "flaky")
    created = [p.metadata.creation_timestamp for p in c.objects("pods", "default")]
    gaps = [b - a for a, b in zip(sorted(created), sorted(created)[1:])]
    assert all(gap >= 10_000 for gap in gaps)  # a replacement waits out the pod-failure back-off


def test_on_failure_restarts_reaching_the_backoff_limit_fail_the_job():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("restarts", completions=1, parallelism=1, backoffLimit=2, policy="OnFailure",
                       annotations=failing())))
    c.run_for(120_000)
    assert conditions(c, "restarts")["Failed"] == ("True", "BackoffLimitExceeded")
    assert c.objects("pods", "default") == []  # its running pod was deleted, counted as failed
    assert c.get("jobs", "default", "restarts").status.failed == 1


def test_the_active_deadline_fails_the_job_and_deletes_its_running_pod():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("slow", completions=1, parallelism=1, activeDeadlineSeconds=20,
                       annotations={"kmodel.io/run-seconds": "100"})))
    c.run_for(60_000)
    assert conditions(c, "slow")["Failed"] == ("True", "DeadlineExceeded")
    assert c.objects("pods", "default") == []
    assert c.get("jobs", "default", "slow").status.failed == 1


def test_a_job_without_completions_is_done_when_one_pod_succeeded_and_none_runs():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("queue", completions=None, parallelism=2)))
    c.run_for(60_000)
    status = c.get("jobs", "default", "queue").status
    assert conditions(c, "queue")["Complete"] == ("True", "")
    assert status.succeeded == 2 and status.active == 0


def test_a_deleted_job_releases_its_pods_and_the_garbage_collector_deletes_them():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("gone", completions=1, parallelism=1, annotations={"kmodel.io/run-seconds": "100"})))
    c.run_for(10_000)
    assert [JOB_TRACKING_FINALIZER in p.metadata.finalizers for p in c.objects("pods", "default")] == [True]
    c.submit(Delete("jobs", "default", "gone"))
    c.run_for(60_000)
    assert c.objects("jobs", "default") == [] and c.objects("pods", "default") == []


def test_a_finished_job_is_deleted_with_its_pods_once_its_ttl_is_over():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("short", completions=1, parallelism=1, ttlSecondsAfterFinished=10)))
    c.run_for(15_000)
    finished = conditions(c, "short")
    assert finished["Complete"] == ("True", "")
    assert len(c.objects("pods", "default")) == 1
    c.run_for(30_000)
    assert c.objects("jobs", "default") == [] and c.objects("pods", "default") == []
