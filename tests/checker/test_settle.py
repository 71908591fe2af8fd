"""A settle's event bound: it gives up only once every deadline pending when the bound was reached has passed."""

from __future__ import annotations

import pytest

from kmodel.checker.actions import STORM_GROWTH, ApplyDeployment, ApplyPod, NotSettled, RunFair, Settle, is_storm
from kmodel.checker.session import Session, all_invariants
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import Heal, Partition

#: a bound any busy spell reaches at once: 300 events and 5 s of logical time
SMALL_BOUND = dict(max_events=300, busy_ms=5_000)


def _lost_machine_after_a_busy_spell() -> tuple[Session, str]:
    """A cluster where a web pod's machine was lost for good, then a minute of partitions and heals."""
    session = Session(ClusterConfig(), all_invariants())
    session.execute(ApplyDeployment("web", 2))
    session.execute(RunFair(15_000))
    cluster = session.cluster
    node = sorted(p.spec.node_name for p in cluster.objects("pods") if p.metadata.name.startswith("web-"))[0]
    cluster.lose_node(node)
    for _ in range(3):  # the rest of the cluster busy: the scheduler cut off and back, repeatedly
        cluster.loop.step(Partition(("scheduler",)))
        session.execute(RunFair(10_000))
        cluster.loop.step(Heal(("scheduler",)))
        session.execute(RunFair(10_000))
    return session, node


def test_a_settle_waits_for_a_lost_machines_eviction_past_its_event_bound():
    session, lost = _lost_machine_after_a_busy_spell()
    cluster = session.cluster
    start, first_event = cluster.now, cluster.loop.events_applied
    answers: list[tuple[int, int, bool]] = []  # (ms into the settle, events run, converged?)
    ask = session._liveness_holds

    def recorded() -> bool:
        holds = ask()
        answers.append((cluster.now - start, cluster.loop.events_applied - first_event, holds))
        return holds

    session._liveness_holds = recorded  # type: ignore[method-assign]
    session.execute(Settle(1_200_000, **SMALL_BOUND))
    assert session.violation is None
    # liveness failed past the event bound (the settle gave up there before it waited for the deadlines) ...
    assert any(not holds and ms >= SMALL_BOUND["busy_ms"] and events >= SMALL_BOUND["max_events"]
               for ms, events, holds in answers)
    # ... and held once the pods' 300 s tolerations of the lost machine's taint ran out
    assert answers[-1][2] and answers[-1][0] > 200_000
    running = [p for p in cluster.objects("pods") if p.metadata.name.startswith("web-")
               and p.metadata.deletion_timestamp is None]
    assert len(running) == 2 and all(p.spec.node_name != lost for p in running)


def test_a_cluster_that_never_converges_still_ends_before_the_time_bound():
    session, _ = _lost_machine_after_a_busy_spell()
    cluster = session.cluster
    start = cluster.now
    deadline = cluster.loop.latest_deadline()
    with pytest.raises(NotSettled, match="every timer pending when it was reached has fired"):
        Settle(1_200_000, **SMALL_BOUND).apply(cluster, converged=lambda: False)
    assert deadline is not None and cluster.now >= min(deadline, start + SMALL_BOUND["busy_ms"])
    assert cluster.now - start < 1_200_000  # the livelock protection: it did not run to the time bound


def test_the_latest_deadline_sees_a_work_queues_keys_behind_its_armed_timer():
    from kmodel.cluster import Cluster
    from kmodel.component import Out

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run_for(5_000)
    loop, now = cluster.loop, cluster.now
    assert loop.latest_deadline() is not None and loop.latest_deadline() < now + 900_000
    controller = loop.components["controller/tainteviction"]
    out = Out()
    controller.queue.add_after(now, out, "late", 900_000)
    controller.queue.add_after(now, out, "soon", 1_000)
    assert [e.at for e in out.effects] == [now + 900_000, now + 1_000]  # the queue re-arms for the earliest
    assert controller.latest_deadline(now) == now + 900_000
    assert loop.latest_deadline() == now + 900_000


def _pod_storm() -> Session:
    """One node; two bare pods pinned to it holding host port 8080 (the kubelet rejects the second, and the
    scheduler, without the `scheduler-count-host-port-holders` fix, then forgets the port the first still
    holds); then a Deployment wanting that port: the scheduler binds its pod, the kubelet rejects it, the
    ReplicaSet replaces it, for good."""
    session = Session(ClusterConfig(nodes=1), all_invariants())
    session.execute(ApplyPod("probe", "node-1", host_port=True))
    session.execute(RunFair(10_000))
    session.execute(ApplyPod("debug-1", "node-1", host_port=True))
    session.execute(RunFair(10_000))
    session.execute(ApplyDeployment("web", 1, host_port=True))
    return session


def test_a_storm_ends_the_settle_at_its_event_bound_without_waiting_for_the_latest_timer():
    session = _pod_storm()
    cluster = session.cluster
    start, stored_at_start = cluster.now, cluster.store.live_key_count
    with pytest.raises(NotSettled, match="keeps creating objects without converging") as failed:
        Settle(600_000, max_events=30_000, busy_ms=150_000).apply(cluster, converged=session._liveness_holds)
    stored = cluster.store.live_key_count
    assert is_storm(stored_at_start, stored), (stored_at_start, stored)
    rejected = [p for p in cluster.objects("pods") if p.metadata.name.startswith("web-")
                and p.status.phase == "Failed" and p.status.reason == "NodePorts"]
    assert len(rejected) > STORM_GROWTH // 2
    latest = cluster.loop.latest_deadline()
    assert latest is not None and cluster.now < latest  # it did not wait for every timer pending
    assert cluster.now - start < 600_000
    assert f"{stored:,} objects stored" in str(failed.value)


def test_a_store_that_grows_by_less_than_its_own_size_or_the_bound_is_no_storm():
    assert not is_storm(100, 100 + STORM_GROWTH)  # the bound is strict
    assert is_storm(100, 101 + STORM_GROWTH)
    assert not is_storm(5_000, 9_000)  # a DaemonSet rolled out to thousands of nodes: less than doubled
    assert is_storm(5_000, 10_001)
