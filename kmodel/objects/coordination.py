"""coordination.k8s.io/v1 Lease (node heartbeats, leader election)."""

from __future__ import annotations

import attrs

from .meta import ObjectMeta
from .registry import api_kind
from .schema import INT32, MICRO_TIME, STRING, fld, struct


@attrs.frozen
class LeaseSpec:
    holder_identity: str | None = fld(STRING, ptr=True)
    lease_duration_seconds: int | None = fld(INT32, ptr=True)
    acquire_time: int | None = fld(MICRO_TIME)
    renew_time: int | None = fld(MICRO_TIME)
    lease_transitions: int | None = fld(INT32, ptr=True)


@api_kind("coordination.k8s.io/v1", "Lease", "leases", namespaced=True)
@attrs.frozen
class Lease:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: LeaseSpec = fld(struct(LeaseSpec))
