"""authentication.k8s.io/v1 SelfSubjectReview: "who am I?" (what `kubectl auth whoami` asks); created, never
stored. The answer's status.userInfo is the requester as authentication saw it."""

from __future__ import annotations

import attrs

from .meta import ObjectMeta
from .registry import api_kind
from .schema import STRING, STRINGS, fld, struct


@attrs.frozen
class UserInfo:
    username: str = fld(STRING)
    uid: str = fld(STRING)
    groups: tuple = fld(STRINGS)


@attrs.frozen
class SelfSubjectReviewStatus:
    user_info: UserInfo = fld(struct(UserInfo))


@api_kind("authentication.k8s.io/v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False)
@attrs.frozen
class SelfSubjectReview:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    status: SelfSubjectReviewStatus = fld(struct(SelfSubjectReviewStatus))
