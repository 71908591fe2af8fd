"""Leader election as client-go's tools/leaderelection does it (kmodel.client.leaderelection): on a cluster of two
kube-controller-managers and two kube-schedulers, and on the default cluster's lone electing copy of each."""

from __future__ import annotations

import pytest

from kmodel.checker.actions import CrashProcess
from kmodel.client.leaderelection import (
    LEASE_DURATION_MS, RENEW_DEADLINE_MS, RESTART_DELAY_MS, RETRY_PERIOD_MS, new_identity,
)
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.loop.loop import RESTART_TIMER

KCM, KCM2 = "kube-controller-manager", "kube-controller-manager-2"


def ha_cluster(seed: int = 1) -> Cluster:
    return Cluster(ClusterConfig(controller_managers=2, schedulers=2, seed=seed))


def lease(cluster: Cluster, name: str):
    return cluster.get("leases", "kube-system", name)


def elector(cluster: Cluster, process: str):
    return cluster.loop.components[process].elector


def test_exactly_one_candidate_of_each_component_is_elected_and_only_its_controllers_start():
    cluster = ha_cluster()
    cluster.run(5_000)
    first, second = elector(cluster, KCM), elector(cluster, KCM2)
    assert [first.leading, second.leading].count(True) == 1
    leader = first if first.leading else second
    assert lease(cluster, "kube-controller-manager").spec.holder_identity == leader.identity
    assert leader.identity.startswith("control-plane-") and "_" in leader.identity
    standby = KCM2 if leader is first else KCM
    members = [n for n in cluster.processes[standby] if n != standby]
    assert members and all(cluster.loop.components[n].awaiting_leader for n in members)
    assert all(not cluster.loop.components[n].informers[0].has_synced for n in members)
    schedulers = [cluster.loop.components[n].elector for n in ("scheduler", "scheduler-2")]
    assert [s.leading for s in schedulers].count(True) == 1


def test_the_leader_renews_every_retry_period():
    cluster = ha_cluster()
    cluster.run(10_000)
    before = lease(cluster, "kube-controller-manager").spec.renew_time
    cluster.run(20_000)
    after = lease(cluster, "kube-controller-manager").spec
    assert 0 < after.renew_time - before <= 10_000 + RETRY_PERIOD_MS
    assert 20_000 - after.renew_time <= RETRY_PERIOD_MS + 100
    assert after.lease_transitions == 0


