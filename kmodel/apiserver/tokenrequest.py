"""The body and answer of POST serviceaccounts/<name>/token (pkg/registry/core/serviceaccount/storage/token.go,
pkg/apis/authentication/validation), in upstream's order: the body decoded (expirationSeconds defaulted to an
hour) and its name and namespace checked against the URL's; the service account looked up (404); then the
audiences defaulted to the API server's and the request validated (at least ten minutes, at most 2^32
seconds)."""

from __future__ import annotations

from typing import Any

from kmodel.apiserver import errors
from kmodel.apiserver.serviceaccount_tokens import (
    DEFAULT_EXPIRATION_SECONDS, ISSUER, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
)
from kmodel.objects import DecodeError, decode
from kmodel.objects.fastevolve import evolve
from kmodel.objects.field_errors import invalid
from kmodel.objects.secrets import TokenRequest, TokenRequestStatus

_API_VERSION = "authentication.k8s.io/v1"
_GROUP_KIND = "TokenRequest.authentication.k8s.io"


def decode_request(body: Any, name: str, namespace: str) -> TokenRequest:
    """The TokenRequest a body stands for, its expirationSeconds defaulted; APIError 400 for a body that does not
    decode, 422 for a name or namespace other than the URL's."""
    if isinstance(body, dict):
        body = {"apiVersion": _API_VERSION, "kind": "TokenRequest", **body}
        decoded = decode(body)
        if isinstance(decoded, DecodeError):
            raise errors.APIError(errors.Status(decoded.code, decoded.reason, decoded.message))
        body = decoded
    elif body is None:
        body = TokenRequest()
    if not isinstance(body, TokenRequest):
        raise errors.bad_request(f"{type(body).__name__} cannot be handled as a TokenRequest")
    meta = body.metadata
    if meta.name and meta.name != name:
        raise errors.invalid(_GROUP_KIND, "authentication.k8s.io", "TokenRequest", name, [
            invalid("metadata.name", meta.name, "must match the service account name if specified")])
    if meta.namespace and meta.namespace != namespace:
        raise errors.invalid(_GROUP_KIND, "authentication.k8s.io", "TokenRequest", name, [
            invalid("metadata.namespace", meta.namespace, "must match the service account namespace if specified")])
    if body.spec.expiration_seconds is None:
        body = evolve(body, spec=evolve(body.spec, expiration_seconds=DEFAULT_EXPIRATION_SECONDS))
    return body


def prepared(request: TokenRequest, name: str, namespace: str, now: int) -> TokenRequest:
    """TokenREST.Create once the service account is found: the API server's audiences when none are asked for,
    the name, namespace and creationTimestamp filled, then ValidateTokenRequest (422 for an expiry under ten
    minutes or over 2^32 seconds)."""
    spec = request.spec
    if not spec.audiences:
        spec = evolve(spec, audiences=(ISSUER,))
    meta = evolve(request.metadata, name=name, namespace=namespace, creation_timestamp=now)
    seconds = spec.expiration_seconds
    found = []
    if seconds < MIN_EXPIRATION_SECONDS:
        found.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
    if seconds > MAX_EXPIRATION_SECONDS:
        found.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"))
    if found:
        raise errors.invalid(_GROUP_KIND, "authentication.k8s.io", "TokenRequest", "", found)
    return evolve(request, metadata=meta, spec=spec, status=TokenRequestStatus())


def answer(request: TokenRequest, token: str, now: int) -> TokenRequest:
    """The prepared request with the token and the moment it expires."""
    expires = now + request.spec.expiration_seconds * 1000
    return evolve(request, status=TokenRequestStatus(token=token, expiration_timestamp=expires))
