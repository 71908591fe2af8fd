"""The StatefulSet controller's decisions as pure functions (pkg/controller/statefulset: stateful_set_utils.go and
stateful_set_control.go's updateStatefulSet, Kubernetes 1.31).

`plan(set, pods, now, revisions)` is one updateStatefulSet over the pods the set claimed: which pods to delete
and create, in the order the controller sends them, as `Step`s (each step's requests go out at once; the next
step waits for every answer of the one before, and an error stops the rest), and the status the sync then writes.

* Pods are named `<set>-<ordinal>`; those with an ordinal in [0, replicas) are the replicas, the others
  (higher ordinals) are condemned, sorted by descending ordinal; a pod whose name has no ordinal is ignored.
* A missing replica is created. A Failed or Succeeded replica is deleted unless it is already being deleted,
  and ends the sync of an OrderedReady set: its replacement is created by a later sync, once the old object
  is gone (kubernetes/kubernetes#123809, in 1.31 and the 1.28-1.30 patch releases: no RecreatingFailedPod or
  RecreatingTerminatedPod event, and no second delete of a terminating one).
* OrderedReady (monotonic): the replicas are processed in ordinal order and the first one that is created,
  terminal, being deleted, or not Running and Ready (and available for minReadySeconds) ends the sync; so
  ordinal N+1 is created only once 0..N are Running and Ready. Only then are condemned pods deleted, one per
  sync, highest ordinal first, and only once the one before it is gone (a terminating condemned pod blocks). A
  condemned pod that is not available for minReadySeconds blocks unless it is the first unhealthy pod, and
  1.31's isHealthy asks Running and Ready only: a condemned pod that is Ready but not yet available is not
  the first unhealthy pod, so it blocks the scale-down until it is available, and nothing brings the set back
  then when its availableReplicas already equals replicas (kubernetes/kubernetes#123918, fixed in 1.34 by
  #130909: `healthy_means_available`, the statefulset-healthy-means-available fix).
* Parallel (burst): every missing replica is created and every condemned pod deleted in one sync, none waiting
  for another (upstream sends them in slow-start batches of 1, 2, 4, ...; here the deletes of terminal pods go
  out first, then the creates, then the deletes of condemned pods).
* Revisions (`Revisions`): the set's current and update ControllerRevisions (history.py). A pod is created from
  the current revision's template when its ordinal is below the RollingUpdate partition (newVersionedStatefulSetPod),
  else from the update revision's; its `controller-revision-hash` label names the revision.
* RollingUpdate: once scaling has nothing left to do, the replica with the highest ordinal at or above the
  partition whose revision is not the update revision is deleted (one per sync; a 404 is no error: the pod is
  gone already); its replacement is created by a later sync. An unhealthy replica on the way down stops it.
* The status counts the pods at each revision; once every replica is updated and ready the update revision
  becomes the current one (completeRollingUpdate). `history_to_delete` is truncateHistory: the revisions that
  neither the status nor a pod uses, oldest first, beyond revisionHistoryLimit.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import attrs

from kmodel.objects import ControllerRevision, ObjectMeta, Pod, PodTemplateSpec, StatefulSet, StatefulSetStatus
from kmodel.objects.codec import dump_struct, load_struct
from kmodel.objects.frozendict import freeze, frozen_map

from kmodel.memo import identity_memo

from .controller_ref import new_controller_ref
from .history import hash_revision, new_controller_revision, revision_name
from .pod_state import is_pod_available, is_pod_ready, pod_ready_time

#: apps.StatefulSetPodNameLabel
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
#: apps.PodIndexLabel (the PodIndexLabel feature, on by default since 1.28)
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
#: apps.ControllerRevisionHashLabelKey
REVISION_LABEL = "controller-revision-hash"
#: the revisions a set keeps when spec.revisionHistoryLimit is unset (the API defaults it to 10)
DEFAULT_HISTORY_LIMIT = 10
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(name: str) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("web", 2) for "web-2"; ("", -1) when the name has no ordinal."""
    m = _ORDINAL.match(name)
    if m is None:
        return "", -1
    return m.group(1), int(m.group(2))


def is_member_of(sts: Any, pod: Any) -> bool:
    """isMemberOf: the pod's name is `<set>-<ordinal>`."""
    return parent_and_ordinal(pod.metadata.name)[0] == sts.metadata.name


def replicas_of(sts: StatefulSet) -> int:
    return 1 if sts.spec.replicas is None else sts.spec.replicas


# -- revisions -------------------------------------------------------------------------------------------------

