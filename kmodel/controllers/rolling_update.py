"""The Deployment controller's sizing decisions (pkg/controller/deployment/rolling.go and sync.go).

Theory of operation
-------------------
Every function takes the Deployment and its ReplicaSets as values and returns the ReplicaSet writes one
sync would make, in order, as `Scale` records (each carries the updated ReplicaSet: new spec.replicas and
the desired-replicas / max-replicas annotations, as scaleReplicaSet writes them). Applying them is the
caller's job; nothing is mutated.

- `reconcile_new_replica_set`: scale the new ReplicaSet down to replicas if above, else up to
  NewRSNewReplicas (bounded by replicas + maxSurge in total).
- `reconcile_old_replica_sets`: maxScaledDown = all - minAvailable - (new RS unavailable); first
  `cleanup_unhealthy_replicas` (oldest first, only the unavailable part of each old set), then
  `scale_down_old_replica_sets_for_rolling_update` (oldest first, by available - minAvailable).
- `rollout_rolling`: one rolloutRolling: scale up if possible, else scale down.
- `is_scaling_event` and `scale`: when spec.replicas changed mid-rollout (the desired-replicas annotation
  of an active set differs), `scale` resizes: the single active set (or the newest) to replicas; a
  saturated new set takes all and old sets go to 0; otherwise the change (replicas + maxSurge - current)
  is spread proportionally (`get_replica_set_proportion`, from the max-replicas annotation) from the
  largest set down (newer first when scaling up, older first when down), leftovers to the first.

Upstream sorts with sort.Sort (unstable); the keys here (size, creation time, name) leave no ties between
distinct ReplicaSets, so the order is the one upstream produces whenever names differ.
"""

from __future__ import annotations

from typing import Sequence

import attrs

from kmodel.objects import Deployment, ReplicaSet
from kmodel.objects.fastevolve import evolve

from .deployment_logic import (
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, creation_key, filter_active_replica_sets,
    find_active_or_latest, get_available_replica_count, get_replica_count, is_rolling_update, is_saturated,
    max_surge, max_unavailable, new_rs_new_replicas, replicas_annotations_need_update, replicas_of,
    set_replicas_annotations,
)


@attrs.frozen
class Scale:
    """One ReplicaSet update: rs is the object to write; old/new the sizes; operation "up"/"down" (the
    event text's word; "" when only the annotations change)."""

    rs: ReplicaSet
    old: int
    new: int
    operation: str

    @property
    def scaled(self) -> bool:
        return self.old != self.new


@attrs.frozen
class SyncResult:
    """scaled: whether any size changed (upstream's bool); writes: the updates, in order."""

    scaled: bool
    writes: tuple = ()


def scale_replica_set(rs: ReplicaSet, new_scale: int, d: Deployment, operation: str) -> Scale | None:
    """scaleReplicaSet: an update when the size or the replica annotations need it, else None."""
    r = replicas_of(d)
    mx = r + max_surge(d)
    size_needs = replicas_of(rs) != new_scale
    if not size_needs and not replicas_annotations_need_update(rs, r, mx):
        return None
    ann = set_replicas_annotations(rs.metadata.annotations, r, mx)
    new = evolve(rs, metadata=evolve(rs.metadata, annotations=ann),
                       spec=evolve(rs.spec, replicas=new_scale))
    return Scale(new, replicas_of(rs), new_scale, operation if size_needs else "")


def scale_replica_set_and_record_event(rs: ReplicaSet, new_scale: int, d: Deployment) -> Scale | None:
    """scaleReplicaSetAndRecordEvent: nothing when the size is already right."""
    if replicas_of(rs) == new_scale:
        return None
    return scale_replica_set(rs, new_scale, d, "up" if replicas_of(rs) < new_scale else "down")


def reconcile_new_replica_set(all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet,
                              d: Deployment) -> SyncResult:
    """reconcileNewReplicaSet."""
    r = replicas_of(d)
    if replicas_of(new_rs) == r:
        return SyncResult(False)
    if replicas_of(new_rs) > r:
        target = r
    else:
        target = new_rs_new_replicas(d, all_rss, new_rs)
    w = scale_replica_set_and_record_event(new_rs, target, d)
    return SyncResult(bool(w and w.scaled), (w,) if w else ())


