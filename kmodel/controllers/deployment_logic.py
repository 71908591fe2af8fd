"""The Deployment controller's arithmetic (pkg/controller/deployment/util/deployment_util.go, sync.go,
pkg/controller/controller_utils.go, k8s.io/apimachinery intstr).

Theory of operation
-------------------
A Deployment owns ReplicaSets; the one whose pod template equals the Deployment's (ignoring the
pod-template-hash label) is the *new* one, the rest are *old*. Each sync:

- resolves its fenceposts: `resolve_fenceposts(maxSurge, maxUnavailable, replicas)` turns ints or
  percentages into counts (surge rounds up, unavailable rounds down; if both end up 0, unavailable is 1);
- finds or builds the new ReplicaSet (name <deployment>-<hash>, `compute_hash` of the template) and gives
  it the next revision (`max_revision(old) + 1`, `set_new_replica_set_annotations`), copying the
  Deployment's annotations and recording deployment.kubernetes.io/desired-replicas and max-replicas;
- decides sizes (rolling_update.py, using `new_rs_new_replicas`, `max_surge`, `max_unavailable`);
- writes its status (`calculate_status`) from the ReplicaSets' specs and statuses.

The pod-template-hash: upstream hashes a go-spew dump of the PodTemplateSpec with FNV-32a (plus the
collisionCount as 8 little-endian bytes when set) and encodes the decimal of the 32-bit sum with
rand.SafeEncodeString. A spew dump of Go structs cannot be reproduced here, so the same FNV-32a and the same
encoding run over the template's canonical JSON (dump_struct, keys sorted, no spaces). The hash is stable
and deterministic but its value differs from a real cluster's.

ReplicaSets are sorted by (creationTimestamp, name) where upstream sorts by creation time with a name
tie-break (ReplicaSetsByCreationTimestamp); an unset creation time sorts first as Go's zero time does.
"""

from __future__ import annotations

import json
import math
from typing import Sequence

from kmodel.objects import (
    Deployment, DeploymentCondition, DeploymentStatus, FrozenDict, LabelSelector, ObjectMeta, OwnerReference,
    PodTemplateSpec, ReplicaSet, ReplicaSetSpec, dump_struct,
)
from kmodel.objects.fastevolve import evolve

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000

MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

_SKIP_COPY = frozenset({LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
                        DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION})


class IntOrPercentError(ValueError):
    """An IntOrString that is neither an int nor "<int>%" (text as intstr's errors)."""


# --- fenceposts ------------------------------------------------------------------------------------------

