"""Leader election's guarantees (kmodel.client.leaderelection), for every kube-controller-manager and kube-scheduler
that elects (all of them but with --leader-elect=false, where both hold trivially).

Each reads the observers' records the model keeps beside each process's election (`Leadership`: every write its
components sent, the last write of each identity; the elector's history and observations of the Lease) and the
electors' state, never the trace.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.records import declares, record
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.client.leaderelection import (
    JITTER_FACTOR, LEASE_DURATION_MS, LEASE_NAMESPACE, RETRY_PERIOD_MS, SLOW_REQUEST_MS,
)

#: how long after the leader goes away a new one must hold the lease: the lease runs out LeaseDuration after the
#: candidate saw its last renewal, which it may see one jittered retry period (RetryPeriod × (1 + JitterFactor))
#: after it was written, and its next try comes at most one jittered retry period after the expiry
ELECTION_BOUND_MS = LEASE_DURATION_MS + 2 * int(RETRY_PERIOD_MS * (1 + JITTER_FACTOR))
#: and a request takes time: the answer to the winning try
ELECTION_SLACK_MS = 1_000


def leaderships(cluster: Any, memo: dict) -> list[tuple[str, Any]]:
    """(lease name, Leadership) of every process that elects, by the name of the component that runs its election
    (a kube-controller-manager's own component, a kube-scheduler); found once."""
    found = memo.get("leaderships")
    if found is None:
        components = cluster.loop.components
        found = memo["leaderships"] = [
            (c.elector.config.name, c.leadership) for name in sorted(components)
            if declares(c := components[name], "elector") and record(c, "elector") is not None
            and record(c, "leadership") is not None]
    return found


@invariant("leader-acts-within-lease", kind=SAFETY, principle="optimistic concurrency")
def leader_acts_within_lease(cluster: Any, memo: dict) -> Iterator[str]:
    """A kube-controller-manager or kube-scheduler that elects writes only while it holds an unexpired lease by its
    own clock (it leads, the Lease it last observed names it, and that observation is less than leaseDuration
    old).

    Judged from the observers' records alone, never by asking the elector (`holds_valid_lease`): each write its
    process's components sent (`Leadership.writes`), placed among the elector's `history` (acquired, stopped)
    and its `observations` (when it took which Lease record as observed), replayed by `_LeaseReplay`."""
    # each elector's replay kept under its place in `leaderships` (a stable order), not its id(): the memo is
    # restored with the session from the campaign's snapshot, where an id() taken before is another object's
    for i, (lease, leadership) in enumerate(leaderships(cluster, memo)):
        replay = memo.get(("replay", i))
        if replay is None:
            replay = memo[("replay", i)] = _LeaseReplay()
        for t, identity, what in replay.outside(leadership):
            yield (f"{identity} wrote at {t / 1000:g} s without an unexpired lease {LEASE_NAMESPACE}/{lease} by its "
                   f"own clock ({what})")


class _LeaseReplay:
    """The invariant's own account of one elector: which identities lead (an "acquired" not yet followed by a
    "stopped"), and each identity's last observation (time, holder, leaseDurationSeconds), advanced to where each
    write was sent. A write is inside the lease when its identity leads, its last observation names it, and
    that observation's time + leaseDurationSeconds is after the write's time (client-go's isLeaseValid)."""

    __slots__ = ("writes", "history", "observations", "leading", "last_seen")

    def __init__(self) -> None:
        self.writes = self.history = self.observations = 0  # how far each record has been read
        self.leading: set[str] = set()
        self.last_seen: dict[str, tuple[int, str, int]] = {}

    def outside(self, leadership: Any) -> Iterator[tuple[int, str, str]]:
        """(time, identity, what) of each write sent since the last call without an unexpired lease."""
        elector = leadership.elector
        new = leadership.writes[self.writes:]
        self.writes += len(new)
        for t, identity, what, history_at, observations_at in new:
            for _, who, event in elector.history[self.history:history_at]:
                if event == "acquired":
                    self.leading.add(who)
                elif event == "stopped":
                    self.leading.discard(who)
            self.history = max(self.history, history_at)
            for seen_at, who, holder, seconds in elector.observations[self.observations:observations_at]:
                self.last_seen[who] = (seen_at, holder, seconds)
            self.observations = max(self.observations, observations_at)
            seen = self.last_seen.get(identity)
            if identity not in self.leading or seen is None or seen[1] != identity or seen[0] + seen[2] * 1000 <= t:
                yield t, identity, what


@invariant("leader-elected-after-loss", kind=SAFETY, principle="level-driven reconciliation")
def leader_elected_after_loss(cluster: Any, memo: dict) -> Iterator[str]:
    """When the holder of a leader-election Lease goes away (its process is down, paused, or restarted as a new
    candidate) while another candidate runs and etcd and an API server are up with no partition, a new leader
    holds the lease within leaseDuration and two jittered retry periods, and a second for the requests, counted
    from the last time the API failed a candidate's request (a lost or failed request costs a retry)."""
    by_lease: dict[str, list[Any]] = {}
    for lease, leadership in leaderships(cluster, memo):
        by_lease.setdefault(lease, []).append(leadership)
    for lease, group in sorted(by_lease.items()):
        if len(group) < 2:
            continue
        live = [l for l in group if _running(cluster, l)]
        holder = _holder(cluster, lease)
        held = any(l.elector.identity == holder and l.elector.leading for l in live)
        able = bool(live) and _api_up(cluster)
        key = ("lost", lease)
        if held or not holder or not able:
            memo.pop(key, None)
            continue
        since = max(memo.setdefault(key, cluster.now), *(_failed_at(cluster, l.elector) for l in live))
        if cluster.now - since > ELECTION_BOUND_MS + ELECTION_SLACK_MS:
            yield (f"{LEASE_NAMESPACE}/{lease} still names {holder}, gone since {since / 1000:g} s, at "
                   f"{cluster.now / 1000:g} s, though {len(live)} candidate(s) ran and an API server was up")


def _failed_at(cluster: Any, elector: Any) -> int:
    """When the API last failed this candidate: its last failed or slow request, or now while a try of it has
    been out longer than SLOW_REQUEST_MS (a request lost on the way waits for its timeout)."""
    if elector.trying and cluster.now - elector.try_started > SLOW_REQUEST_MS:
        return cluster.now
    return elector.last_failure


def _running(cluster: Any, leadership: Any) -> bool:
    loop = cluster.loop
    return all(loop.is_up(m) and not loop.is_paused(m) for m in _process_members(cluster, leadership))


def _process_members(cluster: Any, leadership: Any) -> tuple[str, ...]:
    for members in cluster.processes.values():
        if set(leadership.members) <= set(members):
            return members
    return leadership.members


def _holder(cluster: Any, lease: str) -> str:
    obj = cluster.get("leases", LEASE_NAMESPACE, lease)
    return (obj.spec.holder_identity or "") if obj is not None else ""


def _api_up(cluster: Any) -> bool:
    loop = cluster.loop
    net = cluster.network
    return loop.is_up("etcd") and not net.partitioned and not net.has_held_links and any(
        loop.is_up(r.name) for r in cluster.replicas)
