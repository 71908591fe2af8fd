"""The StatefulSet controller's decisions as pure functions (pkg/controller/statefulset: stateful_set_utils.go and
stateful_set_control.go's updateStatefulSet, Kubernetes 1.28-1.32).

`plan(set, pods, now)` is one updateStatefulSet over the pods the set claimed: which pods to delete and create,
in the order the controller sends them, as `Step`s (each step's requests go out at once; the next step waits for
every answer of the one before, and an error stops the rest), and the status the sync then writes.

* Pods are named `<set>-<ordinal>`; those with an ordinal in [0, replicas) are the replicas, the others
  (higher ordinals) are condemned, sorted by descending ordinal; a pod whose name has no ordinal is ignored.
* A missing replica is created; a Failed or Succeeded replica is deleted, then created again in the same step
  order (the pod registry deletes a terminal pod at once, so the create finds the name free, or fails with
  AlreadyExists and the sync is retried).
* OrderedReady (monotonic): the replicas are processed in ordinal order and the first one that is created,
  being deleted, or not Running and Ready (and available for minReadySeconds) ends the sync; so ordinal N+1 is
  created only once 0..N are Running and Ready. Only then are condemned pods deleted, one per sync, highest
  ordinal first, and only once the one before it is gone (a terminating condemned pod blocks). A condemned
  pod that is not healthy blocks unless it is the first unhealthy pod.
* Parallel (burst): every missing replica is created and every condemned pod deleted in one sync, none waiting
  for another (upstream sends them in slow-start batches of 1, 2, 4, ...; here the creates go out at once,
  then the deletes).
* RollingUpdate: once scaling has nothing left to do, the replica with the highest ordinal at or above the
  partition whose revision is not the update revision is deleted (one per sync); its replacement is created
  from the current template by a later sync. An unhealthy replica on the way down stops it.

The revision of a pod is its `controller-revision-hash` label, `<set>-<hash of the template>`; the model keeps no
ControllerRevision objects, so every pod is created from the set's current template (see docs/differences.md).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import attrs

from kmodel.objects import ObjectMeta, Pod, StatefulSet, StatefulSetStatus
from kmodel.objects.frozendict import frozen_map

from .controller_ref import new_controller_ref
from .deployment_logic import compute_hash
from .pod_state import is_pod_available, is_pod_ready

#: apps.StatefulSetPodNameLabel
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
#: apps.PodIndexLabel (the PodIndexLabel feature, on by default since 1.28)
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
#: apps.ControllerRevisionHashLabelKey
REVISION_LABEL = "controller-revision-hash"
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


def update_revision(sts: StatefulSet) -> str:
    """The name the set's current template's revision has: `<set>-<hash>`."""
    return f"{sts.metadata.name}-{compute_hash(sts.spec.template, sts.status.collision_count)}"


def current_revision(sts: StatefulSet) -> str:
    """status.currentRevision, or the update revision before the first status is written."""
    return sts.status.current_revision or update_revision(sts)


def new_pod(sts: StatefulSet, ordinal: int) -> Pod:
    """newStatefulSetPod at the update revision: the template with the controller ref, the name `<set>-<ordinal>`,
    the identity labels, hostname = the pod's name and subdomain = serviceName (initIdentity)."""
    t = sts.spec.template
    name = f"{sts.metadata.name}-{ordinal}"
    labels = {**t.metadata.labels, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
              REVISION_LABEL: update_revision(sts)}
    meta = ObjectMeta(name=name, namespace=sts.metadata.namespace, labels=frozen_map(labels),
                      annotations=t.metadata.annotations, finalizers=t.metadata.finalizers,
                      owner_references=(new_controller_ref(sts, "apps/v1", "StatefulSet"),))
    spec = attrs.evolve(t.spec, hostname=name, subdomain=sts.spec.service_name)
    return Pod(metadata=meta, spec=spec)


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


