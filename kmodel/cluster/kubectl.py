"""A user at a terminal: kubectl as a sans-IO component.

Commands come from outside the model (a test, the `kmodel simulate` command, the explorer's user actions):
`submit(command)` queues one, and the component runs them one at a time, in order, each as the kubectl
invocation it stands for, through its own `ApiClient` like any other client of the API:

    Apply(obj)                   kubectl apply -f: GET; 404 → POST the object; else PATCH (merge) it;
                                 with server_side, kubectl apply --server-side: one apply PATCH as manager "kubectl"
    Scale(resource, ns, name, n) kubectl scale: PATCH <name>/scale {"spec": {"replicas": n}}
    Delete(resource, ns, name)   kubectl delete (--grace-period=N, --force: grace 0, --cascade=orphan|foreground)
    EditFinalizers(...)          kubectl edit of metadata.finalizers: GET, then a merge patch of the finalizers
                                 with one added or taken out, on the resourceVersion read (read again on a
                                 conflict, up to EDIT_TRIES times: the effect of kubectl's strategic merge patch)
    Get(resource, ns, name)      kubectl get
    CreateToken(ns, name, ...)   kubectl create token: POST serviceaccounts/<name>/token, and with `then` a Get
                                 sent with the token it answered (kubectl --token=$(kubectl create token ...))
    Patch(resource, ns, name, p) kubectl patch --type=merge|json|strategic (merge by default here), and what kubectl
                                 label, cordon/uncordon and rollout pause/resume send (a merge patch of the
                                 fields they change); a JSON patch or strategic merge patch goes as the wire's
                                 PatchBody (its Content-Type), a merge patch as the plain dict
    TaintNode(node, key, ...)    kubectl taint nodes: GET the Node, reorganise its taints as kubectl does
                                 (ReorganizeTaints), PATCH spec.taints (a list replaced whole)
    RolloutUndo(ns, name, rev)   kubectl rollout undo deployment: GET it, LIST its ReplicaSets, PATCH the chosen
                                 revision's template (and annotations) back into it
    Raw(verb, resource, ...)     one request as any HTTP client of the API sends it (kubectl get --raw, create
                                 --raw, replace --raw; curl with a bearer token): any verb, subresource,
                                 resourceVersion and selectors, the body as given, no read first

A command kubectl refuses before sending anything (a rollback of a paused Deployment, a taint to remove that is not
there) gets a result whose response has code 0 and a Status of reason `KubectlError` (`CommandResult.ok` is
False): no request left the terminal, so nothing changed.

Each write names the field manager kubectl names it with (`MANAGERS`: kubectl-client-side-apply, kubectl-scale,
kubectl-patch, kubectl-edit, kubectl-taint, kubectl-rollout; kubectl for a server-side apply), so the objects a user
writes carry managedFields as kubectl's do.

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
from kmodel.apiserver.wire import PatchBody, Response, Status
from kmodel.client import ApiClient
from kmodel.client.component import ClientComponent
from kmodel.client.rate_limiter import KUBECTL_LIMIT
from kmodel.component import Out
from kmodel.network import Message
from kmodel.objects import Taint, dump, dump_struct
from kmodel.apiserver.customresources import established, resource_for
from kmodel.controllers.deployment_logic import POD_TEMPLATE_HASH_LABEL, _SKIP_COPY, revision

KUBECTL = "kubectl"
#: the fieldManager each kubectl command sends (its default, from k8s.io/kubectl/pkg/cmd/*)
MANAGERS = {"apply": "kubectl-client-side-apply", "server-side-apply": "kubectl", "scale": "kubectl-scale",
            "patch": "kubectl-patch", "edit": "kubectl-edit", "taint": "kubectl-taint", "rollout": "kubectl-rollout"}
#: EditFinalizers' reads and patches before a conflict is given up on
EDIT_TRIES = 5


@attrs.frozen
class Apply:
    """Apply one manifest: a typed object, or a document as parsed from YAML (sent as it is, so the API
    server decodes it and rejects what it cannot use, as it does for kubectl)."""

    obj: Any
    token: str = ""
    server_side: bool = False  # kubectl apply --server-side (without --force-conflicts)


def resource_of_manifest(obj: Any) -> Optional[Resource]:
    """The resource a typed object or a manifest dict (apiVersion + kind) belongs to; None if unknown."""
    if not isinstance(obj, dict):
        return resource_of(obj)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for res in RESOURCES.values():
        if res.api_version == api_version and res.kind == kind:
            return res
    return None


def custom_resource_of_manifest(obj: Any, crds: Sequence[Any]) -> Optional[Resource]:
    """The custom resource an Established CRD among `crds` serves for a manifest's apiVersion and kind."""
    if not isinstance(obj, dict):
        return None
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    for crd in crds:
        served = crd.version(version)
        if (crd.spec.group == group and crd.status.accepted_names.kind == obj.get("kind") and established(crd)
                and served is not None and served.served):
            return resource_for(crd)
    return None


