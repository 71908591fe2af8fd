"""Short labels of delivered messages, for the report's sequence diagram: what each arrow says.

A request says its verb, resource (the API's plural, as the request names it), subresource and object:
``create pods web-1``, ``update nodes/status node-1``. A response names the request it answers, so that a
reply arrow reads on its own: ``201 (create pods web-1)``, ``409 Conflict (update nodes/status node-1)``. A
watch event names its object by the resource its watch asked for, which is the API's own plural
(``WatchEvent ADDED endpoints/web``, never the kind with an "s" added: ``endpointss``); an event on a stream
whose watch was not seen falls back on the served resource of the object's class.

`MessageLabels` remembers the requests it labelled (by client and request id) and the watches (by client and
stream) until their answer: one instance per replay, fed every delivered message in order. It reads the
payloads by their class names, as the network carries them, and never changes them.
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver.resources import resource_of


def _request_label(payload: Any) -> str:
    sub = f"/{payload.subresource}" if payload.subresource else ""
    name = payload.name or _body_name(payload.body)
    return f"{payload.verb} {payload.resource}{sub}" + (f" {name}" if name else "")


def _body_name(body: Any) -> str:
    """The name of the object a create sends (its body: a typed object or a manifest dict)."""
    if isinstance(body, dict):
        metadata = body.get("metadata")
        return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""
    return str(getattr(getattr(body, "metadata", None), "name", "") or "")


def _served_resource(obj: Any) -> str:
    try:
        return resource_of(obj).name
    except KeyError:  # an object of no built-in resource (a custom object): its kind, as it is
        return str(getattr(obj, "kind", "") or type(obj).__name__)


class MessageLabels:
    """Labels delivered messages (see the module docstring): `labels(message)` -> its label."""

    def __init__(self) -> None:
        self._asked: dict[tuple[str, Any], str] = {}      # (client, request id) -> the request's label
        self._watched: dict[tuple[str, str], str] = {}    # (client, stream) -> the resource its watch asked for

    def __call__(self, message: Any) -> str:
        payload = message.payload
        kind = type(payload).__name__
        if kind == "Request":
            label = _request_label(payload)
            self._asked[(message.src, payload.id)] = label
            if payload.verb == "watch" and message.stream is not None:
                self._watched[(message.src, message.stream)] = payload.resource
            return label
        if kind == "Response":
            reason = getattr(payload.body, "reason", "") if payload.code >= 400 else ""
            code = f"{payload.code} {reason}".strip()
            asked = self._asked.pop((message.dst, payload.id), None)
            if message.stream is not None:  # the end of a watch
                self._watched.pop((message.dst, message.stream), None)
            return f"{code} ({asked})" if asked else code
        if kind == "WatchEvent":
            obj = payload.object
            meta = getattr(obj, "metadata", None)
            if meta is None or payload.type in ("BOOKMARK", "ERROR"):
                return f"WatchEvent {payload.type}"
            resource = self._watched.get((message.dst, message.stream or "")) or _served_resource(obj)
            return f"WatchEvent {payload.type} {resource}/{meta.name}"
        if kind == "WatchResponse":
            return f"etcd watch: {len(payload.events)} events"
        return kind
