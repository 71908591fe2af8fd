"""The pause fault (kmodel.checker.leader_actions) and leader election's invariants and sometimes properties
(invariants/leader.py, invariants/sometimes_leader.py), holding and failing."""

from __future__ import annotations

from kmodel.invariants.leader import ELECTION_BOUND_MS, leader_acts_within_lease, leader_elected_after_loss
from kmodel.invariants.sometimes_leader import leader_handover, pause_outlived_lease, two_leaders_acting
from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import CrashProcess
from kmodel.checker.leader_actions import PauseProcess, pausable
from kmodel.checker.run import profile_bases
from kmodel.checker.machine import KmodelMachine
from kmodel.checker.leader_rules import LeaderRules
from kmodel.cluster import Cluster, ClusterConfig


def ha_cluster() -> Cluster:
    return Cluster(ClusterConfig(controller_managers=2, schedulers=2, seed=1))


def leader_of(cluster: Cluster) -> str:
    return next(p for p in ("kube-controller-manager", "kube-controller-manager-2")
                if cluster.loop.components[p].elector.leading)


def test_pause_round_trips_through_json_and_leaders_are_the_first_candidates():
    action = PauseProcess("kube-controller-manager", 42)
    assert action_from_json(action.to_json()) == action
    cluster = ha_cluster()
    cluster.run(5_000)
    first = pausable(cluster)[:2]
    assert leader_of(cluster) in first and ("scheduler" in first or "scheduler-2" in first)


def test_a_paused_process_runs_nothing_until_it_wakes():
    cluster = ha_cluster()
    cluster.run(5_000)
    leader = leader_of(cluster)
    PauseProcess(leader, 10).apply(cluster)
    renewed = cluster.get("leases", "kube-system", "kube-controller-manager").spec.renew_time
    cluster.run(14_000)
    assert cluster.get("leases", "kube-system", "kube-controller-manager").spec.renew_time == renewed
    assert cluster.loop.is_paused(leader)
    cluster.run(16_000)
    assert not cluster.loop.is_paused(leader)
    assert cluster.get("leases", "kube-system", "kube-controller-manager").spec.renew_time >= 15_000


def test_the_pause_rule_is_added_only_when_something_elects():
    assert LeaderRules not in profile_bases(KmodelMachine, "dev")
    assert LeaderRules in profile_bases(KmodelMachine, "dev", elects=True)


def test_leader_acts_within_lease_holds_in_a_quiet_cluster_and_handover():
    cluster = ha_cluster()
    memo: dict = {}
    cluster.run(20_000)
    CrashProcess(leader_of(cluster)).apply(cluster)
    for t in range(21_000, 60_001, 1_000):
        cluster.run(t)
        assert list(leader_acts_within_lease(cluster, memo)) == []
        assert list(leader_elected_after_loss(cluster, memo)) == []
    assert leader_handover(cluster, {})


def test_a_leader_paused_past_its_lease_writes_without_one_as_upstream():
    cluster = ha_cluster()
    cluster.apply([{"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}])
    cluster.run(20_000)
    leader = leader_of(cluster)
    PauseProcess(leader, 40).apply(cluster)
    cluster.run(cluster.now + 30_000)
    cluster.submit(__import__("kmodel.cluster.kubectl", fromlist=["Scale"]).Scale("deployments", "default", "web", 4))
    memo: dict = {}
    violations = []
    for _ in range(40):
        cluster.run(cluster.now + 1_000)
        violations += list(leader_acts_within_lease(cluster, memo))
    assert pause_outlived_lease(cluster, {})
    assert violations and "without an unexpired lease" in violations[0]
    assert two_leaders_acting(cluster, {})


def test_leader_elected_after_loss_fails_when_no_standby_takes_over():
    cluster = ha_cluster()
    memo: dict = {}
    cluster.run(20_000)
    leader = leader_of(cluster)
    standby = "kube-controller-manager-2" if leader == "kube-controller-manager" else "kube-controller-manager"
    CrashProcess(leader).apply(cluster)
    standby_elector = cluster.loop.components[standby].elector
    standby_elector.state = "stopped"  # a standby that never tries again: the broken election this catches
    found = []
    for t in range(21_000, 21_000 + ELECTION_BOUND_MS + 5_000, 1_000):
        cluster.run(t)
        found += list(leader_elected_after_loss(cluster, memo))
    assert found and "still names" in found[0]


def test_a_trace_names_the_copies_only_when_more_than_one_runs_and_without_them_means_one_each():
    from kmodel.checker.trace import TraceError, config_from_json, config_to_json

    one = config_to_json(ClusterConfig())
    assert "controller_managers" not in one and "schedulers" not in one
    assert config_from_json(one) == ClusterConfig()
    two = config_to_json(ClusterConfig(controller_managers=2, schedulers=3))
    assert (two["controller_managers"], two["schedulers"]) == (2, 3)
    assert config_from_json(two) == ClusterConfig(controller_managers=2, schedulers=3)
    import pytest

    with pytest.raises(TraceError, match="controller_managers"):
        config_from_json({**one, "controller_managers": 0})


def test_bad_counts_are_one_line_usage_errors(capsys, tmp_path):
    from pathlib import Path

    from kmodel.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "web-service.yaml"
    assert main(["simulate", "-f", str(example), "--controller-managers", "0"]) == 2
    assert "--controller-managers must be between 1 and 5" in capsys.readouterr().err
    assert main(["check", "--schedulers", "9", "--report", str(tmp_path / "report")]) == 2
    assert "--schedulers must be between 1 and 5" in capsys.readouterr().err