def unmapped_message(obj: dict, source: str) -> str:
    """kubectl's error for a manifest whose kind discovery does not know (resource builder, NoKindMatch); kubectl
    prints it followed by a line `ensure CRDs are installed first`."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return (f'resource mapping not found for name: "{meta.get("name", "")}" namespace: "{meta.get("namespace", "")}" '
            f'from "{source}": no matches for kind "{obj.get("kind")}" in version "{obj.get("apiVersion")}"')


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
class Get:
    resource: str
    namespace: str
    name: str
    token: str = ""


#: kubectl patch --type's values, as kubectl lists them in its error for another
PATCH_TYPES: tuple[str, ...] = ("json", "merge", "strategic")


@attrs.frozen
class Patch:
    """kubectl patch --type=`type`: one PATCH of `patch`, a JSON merge patch (RFC 7386, "merge": a dict in the
    object's JSON shape), a JSON patch (RFC 6902, "json": a list of operations) or a strategic merge patch
    ("strategic"). kubectl refuses another type before sending anything."""

    resource: str
    namespace: str
    name: str
    patch: Any = attrs.field(eq=False)
    token: str = ""
    subresource: str = ""  # kubectl patch --subresource=status|scale
    type: str = "merge"


@attrs.frozen
class Raw:
    """One request of `verb` ("get", "list", "create", "update", "patch", "delete") on `resource`, as an HTTP client
    sends it: `subresource` ("status", "binding", ...), `body` (the object's JSON shape, sent as it is),
    `resource_version` (a read's ?resourceVersion=), `label_selector` and `field_selector` (a list's). What the
    components send, sent by a user or a second controller."""

    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    body: Any = attrs.field(default=None, eq=False)
    resource_version: str = ""
    label_selector: str = ""
    field_selector: str = ""
    token: str = ""


@attrs.frozen
class TaintNode:
    """kubectl taint nodes `node` key=value:effect --overwrite, or with `remove`, key:effect- (key- when
    `effect` is ""): the Node is read, its taints reorganised as kubectl's ReorganizeTaints does (the new taint
    first, then the old ones it does not replace; a removal drops every taint of the key, and of the effect if
    given), and spec.taints patched as a whole (the list has no patch strategy: kubectl's two-way patch
    replaces it). kubectl refuses a removal that matches no taint (`taint "k:E" not found`)."""

    node: str
    key: str
    value: str = ""
    effect: str = "NoSchedule"
    remove: bool = False
    token: str = ""


@attrs.frozen
class RolloutUndo:
    """kubectl rollout undo deployment/`name` [--to-revision=`to_revision`] (polymorphichelpers'
    DeploymentRollbacker): refused for a paused Deployment; otherwise the ReplicaSets it controls are listed,
    the one of `to_revision` (0: the second newest revision) is chosen, and unless its template already is the
    Deployment's (pod-template-hash aside: "skipped rollback") the Deployment's template is replaced by it, the
    hash label dropped, and its annotations replaced by kubectl's rollback set (the Deployment's own revision
    annotations, the ReplicaSet's others)."""

    namespace: str
    name: str
    to_revision: int = 0
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


@attrs.frozen
class CreateToken:
    """kubectl create token `name` -n `namespace` [--duration]: POST serviceaccounts/<name>/token (a TokenRequest,
    expirationSeconds `expiration_seconds` or the server's default). With `then`, that Get runs next with the
    token the answer carries, as `kubectl --token=$(kubectl create token ...) get ...` (its answer is the result)."""

    namespace: str
    name: str
    expiration_seconds: Optional[int] = None
    then: Optional[Get] = None
    token: str = ""


Command = Union[Apply, Scale, Delete, Get, Patch, TaintNode, RolloutUndo, EditFinalizers, CreateToken, Raw]

#: the reason of a command kubectl refused before sending any request (CommandResult of code 0)
KUBECTL_ERROR = "KubectlError"


@attrs.frozen
class CommandResult:
    command: Command
    response: Response

    @property
    def ok(self) -> bool:
        """Did the API accept it (a command kubectl refused itself, or one never answered, has code 0)?"""
        return 0 < self.response.code < 400


def describe(command: Command) -> str:
    """`deployment.apps/web` style name of what a command acts on."""
    if isinstance(command, Apply):
        res = resource_of_manifest(command.obj)
        name = manifest_name(command.obj)[1]
        if res is not None:
            kind, group = res.kind.lower(), res.group
        elif isinstance(command.obj, dict):  # a custom kind: its group is its apiVersion's
            kind = str(command.obj.get("kind") or "unknown").lower()
            group = str(command.obj.get("apiVersion") or "").rpartition("/")[0]
        else:
            kind, group = "unknown", ""
    elif isinstance(command, TaintNode):
        kind, group, name = "node", "", command.node
    elif isinstance(command, RolloutUndo):
        kind, group, name = "deployment", "apps", command.name
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
            # kubectl scale patches the scale subresource (ScaleClient.Patch, a merge patch of the Scale)
            self.client.patch(now, out, command.resource, command.name, {"spec": {"replicas": command.replicas}},
                              namespace=command.namespace, subresource="scale", on_done=self._finisher(command),
                              field_manager=MANAGERS["scale"])
        elif isinstance(command, Patch):
            self._patch(now, out, command)
        elif isinstance(command, TaintNode):
            self._taint(now, out, command)
        elif isinstance(command, RolloutUndo):
            self._rollout_undo(now, out, command)
        elif isinstance(command, Delete):
            self.client.delete(now, out, command.resource, command.name, namespace=command.namespace,
                               grace_period_seconds=command.grace_period_seconds,
                               propagation_policy=command.propagation_policy, on_done=self._finisher(command))
        elif isinstance(command, EditFinalizers):
            self._edit_finalizers(now, out, command)
        elif isinstance(command, CreateToken):
            self._create_token(now, out, command)
        elif isinstance(command, Raw):
            self.client.request(now, out, command.verb, command.resource, namespace=command.namespace,
                                name=command.name, subresource=command.subresource, body=command.body,
                                resource_version=command.resource_version, label_selector=command.label_selector,
                                field_selector=command.field_selector, on_done=self._finisher(command))
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

    def _create_token(self, now: int, out: Out, command: CreateToken) -> None:
        spec = {} if command.expiration_seconds is None else {"expirationSeconds": command.expiration_seconds}
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}

        def issued(t: int, response: Response, o: Out) -> None:
            then = command.then
            if not response.ok or then is None:
                self._finisher(command)(t, response, o)
                return
            self.client.token = response.body.status.token
            self.client.get(t, o, then.resource, then.name, namespace=then.namespace,
                            on_done=self._finisher(command))

        self.client.request(now, out, "create", "serviceaccounts", namespace=command.namespace, name=command.name,
                            subresource="token", body=body, on_done=issued)

    def _apply(self, now: int, out: Out, command: Apply) -> None:
        obj = command.obj
        res = resource_of_manifest(obj)
        if res is None:
            self._discover(now, out, command)
            return
        self._apply_as(now, out, command, res)

    def _discover(self, now: int, out: Out, command: Apply) -> None:
        """A kind the built-in table does not have: kubectl's discovery (here a LIST of the CRDs, standing in for
        GET /apis) maps it to an Established custom resource, or kubectl refuses it as unmapped."""
        obj = command.obj

        def got(t: int, response: Response, o: Out) -> None:
            if not response.ok:
                self._finisher(command)(t, response, o)
                return
            res = custom_resource_of_manifest(obj, response.body.items)
            if res is None:
                self._refuse(t, o, command, unmapped_message(obj, "STDIN") + "\nensure CRDs are installed first")
            else:
                self._apply_as(t, o, command, res)

        self.client.list(now, out, "customresourcedefinitions", on_done=got)

    def _apply_as(self, now: int, out: Out, command: Apply, res: Resource) -> None:
        obj = command.obj
        body = obj if isinstance(obj, dict) else dump(obj)
        ns, name = manifest_name(obj)
        namespace = (ns or "default") if res.namespaced else ""
        if command.server_side:
            self.client.apply(now, out, res.name, name, body, namespace=namespace,
                              field_manager=MANAGERS["server-side-apply"], on_done=self._finisher(command))
            return
        manager = MANAGERS["apply"]

        def got(t: int, response: Response, o: Out) -> None:
            if response.code == 404:
                self.client.request(t, o, "create", res.name, namespace=namespace, body=body,
                                    on_done=self._finisher(command), field_manager=manager)
            elif response.code == 200:
                patch = {k: v for k, v in body.items() if k not in ("status", "apiVersion", "kind")}
                self.client.patch(t, o, res.name, name, patch, namespace=namespace,
                                  on_done=self._finisher(command), field_manager=manager)
            else:
                self._finisher(command)(t, response, o)

        self.client.get(now, out, res.name, name, namespace=namespace, on_done=got)

    def _patch(self, now: int, out: Out, command: Patch) -> None:
        if command.type not in PATCH_TYPES:  # kubectl patch's usage error (cmd/patch: patchTypes)
            self._refuse(now, out, command, f"--type must be one of [{' '.join(PATCH_TYPES)}], not \"{command.type}\"")
            return
        body = command.patch if command.type == "merge" else PatchBody(command.type, command.patch)
        self.client.patch(now, out, command.resource, command.name, body, namespace=command.namespace,
                          subresource=command.subresource, on_done=self._finisher(command),
                          field_manager=MANAGERS["patch"])

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
                              on_done=patched, field_manager=MANAGERS["edit"])

        self.client.get(now, out, command.resource, command.name, namespace=command.namespace, on_done=got)

    def _refuse(self, now: int, out: Out, command: Command, message: str) -> None:
        """kubectl stops with an error before sending a write: recorded as a result of code 0."""
        self._finisher(command)(now, Response(0, 0, Status(0, KUBECTL_ERROR, message)), out)

    def _taint(self, now: int, out: Out, command: TaintNode) -> None:
        def got(t: int, response: Response, o: Out) -> None:
            if response.code != 200:
                self._finisher(command)(t, response, o)
                return
            taints, error = reorganize_taints(response.body.spec.taints, command)
            if error:
                self._refuse(t, o, command, error)
                return
            body = [dump_struct(taint) for taint in taints] or None
            self.client.patch(t, o, "nodes", command.node, {"spec": {"taints": body}},
                              on_done=self._finisher(command), field_manager=MANAGERS["taint"])

        self.client.get(now, out, "nodes", command.node, on_done=got)

    def _rollout_undo(self, now: int, out: Out, command: RolloutUndo) -> None:
        ns, name = command.namespace, command.name

        def got(t: int, response: Response, o: Out) -> None:
            if response.code != 200:
                self._finisher(command)(t, response, o)
                return
            deployment = response.body
            if deployment.spec.paused:
                self._refuse(t, o, command, "you cannot rollback a paused deployment; resume it first with "
                                            "'kubectl rollout resume' and try again")
                return
            self.client.list(t, o, "replicasets", namespace=ns,
                             on_done=lambda t2, r2, o2: listed(t2, r2, o2, deployment))

        def listed(t: int, response: Response, o: Out, deployment: Any) -> None:
            if response.code != 200:
                self._finisher(command)(t, response, o)
                return
            rs, error = revision_to_restore(deployment, response.body.items, command.to_revision)
            if error:
                self._refuse(t, o, command, error)
                return
            patch = rollback_patch(deployment, rs)
            if patch is None:  # kubectl prints "skipped rollback" and exits 0, having written nothing
                self._finisher(command)(t, Response(0, 200, deployment), o)
                return
            self.client.patch(t, o, "deployments", name, patch, namespace=ns, on_done=self._finisher(command),
                              field_manager=MANAGERS["rollout"])

        self.client.get(now, out, "deployments", name, namespace=ns, on_done=got)


