"""A user at a terminal: kubectl as a sans-IO component.

Commands come from outside the model (a test, the `kmodel simulate` command, the explorer's user actions):
`submit(command)` queues one, and the component runs them one at a time, in order, each as the kubectl
invocation it stands for, through its own `ApiClient` like any other client of the API:

    Apply(obj)                   kubectl apply -f: GET; 404 → POST the object; else PATCH (merge) it
    Scale(resource, ns, name, n) kubectl scale: PATCH {"spec": {"replicas": n}}
    Delete(resource, ns, name)   kubectl delete (--grace-period=N, --force: grace 0, --cascade=orphan|foreground)
    Patch(resource, ns, name, p) kubectl patch --type=merge -p P
    EditFinalizers(...)          kubectl edit of metadata.finalizers: GET, then a merge patch of the finalizers
                                 with one added or taken out, on the resourceVersion read (read again on a
                                 conflict, up to EDIT_TRIES times: the effect of kubectl's strategic merge patch)
    Get(resource, ns, name)      kubectl get

Each command may carry its own bearer token (kubectl --token / --as); "" uses the component's. Every answer
goes to `results` as a `CommandResult` (the command, the final response), in order, so a caller can tell
what was accepted and what was rejected, with Kubernetes' status.

`kubectl apply` proper sends a three-way strategic merge patch computed from the last-applied annotation;
the model sends the manifest itself as a JSON merge patch, which sets every field the manifest sets and
leaves the others (the README lists the difference).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Optional, Sequence, Union

import attrs

from kmodel.apiserver.resources import RESOURCES, Resource, resource_of
from kmodel.apiserver.wire import Response
from kmodel.client import ApiClient
from kmodel.client.component import ClientComponent
from kmodel.client.rate_limiter import KUBECTL_LIMIT
from kmodel.component import Out
from kmodel.network import Message
from kmodel.objects import dump

KUBECTL = "kubectl"
#: EditFinalizers' reads and patches before a conflict is given up on
EDIT_TRIES = 5


@attrs.frozen
class Apply:
    """Apply one manifest: a typed object, or a document as parsed from YAML (sent as it is, so the API
    server decodes it and rejects what it cannot use, as it does for kubectl)."""

    obj: Any
    token: str = ""


def resource_of_manifest(obj: Any) -> Optional[Resource]:
    """The resource a typed object or a manifest dict (apiVersion + kind) belongs to; None if unknown."""
    if not isinstance(obj, dict):
        return resource_of(obj)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for res in RESOURCES.values():
        if res.api_version == api_version and res.kind == kind:
            return res
    return None


def manifest_name(obj: Any) -> tuple[str, str]:
    """(namespace, name) of a typed object or a manifest dict."""
    if isinstance(obj, dict):
        meta = obj.get("metadata") or {}
        return str(meta.get("namespace") or ""), str(meta.get("name") or "")
    return obj.metadata.namespace, obj.metadata.name


@attrs.frozen
class Scale:
    resource: str
    namespace: str
    name: str
    replicas: int
    token: str = ""


@attrs.frozen
class Delete:
    """`grace_period_seconds`: DeleteOptions.gracePeriodSeconds (None: the object's own; 0 with --force);
    `propagation_policy`: "Orphan", "Background" or "Foreground" (kubectl --cascade=orphan|background|foreground;
    "": the server's default)."""

    resource: str
    namespace: str
    name: str
    token: str = ""
    grace_period_seconds: Optional[int] = None
    propagation_policy: str = ""


@attrs.frozen
class Patch:
    """A JSON merge patch of one object (kubectl patch --type=merge)."""

    resource: str
    namespace: str
    name: str
    patch: Any
    token: str = ""


@attrs.frozen
class Get:
    resource: str
    namespace: str
    name: str
    token: str = ""


@attrs.frozen
class EditFinalizers:
    """kubectl edit adding `finalizer` to metadata.finalizers (or taking it out, `add` False)."""

    resource: str
    namespace: str
    name: str
    finalizer: str
    add: bool = True
    token: str = ""


Command = Union[Apply, Scale, Delete, Patch, EditFinalizers, Get]


@attrs.frozen
class CommandResult:
    command: Command
    response: Response

    @property
    def ok(self) -> bool:
        return self.response.code < 400


def describe(command: Command) -> str:
    """`deployment.apps/web` style name of what a command acts on."""
    if isinstance(command, Apply):
        res = resource_of_manifest(command.obj)
        name = manifest_name(command.obj)[1]
        kind, group = (res.kind.lower(), res.group) if res else ("unknown", "")
    else:
        kind, group, name = command.resource, "", command.name
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


class Kubectl(ClientComponent):
    """Runs submitted commands one at a time. See the module docstring."""

    def __init__(self, endpoints: Sequence[str], *, token: str = "admin-token", name: str = KUBECTL) -> None:
        super().__init__(name)
        self.default_token = token
        self.client = ApiClient(name, endpoints, token=token, rate_limit=KUBECTL_LIMIT)
        self.pending: deque[Command] = deque()
        self.results: list[CommandResult] = []
        self.current: Optional[Command] = None  # the command whose answer is awaited

    def submit(self, command: Command) -> None:
        """Queue a command (the caller tells the loop: `loop.notify_work(kubectl.name)`)."""
        self.pending.append(command)

    @property
    def busy(self) -> bool:
        return self.current is not None

    @property
    def idle(self) -> bool:
        return not self.busy and not self.pending

    def unanswered(self) -> list[Command]:
        """The command awaiting its answer, then the queued ones."""
        return ([self.current] if self.current is not None else []) + list(self.pending)

    # -- component protocol ------------------------------------------------------------------------------

    def has_work(self) -> bool:
        return bool(self.pending) and not self.busy

    def work(self, now: int, out: Out) -> None:
        command = self.pending.popleft()
        self.current = command
        self.client.token = command.token or self.default_token
        if isinstance(command, Apply):
            self._apply(now, out, command)
        elif isinstance(command, Scale):
            self.client.patch(now, out, command.resource, command.name, {"spec": {"replicas": command.replicas}},
                              namespace=command.namespace, on_done=self._finisher(command))
        elif isinstance(command, Delete):
            self.client.delete(now, out, command.resource, command.name, namespace=command.namespace,
                               grace_period_seconds=command.grace_period_seconds,
                               propagation_policy=command.propagation_policy, on_done=self._finisher(command))
        elif isinstance(command, EditFinalizers):
            self._edit_finalizers(now, out, command)
        elif isinstance(command, Patch):
            self.client.patch(now, out, command.resource, command.name, command.patch, namespace=command.namespace,
                              on_done=self._finisher(command))
        else:
            self.client.get(now, out, command.resource, command.name, namespace=command.namespace,
                            on_done=self._finisher(command))

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        self.client.on_timer(now, name, out)

    def crash(self) -> None:
        # the invocation in progress dies with the process; queued commands are the user's, not memory
        self.client.reset()
        self.current = None

    # -- commands ----------------------------------------------------------------------------------------

    def _finisher(self, command: Command):
        def done(now: int, response: Response, out: Out) -> None:
            self.results.append(CommandResult(command, response))
            self.current = None
        return done

    def _apply(self, now: int, out: Out, command: Apply) -> None:
        obj = command.obj
        res = resource_of_manifest(obj)
        if res is None:
            raise ValueError(f"no API resource for {obj.get('apiVersion')}/{obj.get('kind')}")
        body = obj if isinstance(obj, dict) else dump(obj)
        ns, name = manifest_name(obj)
        namespace = (ns or "default") if res.namespaced else ""

        def got(t: int, response: Response, o: Out) -> None:
            if response.code == 404:
                self.client.request(t, o, "create", res.name, namespace=namespace, body=body,
                                    on_done=self._finisher(command))
            elif response.code == 200:
                patch = {k: v for k, v in body.items() if k not in ("status", "apiVersion", "kind")}
                self.client.patch(t, o, res.name, name, patch, namespace=namespace,
                                  on_done=self._finisher(command))
            else:
                self._finisher(command)(t, response, o)

        self.client.get(now, out, res.name, name, namespace=namespace, on_done=got)

    def _edit_finalizers(self, now: int, out: Out, command: EditFinalizers, tries: int = EDIT_TRIES) -> None:
        """GET, then the merge patch on the resourceVersion read; a conflict (the object moved in between) reads
        again, as the strategic merge patch kubectl sends (one finalizer added or deleted from the list) would
        be applied to the object as it is then."""
        def got(t: int, response: Response, o: Out) -> None:
            if response.code != 200:
                self._finisher(command)(t, response, o)
                return
            meta = response.body.metadata
            finalizers = [f for f in meta.finalizers if f != command.finalizer]
            if command.add:
                finalizers.append(command.finalizer)
            patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta.resource_version}}

            def patched(t2: int, r: Response, o2: Out) -> None:
                if r.code == 409 and tries > 1:
                    self._edit_finalizers(t2, o2, command, tries - 1)
                else:
                    self._finisher(command)(t2, r, o2)

            self.client.patch(t, o, command.resource, command.name, patch, namespace=command.namespace,
                              on_done=patched)

        self.client.get(now, out, command.resource, command.name, namespace=command.namespace, on_done=got)
