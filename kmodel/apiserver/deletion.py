"""What a DELETE does to an object before (or instead of) removing it: upstream's graceful deletion and
finalizers, as pure functions over frozen objects.

Theory of operation
-------------------
Upstream's generic registry (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go, Delete and
updateForGracefulDeletionAndFinalizers; pkg/registry/rest/delete.go, BeforeDelete; Kubernetes 1.28-1.32)
decides in this order, and the pipeline (pipeline.py `_delete`) follows it:

1. `before_delete` (rest.BeforeDelete): for an object already being deleted, a grace period may only be
   shortened (the deletionTimestamp moves back by the difference); a longer or absent one leaves the pending
   deletion as it is (answered with the object, nothing written). An object with a deletionTimestamp and a
   grace period of 0 (or none) is deleted now (the recovery path of a delete whose removal failed). For a
   pod not yet being deleted, the pod strategy's CheckGracefulDelete picks the grace period: the request's
   gracePeriodSeconds, else spec.terminationGracePeriodSeconds; 0 for a pod never scheduled or already
   Succeeded/Failed. Other kinds are deleted without grace.
2. `gc_finalizers` (deletionFinalizersForGarbageCollection): DeleteOptions.propagationPolicy Orphan puts the
   `orphan` finalizer on the object, Foreground the `foregroundDeletion` finalizer, Background neither; no
   policy keeps whichever of the two the object already has (every kind the model serves defaults to
   background, as apps/v1 and core/v1 do).
3. a graceful delete with a grace period above 0 sets deletionTimestamp = now + grace and
   deletionGracePeriodSeconds (and the finalizers of step 2): the object stays until its kubelet deletes it
   with grace 0, and then until its last finalizer is gone;
4. otherwise an object left with finalizers is marked as deleting (markAsDeleting: deletionTimestamp now,
   unless an earlier one is set; grace 0): it stays until an update removes the last finalizer (the update
   deletes it then: ShouldDeleteDuringUpdate);
5. otherwise it is removed from the store.

Namespaces have their own first step (pkg/registry/core/namespace/storage/storage.go, Delete): the first
DELETE only sets deletionTimestamp and phase Terminating (and the orphan/foreground finalizers as the policy
says); the namespace is removed by a later DELETE or by the finalize update once spec.finalizers is empty
(the namespace controller removes `kubernetes` from it when the namespace holds nothing any more).

A graceless delete of a pod (grace 0) is written upstream as an update (deletionTimestamp now, grace 0) and
then a removal; the model removes it in one write (docs/rules-access.md lists the difference).
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.apiserver import errors
from kmodel.apiserver.fastevolve import evolve as _evolve
from kmodel.objects.field_errors import not_supported

#: metav1.FinalizerOrphanDependents and metav1.FinalizerDeleteDependents
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
#: the garbage collector's two finalizers: a DELETE's propagationPolicy sets and clears them, the GC removes them
GC_FINALIZERS = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
#: v1.FinalizerKubernetes: the namespace controller's token in a namespace's spec.finalizers
NAMESPACE_FINALIZER = "kubernetes"
ORPHAN, BACKGROUND, FOREGROUND = "Orphan", "Background", "Foreground"
PROPAGATION_POLICIES = (FOREGROUND, BACKGROUND, ORPHAN)
DEFAULT_GRACE_SECONDS = 30


def check_delete_options(propagation_policy: str) -> None:
    """ValidateDeleteOptions: 422 for an unknown propagationPolicy."""
    if propagation_policy and propagation_policy not in PROPAGATION_POLICIES:
        raise errors.invalid("DeleteOptions.meta.k8s.io", "meta.k8s.io", "DeleteOptions", "", [
            not_supported("propagationPolicy", propagation_policy, (*PROPAGATION_POLICIES, "nil"))])


def pod_grace_seconds(pod: Any, requested: Optional[int]) -> int:
    """The pod strategy's CheckGracefulDelete: the grace period a delete of a pod not yet being deleted gets."""
    if requested is not None:
        period = requested
    else:
        spec_grace = pod.spec.termination_grace_period_seconds
        period = DEFAULT_GRACE_SECONDS if spec_grace is None else spec_grace
    if not pod.spec.node_name or pod.status.phase in ("Failed", "Succeeded"):
        return 0
    return max(period, 0)