def cleanup_unhealthy_replicas(old_rss: Sequence[ReplicaSet], d: Deployment, max_cleanup: int
                               ) -> tuple[list[ReplicaSet], int, tuple]:
    """cleanupUnhealthyReplicas: (old sets after the writes, oldest first; count scaled down; writes)."""
    olds = sorted(old_rss, key=creation_key)
    total = 0
    writes = []
    for i, rs in enumerate(olds):
        if total >= max_cleanup:
            break
        if replicas_of(rs) == 0:
            continue
        if replicas_of(rs) == rs.status.available_replicas:
            continue
        count = min(max_cleanup - total, replicas_of(rs) - rs.status.available_replicas)
        new_count = replicas_of(rs) - count
        if new_count > replicas_of(rs):
            raise ValueError(f"when cleaning up unhealthy replicas, got invalid request to scale down "
                             f"{rs.metadata.namespace}/{rs.metadata.name} {replicas_of(rs)} -> {new_count}")
        w = scale_replica_set_and_record_event(rs, new_count, d)
        if w is not None:
            writes.append(w)
            olds[i] = w.rs
        total += count
    return olds, total, tuple(writes)


def scale_down_old_replica_sets_for_rolling_update(all_rss: Sequence[ReplicaSet | None],
                                                   old_rss: Sequence[ReplicaSet], d: Deployment
                                                   ) -> tuple[int, tuple]:
    """scaleDownOldReplicaSetsForRollingUpdate: (count scaled down, writes)."""
    min_avail = replicas_of(d) - max_unavailable(d)
    available = get_available_replica_count(all_rss)
    if available <= min_avail:
        return 0, ()
    total = 0
    want = available - min_avail
    writes = []
    for rs in sorted(old_rss, key=creation_key):
        if total >= want:
            break
        if replicas_of(rs) == 0:
            continue
        count = min(replicas_of(rs), want - total)
        new_count = replicas_of(rs) - count
        w = scale_replica_set_and_record_event(rs, new_count, d)
        if w is not None:
            writes.append(w)
        total += count
    return total, tuple(writes)


def reconcile_old_replica_sets(all_rss: Sequence[ReplicaSet | None], old_rss: Sequence[ReplicaSet],
                               new_rs: ReplicaSet | None, d: Deployment) -> SyncResult:
    """reconcileOldReplicaSets (old_rss: the active old sets, FilterActiveReplicaSets(oldRSs))."""
    old_count = get_replica_count(old_rss)
    if old_count == 0:
        return SyncResult(False)
    all_count = get_replica_count(all_rss)
    min_avail = replicas_of(d) - max_unavailable(d)
    new_unavailable = (replicas_of(new_rs) - new_rs.status.available_replicas) if new_rs is not None else 0
    max_scaled_down = all_count - min_avail - new_unavailable
    if max_scaled_down <= 0:
        return SyncResult(False)
    olds, cleaned, w1 = cleanup_unhealthy_replicas(old_rss, d, max_scaled_down)
    all_after = list(olds) + [new_rs]
    scaled_down, w2 = scale_down_old_replica_sets_for_rolling_update(all_after, olds, d)
    return SyncResult(cleaned + scaled_down > 0, w1 + w2)


def rollout_rolling(d: Deployment, new_rs: ReplicaSet, old_rss: Sequence[ReplicaSet]) -> SyncResult:
    """One rolloutRolling's ReplicaSet writes: scale the new set up if it can, else scale old sets down."""
    all_rss = list(old_rss) + [new_rs]
    up = reconcile_new_replica_set(all_rss, new_rs, d)
    if up.scaled:
        return up
    down = reconcile_old_replica_sets(all_rss, filter_active_replica_sets(old_rss), new_rs, d)
    return SyncResult(down.scaled, up.writes + down.writes)


# --- scaling events and proportional scaling -------------------------------------------------------------

def _int_annotation(rs: ReplicaSet, key: str) -> int | None:
    v = rs.metadata.annotations.get(key)
    if v is None:
        return None
    try:
        return int(v, 10)
    except ValueError:
        return None


