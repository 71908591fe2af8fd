"""meta/v1 types shared by every kind: ObjectMeta, OwnerReference, LabelSelector, ObjectReference."""

from __future__ import annotations

import attrs

from .schema import BOOL, INT64, RAW, STRING, STRING_MAP, STRINGS, TIME, enum_string, fld, list_of, struct


@attrs.frozen
class OwnerReference:
    api_version: str = fld(STRING, keep=True)
    kind: str = fld(STRING, keep=True)
    name: str = fld(STRING, keep=True)
    uid: str = fld(STRING, keep=True)
    controller: bool | None = fld(BOOL, ptr=True)
    block_owner_deletion: bool | None = fld(BOOL, ptr=True)


@attrs.frozen
class ObjectMeta:
    """metadata. Timestamps are logical milliseconds (see logical_time); resourceVersion is a string as in
    Kubernetes (the API server puts the store revision there)."""

    name: str = fld(STRING)
    generate_name: str = fld(STRING)
    namespace: str = fld(STRING)
    self_link: str = fld(STRING)
    uid: str = fld(STRING)
    resource_version: str = fld(STRING)
    generation: int = fld(INT64)
    creation_timestamp: int | None = fld(TIME)
    deletion_timestamp: int | None = fld(TIME)
    deletion_grace_period_seconds: int | None = fld(INT64, ptr=True)
    labels: dict = fld(STRING_MAP)
    annotations: dict = fld(STRING_MAP)
    owner_references: tuple = fld(list_of(struct(OwnerReference)))
    finalizers: tuple = fld(STRINGS)
    # Server-side apply bookkeeping: kept as opaque frozen JSON so `kubectl get -o yaml` output loads.
    managed_fields: tuple | None = fld(RAW)


@attrs.frozen
class LabelSelectorRequirement:
    key: str = fld(STRING, keep=True)
    operator: str = fld(enum_string("v1.LabelSelectorOperator"), keep=True)
    values: tuple = fld(STRINGS)


@attrs.frozen
class LabelSelector:
    match_labels: dict = fld(STRING_MAP)
    match_expressions: tuple = fld(list_of(struct(LabelSelectorRequirement)))


@attrs.frozen
class ObjectReference:
    kind: str = fld(STRING)
    namespace: str = fld(STRING)
    name: str = fld(STRING)
    uid: str = fld(STRING)
    api_version: str = fld(STRING)
    resource_version: str = fld(STRING)
    field_path: str = fld(STRING)


EMPTY_META = ObjectMeta()
