"""The HTTP server: kube-apiserver's REST endpoints in front of the model, on the standard library's
ThreadingHTTPServer (HTTP/1.1, one thread per connection).

Theory of operation
-------------------
A handler thread never touches the model. For a resource request it builds the model's `Request`
(kmodel.apiserver.wire) from the URL, the query and the body (`kmodel.serve.rest`), with the bearer token of the
``Authorization`` header, and hands it to the model's thread as a `Ticket` for the gateway
(`kmodel.serve.gateway`); it then waits for the answer on a queue and writes it as JSON. A watch is answered with
a chunked stream of ``{"type": ..., "object": ...}`` lines, one per WatchEvent the replica sends, until the
replica ends the watch (its timeout) or the client goes away (the watch is cancelled). A watch the replica
refuses before any event (401, 403, 429) is answered with that status. An answer that does not come within
`REQUEST_TIMEOUT_S` of wall time (the request was lost in a partition) is a 504, as kube-apiserver's own request
timeout answers.

An answer is converted to what the ``Accept`` header asks (kmodel.serve.negotiation): a meta.k8s.io/v1 Table
(kmodel.serve.tables; a watch's events each a Table of one row) or metadata only (kmodel.serve.partial).

What the server itself answers, without the model: /version, /healthz, /livez, /readyz (ok while the model's
thread runs), and discovery (kmodel.serve.discovery), which kube-apiserver serves to any authenticated user.

A request the model does not have is translated into requests it has: ``deletecollection`` is a list followed by
one delete per item (authorization sees list and delete). Impersonation (``Impersonate-User``, kubectl --as) sends the request with the impersonated user's token
when the requester is in system:masters. ``POST /kmodel/control`` acts on the model (kmodel.serve.control). A PATCH of
``application/apply-patch+yaml`` is a server-side apply; ``dryRun=All`` runs a write without storing it; a write's field
manager is its ``fieldManager`` query parameter or, as upstream defaults it, its User-Agent up to the first "/"
(kmodel.serve.write_options).

No request can break a connection or the server: every request's body is read (or the connection closed, saying
so) before it is answered (kmodel.serve.body); a built-in kind's create, update or delete body may be protobuf
(kmodel.serve.protobuf decodes it to the JSON dict a JSON body gives), a custom resource's may not (415); every refusal,
the standard library's own (a malformed request line) included, is a metav1.Status; an unexpected error is a 500
Status, never a traceback. Each connection's socket times out after `CONNECTION_TIMEOUT_S` without progress, and
only its own thread waits on it: the model's thread never waits for a client. The bearer token a client sends is
exchanged for the model's (kmodel.serve.credentials). A pod's log, exec, attach and portforward are answered as an
API server whose nodes run no kubelet answers them (kmodel.serve.containers).
"""

from __future__ import annotations

import json
import queue
import select
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

import attrs

from kmodel.apiserver.wire import ListResult, PatchBody, Preconditions, Request, Response, Status, WatchEvent
from kmodel.serve import body as request_body
from kmodel.serve import containers, discovery, negotiation, partial, protobuf, rest, tables, write_options
from kmodel.serve.credentials import Credentials
from kmodel.serve.gateway import Gateway, Ticket
from kmodel.serve.rest import ResourceRoute, RestError
from kmodel.apiserver.customresources import crds, established, resource_for, served
from kmodel.apiserver.errors import APIError

REQUEST_TIMEOUT_S = 60.0
#: the control endpoint (kmodel.serve.control): POST {"action", "target", "seconds"} as the admin
CONTROL_PATH = "/kmodel/control"
#: how long a watch waits for the replica's first answer before its headers go out (a refusal that comes first is
#: answered with its own status; one that comes later is an ERROR event)
WATCH_FIRST_ANSWER_S = 0.05
#: how often an idle watch looks whether its client went away (then the watch is cancelled in the model)
WATCH_IDLE_CHECK_S = 1.0
#: resources whose immediate deletion answers the deleted object; the others answer a Status (the generic
#: registry's ReturnDeletedObject)
RETURNS_DELETED_OBJECT = ("pods", "services", "namespaces")
PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
#: the media types of the bodies of creates, updates and deletes the server decodes for any resource
DECODED_TYPES = ("application/json", "application/yaml")
#: ... and for a built-in kind's (upstream serves no protobuf for custom resources, and answers them 415)
BUILTIN_TYPES = DECODED_TYPES + (protobuf.MEDIA_TYPE,)
#: see Handler.timeout
CONNECTION_TIMEOUT_S = 90.0