# -- what kubectl computes before it writes -------------------------------------------------------------------

def reorganize_taints(old: Sequence[Taint], command: TaintNode) -> tuple[list[Taint], str]:
    """The node's taints after `command` (kubectl's ReorganizeTaints, with --overwrite), or an error."""
    if command.remove:
        kept = [t for t in old if not (t.key == command.key and (not command.effect or t.effect == command.effect))]
        if len(kept) == len(old):
            spec = f"{command.key}:{command.effect}" if command.effect else command.key
            return [], f'taint "{spec}" not found'
        return kept, ""
    new = Taint(key=command.key, value=command.value, effect=command.effect)
    return [new, *(t for t in old if not (t.key == new.key and t.effect == new.effect))], ""


def revision_to_restore(deployment: Any, replicasets: Sequence[Any], to_revision: int) -> tuple[Any, str]:
    """deploymentRevision: the ReplicaSet of `to_revision` among those `deployment` controls (0: the second
    newest revision), or an error."""
    uid = deployment.metadata.uid
    latest: tuple[int, Any] = (-1, None)
    previous: tuple[int, Any] = (-1, None)
    for rs in replicasets:
        if not any(ref.controller and ref.uid == uid for ref in rs.metadata.owner_references):
            continue
        try:
            v = revision(rs)
        except ValueError:
            continue
        if to_revision == 0:
            if latest[0] < v:
                previous, latest = latest, (v, rs)
            elif previous[0] < v:
                previous = (v, rs)
        elif to_revision == v:
            return rs, ""
    if to_revision > 0:
        return None, f"unable to find specified revision {to_revision} in history"
    if previous[1] is None:
        return None, f'no rollout history found for deployment "{deployment.metadata.name}"'
    return previous[1], ""