def _template_patch(template: PodTemplateSpec) -> Any:
    return freeze({"spec": {"template": {**dump_struct(template), "$patch": "replace"}}})


def _template_hash(template: PodTemplateSpec, collision_count: int) -> str:
    return hash_revision(_patch_of(template), collision_count)


# once per template object: every sync of a set reads the one template its cached object carries
_patch_of = identity_memo(_template_patch)
_hash_of = identity_memo(_template_hash, extra=True)


def revision_patch(sts: StatefulSet) -> Any:
    """getPatch: the strategic merge patch that restores the set's template (`$patch: replace`), the data of
    the set's revisions and what `kubectl rollout undo` sends back."""
    return _patch_of(sts.spec.template)


def new_revision(sts: StatefulSet, revision: int, collision_count: int) -> ControllerRevision:
    """newRevision: a ControllerRevision of the set's template, with the set's annotations."""
    cr = new_controller_revision(sts, new_controller_ref(sts, "apps/v1", "StatefulSet"),
                                 sts.spec.template.metadata.labels, revision_patch(sts), revision, collision_count,
                                 _hash_of(sts.spec.template, collision_count))
    return attrs.evolve(cr, metadata=attrs.evolve(cr.metadata, annotations=sts.metadata.annotations))


def update_revision(sts: StatefulSet) -> str:
    """The name of the revision the set's template makes (before any name collision beyond the status')."""
    return revision_name(sts.metadata.name, _hash_of(sts.spec.template, sts.status.collision_count or 0))


def revision_template(sts: StatefulSet, revision: ControllerRevision) -> PodTemplateSpec:
    """ApplyRevision's template: the one `revision` saved (the set's own when the revision is of it)."""
    if revision.data == revision_patch(sts):
        return sts.spec.template
    saved = {k: v for k, v in revision.data["spec"]["template"].items() if k != "$patch"}
    return load_struct(PodTemplateSpec, saved, strict=False)


@attrs.frozen
class Revisions:
    """The current and update revisions of a sync (getStatefulSetRevisions) and the collision count."""

    current: ControllerRevision
    update: ControllerRevision
    collision_count: int = 0

    @classmethod
    def first(cls, sts: StatefulSet) -> "Revisions":
        """A set's first sync: one revision, of its template, both current and update."""
        count = sts.status.collision_count or 0
        only = new_revision(sts, 1, count)
        return cls(only, only, count)


def history_to_delete(sts: StatefulSet, pods: Sequence[Pod], revisions: Sequence[ControllerRevision],
                      current: Optional[ControllerRevision], update: Optional[ControllerRevision]) -> list:
    """truncateHistory: the revisions (sorted, oldest first) that are not live (the current, the update, any
    pod's), beyond the revisionHistoryLimit newest of them; none when the limit is negative."""
    live = {pod.metadata.labels.get(REVISION_LABEL, "") for pod in pods}
    live |= {r.metadata.name for r in (current, update) if r is not None}
    history = [r for r in revisions if r.metadata.name not in live]
    limit = sts.spec.revision_history_limit
    limit = DEFAULT_HISTORY_LIMIT if limit is None else limit
    if limit < 0 or len(history) <= limit:
        return []
    return history[:len(history) - limit]


# -- pods ----------------------------------------------------------------------------------------------------

def new_pod(sts: StatefulSet, ordinal: int, template: Optional[PodTemplateSpec] = None,
            revision: Optional[str] = None) -> Pod:
    """newStatefulSetPod from `template` (the set's own by default) at `revision` (the set's update revision
    by default): the controller ref, the name `<set>-<ordinal>`, the identity labels, hostname = the pod's
    name and subdomain = serviceName (initIdentity)."""
    t = sts.spec.template if template is None else template
    name = f"{sts.metadata.name}-{ordinal}"
    labels = {**t.metadata.labels, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
              REVISION_LABEL: update_revision(sts) if revision is None else revision}
    meta = ObjectMeta(name=name, namespace=sts.metadata.namespace, labels=frozen_map(labels),
                      annotations=t.metadata.annotations, finalizers=t.metadata.finalizers,
                      owner_references=(new_controller_ref(sts, "apps/v1", "StatefulSet"),))
    spec = attrs.evolve(t.spec, hostname=name, subdomain=sts.spec.service_name)
    return Pod(metadata=meta, spec=spec)