def unsupported_media_type(accepted: tuple[str, ...]) -> Status:
    """upstream's errUnsupportedMediaType (k8s.io/apiserver/pkg/endpoints/handlers/negotiation/errors.go)."""
    return Status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media "
                                               f"types include: {', '.join(accepted)}")


class ModelClient:
    """How a handler thread asks the model: `ask(request)` waits for the answer, `watch(request)` returns a queue
    of ("event", WatchEvent) and ("end", Response | None) items and the ticket to cancel."""

    def __init__(self, model: Any, gateway: Gateway) -> None:
        self.model = model
        self.gateway = gateway
        #: wall seconds before an unanswered request is a 504 (a caller that runs the model faster than the wall
        #: clock may shorten it to the same logical time)
        self.request_timeout_s = REQUEST_TIMEOUT_S

    def _submit(self, ticket: Ticket) -> None:
        gateway, loop = self.gateway, self.model.cluster.loop

        def submit() -> None:
            gateway.submit(ticket)
            loop.notify_work(gateway.name)

        self.model.post(submit)

    def ask(self, request: Request) -> Response:
        answers: queue.SimpleQueue = queue.SimpleQueue()
        self._submit(Ticket(request, on_answer=answers.put))
        try:
            return answers.get(timeout=self.request_timeout_s)
        except queue.Empty:
            return Response(request.id, 504, Status(
                504, "Timeout", "the server was unable to return a response in the time allotted, but may still be "
                                "processing the request"))

    def watch(self, request: Request) -> tuple[queue.SimpleQueue, Ticket]:
        items: queue.SimpleQueue = queue.SimpleQueue()
        ticket = Ticket(request, on_answer=lambda r: items.put(("end", r)),
                        on_event=lambda e: items.put(("event", e)), on_end=lambda r: items.put(("end", r)))
        self._submit(ticket)
        return items, ticket

    def cancel(self, ticket: Ticket) -> None:
        gateway, loop = self.gateway, self.model.cluster.loop

        def cancel() -> None:
            gateway.cancel(ticket)
            loop.notify_work(gateway.name)

        self.model.post(cancel)

    def now(self) -> int:
        return self.model.cluster.now

    def impersonate(self, token: str, target: str) -> str:
        """The token to act as user `target` for the holder of `token` (kube-apiserver's impersonation filter:
        the requester needs the verb impersonate on that user, which the bootstrap policy gives system:masters;
        this server lets system:masters impersonate and consults no role for anyone else). The impersonated user
        must be one the model has a token for. ImpersonationRefused (401, 403) otherwise."""
        authenticator = self.model.cluster.replicas[0].pipeline.authenticator

        def find() -> str:
            try:
                user = authenticator.authenticate(token)
            except APIError as e:
                raise ImpersonationRefused(e.status) from None
            if "system:masters" not in user.groups:
                raise ImpersonationRefused(Status(
                    403, "Forbidden", f'users "{target}" is forbidden: User "{user.name}" cannot impersonate resource '
                                      f'"users" in API group "" at the cluster scope'))
            for known, info in sorted(authenticator.tokens.items()):
                if info.name == target:
                    return known
            raise ImpersonationRefused(Status(403, "Forbidden", f'users "{target}" is forbidden: kmodel serve '
                                                                 f'impersonates only the users it has tokens for'))

        return self.model.call(find)

    def custom_resource(self, plural: str) -> Any:
        """The custom resource `plural` the model serves now (read on the model's thread), or None."""
        store = self.model.cluster.store
        return self.model.call(lambda: served(store, plural))

    def custom_resources(self) -> list:
        """Every custom resource the model serves now (its Established CRDs), read on the model's thread."""
        store = self.model.cluster.store
        return self.model.call(lambda: [resource_for(crd) for crd in crds(store) if established(crd)])


