"""Field managers on the API server's writes: what the pipeline calls (pipeline.py stays free of field sets).

* `track(res, request, old, new, now)`: after a create, update or non-apply patch whose request names a field
  manager, `new` with its managedFields moved by that Update (managers.update). A request without one (the model's
  own components, which send none) leaves the managedFields it carries as they are.
* `applied(res, request, old, now)`: the object an apply patch makes of `old` (None: the apply creates it), with
  its managedFields; 409 Conflict (reason Conflict, one FieldManagerConflict cause per field) when the apply
  changes fields other managers own and `force` is not set.

The managedFields a client sends with an update replace the stored ones (a client may edit them; an empty list
keeps the stored ones, as upstream decodes the live object's when the new one has none); on a subresource the
stored ones are always used.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.apiserver import errors
from kmodel.apiserver.apply import managers
from kmodel.apiserver.apply.fieldpath import path_string
from kmodel.apiserver.apply.managers import ApplyConflict, Entry, ManagedFieldsError, Scope
from kmodel.apiserver.apply.schema import Shape, builtin_shape, openapi_shape
from kmodel.apiserver.customresources import schema_of
from kmodel.apiserver.errors import StatusCause, StatusDetails
from kmodel.apiserver.resources import Resource
from kmodel.apiserver.wire import PatchBody, Request, Status
from kmodel.objects import dump
from kmodel.objects.frozendict import freeze, thaw
from kmodel.objects.field_errors import required

FIELD_MANAGER_CONFLICT = "FieldManagerConflict"  # metav1.CauseTypeFieldManagerConflict
_MAX_MANAGER_LENGTH = 128


def is_apply(request: Request) -> bool:
    return isinstance(request.body, PatchBody) and request.body.type == "apply"


def shape_of(res: Resource) -> Shape:
    """The shape of the resource's objects: the built-in kind's, or the custom resource's storage schema."""
    if res.crd is None:
        return builtin_shape(res.cls)
    return openapi_shape(schema_of(res))


def scope_of(res: Resource, subresource: str) -> Scope:
    return Scope(shape_of(res), res.api_version, subresource, "status" in res.subresources)


def check_options(request: Request, apply: bool) -> None:
    """PatchOptions / UpdateOptions validation: an apply names its manager, force only on an apply (422)."""
    found = []
    if apply and not request.field_manager:
        found.append(required("fieldManager", "is required for apply patch"))
    if found:
        kind = "PatchOptions" if request.verb == "patch" else "UpdateOptions"
        raise errors.invalid(f"{kind}.meta.k8s.io", "meta.k8s.io", kind, "", found)
    if len(request.field_manager) > _MAX_MANAGER_LENGTH:
        raise errors.invalid("PatchOptions.meta.k8s.io", "meta.k8s.io", "PatchOptions", "", [
            required("fieldManager", f"must be less than {_MAX_MANAGER_LENGTH} characters")])


def _entries(managed: Any) -> list[Entry]:
    try:
        return managers.decode(thaw(managed) if managed else None)
    except ManagedFieldsError as e:
        raise errors.bad_request(str(e)) from None


def with_entries(obj: Any, entries: list[Entry]) -> Any:
    """`obj` with metadata.managedFields set to `entries` (None when there are none)."""
    managed = freeze(managers.encode(entries)) if entries else None
    if obj.metadata.managed_fields == managed:
        return obj
    return attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, managed_fields=managed))


def _plain(obj: Any, res: Resource) -> dict:
    """The object's JSON without managedFields, in the group version `res` serves (a manager's fields are named
    as the group version it wrote through names them)."""
    data = dump(obj)
    data.get("metadata", {}).pop("managedFields", None)
    return data if res.wire is None else res.wire.from_core(data, nulls=False)


def track(res: Resource, request: Request, old: Optional[Any], new: Any, sent: Any, now: int) -> Any:
    """`new` (as the strategy prepared it) with the managedFields the write leaves: an apply's own (`sent`, what
    its merge computed), or those an Update by the request's field manager leaves (see the module docstring).
    `sent`: the managedFields of the object before the strategy prepared it; `old`: None for a create."""
    manager = request.field_manager
    if not manager:
        return new
    if is_apply(request):
        return new if new.metadata.managed_fields == sent else attrs.evolve(
            new, metadata=attrs.evolve(new.metadata, managed_fields=sent))
    base = sent if (sent and not request.subresource) or old is None else old.metadata.managed_fields
    entries = managers.update(_entries(base), None if old is None else _plain(old, res), _plain(new, res), manager,
                              scope_of(res, request.subresource), now)
    return with_entries(new, entries)


def applied(res: Resource, request: Request, old: Optional[Any], config: dict, now: int) -> tuple[dict, list]:
    """(the JSON the apply makes of `old`, its managedFields entries); raises APIError (409 on conflicts)."""
    meta = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    if meta.get("managedFields"):
        raise errors.bad_request("metadata.managedFields must be nil")
    if config.get("apiVersion") != res.api_version:
        raise errors.bad_request(f"Incorrect version specified in apply patch. Specified patch version: "
                                 f"{config.get('apiVersion') or ''}, expected: {res.api_version}")
    live = None
    entries: list[Entry] = []
    if old is not None:
        live = _plain(old, res)
        entries = _entries(old.metadata.managed_fields)
    try:
        merged, entries = managers.apply(entries, live, config, request.field_manager, request.force,
                                         scope_of(res, request.subresource), now)
    except ApplyConflict as e:
        causes = tuple(StatusCause(FIELD_MANAGER_CONFLICT, f"conflict with {entry.printed()}",
                                   path_string(path)) for entry, path in e.conflicts)
        raise errors.APIError(Status(409, "Conflict", str(e), StatusDetails(causes=causes))) from None
    if res.wire is not None:  # merged in the served group version's names: back to the stored kind's
        merged = res.wire.to_core(merged)
    return merged, entries