@attrs.frozen
class Step:
    """Requests sent at once: deletes of existing pods (by name) and creates of new ones."""

    deletes: tuple[Pod, ...] = ()
    creates: tuple[Pod, ...] = ()
    #: why each delete (the event upstream records for a replaced pod: RecreatingFailedPod ...), by pod name
    reasons: tuple[tuple[str, str, str], ...] = ()


@attrs.frozen
class Plan:
    steps: tuple[Step, ...]
    status: StatefulSetStatus


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


def _status(sts: StatefulSet, pods: Sequence[Optional[Pod]], now: int, current: str, update: str) -> StatefulSetStatus:
    """The status updateStatefulSet computes, then completeRollingUpdate: once every replica is updated and ready
    the update revision becomes the current one."""
    counts = _replica_status(pods, sts.spec.min_ready_seconds, now, current, update)
    status = attrs.evolve(sts.status, observed_generation=sts.metadata.generation, current_revision=current,
                          update_revision=update, **counts)
    if (sts.spec.update_strategy.type == "RollingUpdate" and status.updated_replicas == status.replicas
            and status.ready_replicas == status.replicas):
        status = attrs.evolve(status, current_replicas=status.updated_replicas, current_revision=update)
    return status


def plan(sts: StatefulSet, pods: Sequence[Pod], now: int) -> Plan:
    """One updateStatefulSet (see the module docstring)."""
    n = replicas_of(sts)
    current, update = current_revision(sts), update_revision(sts)
    replicas: list[Optional[Pod]] = [None] * n
    condemned: list[Pod] = []
    for pod in pods:
        ordinal = parent_and_ordinal(pod.metadata.name)[1]
        if 0 <= ordinal < n:
            replicas[ordinal] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    condemned.sort(key=lambda p: -parent_and_ordinal(p.metadata.name)[1])
    first_unhealthy = next((p for p in replicas if not is_healthy(p)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for p in reversed(condemned) if not is_healthy(p)), None)
    if sts.metadata.deletion_timestamp is not None:
        return Plan((), _status(sts, [*replicas, *condemned], now, current, update))
    monotonic = sts.spec.pod_management_policy != "Parallel"
    min_ready = sts.spec.min_ready_seconds
    steps: list[Step] = []
    replaced: list[Pod] = []
    reasons: list[tuple[str, str, str]] = []
    created: list[Pod] = []
    blocked = False
    for i in range(n):
        pod = replicas[i]
        if pod is not None and pod.status.phase in ("Failed", "Succeeded"):
            replaced.append(pod)
            failed = pod.status.phase == "Failed"
            reasons.append((pod.metadata.name, "Warning" if failed else "Normal",
                            "RecreatingFailedPod" if failed else "RecreatingTerminatedPod"))
            pod = replicas[i] = None
        if pod is None:
            created.append(new_pod(sts, i))
            if monotonic:
                blocked = True
                break
            continue
        if monotonic and (is_terminating(pod) or not is_running_and_ready(pod) or not _available(pod, min_ready, now)):
            blocked = True
            break
    if replaced:
        steps.append(Step(deletes=tuple(replaced), reasons=tuple(reasons)))
    if created:
        steps.append(Step(creates=tuple(created)))
    final_pods = [*replicas, *condemned]
    if blocked:
        return Plan(tuple(steps), _status(sts, final_pods, now, current, update))
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
    status = _status(sts, final_pods, now, current, update)
    if blocked or sts.spec.update_strategy.type != "RollingUpdate":
        return Plan(tuple(steps), status)
    ru = sts.spec.update_strategy.rolling_update
    partition = ru.partition if ru is not None and ru.partition is not None else 0
    for target in range(n - 1, partition - 1, -1):
        pod = replicas[target]  # None: created by this sync (at the update revision), not yet healthy
        if pod is not None and pod.metadata.labels.get(REVISION_LABEL, "") != update and not is_terminating(pod):
            steps.append(Step(deletes=(pod,)))
            return Plan(tuple(steps), attrs.evolve(status, current_replicas=status.current_replicas - 1))
        if not is_healthy(pod):
            break
    return Plan(tuple(steps), status)
