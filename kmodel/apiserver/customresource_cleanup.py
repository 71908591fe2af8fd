"""Deleting a CustomResourceDefinition: the CRD registry's first delete and the finalizing controller
(apiextensions-apiserver registry/customresourcedefinition/etcd.go and pkg/controller/finalizer,
Kubernetes 1.30-1.32).

Theory of operation
-------------------
* The first DELETE of a CRD does not remove it: it gets a deletionTimestamp, the finalizer
  `customresourcecleanup.apiextensions.k8s.io` and the condition Terminating=True (reason
  InstanceDeletionPending); its Established condition stays, so its objects are still served, but new ones
  are refused (405 `create not allowed while custom resource definition is terminating`).
* The finalizing controller then deletes every object of the resource (each as a DELETE with the object's
  own defaults: one with finalizers gets its deletionTimestamp and stays until they are removed), and once
  none is left removes the finalizer, whereupon the CRD goes (or stays while other finalizers remain).

The model runs the controller synchronously (`finalize_crds`): after the first delete of a CRD, and after
every custom object of a terminating CRD is removed, within the same request. Once a CRD is removed, the
naming controller checks again the CRDs whose names it had refused (`names_freed`). Upstream it runs soon after,
asynchronously; what a client can observe differs only in timing.
"""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.apiserver import customresources, errors
from kmodel.apiserver.crd_status import names_pending, with_terminating
from kmodel.apiserver.registry import Conflict
from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.storeview import current_prefix
from kmodel.apiserver.wire import Request
from kmodel.objects.apiextensions import CLEANUP_FINALIZER, CustomResourceDefinition
from kmodel.apiserver.authentication import UserInfo

_SYSTEM_USER = "system:apiextensions-apiserver"


def first_crd_delete(crd: CustomResourceDefinition, now: int) -> CustomResourceDefinition:
    """The CRD after its first DELETE: deletionTimestamp, the cleanup finalizer, Terminating."""
    meta = crd.metadata
    finalizers = meta.finalizers if CLEANUP_FINALIZER in meta.finalizers else meta.finalizers + (CLEANUP_FINALIZER,)
    crd = attrs.evolve(crd, metadata=attrs.evolve(meta, deletion_timestamp=now, deletion_grace_period_seconds=0,
                                                  finalizers=finalizers))
    return with_terminating(crd, now, 0)


def finalize_crds(pipeline: Any, now: int) -> None:
    """Run the finalizing controller over every terminating CRD that still has the cleanup finalizer."""
    if pipeline._finalizing:
        return
    pipeline._finalizing = True
    try:
        for crd in customresources.crds(pipeline.store):
            if crd.metadata.deletion_timestamp is not None and CLEANUP_FINALIZER in crd.metadata.finalizers:
                _finalize(pipeline, crd, now)
    finally:
        pipeline._finalizing = False


def _finalize(pipeline: Any, crd: CustomResourceDefinition, now: int) -> None:
    res = customresources.resource_for(crd)

    system = UserInfo(_SYSTEM_USER, ("system:masters",))
    for kv in current_prefix(pipeline.store, res.prefix + "/"):
        obj = kv.value
        if obj.metadata.deletion_timestamp is not None:
            continue
        request = Request(0, "delete", res.name, obj.metadata.namespace, obj.metadata.name)
        try:
            pipeline._delete(request, res, system, now, "apiextensions")
        except errors.APIError:
            pass  # gone meanwhile: the next pass sees
    left = len(current_prefix(pipeline.store, res.prefix + "/"))
    crds = RESOURCES["customresourcedefinitions"]
    kv = pipeline.registry.read(crds, "", crd.metadata.name)
    if kv is None:
        return
    current = kv.value
    if left:
        new = with_terminating(current, now, left)
        if new != current:
            try:
                pipeline.registry.replace(crds, kv, pipeline._next_version(new))
            except Conflict:
                pass
        return
    finalizers = tuple(f for f in current.metadata.finalizers if f != CLEANUP_FINALIZER)
    try:
        if not finalizers:
            pipeline.registry.remove(kv)
            names_freed(pipeline, now)
        else:
            new = attrs.evolve(current, metadata=attrs.evolve(current.metadata, finalizers=finalizers))
            pipeline.registry.replace(crds, kv, pipeline._next_version(new))
    except Conflict:
        pass


def names_freed(pipeline: Any, now: int) -> None:
    """The naming controller after a CRD is removed: every CRD whose names are not all accepted is checked
    again, in name order (its requeueAllOtherGroupCRDs and sync), and accepted once nothing else holds them."""
    for crd in customresources.crds(pipeline.store):
        if names_pending(crd):
            pipeline._crd_controllers(crd.metadata.name, now)
