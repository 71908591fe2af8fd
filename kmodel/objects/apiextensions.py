"""apiextensions.k8s.io/v1 CustomResourceDefinition (the declaration of a custom resource).

The parts the API server reads are typed (group, names, scope, versions with served/storage, status with its
conditions and acceptedNames); a version's `schema` and `subresources` stay as the frozen JSON they were
written as (kmodel/apiserver/openapi_schema.py walks the schema; kmodel/apiserver/customresources.py reads
the subresources), as they are free-form to the codec.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from .meta import ObjectMeta
from .registry import api_kind
from .schema import BOOL, RAW, STRING, STRINGS, TIME, enum_string, fld, list_of, struct

GROUP = "apiextensions.k8s.io"
#: the CRD finalizer: custom objects are deleted before the CRD goes (apiextensions-apiserver's finalizing controller)
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


@attrs.frozen
class CustomResourceDefinitionNames:
    plural: str = fld(STRING, keep=True)
    singular: str = fld(STRING)
    short_names: tuple = fld(STRINGS)
    kind: str = fld(STRING, keep=True)
    list_kind: str = fld(STRING)
    categories: tuple = fld(STRINGS)


@attrs.frozen
class CustomResourceDefinitionVersion:
    name: str = fld(STRING, keep=True)
    served: bool = fld(BOOL, keep=True)
    storage: bool = fld(BOOL, keep=True)
    deprecated: bool = fld(BOOL)
    deprecation_warning: str | None = fld(STRING, ptr=True)
    schema: Any = fld(RAW)  # {"openAPIV3Schema": {...}}
    subresources: Any = fld(RAW)  # {"status": {}, "scale": {...}}
    additional_printer_columns: Any = fld(RAW)
    selectable_fields: Any = fld(RAW)

    def open_api_schema(self) -> Optional[dict]:
        """The version's openAPIV3Schema (frozen JSON), or None."""
        return (self.schema or {}).get("openAPIV3Schema")

    def status_subresource(self) -> bool:
        return self.subresources is not None and "status" in self.subresources

    def scale_subresource(self) -> Optional[dict]:
        return (self.subresources or {}).get("scale")


@attrs.frozen
class CustomResourceDefinitionSpec:
    group: str = fld(STRING, keep=True)
    names: CustomResourceDefinitionNames = fld(struct(CustomResourceDefinitionNames), keep=True)
    scope: str = fld(enum_string("v1.ResourceScope"), keep=True)
    versions: tuple = fld(list_of(struct(CustomResourceDefinitionVersion)), keep=True)
    conversion: Any = fld(RAW)
    preserve_unknown_fields: bool = fld(BOOL)


@attrs.frozen
class CustomResourceDefinitionCondition:
    type: str = fld(enum_string("v1.CustomResourceDefinitionConditionType"), keep=True)
    status: str = fld(enum_string("v1.ConditionStatus"), keep=True)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class CustomResourceDefinitionStatus:
    conditions: tuple = fld(list_of(struct(CustomResourceDefinitionCondition)))
    accepted_names: CustomResourceDefinitionNames = fld(struct(CustomResourceDefinitionNames), keep=True)
    stored_versions: tuple = fld(STRINGS)

    def condition(self, type_: str) -> Optional[CustomResourceDefinitionCondition]:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    def is_true(self, type_: str) -> bool:
        c = self.condition(type_)
        return c is not None and c.status == "True"


@api_kind(f"{GROUP}/v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False)
@attrs.frozen
class CustomResourceDefinition:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: CustomResourceDefinitionSpec = fld(struct(CustomResourceDefinitionSpec))
    status: CustomResourceDefinitionStatus = fld(struct(CustomResourceDefinitionStatus))

    def storage_version(self) -> Optional[CustomResourceDefinitionVersion]:
        for v in self.spec.versions:
            if v.storage:
                return v
        return None

    def version(self, name: str) -> Optional[CustomResourceDefinitionVersion]:
        for v in self.spec.versions:
            if v.name == name:
                return v
        return None
