"""Suspended Jobs (spec.suspend) as the 1.31 Job controller runs them: a suspended Job's active pods are deleted
and it gets the Suspended condition; resumed, the condition turns False, startTime restarts and the Job runs on.
A Job created suspended has no startTime and no pods, and its activeDeadlineSeconds does not run meanwhile."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply

from tests.controllers.test_job_controller import conditions, job, job_events
from tests.invariants.test_invariants import call

S = 1000


def _suspend(c: Cluster, name: str, suspend: bool) -> None:
    assert call(c, "patch", "jobs", "default", name, body={"spec": {"suspend": suspend}}).code == 200


def _live(c: Cluster) -> list:
    return [p for p in c.objects("pods", "default") if p.metadata.deletion_timestamp is None
            and p.status.phase not in ("Succeeded", "Failed")]


def test_a_suspended_job_loses_its_pods_and_runs_on_once_resumed():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("s", completions=3, parallelism=2, annotations={"kmodel.io/run-seconds": "10"})))
    c.run_for(4 * S)
    assert len(_live(c)) == 2 and c.get("jobs", "default", "s").status.start_time is not None
    _suspend(c, "s", True)
    c.run_for(5 * S)
    assert _live(c) == [] and c.get("jobs", "default", "s").status.active == 0
    assert conditions(c, "s") == {"Suspended": ("True", "JobSuspended")}
    resumed_at = c.now
    _suspend(c, "s", False)
    c.run_for(60 * S)
    done = c.get("jobs", "default", "s")
    assert done.status.succeeded == 3 and done.status.start_time >= resumed_at
    assert conditions(c, "s") == {"Suspended": ("False", "JobResumed"), "SuccessCriteriaMet": ("True", ""),
                                  "Complete": ("True", "")}
    events = [reason for reason, _ in job_events(c, "s")]
    assert events.index("Suspended") < events.index("Resumed") < events.index("Completed")


def test_a_job_created_suspended_neither_starts_nor_runs_out_its_deadline():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(job("later", completions=1, parallelism=1, suspend=True, activeDeadlineSeconds=15)))
    c.run_for(20 * S)
    waiting = c.get("jobs", "default", "later")
    assert c.objects("pods", "default") == [] and waiting.status.start_time is None
    assert conditions(c, "later") == {"Suspended": ("True", "JobSuspended")}
    _suspend(c, "later", False)
    c.run_for(30 * S)
    assert conditions(c, "later")["Complete"] == ("True", "")