def test_a_crashed_leaders_lease_expires_and_the_standby_takes_it_over_within_lease_duration_and_retry():
    cluster = ha_cluster()
    cluster.run(30_000)
    holder = lease(cluster, "kube-controller-manager").spec.holder_identity
    leader = KCM if elector(cluster, KCM).leading else KCM2
    other = KCM2 if leader == KCM else KCM
    CrashProcess(leader).apply(cluster)
    cluster.run(30_000 + LEASE_DURATION_MS - 1_000)
    assert lease(cluster, "kube-controller-manager").spec.holder_identity == holder  # not expired yet
    cluster.run(30_000 + LEASE_DURATION_MS + 2 * RETRY_PERIOD_MS * 12 // 10 + 1_000)
    spec = lease(cluster, "kube-controller-manager").spec
    assert spec.holder_identity == elector(cluster, other).identity != holder
    assert spec.lease_transitions == 1
    assert not any(cluster.loop.components[n].awaiting_leader for n in cluster.processes[other] if n != other)
    messages = [e.message for e in cluster.objects("events", "kube-system") if e.reason == "LeaderElection"]
    assert f"{spec.holder_identity} became leader" in messages


def test_expiry_is_judged_by_the_candidates_own_observation_not_by_renew_time():
    cluster = ha_cluster()
    cluster.run(5_000)
    standby = elector(cluster, KCM2) if elector(cluster, KCM).leading else elector(cluster, KCM)
    assert standby.observed is not None
    # a record observed now is valid for lease duration from now, whatever renewTime it carries
    standby.observed_time = cluster.now
    from kmodel.objects.fastevolve import evolve

    standby.observed = evolve(standby.observed, renew_time=-1_000_000)
    assert standby.lease_valid(cluster.now + LEASE_DURATION_MS - 1)
    assert not standby.lease_valid(cluster.now + LEASE_DURATION_MS)


def test_a_paused_leader_wakes_after_its_lease_expired_still_believing_it_leads_then_exits_and_restarts():
    cluster = ha_cluster()
    cluster.run(10_000)
    leader = KCM if elector(cluster, KCM).leading else KCM2
    mine, other = elector(cluster, leader), elector(cluster, KCM2 if leader == KCM else KCM)
    old_identity = mine.identity
    for name in cluster.processes[leader]:
        cluster.loop.pause(name, 50_000)
    cluster.run(49_000)
    assert other.leading  # the standby took the expired lease over
    assert mine.leading and mine.identity == old_identity  # the paused one still believes it leads
    # it wakes at 50 s with its lease expired by its own clock; its renew round ends by its deadline (at most
    # RenewDeadline later) and OnStoppedLeading makes the process exit
    cluster.run(60_500)
    whats = [what for _, ident, what in mine.history if ident == old_identity]
    assert whats[-2:] == ["woke-expired", "stopped"]
    members = cluster.processes[leader]
    assert not any(cluster.loop.is_up(n) for n in members)
    assert all(RESTART_TIMER in cluster.loop.clock.timers_of(n) for n in members)
    cluster.run(71_000)  # the kubelet starts it again 10 s later: a new candidate, a standby now
    assert all(cluster.loop.is_up(n) for n in members)
    assert mine.identity != old_identity and not mine.leading and other.leading


def test_identity_is_hostname_and_a_uuid_from_the_seeded_random_source():
    import random

    a, b = new_identity("control-plane-1", random.Random(3)), new_identity("control-plane-1", random.Random(3))
    assert a == b and a.startswith("control-plane-1_") and len(a.split("_")[1]) == 36
    assert ha_cluster(seed=2).loop.components[KCM].elector.identity != ha_cluster(seed=3).loop.components[
        KCM].elector.identity




def test_leader_elect_false_elects_nothing():
    cluster = Cluster(ClusterConfig(leader_elect=False))
    cluster.run(5_000)
    assert lease(cluster, "kube-controller-manager") is None and lease(cluster, "kube-scheduler") is None
    assert cluster.processes[KCM] == cluster.controller_manager and KCM not in cluster.loop.components
    assert cluster.loop.components["scheduler"].elector is None


def test_leader_election_off_refuses_several_copies():
    with pytest.raises(ValueError, match="--leader-elect=false runs one kube-controller-manager"):
        ClusterConfig(controller_managers=2, leader_elect=False)


def test_a_lone_controller_manager_and_scheduler_elect_by_default():
    cluster = Cluster(ClusterConfig())
    cluster.run(5_000)
    assert KCM in cluster.processes[KCM] and elector(cluster, KCM).leading
    assert lease(cluster, "kube-controller-manager").spec.holder_identity == elector(cluster, KCM).identity
    assert lease(cluster, "kube-scheduler").spec.holder_identity == elector(cluster, "scheduler").identity
    assert cluster.acting("controller/nodeipam") == "controller/nodeipam"


def _outage_exit_and_return(process: str, lease_name: str) -> Cluster:
    """A lone `process` leads; etcd becomes unreachable: its renewals fail, and RenewDeadline (10 s) after the
    renew round that could not succeed began, it stops leading and exits (upstream: OnStoppedLeading, klog
    FlushAndExit); the kubelet starts it again 10 s later, a new candidate under a new identity, which acquires
    the Lease once etcd is back and the old holder's lease has run out, and starts again from a fresh list."""
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(30_000)
    mine = elector(cluster, process)
    first = mine.identity
    assert mine.leading
    outage = cluster.now
    cluster.partition("etcd")
    cluster.run(outage + RENEW_DEADLINE_MS + RETRY_PERIOD_MS + 1_000)
    stopped = [t for t, identity, what in mine.history if identity == first and what == "stopped"]
    # the round that fails began within a retry period of the outage: it ends RenewDeadline after that
    assert len(stopped) == 1 and outage + RENEW_DEADLINE_MS - RETRY_PERIOD_MS <= stopped[0] <= \
        outage + RENEW_DEADLINE_MS + RETRY_PERIOD_MS
    members = cluster.processes.get(process, (process,))
    assert not any(cluster.loop.is_up(n) for n in members)
    cluster.run(stopped[0] + RESTART_DELAY_MS + 1)
    assert all(cluster.loop.is_up(n) for n in members) and mine.identity != first and not mine.leading
    cluster.heal("etcd")
    cluster.run(cluster.now + LEASE_DURATION_MS + 2 * RETRY_PERIOD_MS * 3)
    assert mine.leading and mine.identities == [first, mine.identity]
    held = lease(cluster, lease_name).spec
    assert held.holder_identity == mine.identity and held.lease_transitions == 1
    return cluster


def test_a_lone_controller_manager_exits_when_it_cannot_renew_through_an_etcd_outage_and_its_restart_resyncs():
    cluster = _outage_exit_and_return(KCM, "kube-controller-manager")
    informers = cluster.loop.components[SHARED_INFORMERS]
    # the restarted process listed every resource anew (one list in this life) and its controllers run again
    assert informers.informers and all(inf.has_synced and inf.lists == 1 for inf in informers.informers)
    assert not any(cluster.loop.components[n].awaiting_leader for n in cluster.processes[KCM] if n != KCM)


def test_a_lone_scheduler_exits_when_it_cannot_renew_through_an_etcd_outage_and_its_restart_relists():
    cluster = _outage_exit_and_return("scheduler", "kube-scheduler")
    scheduler = cluster.loop.components["scheduler"]
    assert scheduler.pods.has_synced and scheduler.nodes.has_synced and scheduler.nodes.lists == 1
