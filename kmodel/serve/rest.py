"""kube-apiserver's REST wire, as pure functions: URL paths and query strings to the model's `Request`s, and the
model's answers to JSON bodies.

Theory of operation
-------------------
`route(method, path, query)` reads a request line the way upstream's RequestInfoFactory does
(k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): ``/api/v1/...`` and ``/apis/GROUP/VERSION/...``, then
``namespaces/NS/`` unless the next part is a namespace's own subresource (status, finalize), then
RESOURCE[/NAME[/SUBRESOURCE]]. The verb comes from the method: GET with a name is get, without one list (watch
with ``watch=true``), POST create, PUT update, PATCH patch, DELETE delete, or deletecollection without a name.

The answers are encoded as upstream's JSON: objects by `kmodel.objects.dump`, lists as `<Kind>List` with the
list's resourceVersion (and ``continue`` while pages remain), errors as metav1.Status, watch events as
``{"type": ..., "object": ...}``.

Pagination (limit, continue): the model lists whole; the server cuts the answer into pages. The continue token
carries the first page's resourceVersion and the last key returned, as upstream's does; a later page is a new
consistent list through the model, keeping the keys after that one, and reports the first page's
resourceVersion, so a watch started from it sees again (never misses) what changed between the pages. Upstream
reads every page at the first page's revision instead.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Mapping, Optional, Sequence
from urllib.parse import parse_qs

import attrs

from kmodel.apiserver.errors import StatusDetails
from kmodel.apiserver.resources import Resource, served
from kmodel.apiserver.wire import ListResult, Status, WatchEvent
from kmodel.objects import dump

#: a namespace's own subresources: /api/v1/namespaces/NAME/status is not a resource "status" in namespace NAME
NAMESPACE_SUBRESOURCES = ("status", "finalize")
CORE_PREFIX = "/api/v1"


class RestError(Exception):
    """A request the server refuses before it reaches the model (a bad URL or query): `status` is the answer."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def not_found(message: str = "the server could not find the requested resource") -> RestError:
    return RestError(Status(404, "NotFound", message))


def bad_request(message: str) -> RestError:
    return RestError(Status(400, "BadRequest", message))


@attrs.frozen
class ResourceRoute:
    """A request for a resource: what the model's `Request` needs, and the query options the server keeps."""

    verb: str
    resource: Resource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    query: Mapping[str, str] = attrs.field(factory=dict)


def query_of(raw: str) -> dict[str, str]:
    """The query string's parameters, the first value of each."""
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


def route(method: str, path: str, query: Mapping[str, str],
          custom: Callable[[str], Optional[Resource]] = lambda plural: None) -> ResourceRoute:
    """The resource request a method and path name (RestError 404 when they name none the model serves).
    `custom(plural)`: the custom resource of that plural that the model serves now, if any."""
    parts = [p for p in path.split("/") if p]
    if path.startswith(CORE_PREFIX + "/") or path == CORE_PREFIX:
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise not_found()
    namespace = ""
    if len(rest) >= 2 and rest[0] == "namespaces" and (len(rest) == 2 or rest[2] in NAMESPACE_SUBRESOURCES):
        pass  # the namespace object itself (or its status/finalize)
    elif rest and rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise not_found()
    res = served(group, rest[0]) or (custom(rest[0]) if group else None)
    api_version = f"{group}/{version}" if group else version
    if res is None or res.api_version != api_version or (namespace and not res.namespaced):
        raise not_found()
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    watch = query.get("watch", "") in ("true", "1")
    verb = {
        "GET": "get" if name else ("watch" if watch else "list"),
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }.get(method)
    if verb is None:
        raise RestError(Status(405, "MethodNotAllowed", f"the server does not allow this method on the requested "
                                                         f"resource"))
    if verb in ("update", "patch") and not name:
        raise RestError(Status(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                                                        "resource"))
    return ResourceRoute(verb, res, namespace, name, subresource, dict(query))


def int_param(query: Mapping[str, str], key: str) -> Optional[int]:
    """An integer query parameter, None when absent (RestError 400 when not an integer)."""
    text = query.get(key, "")
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise bad_request(f'invalid value for {key}: "{text}" is not an integer') from None


# -- bodies -------------------------------------------------------------------------------------------------

def status_json(status: Status) -> dict:
    """metav1.Status as upstream serialises it."""
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                           "status": "Success" if 0 < status.code < 400 else "Failure"}
    if status.message:
        out["message"] = status.message
    if status.reason:
        out["reason"] = status.reason
    details = status.details
    if isinstance(details, StatusDetails):
        d: dict[str, Any] = {}
        if details.name:
            d["name"] = details.name
        if details.group:
            d["group"] = details.group
        if details.kind:
            d["kind"] = details.kind
        if details.causes:
            d["causes"] = [{k: v for k, v in (("reason", c.reason), ("message", c.message), ("field", c.field))
                            if v} for c in details.causes]
        if details.retry_after_seconds:
            d["retryAfterSeconds"] = details.retry_after_seconds
        if d:
            out["details"] = d
    out["code"] = status.code
    return out


def object_json(res: Optional[Resource], obj: Any) -> dict:
    """An object as JSON in the group version `res` serves it in (another group version of a stored kind converts
    the stored kind's JSON: kmodel.objects.events_v1)."""
    doc = dump(obj)
    wire = res.wire if res is not None else None
    return doc if wire is None else wire.from_core(doc)


def body_json(body: Any, res: Optional[Resource] = None) -> Any:
    """An answer's body (an object, a Status or a plain value) as JSON; `res`: the resource it was asked of."""
    if isinstance(body, Status):
        return status_json(body)
    if body is None or isinstance(body, (dict, list, str, int, float, bool)):
        return body
    return object_json(res, body)


def key_of(obj: Any) -> str:
    """The object's key under its resource's prefix (the order etcd lists in)."""
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def encode_continue(resource_version: str, last_key: str) -> str:
    """upstream's continue token: base64 of {"v", "rv", "start"}, start the key after the last one returned."""
    token = {"v": "meta.k8s.io/v1", "rv": int(resource_version or 0), "start": last_key + "\x00"}
    return base64.urlsafe_b64encode(json.dumps(token, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[str, str]:
    """(resourceVersion, start key) of a continue token (RestError 400 when it is not one)."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return str(int(data["rv"])), str(data["start"])
    except (ValueError, KeyError, TypeError):
        raise bad_request("continue key is not valid: illegal base64 data") from None


def list_json(res: Resource, result: ListResult, query: Mapping[str, str]) -> dict:
    """A list answer as `<Kind>List`, cut to the page `limit` and `continue` ask for."""
    items, metadata = page(result, query)
    return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": metadata,
            "items": [object_json(res, o) for o in items]}


def page(result: ListResult, query: Mapping[str, str]) -> tuple[Sequence[Any], dict]:
    """The objects of the page `limit` and `continue` ask for, and the list's metadata (resourceVersion, and
    continue and remainingItemCount while items remain)."""
    items: Sequence[Any] = result.items
    rv = result.resource_version
    token = query.get("continue", "")
    if token:
        rv, start = decode_continue(token)
        items = [o for o in items if key_of(o) >= start]
    limit = int_param(query, "limit") or 0
    metadata: dict[str, Any] = {"resourceVersion": rv}
    if 0 < limit < len(items):
        metadata["continue"] = encode_continue(rv, key_of(items[limit - 1]))
        metadata["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    return items, metadata


def watch_event_json(event: WatchEvent, res: Optional[Resource] = None) -> dict:
    return {"type": event.type, "object": body_json(event.object, res)}