def at_current_revision(sts: StatefulSet, ordinal: int) -> bool:
    """newVersionedStatefulSetPod's test, with Go's precedence kept: (RollingUpdate without rollingUpdate and
    the ordinal below status.currentReplicas) or (rollingUpdate given and the ordinal below its partition)."""
    strategy = sts.spec.update_strategy
    ru = strategy.rolling_update
    if strategy.type == "RollingUpdate" and ru is None and ordinal < sts.status.current_replicas:
        return True
    return ru is not None and ordinal < (ru.partition or 0)


def _new_versioned_pod(sts: StatefulSet, ordinal: int, revisions: Revisions, current: PodTemplateSpec,
                       update: PodTemplateSpec) -> Pod:
    if at_current_revision(sts, ordinal):
        return new_pod(sts, ordinal, current, revisions.current.metadata.name)
    return new_pod(sts, ordinal, update, revisions.update.metadata.name)


def is_created(pod: Optional[Pod]) -> bool:
    """isCreated: the API server has given the pod a phase."""
    return pod is not None and pod.status.phase != ""


def is_terminating(pod: Any) -> bool:
    return pod.metadata.deletion_timestamp is not None


def is_running_and_ready(pod: Optional[Pod]) -> bool:
    return pod is not None and pod.status.phase == "Running" and is_pod_ready(pod)


def is_healthy(pod: Optional[Pod]) -> bool:
    """isHealthy: Running and Ready and not being deleted."""
    return is_running_and_ready(pod) and not is_terminating(pod)


def _available(pod: Optional[Pod], min_ready_seconds: int, now: int) -> bool:
    return is_running_and_ready(pod) and is_pod_available(pod, min_ready_seconds, now)  # type: ignore[arg-type]


def is_healthy_and_available(pod: Optional[Pod], min_ready_seconds: int, now: int) -> bool:
    """isHealthy as kubernetes/kubernetes#130909 (1.34) made it: Running and Ready for minReadySeconds
    (isRunningAndAvailable) and not being deleted."""
    return _available(pod, min_ready_seconds, now) and not is_terminating(pod)


@attrs.frozen
class Step:
    """Requests sent at once: deletes of existing pods (by name) and creates of new ones."""

    deletes: tuple[Pod, ...] = ()
    creates: tuple[Pod, ...] = ()
    #: a 404 on a delete is no error (the rolling update's: the pod is gone already)
    gone_is_done: bool = False


@attrs.frozen
class Plan:
    steps: tuple[Step, ...]
    status: StatefulSetStatus
    #: an OrderedReady sync stopped at a replica Running and Ready but not yet available for minReadySeconds: the
    #: milliseconds until it is (IsPodAvailable wants the transition plus minReadySeconds strictly before now)
    available_in_ms: Optional[int] = None


def available_in_ms(pod: Pod, min_ready_seconds: int, now: int) -> Optional[int]:
    """How long until `pod`, Running and Ready and not being deleted, is available for minReadySeconds (0: at the
    next millisecond); None for a pod that is not Ready, being deleted, or already available."""
    if is_terminating(pod) or not is_running_and_ready(pod) or _available(pod, min_ready_seconds, now):
        return None
    ready_at = pod_ready_time(pod)
    if ready_at is None:
        return None
    return max(0, ready_at + min_ready_seconds * 1000 - now)


def _replica_status(pods: Sequence[Optional[Pod]], min_ready_seconds: int, now: int, current: str,
                    update: str) -> dict[str, int]:
    """computeReplicaStatus over `pods` (None: a pod this sync creates, not yet created)."""
    counts = {"replicas": 0, "ready_replicas": 0, "available_replicas": 0, "current_replicas": 0,
              "updated_replicas": 0}
    for pod in pods:
        if pod is None or not is_created(pod):
            continue
        counts["replicas"] += 1
        if is_running_and_ready(pod):
            counts["ready_replicas"] += 1
            if _available(pod, min_ready_seconds, now):
                counts["available_replicas"] += 1
        if not is_terminating(pod):
            revision = pod.metadata.labels.get(REVISION_LABEL, "")
            if revision == current:
                counts["current_replicas"] += 1
            if revision == update:
                counts["updated_replicas"] += 1
    return counts


def _status(sts: StatefulSet, pods: Sequence[Optional[Pod]], now: int, revisions: Revisions) -> StatefulSetStatus:
    """The status updateStatefulSet computes, then completeRollingUpdate: once every replica is updated and ready
    the update revision becomes the current one."""
    current, update = revisions.current.metadata.name, revisions.update.metadata.name
    counts = _replica_status(pods, sts.spec.min_ready_seconds, now, current, update)
    status = attrs.evolve(sts.status, observed_generation=sts.metadata.generation, current_revision=current,
                          update_revision=update, collision_count=revisions.collision_count, **counts)
    if (sts.spec.update_strategy.type == "RollingUpdate" and status.updated_replicas == status.replicas
            and status.ready_replicas == status.replicas):
        status = attrs.evolve(status, current_replicas=status.updated_replicas, current_revision=update)
    return status


