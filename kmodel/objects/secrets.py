"""core/v1 Secret and ServiceAccount, and authentication.k8s.io/v1 TokenRequest (the body of
POST serviceaccounts/<name>/token)."""

from __future__ import annotations

import attrs

from .core import BINARY_DATA
from .meta import ObjectMeta, ObjectReference
from .registry import api_kind
from .schema import BOOL, INT64, STRING, STRING_MAP, STRINGS, TIME, enum_string, fld, list_of, struct

#: the secret types pkg/apis/core names (SecretType*), and the data keys ValidateSecret requires of each
OPAQUE = "Opaque"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
DOCKERCFG = "kubernetes.io/dockercfg"
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
BASIC_AUTH = "kubernetes.io/basic-auth"
SSH_AUTH = "kubernetes.io/ssh-auth"
TLS = "kubernetes.io/tls"
#: ServiceAccountNameKey / ServiceAccountUIDKey: the annotations of a service-account-token Secret
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
SERVICE_ACCOUNT_UID_KEY = "kubernetes.io/service-account.uid"


@api_kind("v1", "Secret", "secrets", namespaced=True)
@attrs.frozen
class Secret:
    """data's values are []byte, which JSON carries as base64 text: the model keeps the text. stringData is
    write-only: the API server merges it into data on every write and never stores it (its conversion to the
    internal type does so upstream)."""

    metadata: ObjectMeta = fld(struct(ObjectMeta))
    immutable: bool | None = fld(BOOL, ptr=True)
    data: dict = fld(BINARY_DATA)
    string_data: dict = fld(STRING_MAP)
    type: str = fld(enum_string("v1.SecretType"))


@attrs.frozen
class LocalObjectReference:
    name: str = fld(STRING)


@api_kind("v1", "ServiceAccount", "serviceaccounts", namespaced=True)
@attrs.frozen
class ServiceAccount:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    secrets: tuple = fld(list_of(struct(ObjectReference)))
    image_pull_secrets: tuple = fld(list_of(struct(LocalObjectReference)))
    automount_service_account_token: bool | None = fld(BOOL, ptr=True)


@attrs.frozen
class BoundObjectReference:
    kind: str = fld(STRING)
    api_version: str = fld(STRING)
    name: str = fld(STRING)
    uid: str = fld(STRING, "uid")


@attrs.frozen
class TokenRequestSpec:
    audiences: tuple = fld(STRINGS, keep=True)
    expiration_seconds: int | None = fld(INT64, ptr=True)
    bound_object_ref: BoundObjectReference | None = fld(struct(BoundObjectReference), ptr=True)


@attrs.frozen
class TokenRequestStatus:
    token: str = fld(STRING, keep=True)
    expiration_timestamp: int | None = fld(TIME, keep=True)


#: registered so that bodies decode; served only as the serviceaccounts/token subresource (resources.py keeps
#: it out of the resource table)
@api_kind("authentication.k8s.io/v1", "TokenRequest", "tokenrequests", namespaced=True)
@attrs.frozen
class TokenRequest:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: TokenRequestSpec = fld(struct(TokenRequestSpec))
    status: TokenRequestStatus = fld(struct(TokenRequestStatus))