class ImpersonationRefused(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _go_type(res: Any, is_list: bool) -> str:
    """The Go type kube-apiserver names in a 406 for a conversion that does not fit: *core.Pod, *apps.DeploymentList,
    *unstructured.Unstructured for a custom resource."""
    if res.crd is not None:
        return "*unstructured.UnstructuredList" if is_list else "*unstructured.Unstructured"
    package = res.group.split(".")[0] if res.group else "core"
    return f"*{package}.{res.kind}{'List' if is_list else ''}"


class _Answer(Exception):
    """Raised inside a handler to answer at once: (code, JSON body)."""

    def __init__(self, code: int, body: Any) -> None:
        super().__init__(code)
        self.code, self.body = code, body


def _status_answer(status: Status) -> _Answer:
    return _Answer(status.code, rest.status_json(status))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kmodel-serve"
    #: TCP_NODELAY: the headers and the body go out as two writes, which Nagle's algorithm would hold back until
    #: the client's delayed ACK (tens of milliseconds a request)
    disable_nagle_algorithm = True
    #: the socket's timeout for each read and write once the TLS handshake is done: a connection whose client
    #: sends (or reads) nothing for this long is closed, so a slow or vanished client holds only its own thread
    #: (kube-apiserver's idle timeout, k8s.io/apiserver/pkg/server/secure_serving.go: IdleTimeout 90 s)
    timeout = CONNECTION_TIMEOUT_S
    client: ModelClient  # set on the subclass `make_server` builds
    credentials: Credentials
    address: str
    #: the request's body, read first by `_serve` whatever the answer (kmodel.serve.body)
    _raw: bytes = b""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the report keeps what happened
        pass

    def setup(self) -> None:
        # TLS: the handshake runs here, on the connection's own thread, not in the accepting one
        handshake = getattr(self.request, "do_handshake", None)
        if handshake is not None:
            self.request.settimeout(10)
            handshake()
            self.request.settimeout(None)
        super().setup()

    def handle(self) -> None:
        try:
            super().handle()
        except (OSError, ssl.SSLError):
            self.close_connection = True

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """What the standard library answers itself (a malformed request line or header, an unknown method), as a
        metav1.Status; the connection is closed, since the request's body (if any) was not read."""
        reason = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 408: "Timeout",
                  414: "RequestURITooLong", 431: "RequestHeaderFieldsTooLarge", 501: "NotImplemented"}.get(code, "")
        self.close_connection = True
        # a request line too broken to name a version still gets an HTTP/1.1 answer with a status line, as Go's
        # server gives (the standard library would write an HTTP/0.9 answer: the body alone)
        self.request_version = self.protocol_version
        self._send_json(code, rest.status_json(Status(code, reason, message or "")))

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    # -- plumbing ------------------------------------------------------------------------------------------

    def _send_json(self, code: int, body: Any) -> None:
        self._send(code, "application/json", json.dumps(body, separators=(",", ":")).encode())

    def _send_text(self, code: int, text: str) -> None:
        self._send(code, "text/plain; charset=utf-8", text.encode())

    def _send(self, code: int, content_type: str, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> None:
        """Read the request's body (kmodel.serve.body) before anything is answered; _Answer for one refused."""
        try:
            self._raw = request_body.read_body(self.headers.get("Transfer-Encoding", ""),
                                               self.headers.get_all("Content-Length") or [], self.rfile)
        except request_body.BodyError as e:
            self.close_connection = self.close_connection or e.close
            self._raw = b""
            raise _status_answer(e.status) from None

    def _media_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def _body(self, media_types: tuple[str, ...] = DECODED_TYPES) -> Any:
        """The body, decoded; 415 for a media type outside `media_types` (an empty one is JSON, as upstream's
        NegotiateInputSerializer takes it), 400 for one that does not decode."""
        raw = self._raw
        if not raw:
            return None
        media_type = self._media_type()
        if media_type and media_type not in media_types:
            raise _status_answer(unsupported_media_type(media_types))
        try:
            return request_body.decode(raw, media_type)
        except request_body.BodyError as e:
            raise _status_answer(e.status) from None

    def _object_body(self, r: ResourceRoute, kind: str) -> Any:
        """The body of a create, update or delete: as _body, and for a built-in kind protobuf too, decoded to the
        dict a JSON body gives (`kind` is the endpoint's, for a protobuf body that names none)."""
        if r.resource.crd is not None:
            return self._body()
        if self._raw and self._media_type() == protobuf.MEDIA_TYPE:
            try:
                return protobuf.decode(self._raw, r.resource.api_version, kind)
            except request_body.BodyError as e:
                raise _status_answer(e.status) from None
        return self._body(BUILTIN_TYPES)

    def _token(self) -> str:
        """The model's bearer token for the request: the one the Authorization header's token stands for in this
        run (kmodel.serve.credentials), or with Impersonate-User (kubectl --as) the impersonated user's, once the
        requester may impersonate (`ModelClient.impersonate`)."""
        auth = self.headers.get("Authorization", "")
        token = self.credentials.model_token(auth[7:].strip() if auth.startswith("Bearer ") else "")
        target = self.headers.get("Impersonate-User", "")
        if not target:
            return token
        try:
            return self.client.impersonate(token, target)
        except ImpersonationRefused as e:
            raise _status_answer(e.status) from None

    def _serve(self, method: str) -> None:
        """Answer one request. Its body is read first, whatever the answer; the answer is always written (an
        unexpected error is a 500 Status, as kube-apiserver answers a panic), unless the client went away."""
        try:
            try:
                self._read_body()
                self._route(method)
            except RestError as e:
                raise _status_answer(e.status) from None
            except (_Answer, OSError):
                raise
            except Exception as e:  # a bug of the server's: answered, never printed as a traceback
                raise _status_answer(Status(500, "InternalError", f"Internal error occurred: "
                                                                  f"{type(e).__name__}: {e}")) from None
        except _Answer as a:
            try:
                self._send_json(a.code, a.body)
            except OSError:
                self.close_connection = True
        except OSError:  # the client went away, or sent nothing for CONNECTION_TIMEOUT_S
            self.close_connection = True

    def _route(self, method: str) -> None:
        url = urlsplit(self.path)
        if method == "POST" and url.path == CONTROL_PATH:
            control = getattr(self.server, "control", None)
            if control is None:
                raise rest.not_found()
            self._send_json(*control(self._token(), self._body()))
            return
        query = rest.query_of(url.query)
        path = url.path.rstrip("/") or "/"
        if method == "GET" and self._non_resource(path):
            return
        r = rest.route(method, path, query, self.client.custom_resource)
        self._resource(method, r)

    def _non_resource(self, path: str) -> bool:
        if path == "/version":
            self._send_json(200, discovery.SERVED_VERSION)
        elif path in ("/healthz", "/livez", "/readyz"):
            if self.server.model_alive():  # type: ignore[attr-defined]
                self._send_text(200, "ok")
            else:
                self._send_text(500, "the model stopped")
        elif path == "/api":
            self._send_json(200, discovery.api_versions(self.address))
        elif path == "/apis":
            self._send_json(200, discovery.api_group_list(self.client.custom_resources()))
        elif path == "/api/v1":
            self._send_json(200, discovery.resource_list("v1"))
        elif path.startswith("/apis/") and path.count("/") == 2:
            doc = discovery.api_group_doc(path.split("/")[2], self.client.custom_resources())
            if doc is None:
                raise rest.not_found()
            self._send_json(200, doc)
        elif path.startswith("/apis/") and path.count("/") == 3:
            _, _, group, version = path.split("/")
            doc = discovery.resource_list(f"{group}/{version}", self.client.custom_resources())
            if doc is None:
                raise rest.not_found()
            self._send_json(200, doc)
        elif path == "/openapi/v3":
            self._send_json(200, discovery.openapi_v3_root())
        elif path.startswith("/openapi/v3/"):
            doc = discovery.openapi_v3_group_version(path[len("/openapi/v3/"):])
            if doc is None:
                raise rest.not_found()
            self._send_json(200, doc)
        elif path == "/" or path.startswith("/openapi"):
            raise rest.not_found()
        else:
            return False
        return True

    # -- resources -----------------------------------------------------------------------------------------

    def _request(self, r: ResourceRoute, verb: str = "", **fields: Any) -> Request:
        q = r.query
        verb = verb or r.verb
        try:
            options = write_options.of(verb, q, self.headers.get("User-Agent", ""),
                                        self._media_type() == write_options.APPLY_MEDIA_TYPE)
        except write_options.OptionsRefused as e:
            raise _status_answer(e.status) from None
        field_selector = q.get("fieldSelector", "")
        if r.resource.wire is not None:  # another group version's field names, as the stored kind's labels
            field_selector = r.resource.wire.core_field_selector(field_selector)
        base = dict(verb=verb, resource=r.resource.key, namespace=r.namespace, name=r.name,
                    subresource=r.subresource, token=self._token(),
                    resource_version=q.get("resourceVersion", ""), label_selector=q.get("labelSelector", ""),
                    field_selector=field_selector,
                    field_validation=q.get("fieldValidation", "") or "Strict", **options)
        base.update(fields)
        return Request(0, **base)

    def _ask(self, request: Request) -> Response:
        return self.client.ask(request)

    def _answer(self, response: Response, r: ResourceRoute) -> None:
        """Answer with the model's response, converted to what the Accept header asked (kmodel.serve.negotiation):
        the object itself, a Table, or its metadata only. Errors and Statuses are answered as they are."""
        if response.code >= 400 or isinstance(response.body, Status):
            body = response.body if isinstance(response.body, Status) else Status(response.code, "", "")
            raise _status_answer(body)
        body = response.body
        is_list = isinstance(body, ListResult)
        kind = self._conversion()
        refused = negotiation.mismatch(kind, is_list, _go_type(r.resource, is_list)) if kind else None
        if refused is not None:
            raise _status_answer(refused)
        if kind == negotiation.TABLE:
            include = self._include_object(r)
            if is_list:
                items, metadata = rest.page(body, r.query)
                raise _Answer(200, tables.table(r.resource, items, self.client.now(), include, metadata))
            raise _Answer(response.code, tables.table(r.resource, [body], self.client.now(), include,
                                                      subresource=r.subresource))
        answer = rest.list_json(r.resource, body, r.query) if is_list else rest.body_json(body, r.resource)
        if kind == negotiation.PARTIAL_LIST:
            answer = partial.partial_list(answer)
        elif kind == negotiation.PARTIAL:
            answer = partial.partial_object(answer)
        raise _Answer(200 if is_list else response.code, answer)

    def _conversion(self) -> str:
        """What the Accept header asks the answer to be converted to ("" for none); 406 when nothing it asks for
        is served."""
        try:
            return negotiation.conversion(self.headers.get("Accept", ""))
        except negotiation.NotAcceptable as e:
            raise _status_answer(e.status) from None

    def _include_object(self, r: ResourceRoute) -> str:
        try:
            return tables.include_object(r.query)
        except tables.TableRefused as e:
            raise _status_answer(e.status) from None

    def _resource(self, method: str, r: ResourceRoute) -> None:
        if self.headers.get("Impersonate-Group") or self.headers.get("Impersonate-Uid"):
            raise rest.bad_request("impersonating groups or uids (kubectl --as-group, --as-uid) is not served by "
                                   "kmodel serve: use the user's own context in the kubeconfig")
        self._conversion()  # an Accept header the server cannot answer is refused before the request is made
        if r.resource.name == "pods" and r.subresource in containers.SUBRESOURCES:
            return self._container_stream(r)
        if r.verb == "watch":
            return self._watch(r)
        if r.verb == "deletecollection":
            return self._delete_collection(r)
        if r.verb == "delete":
            return self._delete(r, self._object_body(r, "DeleteOptions"))
        fields: dict[str, Any] = {}
        if r.verb in ("create", "update"):
            api_version, kind = ("autoscaling/v1", "Scale") if r.subresource == "scale" else \
                (r.resource.api_version, r.resource.kind)
            body = self._object_body(r, kind)
            if isinstance(body, dict) and r.subresource not in ("binding", "token"):
                # the decoder defaults a body's apiVersion and kind to the endpoint's (runtime.Decode's defaultGVK)
                body = {"apiVersion": api_version, "kind": kind, **body}
                body["apiVersion"] = body["apiVersion"] or api_version
                body["kind"] = body["kind"] or kind
            fields["body"] = body
        elif r.verb == "patch":
            ctype = self._media_type()
            if ctype not in PATCH_TYPES:
                raise _status_answer(unsupported_media_type(tuple(PATCH_TYPES)))
            kind = PATCH_TYPES[ctype]
            patch = self._body(tuple(PATCH_TYPES))
            fields["body"] = patch if kind == "merge" else PatchBody(kind, patch)
        response = self._ask(self._request(r, **fields))
        if r.subresource == "token" and response.code == 201:
            response = self._client_token(response)
        self._answer(response, r)

    def _client_token(self, response: Response) -> Response:
        """A TokenRequest's answer with the model's token exchanged for one drawn for this run (the client never
        holds a model token: kmodel.serve.credentials)."""
        status = response.body.status
        client_token = self.credentials.issue(status.token)
        return attrs.evolve(response, body=attrs.evolve(response.body, status=attrs.evolve(status, token=client_token)))

    def _delete(self, r: ResourceRoute, options: Any) -> None:
        options = options if isinstance(options, dict) else {}
        grace = rest.int_param(r.query, "gracePeriodSeconds")
        if grace is None and options.get("gracePeriodSeconds") is not None:
            grace = int(options["gracePeriodSeconds"])
        policy = r.query.get("propagationPolicy", "") or options.get("propagationPolicy") or ""
        orphan = options.get("orphanDependents")
        if orphan is None and r.query.get("orphanDependents", "") in ("true", "false"):
            orphan = r.query["orphanDependents"] == "true"
        if not policy and orphan is not None:
            policy = "Orphan" if orphan else "Background"
        pre = options.get("preconditions") or {}
        body = Preconditions(str(pre.get("uid") or ""), str(pre.get("resourceVersion") or "")) if pre else None
        try:
            dry = write_options.dry_run_of_body(options.get("dryRun"))  # kubectl sends DeleteOptions.dryRun
        except write_options.OptionsRefused as e:
            raise _status_answer(e.status) from None
        extra = {"dry_run": True} if dry else {}
        response = self._ask(self._request(r, grace_period_seconds=grace, propagation_policy=policy, body=body,
                                           **extra))
        if response.code == 200 and not isinstance(response.body, Status):
            obj = response.body
            if obj.metadata.deletion_timestamp is None and r.resource.name not in RETURNS_DELETED_OBJECT:
                details = {"name": obj.metadata.name, "kind": r.resource.name, "uid": obj.metadata.uid}
                if r.resource.group:
                    details["group"] = r.resource.group
                raise _Answer(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": details})
            if obj.metadata.deletion_timestamp is not None and orphan is False:
                # the delete handler's 202: not deleted yet (finalizers or a grace period hold the object), and the
                # client asked for its dependents' deletion with the legacy orphanDependents=false
                response = attrs.evolve(response, code=202)
        self._answer(response, r)

    def _delete_collection(self, r: ResourceRoute) -> None:
        options = self._object_body(r, "DeleteOptions")
        listed = self._ask(self._request(r, verb="list"))
        if listed.code >= 400:
            self._answer(listed, r)
        deleted = []
        for obj in listed.body.items:
            one = rest.ResourceRoute("delete", r.resource, obj.metadata.namespace, obj.metadata.name, "", r.query)
            try:
                self._delete(one, options)
            except _Answer as a:
                if a.code >= 400 and a.code != 404:
                    raise
                if a.code < 400 and a.body.get("kind") != "Status":
                    deleted.append(a.body)
                elif a.code < 400:
                    deleted.append(rest.body_json(obj, r.resource))
        raise _Answer(200, {"kind": f"{r.resource.kind}List", "apiVersion": r.resource.api_version,
                            "metadata": {"resourceVersion": listed.body.resource_version}, "items": deleted})

    def _container_stream(self, r: ResourceRoute) -> None:
        """log, exec, attach and portforward of a pod (kmodel.serve.containers): the pod is read through the model
        (so a missing pod is 404 and a requester who may not read it is refused), then the answer a kubelet-less
        API server gives."""
        got = self._ask(self._request(r, verb="get", subresource=""))
        if got.code >= 400:
            self._answer(got, r)
        status = containers.no_containers(r.subresource, got.body, r.query)
        if status is None:
            self._send_text(200, "")
            return
        raise _status_answer(status)

    def _watch(self, r: ResourceRoute) -> None:
        q = r.query
        request = self._request(r, allow_watch_bookmarks=q.get("allowWatchBookmarks", "") in ("true", "1"),
                                timeout_seconds=rest.int_param(q, "timeoutSeconds"))
        encode = self._watch_encoder(r)
        items, ticket = self.client.watch(request)
        try:
            kind, value = items.get(timeout=WATCH_FIRST_ANSWER_S)
        except queue.Empty:
            kind, value = "", None
        if kind == "end" and value is not None and value.code >= 400:
            raise _status_answer(value.body if isinstance(value.body, Status) else Status(value.code, "", ""))
        # the headers go out at once, as kube-apiserver flushes them: clients wait for them before they read on
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            if not kind:
                kind, value = self._next_watch_item(items)
            while kind == "event":
                self._chunk(encode(value))
                kind, value = self._next_watch_item(items)
            if kind == "gone":
                raise ConnectionResetError("the watch's client went away")
            if value is not None and value.code >= 400:  # refused after the headers: an ERROR event, as upstream
                status = value.body if isinstance(value.body, Status) else Status(value.code, "", "")
                self._chunk({"type": "ERROR", "object": rest.status_json(status)})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.client.cancel(ticket)
            self.close_connection = True

    def _watch_encoder(self, r: ResourceRoute) -> Callable[[WatchEvent], dict]:
        """How each event of a watch is written: its object as itself, as its metadata only (either metadata-only
        media type: a watch's events each carry one object), or as a Table of one row (the first event's Table
        alone carries the column definitions, as kube-apiserver's). An ERROR event's Status is written as it is;
        a BOOKMARK's Table has no row."""
        kind = self._conversion()
        if kind in (negotiation.PARTIAL, negotiation.PARTIAL_LIST):
            def metadata_only(event: WatchEvent) -> dict:
                doc = rest.watch_event_json(event, r.resource)
                if not isinstance(event.object, Status):
                    doc["object"] = partial.partial_object(doc["object"])
                return doc

            return metadata_only
        if kind != negotiation.TABLE:
            return lambda event: rest.watch_event_json(event, r.resource)
        include, first = self._include_object(r), [True]

        def as_table(event: WatchEvent) -> dict:
            if isinstance(event.object, Status):
                return rest.watch_event_json(event)
            objects = [] if event.type == "BOOKMARK" else [event.object]
            metadata = {"resourceVersion": event.object.metadata.resource_version}
            doc = tables.table(r.resource, objects, self.client.now(), include, metadata, with_columns=first[0])
            first[0] = False
            return {"type": event.type, "object": doc}

        return as_table

    def _next_watch_item(self, items: queue.SimpleQueue) -> tuple[str, Any]:
        """The next item of a watch; ("gone", None) once its client closed the connection. A client sends nothing
        on a connection while its watch's answer streams, so a connection that turns readable meanwhile was closed
        (or is being closed) by the client."""
        while True:
            try:
                return items.get(timeout=WATCH_IDLE_CHECK_S)
            except queue.Empty:
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable:
                    return "gone", None

    def _chunk(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":")).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        self.wfile.flush()


class APIHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type, model: Any) -> None:
        super().__init__(address, handler)
        self.model = model

    def model_alive(self) -> bool:
        return self.model.alive and self.model.error is None

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-handshake or mid-request: nothing to report


def make_server(model: Any, gateway: Gateway, credentials: Credentials, host: str = "127.0.0.1", port: int = 0,
                tls: Optional[ssl.SSLContext] = None) -> APIHTTPServer:
    """An HTTP server for `model` (a ModelThread) on host:port (0: a free port), HTTPS with `tls`, not yet
    serving; clients authenticate with the tokens of `credentials`."""
    client = ModelClient(model, gateway)
    handler = type("BoundHandler", (Handler,), {"client": client, "credentials": credentials, "address": ""})
    server = APIHTTPServer((host, port), handler, model)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    handler.address = f"{host}:{server.server_address[1]}"
    return server


def serve_in_thread(server: APIHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="kmodel-http", daemon=True)
    thread.start()
    return thread
