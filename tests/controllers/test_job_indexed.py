"""Indexed Jobs (completionMode Indexed) as the 1.31 Job controller runs them: one pod per completion index with
the index's annotation, label, hostname and pod name, status.completedIndexes and status.succeeded counted by
index, failed indexes replaced with the same index, and extra pods for an index removed."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply
from kmodel.controllers import job_logic as logic
from kmodel.objects import ObjectMeta, Pod
from kmodel.objects.batch import JOB_TRACKING_FINALIZER

from tests.controllers.test_job_controller import conditions, failing, job
from tests.invariants.test_invariants import call
from tests.invariants.test_job_invariants import owned_pod

S = 1000
INDEX = "batch.kubernetes.io/job-completion-index"


def _pods(c: Cluster) -> list:
    return sorted(c.objects("pods", "default"), key=lambda p: p.metadata.name)


def _live(c: Cluster) -> list:
    return [p for p in _pods(c) if p.metadata.deletion_timestamp is None
            and p.status.phase not in ("Succeeded", "Failed")]


def test_an_indexed_job_runs_one_pod_per_index_and_completes_by_index():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("idx", completions=4, parallelism=2, completionMode="Indexed")))
    most = 0
    for _ in range(60):
        c.run_for(S)
        most = max(most, len(_live(c)))
    assert most == 2
    done = c.get("jobs", "default", "idx")
    assert (done.status.succeeded, done.status.completed_indexes, done.status.active) == (4, "0-3", 0)
    assert conditions(c, "idx") == {"SuccessCriteriaMet": ("True", ""), "Complete": ("True", "")}
    pods = _pods(c)
    assert [p.metadata.annotations[INDEX] for p in pods] == ["0", "1", "2", "3"]
    assert [p.metadata.labels[INDEX] for p in pods] == ["0", "1", "2", "3"]
    assert [p.spec.hostname for p in pods] == ["idx-0", "idx-1", "idx-2", "idx-3"]
    assert all(p.metadata.name.startswith(f"idx-{i}-") and len(p.metadata.name) == len(f"idx-{i}-") + 5
               for i, p in enumerate(pods))
    assert all(JOB_TRACKING_FINALIZER not in p.metadata.finalizers for p in pods)


def test_a_failed_index_is_replaced_with_a_pod_of_the_same_index():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("flaky", completions=2, parallelism=2, backoffLimit=2, completionMode="Indexed",
                       annotations=failing())))
    c.run_for(90 * S)
    pods = _pods(c)
    assert all(p.metadata.name.startswith(f"flaky-{p.metadata.annotations[INDEX]}-") for p in pods)
    # both indexes failed at once and were replaced together; the third failure (past backoffLimit 2) failed the Job
    assert sorted(p.metadata.annotations[INDEX] for p in pods) == ["0", "0", "1", "1"]
    status = c.get("jobs", "default", "flaky").status
    assert status.failed > 2 and (status.succeeded, status.completed_indexes) == (0, "")
    assert conditions(c, "flaky")["Failed"] == ("True", "BackoffLimitExceeded")


def test_pods_of_an_index_held_twice_or_past_completions_are_removed():
    c = Cluster(ClusterConfig(nodes=2))
    c.submit(Apply(job("long", completions=2, parallelism=2, completionMode="Indexed",
                       annotations={"kmodel.io/run-seconds": "100"})))
    c.run_for(5 * S)
    owner = c.get("jobs", "default", "long")
    assert sorted(p.metadata.annotations[INDEX] for p in _live(c)) == ["0", "1"]
    for name, index in (("long-0-extra", "0"), ("long-7-extra", "7")):
        pod = owned_pod(owner, name, annotations={INDEX: index}, tracked=False)
        assert call(c, "create", "pods", "default", body=pod).code == 201
    c.run_for(10 * S)
    live = _live(c)
    assert sorted(p.metadata.annotations[INDEX] for p in live) == ["0", "1"]
    assert "long-7-extra" not in {p.metadata.name for p in live}


def _indexed(index: str, name: str = "p") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, annotations={INDEX: index} if index else {}))


def test_completed_indexes_read_and_write_as_upstreams_intervals():
    assert logic.format_indexes(frozenset({0, 1, 2, 5, 7, 8})) == "0-2,5,7,8"
    assert logic.format_indexes(frozenset()) == ""
    assert logic.parse_indexes("0-2,5,7,8", 10) == frozenset({0, 1, 2, 5, 7, 8})
    assert logic.parse_indexes("1,x,3-9", 5) == frozenset({1, 3, 4})  # a bad interval skipped, cut at completions
    assert logic.parse_indexes("1,6,2", 5) == frozenset({1})  # the first one past completions ends the list


def test_pending_indexes_skip_succeeded_and_active_ones():
    active = [_indexed("1"), _indexed("3")]
    assert logic.first_pending_indexes(active, frozenset({0}), 2, 6) == [2, 4]
    assert logic.first_pending_indexes(active, frozenset({0, 2, 4, 5}), 3, 6) == []


def test_a_pod_index_must_be_a_decimal_number():
    assert [logic.completion_index(_indexed(t)) for t in ("3", "", "-1", "x", "٣")] == [3, -1, -1, -1, -1]


def test_the_generated_name_keeps_the_index_when_the_job_name_is_long():
    assert logic.indexed_generate_name("work", 12) == "work-12-"
    name = logic.indexed_generate_name("j" * 60, 12)
    assert len(name) == logic.MAX_GENERATED_NAME_LENGTH and name.endswith("j-12-")
