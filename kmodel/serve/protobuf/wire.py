"""The protobuf wire of a Kubernetes object: `MAGIC`, then a runtime.Unknown message whose typeMeta names the
object's apiVersion and kind and whose raw is the object's message (k8s.io/apimachinery/pkg/runtime/serializer/
protobuf/protobuf.go, release-1.31). A typeMeta without a kind takes the endpoint's (the serializer's defaultGVK).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from kmodel.serve.body import bad_request
from kmodel.serve.protobuf import messages, tojson

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: the 4 bytes before every protobuf-encoded object
MAGIC = b"k8s\x00"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"


def decode(raw: bytes, api_version: str, kind: str) -> Any:
    """The object a protobuf body holds, as the JSON dict (with apiVersion and kind) the server gets from a JSON
    body; `api_version` and `kind` are the endpoint's, for a body that names none. None for an empty body.
    BodyError 400 for one that is not a Kubernetes protobuf object of a kind with a vendored definition."""
    if not raw:
        return None
    if not raw.startswith(MAGIC):
        raise bad_request(f"the body of the request is not a Kubernetes protobuf object: it must start with "
                          f"{MAGIC!r} (send application/json otherwise)")
    try:
        unknown = messages.message_class(UNKNOWN).FromString(raw[len(MAGIC):])
    except DecodeError as e:
        raise bad_request(f"the body of the request could not be decoded as protobuf: {e}") from None
    if unknown.contentEncoding:
        raise bad_request(f'the protobuf body\'s contentEncoding "{unknown.contentEncoding}" is not supported: '
                          f'send it unencoded')
    body_version = unknown.typeMeta.apiVersion or api_version
    body_kind = unknown.typeMeta.kind or kind
    name = messages.full_name(body_version, body_kind)
    if name is None:
        raise bad_request(f'no kind "{body_kind}" is registered for version "{body_version}" in kmodel serve\'s '
                          f'protobuf decoder: send the object as application/json')
    try:
        obj = messages.message_class(name).FromString(unknown.raw)
    except DecodeError as e:
        raise bad_request(f"the {body_kind} in the body could not be decoded as protobuf: {e}") from None
    try:
        converted = tojson.message_json(obj)
    except ValueError as e:
        raise bad_request(f"the {body_kind} in the body could not be converted to JSON: {e}") from None
    return {"apiVersion": body_version, "kind": body_kind, **converted}


__all__ = ["MEDIA_TYPE", "MAGIC", "decode"]
