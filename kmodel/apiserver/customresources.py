"""Custom resources: what a CustomResourceDefinition makes the API server serve (apiextensions-apiserver's
customresource_handler and registry/customresource, Kubernetes 1.30-1.32).

Theory of operation
-------------------
* Serving. `served(store, plural)` finds the CRD whose accepted names have that plural and which is
  Established, read from the store's current state (upstream reads its CRD informer), and gives its
  `Resource`: kind, group, the storage version's apiVersion, scope, etcd prefix `/registry/<group>/<plural>`,
  subresources `status` and `scale` when the storage version declares them, and no unconditional updates
  (custom resources refuse an update without resourceVersion). The model keys resources by plural alone
  (requests carry no group): a CRD whose plural is already served is not accepted (see crd_status.py).
* Versions. A body may name any served version; the object is stored at the storage version with its
  apiVersion rewritten (conversion strategy None: the fields are kept as they are). Reads answer at the
  storage version (the model's requests name no version).
* Reads (`as_read`): a stored object is pruned and defaulted again by the current schema, as upstream's
  storage decoder does, for get, list, watch and the old object of an update (strategies and ratcheting).
* Decoding (`decode`): apiVersion and kind checked, metadata decoded as the model's ObjectMeta, unknown fields
  pruned against the storage version's schema (fieldValidation=Strict refuses them with 400 BadRequest
  `strict decoding error: unknown field "spec.foo"`), defaults applied (openapi_schema.py).
* Strategies (`prepare_for_create`, `prepare_for_update`): metadata as for every kind; with a status
  subresource, a create drops .status, a main-resource update keeps the stored .status and a status update
  keeps everything but .status (the stored metadata included); metadata.generation starts at 1 and grows by
  one when anything other than metadata and (with the subresource) status changes.
* Validation (`check`): ObjectMeta as ValidateObjectMetaAccessor with DNS-subdomain names, then the schema
  (422 Invalid, one cause per field error; an update is ratcheted: ratcheting.py), then the embedded
  resources (embedded_resources.py).
* Scale (`scale_of`, `with_scale`): autoscaling/v1 Scale read from and written to the paths the CRD's
  scale subresource names (specReplicasPath, statusReplicasPath, labelSelectorPath).
* A terminating CRD refuses new objects: 405 `create not allowed while custom resource definition is
  terminating`.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.apiserver import embedded_resources, errors, openapi_schema
from kmodel.apiserver.resources import RESOURCES, Resource
from kmodel.apiserver.storeview import current_prefix
from kmodel.apiserver.wire import Status
from kmodel.objects.apiextensions import CustomResourceDefinition
from kmodel.objects.codec import DecodeError, load_struct
from kmodel.objects.field_errors import FieldError, invalid
from kmodel.objects.frozendict import freeze, thaw
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.unstructured import CustomObject
from kmodel.objects.validation.common import validate_object_meta, validate_object_meta_update
from kmodel.objects.validation.names import is_dns1123_subdomain

CRDS = RESOURCES["customresourcedefinitions"]
CRD_PREFIX = CRDS.prefix + "/"
_RESOURCES: dict[int, tuple[Any, Resource]] = {}  # id(crd) -> (crd, its Resource): one Resource per CRD value


def resource_for(crd: CustomResourceDefinition) -> Resource:
    """The Resource a CRD declares (memoised per CRD value)."""
    got = _RESOURCES.get(id(crd))
    if got is not None and got[0] is crd:
        return got[1]
    storage = crd.storage_version()
    subresources: tuple[str, ...] = ()
    if storage is not None and storage.status_subresource():
        subresources += ("status",)
    if storage is not None and storage.scale_subresource() is not None:
        subresources += ("scale",)
    spec = crd.spec
    res = Resource(name=spec.names.plural, kind=spec.names.kind, group=spec.group,
                   api_version=f"{spec.group}/{storage.name if storage else ''}",
                   namespaced=spec.scope == "Namespaced", cls=CustomObject,
                   prefix=f"/registry/{spec.group}/{spec.names.plural}", subresources=subresources,
                   allow_unconditional_update=False, has_status="status" in subresources, crd=crd)
    if len(_RESOURCES) > 4096:
        _RESOURCES.clear()
    _RESOURCES[id(crd)] = (crd, res)
    return res


def crds(store: Any) -> list[CustomResourceDefinition]:
    """Every stored CRD, in name order (the store's current state, as upstream's CRD informer)."""
    return [kv.value for kv in current_prefix(store, CRD_PREFIX)]


def established(crd: CustomResourceDefinition) -> bool:
    return crd.status.is_true("Established")


def served(store: Any, plural: str) -> Optional[Resource]:
    """The custom resource called `plural`, or None when no Established CRD serves it."""
    for crd in crds(store):
        if crd.status.accepted_names.plural == plural and established(crd):
            return resource_for(crd)
    return None


def terminating(res: Resource) -> bool:
    return res.crd is not None and res.crd.metadata.deletion_timestamp is not None


def refuse_create_while_terminating(res: Resource) -> None:
    if terminating(res):
        raise errors.APIError(Status(405, "MethodNotAllowed",
                                     "create not allowed while custom resource definition is terminating",
                                     errors.StatusDetails("", res.group, res.name)))


def schema_of(res: Resource) -> Optional[dict]:
    storage = res.crd.storage_version()
    return storage.open_api_schema() if storage is not None else None


# --- decoding ----------------------------------------------------------------------------------------------

def decode(res: Resource, body: Any, field_validation: str = "Strict") -> CustomObject:
    """The stored form of a request body: pruned, defaulted, at the storage version; raises APIError(400)."""
    if isinstance(body, CustomObject):
        body = body.to_json()
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was in an unknown format - accepted media types include: "
                                 "application/json, application/yaml")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    group, _, version = str(api_version or "").rpartition("/")
    crd = res.crd
    served_version = crd.version(version) if group == res.group else None
    if kind != res.kind or served_version is None or not served_version.served:
        raise errors.bad_request(
            f'the API version in the data ({api_version or ""}) does not match the expected API version '
            f'({res.api_version})' if kind == res.kind else
            f'{kind or ""} in version "{version}" cannot be handled as a {res.kind}')
    prefix = f'{res.kind} in version "{version}" cannot be handled as a {res.kind}: '
    pruned, dropped = openapi_schema.prune(schema_of(res), thaw(body))
    if dropped and field_validation == "Strict":
        raise errors.bad_request(prefix + "strict decoding error: " +
                                 ", ".join(f'unknown field "{p}"' for p in dropped))
    try:
        meta = load_struct(ObjectMeta, pruned.get("metadata") or {}, strict=field_validation == "Strict",
                           path="metadata")
    except DecodeError as e:
        raise errors.bad_request(prefix + e.cause) from None
    return from_json(res, pruned, meta)


def from_json(res: Resource, data: dict, meta: ObjectMeta) -> CustomObject:
    """A custom object at the storage version from its JSON, defaulted."""
    content = {k: v for k, v in data.items() if k not in ("apiVersion", "kind", "metadata")}
    content = openapi_schema.apply_defaults(schema_of(res), content)
    return CustomObject(res.api_version, res.kind, meta, freeze(content))


def as_read(res: Resource, obj: Any) -> Any:
    """A stored object as a read answers it: pruned and defaulted by the current schema (upstream's storage
    decoder prunes and defaults what it reads from etcd, so a field the CRD no longer declares is gone and a
    default added to it shows on objects written before the change)."""
    if not isinstance(obj, CustomObject):
        return obj
    schema = schema_of(res)
    pruned, _ = openapi_schema.prune(schema, thaw(obj.content))
    content = openapi_schema.apply_defaults(schema, pruned)
    frozen = freeze(content)
    return obj if frozen == obj.content else CustomObject(obj.api_version, obj.kind, obj.metadata, frozen)


# --- validation --------------------------------------------------------------------------------------------

def validation_errors(res: Resource, obj: CustomObject, old: Optional[CustomObject] = None) -> list[FieldError]:
    """The field errors of a create (`old` None) or of an update of `old`, which is ratcheted (ratcheting.py)
    against the old object as a read answers it (pruned and defaulted by the current schema, as upstream
    decodes it from etcd before the update)."""
    schema, content = schema_of(res), thaw(obj.content)
    if old is None:
        found = validate_object_meta(obj.metadata, res.namespaced, is_dns1123_subdomain)
        found += openapi_schema.validate(schema, content)
    else:
        found = validate_object_meta_update(obj.metadata, old.metadata)
        old = as_read(res, old)
        found += openapi_schema.validate_update(schema, content, thaw(old.content),
                                                metadata_unchanged=_same_metadata(obj.metadata, old.metadata))
    return found + embedded_resources.validate(schema, content)  # creates and updates alike, never ratcheted


def _same_metadata(new: ObjectMeta, old: ObjectMeta) -> bool:
    """Whether an update leaves the metadata as it was, but for the resourceVersion the write moves (upstream
    compares the request's object, which carries the old resourceVersion)."""
    return attrs.evolve(new, resource_version=old.resource_version) == old


def check(res: Resource, obj: CustomObject, old: Optional[CustomObject] = None) -> None:
    found = validation_errors(res, obj, old)
    if found:
        raise errors.invalid(f"{res.kind}.{res.group}", res.group, res.kind, obj.metadata.name, found)


# --- strategies --------------------------------------------------------------------------------------------

def prepare_for_create(res: Resource, obj: CustomObject) -> CustomObject:
    """Drop .status when the status subresource exists (the metadata is the generic registry's)."""
    if res.has_status and "status" in obj.content:
        return CustomObject(obj.api_version, obj.kind, obj.metadata, obj.content.without("status"))
    return obj


def _without_status(content: Any, has_status: bool) -> Any:
    return content.without("status") if has_status and "status" in content else content


def prepare_for_update(res: Resource, new: CustomObject, old: CustomObject, *, subresource: str,
                       meta: ObjectMeta) -> CustomObject:
    """The stored form of an update; `meta` is the metadata the generic registry prepared (generation not yet
    moved). The old object is taken as a read answers it (upstream's update starts from the object decoded from
    etcd): a status write stores the spec pruned and defaulted, and a field the schema no longer declares or a
    default it gained since does not move the generation."""
    old = as_read(res, old)
    if subresource == "status":
        status = new.content.get("status")
        content = old.content.without("status") if status is None else old.content.set("status", status)
        return CustomObject(old.api_version, old.kind, _with_rv(old.metadata, meta.resource_version), content)
    content = new.content
    if res.has_status:
        old_status = old.content.get("status")
        content = content.without("status") if old_status is None else content.set("status", old_status)
    generation = old.metadata.generation
    if _without_status(content, res.has_status) != _without_status(old.content, res.has_status):
        generation += 1
    return CustomObject(res.api_version, res.kind, _with_generation(meta, generation), content)


def _with_rv(meta: ObjectMeta, rv: str) -> ObjectMeta:
    return attrs.evolve(meta, resource_version=rv)


def _with_generation(meta: ObjectMeta, generation: int) -> ObjectMeta:
    return attrs.evolve(meta, generation=generation)


# --- the scale subresource ---------------------------------------------------------------------------------

def _path(json_path: str) -> tuple[str, ...]:
    """A `.spec.replicas` path as keys."""
    return tuple(p for p in json_path.split(".") if p)


def scale_paths(res: Resource) -> dict:
    storage = res.crd.storage_version()
    return dict(storage.scale_subresource() or {}) if storage is not None else {}


def scale_of(res: Resource, obj: CustomObject) -> CustomObject:
    """The autoscaling/v1 Scale of a custom object."""
    paths = scale_paths(res)
    spec_replicas = obj.field(_path(paths.get("specReplicasPath", "")))
    status_replicas = obj.field(_path(paths.get("statusReplicasPath", "")))
    status: dict = {"replicas": status_replicas if isinstance(status_replicas, int) else 0}
    selector_path = paths.get("labelSelectorPath")
    if selector_path:
        selector = obj.field(_path(selector_path))
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    m = obj.metadata
    meta = ObjectMeta(name=m.name, namespace=m.namespace, uid=m.uid, resource_version=m.resource_version,
                      creation_timestamp=m.creation_timestamp)
    return CustomObject("autoscaling/v1", "Scale", meta,
                        freeze({"spec": {"replicas": spec_replicas if isinstance(spec_replicas, int) else 0},
                                "status": status}))


def scale_request(body: Any) -> tuple[int, str]:
    """The replicas and resourceVersion of a Scale body; raises APIError(400/422)."""
    if isinstance(body, CustomObject):
        body = body.to_json()
    if not isinstance(body, dict) or body.get("kind") != "Scale":
        raise errors.bad_request("the body of the request was in an unknown format: a Scale is expected")
    replicas = (body.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise errors.bad_request(f"json: cannot unmarshal {openapi_schema.json_type(replicas)} into Go struct "
                                 f"field ScaleSpec.spec.replicas of type int32")
    name = (body.get("metadata") or {}).get("name", "")
    if replicas < 0:
        raise errors.invalid("Scale.autoscaling", "autoscaling", "Scale", name,
                             [invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
    return replicas, str((body.get("metadata") or {}).get("resourceVersion") or "")


def with_scale(res: Resource, obj: CustomObject, replicas: int) -> CustomObject:
    """`obj` with the Scale's replicas written at specReplicasPath."""
    path = _path(scale_paths(res).get("specReplicasPath", ".spec.replicas"))
    content = _set_in(thaw(obj.content), path, replicas)
    return CustomObject(obj.api_version, obj.kind, obj.metadata, freeze(content))


def _set_in(data: dict, path: tuple[str, ...], value: Any) -> dict:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value
    return data