def is_scaling_event(d: Deployment, new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]) -> bool:
    """isScalingEvent: an active set's desired-replicas annotation differs from spec.replicas."""
    for rs in filter_active_replica_sets(list(old_rss) + [new_rs]):
        desired = _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
        if desired is None:
            continue
        if desired != replicas_of(d):
            return True
    return False


def round_to_int32(a: float) -> int:
    """k8s.io/utils/integer.RoundToInt32: half away from zero, by truncation."""
    return int(a - 0.5) if a < 0 else int(a + 0.5)


def get_replica_set_fraction(rs: ReplicaSet, d: Deployment) -> int:
    """getReplicaSetFraction."""
    if replicas_of(d) == 0:
        return -replicas_of(rs)
    deployment_replicas = replicas_of(d) + max_surge(d)
    annotated = _int_annotation(rs, MAX_REPLICAS_ANNOTATION)
    if annotated is None:
        annotated = d.status.replicas
    if annotated == 0:
        # Go divides by zero here (+Inf); upstream notes it cannot happen. Keep the size.
        return 0
    new_size = float(replicas_of(rs) * deployment_replicas) / float(annotated)
    return round_to_int32(new_size) - replicas_of(rs)


def get_replica_set_proportion(rs: ReplicaSet | None, d: Deployment, to_add: int, added: int) -> int:
    """GetReplicaSetProportion (getProportion in older releases)."""
    if rs is None or replicas_of(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = get_replica_set_fraction(rs, d)
    allowed = to_add - added
    if to_add > 0:
        return min(fraction, allowed)
    return max(fraction, allowed)


def _by_size_newer(rs: ReplicaSet) -> tuple:
    ts = rs.metadata.creation_timestamp
    # larger first; equal size: newer first (ReplicaSetsByCreationTimestamp reversed)
    return (-replicas_of(rs), ts is None, -(ts or 0), _neg_str(rs.metadata.name))


def _by_size_older(rs: ReplicaSet) -> tuple:
    return (-replicas_of(rs),) + creation_key(rs)


def _neg_str(s: str) -> tuple:
    return tuple(-ord(c) for c in s) + (1,)


def scale(d: Deployment, new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet], *,
          refresh_annotations: bool = False) -> tuple:
    """sync.go scale(): the writes for a scaling event (or a paused Deployment). `refresh_annotations` is the
    deployment-refresh-annotations fix (kmodel.fixes; kubernetes/kubernetes#138036): when the only active set
    already has the right size, upstream returns without writing, so a stale desired-replicas annotation keeps
    every later sync a scaling event; the fix writes the annotations (scaleReplicaSet at the same size)."""
    r = replicas_of(d)
    active_or_latest = find_active_or_latest(new_rs, old_rss)
    if active_or_latest is not None:
        if replicas_of(active_or_latest) == r:
            if refresh_annotations:
                w = scale_replica_set(active_or_latest, r, d, "")
                return (w,) if w else ()
            return ()
        w = scale_replica_set_and_record_event(active_or_latest, r, d)
        return (w,) if w else ()
    if is_saturated(d, new_rs):
        writes = []
        for old in filter_active_replica_sets(old_rss):
            w = scale_replica_set_and_record_event(old, 0, d)
            if w:
                writes.append(w)
        return tuple(writes)
    if not is_rolling_update(d):
        return ()
    all_rss = filter_active_replica_sets(list(old_rss) + [new_rs])
    all_replicas = get_replica_count(all_rss)
    allowed = r + max_surge(d) if r > 0 else 0
    to_add = allowed - all_replicas
    operation = ""
    if to_add > 0:
        all_rss.sort(key=_by_size_newer)
        operation = "up"
    elif to_add < 0:
        all_rss.sort(key=_by_size_older)
        operation = "down"
    added = 0
    sizes: list[int] = []
    for rs in all_rss:
        if to_add != 0:
            p = get_replica_set_proportion(rs, d, to_add, added)
            sizes.append(replicas_of(rs) + p)
            added += p
        else:
            sizes.append(replicas_of(rs))
    writes = []
    for i, rs in enumerate(all_rss):
        if i == 0 and to_add != 0:
            sizes[0] = max(0, sizes[0] + to_add - added)
        w = scale_replica_set(rs, sizes[i], d, operation)
        if w:
            writes.append(w)
    return tuple(writes)