def get_scaled_value_from_int_or_percent(value: int | str | None, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent (float arithmetic and math.Ceil/Floor as upstream)."""
    if value is None:
        raise IntOrPercentError("nil value for IntOrString")
    if isinstance(value, bool):
        raise IntOrPercentError(f"invalid type: {type(value).__name__}")
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise IntOrPercentError("invalid type: string is not a percentage")
    body = value[:-1]
    try:
        v = int(body, 10)
    except ValueError:
        raise IntOrPercentError(f'invalid value for IntOrString: invalid value "{value}": '
                                f'strconv.Atoi: parsing "{body}": invalid syntax') from None
    scaled = float(v) * float(total) / 100
    return int(math.ceil(scaled)) if round_up else int(math.floor(scaled))


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None,
                       desired: int) -> tuple[int, int]:
    """ResolveFenceposts: (surge, unavailable); nil counts as 0; both 0 -> unavailable 1."""
    surge = get_scaled_value_from_int_or_percent(0 if max_surge is None else max_surge, desired, True)
    unavailable = get_scaled_value_from_int_or_percent(0 if max_unavailable is None else max_unavailable,
                                                       desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def replicas_of(obj: Deployment | ReplicaSet) -> int:
    """*spec.replicas (1 when unset, as defaulting would make it)."""
    r = obj.spec.replicas
    return 1 if r is None else r


def is_rolling_update(d: Deployment) -> bool:
    return d.spec.strategy.type == "RollingUpdate"


def max_surge(d: Deployment) -> int:
    """MaxSurge: 0 unless RollingUpdate."""
    if not is_rolling_update(d):
        return 0
    ru = d.spec.strategy.rolling_update
    surge, _ = resolve_fenceposts(ru.max_surge if ru else None, ru.max_unavailable if ru else None,
                                  replicas_of(d))
    return surge


def max_unavailable(d: Deployment) -> int:
    """MaxUnavailable: 0 unless RollingUpdate with replicas > 0; never more than replicas."""
    replicas = replicas_of(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    ru = d.spec.strategy.rolling_update
    _, unavailable = resolve_fenceposts(ru.max_surge if ru else None, ru.max_unavailable if ru else None,
                                        replicas)
    return min(unavailable, replicas)


def min_available(d: Deployment) -> int:
    """MinAvailable: replicas - MaxUnavailable (0 unless RollingUpdate)."""
    if not is_rolling_update(d):
        return 0
    return replicas_of(d) - max_unavailable(d)


# --- pod-template-hash -----------------------------------------------------------------------------------

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193


def fnv32a(data: bytes, h: int = _FNV_OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode_string(s: str) -> str:
    """rand.SafeEncodeString: each byte mapped into an alphabet without vowels or look-alikes."""
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in s.encode())


def canonical_json(template: PodTemplateSpec) -> bytes:
    return json.dumps(dump_struct(template), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def compute_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """controller.ComputeHash over the canonical JSON of the template (see the module docstring)."""
    h = fnv32a(canonical_json(template))
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\x00" * 4, h)
    return safe_encode_string(str(h))


def _without_hash(t: PodTemplateSpec) -> PodTemplateSpec:
    labels = t.metadata.labels
    if POD_TEMPLATE_HASH_LABEL not in labels:
        return t
    return evolve(t, metadata=evolve(t.metadata, labels=labels.without(POD_TEMPLATE_HASH_LABEL)))


def equal_ignore_hash(t1: PodTemplateSpec, t2: PodTemplateSpec) -> bool:
    """EqualIgnoreHash: templates equal once the pod-template-hash label is removed from both. (The specs are
    compared first: they are usually shared objects, and when they differ nothing else needs building.)"""
    if t1.spec != t2.spec:
        return False
    return _without_hash(t1) == _without_hash(t2)


# --- new and old ReplicaSets -----------------------------------------------------------------------------

def creation_key(rs: ReplicaSet) -> tuple:
    """ReplicaSetsByCreationTimestamp: older first, name breaks ties; unset time first."""
    ts = rs.metadata.creation_timestamp
    return (ts is not None, ts or 0, rs.metadata.name)


def sort_by_creation(rss: Sequence[ReplicaSet]) -> list[ReplicaSet]:
    return sorted(rss, key=creation_key)


def find_new_replica_set(d: Deployment, rs_list: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's (ignoring hash)."""
    for rs in sort_by_creation(rs_list):
        if equal_ignore_hash(rs.spec.template, d.spec.template):
            return rs
    return None


def find_old_replica_sets(d: Deployment, rs_list: Sequence[ReplicaSet]
                          ) -> tuple[list[ReplicaSet], list[ReplicaSet]]:
    """FindOldReplicaSets: (old ones with replicas != 0, all old ones), in rs_list's order."""
    new_rs = find_new_replica_set(d, rs_list)
    required, all_old = [], []
    for rs in rs_list:
        if new_rs is not None and rs.metadata.uid == new_rs.metadata.uid:
            continue
        all_old.append(rs)
        if replicas_of(rs) != 0:
            required.append(rs)
    return required, all_old


def filter_active_replica_sets(rss: Sequence[ReplicaSet | None]) -> list[ReplicaSet]:
    """controller.FilterActiveReplicaSets: non-nil with spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and replicas_of(rs) > 0]


def get_replica_count(rss: Sequence[ReplicaSet | None]) -> int:
    """GetReplicaCountForReplicaSets: sum of spec.replicas."""
    return sum(replicas_of(rs) for rs in rss if rs is not None)


def get_actual_replica_count(rss: Sequence[ReplicaSet | None]) -> int:
    """GetActualReplicaCountForReplicaSets: sum of status.replicas."""
    return sum(rs.status.replicas for rs in rss if rs is not None)


def get_ready_replica_count(rss: Sequence[ReplicaSet | None]) -> int:
    return sum(rs.status.ready_replicas for rs in rss if rs is not None)


def get_available_replica_count(rss: Sequence[ReplicaSet | None]) -> int:
    return sum(rs.status.available_replicas for rs in rss if rs is not None)


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now."""
    t = d.spec.strategy.type
    if t == "RollingUpdate":
        ru = d.spec.strategy.rolling_update
        raw = ru.max_surge if ru is not None and ru.max_surge is not None else 0
        surge = get_scaled_value_from_int_or_percent(raw, replicas_of(d), True)
        current = get_replica_count(all_rss)
        max_total = replicas_of(d) + surge
        if current >= max_total:
            return replicas_of(new_rs)
        scale_up = min(max_total - current, replicas_of(d) - replicas_of(new_rs))
        return replicas_of(new_rs) + scale_up
    if t == "Recreate":
        return replicas_of(d)
    raise ValueError(f"deployment type {t} isn't supported")


def is_saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
    """IsSaturated: the ReplicaSet has the Deployment's size, annotation and available count."""
    if rs is None:
        return False
    try:
        desired = int(rs.metadata.annotations.get(DESIRED_REPLICAS_ANNOTATION, ""), 10)
    except ValueError:
        return False
    r = replicas_of(d)
    return replicas_of(rs) == r and desired == r and rs.status.available_replicas == r


def find_active_or_latest(new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """FindActiveOrLatest: the only active ReplicaSet, or the newest when none is active, else None."""
    if new_rs is None and not old_rss:
        return None
    old_sorted = sorted(old_rss, key=creation_key, reverse=True)
    active = filter_active_replica_sets(old_sorted + [new_rs])
    if len(active) == 0:
        return new_rs if new_rs is not None else old_sorted[0]
    if len(active) == 1:
        return active[0]
    return None


# --- revisions and annotations ---------------------------------------------------------------------------

def revision(obj: Deployment | ReplicaSet) -> int:
    """Revision: the revision annotation as an int (0 when absent; ValueError when not a number)."""
    v = obj.metadata.annotations.get(REVISION_ANNOTATION)
    if v is None:
        return 0
    return int(v, 10)


def max_revision(rss: Sequence[ReplicaSet]) -> int:
    """MaxRevision (unparsable revisions are skipped, as upstream logs and skips them)."""
    best = 0
    for rs in rss:
        try:
            best = max(best, revision(rs))
        except ValueError:
            continue
    return best


def last_revision(rss: Sequence[ReplicaSet]) -> int:
    """LastRevision: the second largest revision (for rollback)."""
    best = second = 0
    for rs in rss:
        try:
            v = revision(rs)
        except ValueError:
            continue
        if v >= best:
            second, best = best, v
        elif v > second:
            second = v
    return second


def next_revision(old_rss: Sequence[ReplicaSet]) -> str:
    """The new ReplicaSet's revision: MaxRevision(old) + 1, as text."""
    return str(max_revision(old_rss) + 1)


def set_replicas_annotations(annotations: FrozenDict, desired: int, max_replicas: int) -> FrozenDict:
    """SetReplicasAnnotations: desired-replicas and max-replicas (the same map when unchanged)."""
    out = annotations
    if out.get(DESIRED_REPLICAS_ANNOTATION) != str(desired):
        out = out.set(DESIRED_REPLICAS_ANNOTATION, str(desired))
    if out.get(MAX_REPLICAS_ANNOTATION) != str(max_replicas):
        out = out.set(MAX_REPLICAS_ANNOTATION, str(max_replicas))
    return out


def replicas_annotations_need_update(rs: ReplicaSet, desired: int, max_replicas: int) -> bool:
    a = rs.metadata.annotations
    return a.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or a.get(MAX_REPLICAS_ANNOTATION) != str(max_replicas)


def set_new_replica_set_annotations(d: Deployment, rs: ReplicaSet, new_revision: str, exists: bool,
                                    rev_history_limit_chars: int = MAX_REV_HISTORY_LENGTH_IN_CHARS
                                    ) -> tuple[ReplicaSet, bool]:
    """SetNewReplicaSetAnnotations: (updated ReplicaSet, whether annotations changed)."""
    ann = rs.metadata.annotations
    changed = False
    for k, v in d.metadata.annotations.items():
        if k in _SKIP_COPY or ann.get(k) == v:
            continue
        ann = ann.set(k, v)
        changed = True
    old_revision = ann.get(REVISION_ANNOTATION)
    had = old_revision is not None
    old_revision = old_revision or ""
    try:
        old_int = int(old_revision, 10)
    except ValueError:
        if old_revision != "":
            return _with_annotations(rs, ann), False  # upstream returns false here
        old_int = 0
    try:
        new_int = int(new_revision, 10)
    except ValueError:
        return _with_annotations(rs, ann), False
    if old_int < new_int:
        ann = ann.set(REVISION_ANNOTATION, new_revision)
        changed = True
    if had and old_int < new_int:
        history = ann.get(REVISION_HISTORY_ANNOTATION, "")
        olds = history.split(",")
        if len(olds[0]) == 0:
            ann = ann.set(REVISION_HISTORY_ANNOTATION, old_revision)
        else:
            total = len(history) + len(old_revision) + 1
            start = 0
            while total > rev_history_limit_chars and start < len(olds):
                total = total - len(olds[start]) - 1
                start += 1
            if total <= rev_history_limit_chars:
                ann = ann.set(REVISION_HISTORY_ANNOTATION, ",".join(olds[start:] + [old_revision]))
    if not exists:
        r = replicas_of(d)
        new_ann = set_replicas_annotations(ann, r, r + max_surge(d))
        if new_ann is not ann:
            changed = True
        ann = new_ann
    return _with_annotations(rs, ann), changed


def _with_annotations(rs: ReplicaSet, ann: FrozenDict) -> ReplicaSet:
    if ann is rs.metadata.annotations:
        return rs
    return evolve(rs, metadata=evolve(rs.metadata, annotations=ann))


def set_deployment_revision(d: Deployment, rev: str) -> Deployment:
    """SetDeploymentRevision: the Deployment's revision annotation follows its new ReplicaSet's."""
    if d.metadata.annotations.get(REVISION_ANNOTATION) == rev:
        return d
    return evolve(d, metadata=evolve(d.metadata,
                                                 annotations=d.metadata.annotations.set(REVISION_ANNOTATION, rev)))


def build_new_replica_set(d: Deployment, old_rss: Sequence[ReplicaSet], all_old_rss: Sequence[ReplicaSet]
                          ) -> ReplicaSet:
    """The ReplicaSet getNewReplicaSet creates when none matches: template labelled with the hash, named
    <deployment>-<hash>, owned by the Deployment, sized by NewRSNewReplicas, annotated with the next
    revision (computed over all old ReplicaSets). old_rss are the active old ones (for the size)."""
    h = compute_hash(d.spec.template, d.status.collision_count)
    tmpl = d.spec.template
    tmpl = evolve(tmpl, metadata=evolve(tmpl.metadata,
                                                    labels=tmpl.metadata.labels.set(POD_TEMPLATE_HASH_LABEL, h)))
    sel = d.spec.selector or LabelSelector()
    sel = evolve(sel, match_labels=sel.match_labels.set(POD_TEMPLATE_HASH_LABEL, h))
    owner = OwnerReference(api_version="apps/v1", kind="Deployment", name=d.metadata.name, uid=d.metadata.uid,
                           controller=True, block_owner_deletion=True)
    rs = ReplicaSet(
        metadata=ObjectMeta(name=f"{d.metadata.name}-{h}", namespace=d.metadata.namespace,
                            labels=tmpl.metadata.labels, owner_references=(owner,)),
        spec=ReplicaSetSpec(replicas=0, min_ready_seconds=d.spec.min_ready_seconds, selector=sel, template=tmpl),
    )
    all_rss = list(old_rss) + [rs]
    size = new_rs_new_replicas(d, all_rss, rs)
    rs = evolve(rs, spec=evolve(rs.spec, replicas=size))
    rs, _ = set_new_replica_set_annotations(d, rs, next_revision(all_old_rss), exists=False)
    return rs


# --- status ----------------------------------------------------------------------------------------------

def _set_deployment_condition(conditions: tuple, cond: DeploymentCondition) -> tuple:
    """SetDeploymentCondition: unchanged when status and reason match; keeps lastTransitionTime when only
    the reason/message changed."""
    current = next((c for c in conditions if c.type == cond.type), None)
    if current is not None and current.status == cond.status and current.reason == cond.reason:
        return conditions
    if current is not None and current.status == cond.status:
        cond = evolve(cond, last_transition_time=current.last_transition_time)
    return tuple(c for c in conditions if c.type != cond.type) + (cond,)


def calculate_status(all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None, d: Deployment,
                     now_ms: int) -> DeploymentStatus:
    """calculateStatus: counts from the ReplicaSets and the Available condition (Progressing is
    syncRolloutStatus' business and is carried over unchanged)."""
    available = get_available_replica_count(all_rss)
    total = get_replica_count(all_rss)
    unavailable = max(0, total - available)
    if available >= replicas_of(d) - max_unavailable(d):
        cond = DeploymentCondition(type="Available", status="True", last_update_time=now_ms,
                                   last_transition_time=now_ms, reason=MINIMUM_REPLICAS_AVAILABLE,
                                   message="Deployment has minimum availability.")
    else:
        cond = DeploymentCondition(type="Available", status="False", last_update_time=now_ms,
                                   last_transition_time=now_ms, reason=MINIMUM_REPLICAS_UNAVAILABLE,
                                   message="Deployment does not have minimum availability.")
    return DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=get_actual_replica_count(all_rss),
        updated_replicas=get_actual_replica_count([new_rs]),
        ready_replicas=get_ready_replica_count(all_rss),
        available_replicas=available,
        unavailable_replicas=unavailable,
        conditions=_set_deployment_condition(tuple(d.status.conditions), cond),
        collision_count=d.status.collision_count,
    )


def deployment_complete(d: Deployment, status: DeploymentStatus) -> bool:
    """DeploymentComplete: every replica updated and available, and the generation observed."""
    r = replicas_of(d)
    return (status.updated_replicas == r and status.replicas == r and status.available_replicas == r
            and status.observed_generation >= d.metadata.generation)
