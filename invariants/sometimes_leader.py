"""Sometimes properties of leader election (kmodel.client.leaderelection) and the pause fault
(kmodel.checker.leader_rules): the situations they exist to reach. They read the electors' and the processes'
observers' records and the Leases in the store; they register in kmodel.invariants.sometimes' registry, which loads
this module. They are about a standby taking over: a run of a cluster with one kube-controller-manager and one
kube-scheduler (ClusterConfig.has_standbys false) neither counts nor lists them (elections_only).
"""

from __future__ import annotations

from typing import Any

from kmodel.invariants.leader import leaderships
from kmodel.invariants.registry import sometimes
from kmodel.client.leaderelection import LEASE_DURATION_MS, LEASE_NAMESPACE


@sometimes("leader-handover", principle="optimistic concurrency", elections_only=True)
def leader_handover(cluster: Any, memo: dict) -> bool:
    """A leader-election Lease changed holder (leaseTransitions > 0): a standby took over from a leader that
    went away."""
    return any((lease.spec.lease_transitions or 0) > 0 for lease in cluster.objects("leases", LEASE_NAMESPACE))


@sometimes("pause-outlived-lease", principle="optimistic concurrency", elections_only=True)
def pause_outlived_lease(cluster: Any, memo: dict) -> bool:
    """A leader was paused for longer than its lease: it woke up still believing it led, with its lease expired by
    its own clock."""
    for _, leadership in leaderships(cluster, memo):
        if any(what == "woke-expired" for _, _, what in leadership.elector.history):
            return True
    return False


@sometimes("two-leaders-acting", principle="optimistic concurrency", elections_only=True)
def two_leaders_acting(cluster: Any, memo: dict) -> bool:
    """Two candidates for one Lease both wrote within one lease duration of each other: the old leader acted
    after (or just before) the new one began."""
    by_lease: dict[str, list[tuple[int, str]]] = {}
    for lease, leadership in leaderships(cluster, memo):
        by_lease.setdefault(lease, []).extend((t, identity) for identity, t in leadership.last_write.items())
    for writes in by_lease.values():
        writes.sort()
        for (t1, a), (t2, b) in zip(writes, writes[1:]):
            if a != b and t2 - t1 <= LEASE_DURATION_MS:
                return True
    return False
