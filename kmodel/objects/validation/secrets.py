"""v1 Secret and ServiceAccount validation (pkg/apis/core/validation: ValidateSecret, ValidateSecretUpdate,
ValidateServiceAccount)."""

from __future__ import annotations

import base64
import binascii

from ..field_errors import OMIT, ErrorType, FieldError, forbidden, invalid, required
from ..gojson import unmarshal_error
from ..secrets import (
    BASIC_AUTH, DOCKER_CONFIG_JSON, DOCKERCFG, SERVICE_ACCOUNT_NAME_KEY, SERVICE_ACCOUNT_TOKEN, SSH_AUTH, TLS,
    Secret, ServiceAccount,
)
from .common import IMMUTABLE, validate_object_meta, validate_object_meta_update
from .configmap import IMMUTABLE_SET, MAX_SIZE, is_config_map_key
from .names import is_dns1123_subdomain

#: the data key each docker type requires (DockerConfigKey, DockerConfigJsonKey)
_DOCKER_KEYS = {DOCKERCFG: ".dockercfg", DOCKER_CONFIG_JSON: ".dockerconfigjson"}
_REDACTED = "<secret contents redacted>"


def _decoded(text: str) -> bytes:
    """The bytes of a data value's base64 text (what the API server holds after decoding JSON's []byte)."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text.encode()


def validate_secret(secret: Secret) -> list[FieldError]:
    """ValidateSecret: the name, each data key (sorted, where Go's map order is random), at most 1 MiB of data in
    all, and the keys each type requires."""
    errs = validate_object_meta(secret.metadata, True, is_dns1123_subdomain)
    data = secret.data
    size = 0
    for key in sorted(data):
        errs += [invalid(f"data[{key}]", key, msg) for msg in is_config_map_key(key)]
        size += len(_decoded(data[key]))
    if size > MAX_SIZE:
        errs.append(FieldError(ErrorType.TOO_LONG, "data", OMIT, f"must have at most {MAX_SIZE} bytes"))
    kind = secret.type
    if kind == SERVICE_ACCOUNT_TOKEN:
        # only the name annotation is required: a controller may add the uid and the token later
        if not secret.metadata.annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            errs.append(required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]"))
    elif kind in _DOCKER_KEYS:
        key = _DOCKER_KEYS[kind]
        if key not in data:
            errs.append(required(f"data[{key}]"))
        else:
            # json.Unmarshal into a map[string]interface{}, with Go's error text (a null is a valid map)
            problem = unmarshal_error(_decoded(data[key]))
            if problem is not None:
                errs.append(invalid(f"data[{key}]", _REDACTED, problem))
    elif kind == BASIC_AUTH:
        # upstream's path is field.NewPath("data[%s]").Key(...): its messages carry the literal "%s"
        if "username" not in data and "password" not in data:
            errs.append(required("data[%s][username]"))
            errs.append(required("data[%s][password]"))
    elif kind == SSH_AUTH:
        if not data.get("ssh-privatekey"):
            errs.append(required("data[%s][ssh-privatekey]"))
    elif kind == TLS:
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                errs.append(required(f"data[{key}]"))
    return errs


def validate_secret_update(new: Secret, old: Secret) -> list[FieldError]:
    """ValidateSecretUpdate: the type never changes; once `immutable` is true it stays true and data never
    changes (stringData is merged into data before validation, so it is not looked at)."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if new.type != old.type:
        errs.append(invalid("type", new.type, IMMUTABLE))
    if old.immutable:
        if not new.immutable:
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if new.data != old.data:
            errs.append(forbidden("data", IMMUTABLE_SET))
    return errs + validate_secret(new)


def validate_service_account(sa: ServiceAccount) -> list[FieldError]:
    """ValidateServiceAccount: the object meta, the name a DNS subdomain."""
    return validate_object_meta(sa.metadata, True, is_dns1123_subdomain)


def validate_service_account_update(new: ServiceAccount, old: ServiceAccount) -> list[FieldError]:
    return validate_object_meta_update(new.metadata, old.metadata) + validate_service_account(new)
