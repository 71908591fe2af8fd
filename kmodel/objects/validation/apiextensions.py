"""Validation of a CustomResourceDefinition (apiextensions-apiserver pkg/apis/apiextensions/validation,
Kubernetes 1.30-1.32), the parts the model serves:

* metadata.name must be `<spec.names.plural>.<spec.group>`;
* spec.group a DNS subdomain with at least one dot; spec.names.plural, singular, kind (and shortNames)
  present and well formed (plural and singular DNS-1035-ish lower-case labels, kind a DNS-1035 label once
  lower-cased); spec.scope Cluster or Namespaced;
* spec.versions: at least one, unique names, exactly one with `storage: true`, every version a schema
  (`schemas are required`), every schema structural: `type: object` at the root, a type on every
  specified field unless it is x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields;
* a scale subresource's specReplicasPath and statusReplicasPath under .spec and .status;
* on update, spec.scope and spec.group are immutable and a stored version may not lose its storage flag
  while objects may still be stored at it (the model: storedVersions must keep listing it).
"""

from __future__ import annotations

import re
from typing import Any

from ..apiextensions import CustomResourceDefinition
from ..field_errors import FieldError, GoValue, forbidden, invalid, not_supported, required
from .common import validate_object_meta, validate_object_meta_update
from .names import is_dns1035_label, is_dns1123_subdomain

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _versions_go(crd: CustomResourceDefinition) -> GoValue:
    inner = ", ".join(f'apiextensions.CustomResourceDefinitionVersion{{Name:"{v.name}", Served:{str(v.served).lower()}, '
                      f'Storage:{str(v.storage).lower()}}}' for v in crd.spec.versions)
    return GoValue("[]apiextensions.CustomResourceDefinitionVersion{" + inner + "}")


def validate_crd(crd: CustomResourceDefinition) -> list[FieldError]:
    """The field errors of a new CRD."""
    spec, names = crd.spec, crd.spec.names
    wanted = f"{names.plural}.{spec.group}"

    def crd_name(name: str) -> list[str]:
        # upstream's nameValidationFn: a DNS subdomain that is plural.group, checked with the rest of the object
        # meta (so its message comes before the labels')
        return is_dns1123_subdomain(name) + ([] if name == wanted else ['must be spec.names.plural+"."+spec.group'])

    errs = validate_object_meta(crd.metadata, False, crd_name)
    if not spec.group:
        errs.append(required("spec.group", ""))
    elif is_dns1123_subdomain(spec.group) or "." not in spec.group:
        errs.append(invalid("spec.group", spec.group, "should be a domain with at least one dot"))
    errs += _names(names)
    if not spec.scope:
        errs.append(required("spec.scope", ""))
    elif spec.scope not in ("Cluster", "Namespaced"):
        errs.append(not_supported("spec.scope", spec.scope, ["Cluster", "Namespaced"]))
    errs += _versions(crd)
    return errs


