"""API errors as kube-apiserver builds them (k8s.io/apimachinery/pkg/api/errors/errors.go).

Each stage of the pipeline refuses a request by raising `APIError(status)`; the pipeline turns it into a
`Response` carrying the `Status`. The builders below reproduce upstream's messages verbatim: the resource is
named by its GroupResource string ("pods", "deployments.apps"), a kind by its GroupKind string ("Pod",
"Deployment.apps").
"""

from __future__ import annotations

from typing import Any, Sequence

import attrs

from kmodel.apiserver.wire import Status
from kmodel.objects.field_errors import invalid_message

# The message upstream's generic registry puts in every optimistic-concurrency conflict.
OPTIMISTIC_LOCK_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"


class APIError(Exception):
    """A request refused by a pipeline stage; `status` is the metav1.Status the client receives."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


@attrs.frozen
class StatusDetails:
    """metav1.StatusDetails: what the error is about, for 422 the field causes, and how long the client should
    wait before it tries again (retryAfterSeconds: the server sends it as the Retry-After header too)."""

    name: str = ""
    group: str = ""
    kind: str = ""
    causes: tuple = ()
    retry_after_seconds: int = 0


@attrs.frozen
class StatusCause:
    """metav1.StatusCause: `reason` is the field.ErrorType ("FieldValueInvalid", ...), `field` its path."""

    reason: str
    message: str
    field: str


def group_resource(group: str, resource: str) -> str:
    """schema.GroupResource.String()."""
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> APIError:
    return APIError(Status(404, "NotFound", f'{group_resource(group, resource)} "{name}" not found',
                           StatusDetails(name, group, resource)))


def already_exists(group: str, resource: str, name: str) -> APIError:
    return APIError(Status(409, "AlreadyExists", f'{group_resource(group, resource)} "{name}" already exists',
                           StatusDetails(name, group, resource)))


def conflict(group: str, resource: str, name: str, reason: str) -> APIError:
    return APIError(Status(409, "Conflict",
                           f'Operation cannot be fulfilled on {group_resource(group, resource)} "{name}": {reason}',
                           StatusDetails(name, group, resource)))


def forbidden(group: str, resource: str, name: str, reason: str) -> APIError:
    gr = group_resource(group, resource)
    if not gr:
        message = f"forbidden: {reason}"
    elif name:
        message = f'{gr} "{name}" is forbidden: {reason}'
    else:
        message = f"{gr} is forbidden: {reason}"
    return APIError(Status(403, "Forbidden", message, StatusDetails(name, group, resource)))


def unauthorized() -> APIError:
    return APIError(Status(401, "Unauthorized", "Unauthorized"))


def bad_request(message: str) -> APIError:
    return APIError(Status(400, "BadRequest", message))


def method_not_allowed(message: str) -> APIError:
    return APIError(Status(405, "MethodNotAllowed", message))


def internal_error(message: str) -> APIError:
    return APIError(Status(500, "InternalError", f"Internal error occurred: {message}"))


def invalid(group_kind: str, group: str, kind: str, name: str, field_errors: Sequence[Any]) -> APIError:
    """NewInvalid: `Pod "x" is invalid: <err>` for one error, `[<err>, <err>]` for several; one cause each."""
    causes = tuple(StatusCause(e.type.value, e.body(), e.field) for e in field_errors)
    return APIError(Status(422, "Invalid", invalid_message(group_kind, name, field_errors),
                           StatusDetails(name, group, kind, causes)))


def status_of(error: Any) -> Status:
    return error.status
