"""What crosses the wire between a client and an API server replica.

These are the payloads of network messages (kmodel/network): a component's client library sends a `Request`
to an API server endpoint and gets back a `Response` with the same `id`; a watch is a `Request` with verb
"watch" sent on a stream (kmodel/network: a string id the client chooses, unique per client), whose events come
back as `WatchEvent` payloads on the same stream, ended by the server with a final `Response` or by a broken
stream.

Bodies are Kubernetes objects from kmodel/objects. A create/update/patch body may also be a plain dict in the
JSON shape, exactly as a user's manifest reads: the pipeline then decodes it (so undecodable input gets 400),
while components send typed objects, as client-go does, and skip nothing else of the pipeline.

Requests are frozen: they are recorded as they were sent (the audit trail and traces keep them).
"""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.fingerprint import fanned_out

# Verbs as kube-apiserver names them (RBAC uses the same words).
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")


@attrs.frozen
class Request:
    """One API request. `token` is the bearer token ("" = anonymous)."""

    id: int
    verb: str
    resource: str  # plural lower-case resource, e.g. "pods", "deployments", "leases"
    namespace: str = ""
    name: str = ""
    subresource: str = ""  # "status", "binding", ...
    body: Any = None
    token: str = ""
    resource_version: str = ""  # get/list: "" means a consistent read; watch: where to start
    label_selector: str = ""
    field_selector: str = ""
    allow_watch_bookmarks: bool = False
    field_validation: str = "Strict"  # "Strict" | "Warn" | "Ignore", as kubectl's --validate
    grace_period_seconds: int | None = None  # delete: DeleteOptions.gracePeriodSeconds (None = the object's own)
    #: watch: ListOptions.timeoutSeconds, after which the server ends the watch (None or 0: the server's own
    #: default, --min-request-timeout × [1, 2))
    timeout_seconds: int | None = None
    #: delete: DeleteOptions.propagationPolicy ("Orphan", "Background", "Foreground"; "": the object's default)
    propagation_policy: str = ""
    #: create, update, patch: the field manager the write is recorded under in managedFields ("": none recorded;
    #: required for an apply)
    field_manager: str = ""
    #: apply: take the fields other managers own instead of answering 409 Conflict
    force: bool = False
    #: create, update, patch, delete: dryRun=All (every stage runs, nothing is stored; kmodel.apiserver.dryrun)
    dry_run: bool = False


@attrs.frozen
class Status:
    """metav1.Status, the body of every error response."""

    code: int
    reason: str  # e.g. "NotFound", "AlreadyExists", "Conflict", "Invalid", "Forbidden", "Unauthorized"
    message: str
    details: Any = None

    @property
    def status(self) -> str:
        return "Success" if self.code < 400 else "Failure"


@attrs.frozen
class ListResult:
    """The body of a successful list: the items (sorted by key, as etcd returns them) and the list's RV."""

    items: tuple
    resource_version: str


@attrs.frozen
class Response:
    """The answer to the request with the same id. `body` is an object, a ListResult or a Status."""

    id: int
    code: int
    body: Any = None

    @property
    def ok(self) -> bool:
        return self.code < 400


@fanned_out  # one event of a watch cache goes to each of its watchers
@attrs.frozen
class WatchEvent:
    """One event on a watch stream: ADDED, MODIFIED, DELETED, BOOKMARK (object carries only an RV) or ERROR
    (object is a Status, e.g. 410 Expired)."""

    type: str
    object: Any


@attrs.frozen
class PatchBody:
    """The body of a patch that is not a JSON merge patch: `type` "json" (RFC 6902, a list of operations),
    "strategic" (strategic merge patch; kmodel.apiserver.patch) or "apply" (server-side apply: the applied
    configuration; kmodel.apiserver.apply), as the request's Content-Type says. A plain dict body is a JSON merge
    patch (what the model's own clients send)."""

    type: str
    patch: Any


@attrs.frozen
class Preconditions:
    """The body of a delete with DeleteOptions.preconditions: the uid and resourceVersion the object must have."""

    uid: str = ""
    resource_version: str = ""