def before_delete(resource: str, obj: Any, requested: Optional[int], now: int) -> tuple[str, Any]:
    """rest.BeforeDelete: ("pending", obj) when a graceful deletion already pending stays as it is,
    ("graceful", obj with its new deletionTimestamp and grace) when the object is to wait out a grace period
    above 0, ("now", obj) when it is to go without grace (finalizers may still keep it)."""
    meta = obj.metadata
    if requested is not None and requested < 0:
        requested = 1  # negative values count as one second on the delete path
    if resource != "pods":
        return "now", obj
    if meta.deletion_timestamp is not None:
        current = meta.deletion_grace_period_seconds
        if not current:
            return "now", obj
        if requested is None or requested >= current:
            return "pending", obj
        deadline = meta.deletion_timestamp - current * 1000 + requested * 1000
        shortened = _evolve(obj, metadata=_evolve(meta, deletion_timestamp=deadline,
                                                  deletion_grace_period_seconds=requested))
        return ("graceful" if requested > 0 else "now"), shortened
    grace = pod_grace_seconds(obj, requested)
    if grace == 0:
        return "now", obj
    # (upstream bumps metadata.generation here when it is set; a pod's is not before 1.33, so nothing moves)
    return "graceful", _evolve(obj, metadata=_evolve(meta, deletion_timestamp=now + grace * 1000,
                                                     deletion_grace_period_seconds=grace))


def gc_finalizers(finalizers: tuple, propagation_policy: str) -> tuple:
    """deletionFinalizersForGarbageCollection: the finalizers an object gets from a delete with this policy
    (the same tuple when the set does not change)."""
    policy = propagation_policy
    if not policy:
        for f in finalizers:
            if f == ORPHAN_FINALIZER:
                policy = ORPHAN
                break
            if f == FOREGROUND_FINALIZER:
                policy = FOREGROUND
                break
    wanted = [f for f in finalizers if f not in GC_FINALIZERS]
    if policy == ORPHAN:
        wanted.append(ORPHAN_FINALIZER)
    elif policy == FOREGROUND:
        wanted.append(FOREGROUND_FINALIZER)
    return finalizers if set(wanted) == set(finalizers) else tuple(wanted)


def mark_as_deleting(resource: str, obj: Any, now: int) -> Any:
    """markAsDeleting: deletionTimestamp now (unless an earlier one is set), grace period 0; the generation
    moves on when the deletion starts (not a pod's: pods carry no generation upstream before 1.33, while the
    model gives every kind with a spec generation 1)."""
    meta = obj.metadata
    dt = meta.deletion_timestamp
    bump = dt is None and meta.generation and resource != "pods"
    generation = meta.generation + 1 if bump else meta.generation
    return _evolve(obj, metadata=_evolve(meta, deletion_timestamp=now if dt is None or dt > now else dt,
                                         deletion_grace_period_seconds=0, generation=generation))


def with_finalizers(obj: Any, finalizers: tuple) -> Any:
    meta = obj.metadata
    return obj if meta.finalizers == finalizers else _evolve(obj, metadata=_evolve(meta, finalizers=finalizers))


def namespace_first_delete(ns: Any, propagation_policy: str, now: int) -> Any:
    """The namespace registry's first DELETE: deletionTimestamp now, phase Terminating, and the orphan or
    foreground finalizer as the policy says (shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer:
    an explicit policy decides, none keeps what is there)."""
    meta = ns.metadata
    finalizers = meta.finalizers
    if propagation_policy:
        finalizers = gc_finalizers(finalizers, propagation_policy)
    return _evolve(ns, metadata=_evolve(meta, deletion_timestamp=now, finalizers=finalizers),
                   status=_evolve(ns.status, phase="Terminating"))


def deleted_by_update(resource: str, new: Any) -> bool:
    """ShouldDeleteDuringUpdate (and the namespace registry's ShouldDeleteNamespaceDuringUpdate): an update
    leaving an object being deleted without finalizers (and without a grace period still running) removes it."""
    m = new.metadata
    if m.deletion_timestamp is None or m.finalizers or m.deletion_grace_period_seconds:
        return False
    return resource != "namespaces" or not new.spec.finalizers
