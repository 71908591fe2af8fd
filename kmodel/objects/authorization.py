"""authorization.k8s.io/v1 SelfSubjectAccessReview: "may I?" (what `kubectl auth can-i` asks); created, never
stored."""

from __future__ import annotations

import attrs

from .meta import ObjectMeta
from .registry import api_kind
from .schema import BOOL, STRING, fld, struct


@attrs.frozen
class ResourceAttributes:
    namespace: str = fld(STRING)
    verb: str = fld(STRING)
    group: str = fld(STRING)
    version: str = fld(STRING)
    resource: str = fld(STRING)
    subresource: str = fld(STRING)
    name: str = fld(STRING)


@attrs.frozen
class NonResourceAttributes:
    path: str = fld(STRING)
    verb: str = fld(STRING)


@attrs.frozen
class SelfSubjectAccessReviewSpec:
    resource_attributes: ResourceAttributes | None = fld(struct(ResourceAttributes), ptr=True)
    non_resource_attributes: NonResourceAttributes | None = fld(struct(NonResourceAttributes), ptr=True)


@attrs.frozen
class SubjectAccessReviewStatus:
    allowed: bool = fld(BOOL, keep=True)
    denied: bool = fld(BOOL)
    reason: str = fld(STRING)
    evaluation_error: str = fld(STRING)


@api_kind("authorization.k8s.io/v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False)
@attrs.frozen
class SelfSubjectAccessReview:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: SelfSubjectAccessReviewSpec = fld(struct(SelfSubjectAccessReviewSpec))
    status: SubjectAccessReviewStatus = fld(struct(SubjectAccessReviewStatus))
