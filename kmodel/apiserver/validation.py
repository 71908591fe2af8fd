"""Decoding and schema validation of request bodies (stage 5 of the pipeline).

* `decode_body(res, body, field_validation)`: a body that is already a typed object of the resource's kind
  passes as is (components send typed objects, as client-go does; they are defaulted like a decoded body);
  a dict in the JSON shape is decoded by kmodel.objects.decode (defaulting included). Undecodable input,
  or under fieldValidation=Strict an unknown field, is 400 BadRequest with the codec's message (which names
  the field path); a body of another kind is 400 as well. "Warn" and "Ignore" drop unknown fields (the model
  keeps no warnings).
* `check_create(res, obj)` / `check_update(res, new, old)`: kmodel.objects validate / validate_update →
  422 Invalid with Kubernetes' message and one details.cause per field error.
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver import customresources, errors
from kmodel.apiserver.resources import Resource
from kmodel.objects import DecodeError, decode, validate, validate_update, with_defaults
from kmodel.objects.validation.events import validate_event_v1_create, validate_event_v1_update
from kmodel.apiserver.customresources import check


EVENTS_GROUP = "events.k8s.io"


def decode_body(res: Resource, body: Any, field_validation: str = "Strict") -> Any:
    """The typed, defaulted object a create/update body stands for; raises APIError(400)."""
    if res.crd is not None:
        return customresources.decode(res, body, field_validation)
    if isinstance(body, res.cls):
        return with_defaults(body)
    if isinstance(body, dict):
        if res.wire is not None:  # another group version of the stored kind (kmodel.objects.events_v1)
            if body.get("apiVersion") != res.api_version:
                raise errors.bad_request(f'the API version in the data ({body.get("apiVersion", "")}) does not '
                                         f'match the expected API version ({res.api_version})')
            body = res.wire.to_core(body)
        obj = decode(body, strict=(field_validation == "Strict"))
        if isinstance(obj, DecodeError):
            message = res.wire.v1_message(obj.message) if res.wire is not None else obj.message
            raise errors.APIError(errors.Status(obj.code, obj.reason, message))
        if not isinstance(obj, res.cls):
            raise errors.bad_request(
                f'the API version in the data ({body.get("apiVersion", "")}) does not match the expected API '
                f'version ({res.api_version})' if body.get("kind") == res.kind else
                f"{type(obj).__name__} in version \"{res.api_version.rpartition('/')[2]}\" cannot be handled as a {res.kind}")
        return obj
    if body is None:
        raise errors.bad_request("the body of the request was in an unknown format - accepted media types include: "
                                 "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    raise errors.bad_request(f"{type(body).__name__} cannot be handled as a {res.kind}")


def check_create(res: Resource, obj: Any) -> None:
    if res.crd is not None:
        return check(res, obj)
    found = validate(obj)
    if res.group == EVENTS_GROUP:  # the strict rules of events.k8s.io/v1 (kmodel.objects.validation.events)
        found = found + validate_event_v1_create(obj)
    if found:
        raise errors.invalid(res.group_kind, res.group, res.kind, obj.metadata.name, found)


def check_update(res: Resource, new: Any, old: Any) -> None:
    found = validate_update(new, old)
    if res.group == EVENTS_GROUP:
        found = found + validate_event_v1_update(new, old)
    if found:
        raise errors.invalid(res.group_kind, res.group, res.kind, new.metadata.name, found)
