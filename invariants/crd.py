"""Custom resource invariants: what the API server guarantees about the objects a CRD declares.

    custom-objects-valid     (safety) every custom object written after its CRD's last change is valid
                             against that CRD's storage schema, and stored at its storage version
    custom-objects-scoped    (safety) every custom object is stored under its CRD's scope: with a namespace
                             when the CRD is Namespaced, without one when it is Cluster
    crd-objects-removed      (liveness) once settled, no custom object is stored without an Established CRD
                             that is not being deleted, and no CRD is left terminating

Custom objects are found by their etcd keys: `/registry/<group>/<plural>/...` for a stored CRD
(`customresources.resource_for`). The safety checks look only at keys written since their last check (the
store's revision), so each step costs what it wrote. An object written before its CRD's last write may
legitimately fail a schema made stricter since (upstream keeps it, and validates only its next update).
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.registry import LIVENESS, SAFETY, invariant
from kmodel.apiserver.customresources import CRD_PREFIX, crds, established, resource_for, validation_errors
from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.storeview import current_prefix
from kmodel.objects.unstructured import CustomObject


def _custom_kvs(cluster: Any, memo: dict) -> Iterator[tuple[Any, Any, Any]]:
    """(CRD, its Resource, KeyValue) of each custom object written since the memo's last look."""
    store = cluster.store
    since = memo.get("revision", 0)
    memo["revision"] = store.revision
    if store.revision == since:
        return
    for crd_kv in current_prefix(store, CRD_PREFIX):
        crd = crd_kv.value
        res = resource_for(crd)
        for kv in current_prefix(store, res.prefix + "/"):
            if kv.mod_revision > since:
                yield crd_kv, res, kv


@invariant("custom-objects-valid", kind=SAFETY, principle="the API as the single contract")
def custom_objects_valid(cluster: Any, memo: dict) -> Iterator[str]:
    """Every custom object written after its CRD's last change is valid against that CRD's storage schema and
    stored at the storage version. The API server validates every create and update of a custom object (and its
    status writes) against the CRD's structural schema before it writes, so nothing it stores can break it."""
    for crd_kv, res, kv in _custom_kvs(cluster, memo):
        obj = kv.value
        if kv.mod_revision < crd_kv.mod_revision:
            continue  # written under an earlier version of the CRD
        if not isinstance(obj, CustomObject) or obj.api_version != res.api_version or obj.kind != res.kind:
            yield (f"{kv.key}: stored as {getattr(obj, 'api_version', type(obj).__name__)} "
                   f"{getattr(obj, 'kind', '')}, not at the storage version {res.api_version} {res.kind}")
            continue
        found = validation_errors(res, obj)
        if found:
            yield f"{kv.key} (revision {kv.mod_revision}) breaks its CRD's schema: {found[0]}"


@invariant("custom-objects-scoped", kind=SAFETY, principle="the API as the single contract")
def custom_objects_scoped(cluster: Any, memo: dict) -> Iterator[str]:
    """Every custom object is stored under its CRD's scope: with a namespace when the CRD is Namespaced, without
    one when it is Cluster. The key and metadata.namespace agree with the scope the API server served it under."""
    for _, res, kv in _custom_kvs(cluster, memo):
        namespace = kv.value.metadata.namespace
        rest = kv.key[len(res.prefix) + 1:]
        if res.namespaced and (not namespace or rest != f"{namespace}/{kv.value.metadata.name}"):
            yield f"{kv.key}: a {res.kind} of a Namespaced CRD stored without its namespace ({namespace!r})"
        elif not res.namespaced and (namespace or "/" in rest):
            yield f"{kv.key}: a {res.kind} of a Cluster-scoped CRD stored in namespace {namespace!r}"


def _builtin_prefixes() -> tuple[str, ...]:
    return tuple(sorted(res.prefix + "/" for res in RESOURCES.values() if res.prefix))


@invariant("crd-objects-removed", kind=LIVENESS, principle="level-driven reconciliation")
def crd_objects_removed(cluster: Any, memo: dict) -> Iterator[str]:
    """Once settled, no custom object is stored without an Established CRD that is not being deleted, and no CRD
    is left terminating. Deleting a CRD deletes its objects (the customresourcecleanup finalizer) before the CRD
    itself goes; a terminating CRD refuses new objects."""
    store = cluster.store
    live: list[str] = []
    for crd in crds(store):
        if crd.metadata.deletion_timestamp is not None:
            yield f"CRD {crd.metadata.name} is still terminating (finalizers {list(crd.metadata.finalizers)})"
        elif established(crd):
            live.append(resource_for(crd).prefix + "/")
    builtin = _builtin_prefixes()
    for kv in current_prefix(store, "/registry/"):
        key = kv.key
        if key.startswith(builtin) or key.startswith(CRD_PREFIX) or key.startswith(tuple(live)):
            continue
        if isinstance(kv.value, CustomObject):
            yield f"{key} is stored, but no Established CRD serves it"
