"""Job, Secret and token actions (kmodel/checker/job_actions.py) and their rules: each action round-trips through
JSON, does on a small cluster what its kubectl command does, and its rule fires on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.job_actions import ApplyJob, ApplySecret, RequestToken
from kmodel.cluster import Cluster, ClusterConfig

from tests.checker.conftest import SmallMachine

EXAMPLES = [ApplyJob(), ApplyJob(3, 2, fails=True, ttl=True), ApplyJob(2, 1, indexed=True), ApplySecret(1, immutable=True),
            RequestToken(True)]


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()


def test_bad_job_actions_are_refused():
    with pytest.raises(ValueError, match="completions must be at least 1"):
        action_from_json({"name": "apply-job", "completions": 0})


def codes(cluster: Cluster) -> list[int]:
    return [r.response.code for r in cluster.kubectl.results]


def test_the_actions_do_what_their_kubectl_commands_do():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyJob(2, 2).apply(cluster)
    ApplySecret(0, immutable=True).apply(cluster)
    cluster.run(40_000)
    RequestToken(use=True).apply(cluster)  # once the service account controller made default
    job = cluster.get("jobs", "default", "report")
    assert job.status.succeeded == 2 and any(c.type == "Complete" for c in job.status.conditions)
    ApplyJob(3, 2).apply(cluster)  # completions are immutable
    ApplySecret(1, immutable=True).apply(cluster)  # so is an immutable Secret's data
    cluster.run_for(5_000)
    assert codes(cluster) == [201, 201, 403, 422, 422]  # the token authenticates: then RBAC refuses the get


def test_an_indexed_job_runs_one_pod_per_index():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyJob(3, 2, indexed=True).apply(cluster)
    cluster.run(60_000)
    job = cluster.get("jobs", "default", "report")
    assert (job.status.succeeded, job.status.completed_indexes) == (3, "0-2")
    names = sorted(p.metadata.name.rsplit("-", 1)[0] for p in cluster.objects("pods", "default"))
    assert names == ["report-0", "report-1", "report-2"]


def test_a_failing_job_fails_and_one_with_a_ttl_goes_away():
    cluster = Cluster(ClusterConfig(nodes=1))
    ApplyJob(fails=True, ttl=True).apply(cluster)
    cluster.run(40_000)
    job = cluster.get("jobs", "default", "report")
    assert any(c.type == "Failed" and c.reason == "BackoffLimitExceeded" for c in job.status.conditions)
    cluster.run_for(40_000)
    assert cluster.objects("jobs", "default") == []


def test_every_job_rule_fires_on_a_machine():
    machine = SmallMachine()
    for name, fire in {"apply_job": lambda: machine.apply_job(2, 1, False, False, True),
                       "delete_job": lambda: machine.delete_job("Foreground"),
                       "apply_secret": lambda: machine.apply_secret(1, True),
                       "request_token": lambda: machine.request_token(True)}.items():
        before = machine.stats.rules.get(name, 0)
        fire()
        assert machine.stats.rules[name] == before + 1, name
    kinds = [a.kind for a in machine.session.actions]
    assert {"apply-job", "delete-with", "apply-secret", "request-token"} <= set(kinds)
