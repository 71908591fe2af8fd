"""Embedded resources in a custom object: the schema nodes marked `x-kubernetes-embedded-resource: true` (a Pod
template, say), as apiextensions-apiserver pkg/apiserver/schema/objectmeta and pruning treat them (Kubernetes
1.30-1.32).

Theory of operation
-------------------
An embedded resource is an object with its own TypeMeta and ObjectMeta:

* pruning (openapi_schema.prune) keeps its `apiVersion`, `kind` and `metadata` whatever its properties say,
  and of its metadata only ObjectMeta's fields;
* validation (`validate`, objectmeta/validation.go's validateEmbeddedResource) requires `apiVersion` and
  `kind`, checks that apiVersion is a group/version, that kind is a DNS-1035 label once lower-cased, and
  validates the metadata as ObjectMeta (a name defaulted to "fakename" when absent; namespaced when it names
  a namespace; names as path segments). It runs on creates and updates alike, after the schema, and is not
  ratcheted (upstream: "we don't make a difference between update and create for those").

Keys are visited in sorted order (upstream ranges over a Go map: its order is random).
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.apiserver.openapi_schema import EMBEDDED, go_bad_value
from kmodel.objects.codec import DecodeError, load_struct
from kmodel.objects.field_errors import FieldError, invalid, required
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.validation.common import validate_object_meta
from kmodel.objects.validation.names import is_dns1035_label, is_valid_path_segment_name


def validate(schema: Optional[dict], value: Any, path: str = "") -> list[FieldError]:
    """The field errors of every embedded resource in `value` (the custom object's content, without its own
    apiVersion, kind and metadata: the root is not an embedded resource here)."""
    errors: list[FieldError] = []
    if schema:
        _walk(schema, value, path, errors)
    return errors


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(schema: dict, value: Any, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, dict):
        if schema.get(EMBEDDED):
            errors.extend(_embedded(value, path))
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in sorted(value):
            if key in props:
                _walk(props[key], value[key], _child(path, key), errors)
            elif isinstance(additional, dict):
                _walk(additional, value[key], f"{path}[{key}]", errors)
    elif isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _walk(schema["items"], item, f"{path}[{i}]", errors)


def _embedded(value: dict, path: str) -> list[FieldError]:
    """validateEmbeddedResource: apiVersion and kind required (metadata not), each well formed."""
    errors: list[FieldError] = []
    if "apiVersion" not in value:
        errors.append(required(_child(path, "apiVersion"), ""))
    if "kind" not in value:
        errors.append(required(_child(path, "kind"), ""))
    for key in sorted(value):
        v = value[key]
        where = _child(path, key)
        if key == "apiVersion":
            if not isinstance(v, str):
                errors.append(invalid(where, go_bad_value(v), "must be a string"))
            elif not v:
                errors.append(required(where, ""))
            elif v.count("/") > 1:  # schema.ParseGroupVersion: "v1" and "group/v1", nothing with more slashes
                errors.append(invalid(where, v, f"unexpected GroupVersion string: {v}"))
        elif key == "kind":
            if not isinstance(v, str):
                errors.append(invalid(where, go_bad_value(v), "must be a string"))
            elif not v:
                errors.append(required(where, ""))
            else:
                problems = is_dns1035_label(v.lower())
                if problems:
                    errors.append(invalid(where, v, "may have mixed case, but should otherwise match: " +
                                          ",".join(problems)))
        elif key == "metadata":
            errors.extend(_metadata(v, where))
    return errors


def _metadata(value: Any, path: str) -> list[FieldError]:
    """ValidateObjectMeta of an embedded resource's metadata, once it decodes as ObjectMeta."""
    try:
        meta = load_struct(ObjectMeta, value, strict=False, path=path)
    except DecodeError as e:
        return [invalid(path, go_bad_value(value), e.cause)]
    if not meta.name:
        meta = attrs.evolve(meta, name="fakename")  # upstream sets one "to avoid an error"
    return validate_object_meta(meta, bool(meta.namespace), is_valid_path_segment_name, path)