def plan(sts: StatefulSet, pods: Sequence[Pod], now: int, revisions: Optional[Revisions] = None, *,
         healthy_means_available: bool = False) -> Plan:
    """One updateStatefulSet (see the module docstring); `revisions` defaults to a first sync's.

    `healthy_means_available` is the statefulset-healthy-means-available fix (kmodel.fixes): a pod is healthy only
    once it is available (kubernetes/kubernetes#130909), so a condemned pod that is Ready but not yet available
    for minReadySeconds is the first unhealthy pod, which is deleted without waiting, and a rolling update waits
    for each replica to be available. 1.31's isHealthy asks Running and Ready only."""
    if revisions is None:
        revisions = Revisions.first(sts)
    min_ready = sts.spec.min_ready_seconds

    def healthy(pod: Optional[Pod]) -> bool:
        if healthy_means_available:
            return is_healthy_and_available(pod, min_ready, now)
        return is_healthy(pod)

    n = replicas_of(sts)
    update = revisions.update.metadata.name
    replicas: list[Optional[Pod]] = [None] * n
    condemned: list[Pod] = []
    for pod in pods:
        ordinal = parent_and_ordinal(pod.metadata.name)[1]
        if 0 <= ordinal < n:
            replicas[ordinal] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    condemned.sort(key=lambda p: -parent_and_ordinal(p.metadata.name)[1])
    first_unhealthy = next((p for p in replicas if not healthy(p)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for p in reversed(condemned) if not healthy(p)), None)
    if sts.metadata.deletion_timestamp is not None:
        return Plan((), _status(sts, [*replicas, *condemned], now, revisions))
    current_template = revision_template(sts, revisions.current)
    update_template = revision_template(sts, revisions.update)
    monotonic = sts.spec.pod_management_policy != "Parallel"
    steps: list[Step] = []
    terminal: list[Pod] = []
    created: list[Pod] = []
    waiting_for: Optional[Pod] = None  # the replica an OrderedReady sync stopped at
    blocked = False
    for i in range(n):
        pod = replicas[i]
        if pod is not None and pod.status.phase in ("Failed", "Succeeded"):
            # processReplica: delete it once; the replacement waits for a later sync, after the object is gone
            if not is_terminating(pod):
                terminal.append(pod)
            if monotonic:
                blocked = True
                break
            continue
        if pod is None:
            created.append(_new_versioned_pod(sts, i, revisions, current_template, update_template))
            if monotonic:
                blocked = True
                break
            continue
        if monotonic and (is_terminating(pod) or not is_running_and_ready(pod) or not _available(pod, min_ready, now)):
            waiting_for = pod
            blocked = True
            break
    if terminal:
        steps.append(Step(deletes=tuple(terminal)))
    if created:
        steps.append(Step(creates=tuple(created)))
    final_pods = [*replicas, *condemned]
    if blocked:
        wait = available_in_ms(waiting_for, min_ready, now) if waiting_for is not None else None
        return Plan(tuple(steps), _status(sts, final_pods, now, revisions), wait)
    doomed: list[Pod] = []
    for pod in condemned:
        if is_terminating(pod):
            if monotonic:
                blocked = True
                break
            continue
        if monotonic and pod is not first_unhealthy and not _available(pod, min_ready, now):
            blocked = True
            break
        doomed.append(pod)
        if monotonic:
            blocked = True
            break
    if doomed:
        steps.append(Step(deletes=tuple(doomed)))
    status = _status(sts, final_pods, now, revisions)
    if blocked or sts.spec.update_strategy.type != "RollingUpdate":
        return Plan(tuple(steps), status)
    ru = sts.spec.update_strategy.rolling_update
    partition = ru.partition if ru is not None and ru.partition is not None else 0
    for target in range(n - 1, partition - 1, -1):
        pod = replicas[target]  # None: created by this sync, not yet healthy
        if pod is not None and pod.metadata.labels.get(REVISION_LABEL, "") != update and not is_terminating(pod):
            steps.append(Step(deletes=(pod,), gone_is_done=True))
            return Plan(tuple(steps), attrs.evolve(status, current_replicas=status.current_replicas - 1))
        if not healthy(pod):
            break
    return Plan(tuple(steps), status)
