"""v1 ConfigMap validation (pkg/apis/core/validation: ValidateConfigMap, ValidateConfigMapUpdate)."""

from __future__ import annotations

import re

from ..core import ConfigMap
from ..field_errors import OMIT, ErrorType, FieldError, forbidden, invalid
from .common import validate_object_meta, validate_object_meta_update
from .names import is_dns1123_subdomain, max_len_error, regex_error

#: core.MaxSecretSize: the most bytes data and binaryData may hold together
MAX_SIZE = 1024 * 1024
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY = re.compile("^" + CONFIG_KEY_FMT + "$")
_CONFIG_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
IMMUTABLE_SET = "field is immutable when `immutable` is set"


def is_config_map_key(value: str) -> list[str]:
    """IsConfigMapKey: a DNS-subdomain-long run of [-._a-zA-Z0-9], not '.' or '..' nor starting with '..'."""
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _CONFIG_KEY.match(value):
        errs.append(regex_error(_CONFIG_KEY_ERR, CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def validate_configmap(cm: ConfigMap) -> list[FieldError]:
    """ValidateConfigMap: the name, each key (in sorted order, where Go's map order is random), no key in both
    data and binaryData, and at most 1 MiB in all."""
    errs = validate_object_meta(cm.metadata, True, is_dns1123_subdomain)
    size = 0
    for key in sorted(cm.data):
        errs += [invalid(f"data[{key}]", key, msg) for msg in is_config_map_key(key)]
        if key in cm.binary_data:
            errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        size += len(cm.data[key].encode())
    for key in sorted(cm.binary_data):
        errs += [invalid(f"binaryData[{key}]", key, msg) for msg in is_config_map_key(key)]
        size += len(cm.binary_data[key]) * 3 // 4  # the decoded bytes of the base64 text
    if size > MAX_SIZE:
        errs.append(FieldError(ErrorType.TOO_LONG, "", OMIT, f"must have at most {MAX_SIZE} bytes"))
    return errs


def validate_configmap_update(new: ConfigMap, old: ConfigMap) -> list[FieldError]:
    """ValidateConfigMapUpdate: once `immutable` is true, it stays true and data and binaryData never change
    (only the metadata may)."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if old.immutable:
        if not new.immutable:
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if new.data != old.data:
            errs.append(forbidden("data", IMMUTABLE_SET))
        if new.binary_data != old.binary_data:
            errs.append(forbidden("binaryData", IMMUTABLE_SET))
    return errs + validate_configmap(new)