def _without_hash(template: Any) -> dict:
    body = dump_struct(template)
    labels = dict(body.get("metadata", {}).get("labels", {}))
    labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    if labels:
        body.setdefault("metadata", {})["labels"] = labels
    elif "labels" in body.get("metadata", {}):
        del body["metadata"]["labels"]
    return body


def replacing_patch(old: Any, new: Any) -> Any:
    """A JSON merge patch that turns `old` into `new` exactly (null for every key `new` drops): what kubectl's
    JSON patch `replace` of the whole value does, in the merge patch the model's API server speaks."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict = {k: None for k in old if k not in new}
    for k, v in new.items():
        if k not in old:
            patch[k] = v
        elif old[k] != v:
            patch[k] = replacing_patch(old[k], v)
    return patch


def rollback_patch(deployment: Any, rs: Any) -> Optional[dict]:
    """The patch rollout undo sends to restore `rs`'s template into `deployment`, or None when the templates are
    equal already (equalIgnoreHash)."""
    current, wanted = _without_hash(deployment.spec.template), _without_hash(rs.spec.template)
    if current == wanted:
        return None
    old_ann = dict(deployment.metadata.annotations)
    annotations = {k: v for k, v in old_ann.items() if k in _SKIP_COPY}
    annotations.update({k: v for k, v in rs.metadata.annotations.items() if k not in _SKIP_COPY})
    patch: dict = {"spec": {"template": replacing_patch(current, wanted)}}
    ann_patch = replacing_patch(old_ann, annotations)
    if ann_patch:
        patch["metadata"] = {"annotations": ann_patch}
    return patch