def _names(names: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    for field, value in (("plural", names.plural), ("singular", names.singular)):
        if not value:
            if field == "plural":
                errs.append(required("spec.names.plural", ""))
        elif not _DNS_LABEL.match(value):
            errs.append(invalid(f"spec.names.{field}", value,
                                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
                                "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"))
    for i, short in enumerate(names.short_names):
        if not _DNS_LABEL.match(short):
            errs.append(invalid(f"spec.names.shortNames[{i}]", short,
                                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                "or '-', and must start and end with an alphanumeric character"))
    if not names.kind:
        errs.append(required("spec.names.kind", ""))
    elif is_dns1035_label(names.kind.lower()):
        errs.append(invalid("spec.names.kind", names.kind, "may have mixed case, but should otherwise match: "
                                                           "[a-z]([-a-z0-9]*[a-z0-9])?"))
    return errs


def _versions(crd: CustomResourceDefinition) -> list[FieldError]:
    errs: list[FieldError] = []
    versions = crd.spec.versions
    if not versions:
        errs.append(required("spec.versions", "must have exactly one version marked as storage version"))
        return errs
    seen: list[str] = []
    for i, v in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not v.name:
            errs.append(required(f"{path}.name", ""))
        elif not _DNS_LABEL.match(v.name):
            errs.append(invalid(f"{path}.name", v.name, "a DNS-1035 label must consist of lower case alphanumeric "
                                                        "characters or '-'"))
        elif v.name in seen:
            errs.append(invalid("spec.versions", _versions_go(crd), "must contain unique version names"))
        seen.append(v.name)
        schema = v.open_api_schema()
        if schema is None:
            errs.append(required(f"{path}.schema.openAPIV3Schema", "schemas are required"))
        else:
            errs += structural(schema, f"{path}.schema.openAPIV3Schema", root=True)
        scale = v.scale_subresource()
        if scale is not None:
            errs += _scale(scale, f"{path}.subresources.scale")
    if sum(1 for v in versions if v.storage) != 1:
        errs.append(invalid("spec.versions", _versions_go(crd), "must have exactly one version marked as storage "
                                                                "version"))
    return errs


def structural(schema: Any, path: str, *, root: bool = False) -> list[FieldError]:
    """The structural-schema errors of a schema node and beneath (pkg/apiserver/schema/validation.go)."""
    errs: list[FieldError] = []
    if not isinstance(schema, dict):
        return [invalid(path, GoValue("<non-object>"), "must be an object")]
    typ = schema.get("type", "")
    if root and typ != "object":
        if not typ:
            errs.append(required(f"{path}.type", "must not be empty at the root"))
        else:
            errs.append(invalid(f"{path}.type", typ, "must be object at the root"))
    elif not typ and not schema.get("x-kubernetes-int-or-string") and not schema.get(
            "x-kubernetes-preserve-unknown-fields"):
        errs.append(required(f"{path}.type", "must not be empty for specified object fields"))
    if typ and typ not in ("object", "array", "string", "integer", "number", "boolean"):
        errs.append(not_supported(f"{path}.type", typ, ["array", "boolean", "integer", "number", "object",
                                                       "string"]))
    for key in sorted(schema.get("properties") or {}):
        errs += structural(schema["properties"][key], f"{path}.properties[{key}]")
    items = schema.get("items")
    if typ == "array" and items is None:
        errs.append(required(f"{path}.items", "must be specified"))
    elif isinstance(items, dict):
        errs += structural(items, f"{path}.items")
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        if schema.get("properties"):
            errs.append(forbidden(f"{path}.additionalProperties",
                                  "additionalProperties and properties are mutual exclusive"))
        errs += structural(additional, f"{path}.additionalProperties")
    return errs


def _scale(scale: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    spec_path = scale.get("specReplicasPath", "")
    if not spec_path:
        errs.append(required(f"{path}.specReplicasPath", ""))
    elif not spec_path.startswith(".spec."):
        errs.append(invalid(f"{path}.specReplicasPath", spec_path, "should be a json path under .spec"))
    status_path = scale.get("statusReplicasPath", "")
    if not status_path:
        errs.append(required(f"{path}.statusReplicasPath", ""))
    elif not status_path.startswith(".status."):
        errs.append(invalid(f"{path}.statusReplicasPath", status_path, "should be a json path under .status"))
    selector_path = scale.get("labelSelectorPath")
    if selector_path and not (selector_path.startswith(".spec.") or selector_path.startswith(".status.")):
        errs.append(invalid(f"{path}.labelSelectorPath", selector_path,
                            "should be a json path under either .spec or .status"))
    return errs


def validate_crd_update(new: CustomResourceDefinition, old: CustomResourceDefinition) -> list[FieldError]:
    errs = validate_object_meta_update(new.metadata, old.metadata)
    errs += [e for e in validate_crd(new) if not e.field.startswith("metadata.")]
    if new.spec.scope != old.spec.scope:
        errs.append(invalid("spec.scope", new.spec.scope, "field is immutable"))
    if new.spec.group != old.spec.group:
        errs.append(invalid("spec.group", new.spec.group, "field is immutable"))
    for i, name in enumerate(old.status.stored_versions):
        if new.version(name) is None:
            errs.append(invalid("status.storedVersions", GoValue(str(list(old.status.stored_versions))),
                                f"must have the storage version {name}"))
    return errs
