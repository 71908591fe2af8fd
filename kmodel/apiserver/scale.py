"""The scale subresource: an autoscaling/v1 Scale read from, and written to, its parent object (Kubernetes 1.31:
pkg/registry/apps/{deployment,replicaset,statefulset}/storage's ScaleREST and apiextensions-apiserver's
registry/customresource ScaleREST).

A Scale carries the parent's name, namespace, uid, resourceVersion and creationTimestamp, `spec.replicas`, and
`status.replicas` with `status.selector` (the label selector as a string). A write of a Scale (an update, or a
patch applied to the current Scale) is checked as ValidateScale checks it (replicas not negative: 422 Invalid) and
its uid, when set, must be the parent's (409 Conflict); then only the replicas move to the parent, and the Scale's
resourceVersion, when set, is the write's precondition. The built-in kinds take every patch type; a custom
resource's Scale, like the custom resource itself, refuses a strategic merge patch (415).
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver import customresources, errors
from kmodel.apiserver.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from kmodel.apiserver.resources import Resource
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.apiserver.wire import PatchBody, Status
from kmodel.objects.fastevolve import evolve
from kmodel.objects.frozendict import freeze
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.unstructured import CustomObject

#: the built-in resources that serve a scale subresource (the model has no ReplicationControllers)
BUILTIN_SCALABLE = ("deployments", "replicasets", "statefulsets")

#: upstream's answer to a patch type a custom resource does not take (its Scale included)
_CUSTOM_PATCH_TYPES = ("the body of the request was in an unknown format - accepted media types include: "
                       "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


def scale_of(res: Resource, obj: Any) -> CustomObject:
    """The autoscaling/v1 Scale of `obj` (a stored Deployment, ReplicaSet or StatefulSet, or a custom object)."""
    if res.crd is not None:
        return customresources.scale_of(res, obj)
    status: dict = {"replicas": obj.status.replicas or 0}
    try:
        selector = str(label_selector_from_object(obj.spec.selector))
    except SelectorError:  # a stored selector is valid; an invalid one gives no selector rather than a 500
        selector = ""
    if selector:
        status["selector"] = selector
    m = obj.metadata
    meta = ObjectMeta(name=m.name, namespace=m.namespace, uid=m.uid, resource_version=m.resource_version,
                      creation_timestamp=m.creation_timestamp)
    return CustomObject("autoscaling/v1", "Scale", meta,
                        freeze({"spec": {"replicas": obj.spec.replicas}, "status": status}))


def scaled(res: Resource, obj: Any, scale_body: Any) -> Any:
    """`obj` with the replicas of the Scale `scale_body` (a Scale's JSON); raises APIError(400/409/422).
    The Scale's resourceVersion is the write's precondition: see `precondition`."""
    replicas, _ = customresources.scale_request(scale_body)
    uid = str(((scale_body.get("metadata") or {}) if isinstance(scale_body, dict) else {}).get("uid") or "")
    if uid and uid != obj.metadata.uid:
        raise errors.conflict(res.group, f"{res.name}/scale", obj.metadata.name,
                              f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                              f"{obj.metadata.uid}")
    if res.crd is not None:
        return customresources.with_scale(res, obj, replicas)
    return evolve(obj, spec=evolve(obj.spec, replicas=replicas))


def precondition(scale_body: Any) -> str:
    """The resourceVersion a Scale's write is conditioned on ("" for none)."""
    meta = (scale_body.get("metadata") or {}) if isinstance(scale_body, dict) else {}
    return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""


def patched_scale(res: Resource, obj: Any, patch: Any) -> dict:
    """The Scale of `obj` with `patch` applied (a JSON merge patch as a dict, or a PatchBody of type json or
    strategic); raises APIError (400 for a patch that does not apply, 415 for a strategic merge patch of a custom
    resource's Scale)."""
    current = scale_of(res, obj).to_json()
    try:
        if isinstance(patch, PatchBody):
            if patch.type == "strategic" and res.crd is not None:
                raise errors.APIError(Status(415, "UnsupportedMediaType", _CUSTOM_PATCH_TYPES))
            apply = json_patch if patch.type == "json" else strategic_merge_patch
            return apply(current, patch.patch)
        if not isinstance(patch, dict):
            raise errors.bad_request(_CUSTOM_PATCH_TYPES)
        return merge_patch(current, patch)
    except PatchError as e:
        raise errors.APIError(Status(e.code, "Invalid" if e.code == 422 else "BadRequest", str(e))) from None
