"""The colliding-request action: one HTTP request to the API, as any client sends it, by a user or a second component.

Theory of operation
-------------------
The components of a cluster make requests a user can make too: a scheduler's binding, a kubelet's status write
and Lease renewal, an informer's list with a selector at a resourceVersion. `SendRequest` is one such request,
sent through kubectl's raw mode (`kmodel.cluster.kubectl.Raw`: no read first, the body as given) with the
bearer token of the actor it is made as:

* `admin` (the cluster admin, kubectl's own token), `alice` (a user with no rights of her own until a binding
  grants some: 403), `system:kube-scheduler` (a second scheduler, with the scheduler's rights: a binding it
  sends races the real one's), `system:node:<node>` (a second kubelet of that node, under NodeRestriction: a
  status write of a pod bound elsewhere is refused);
* the request carries everything the wire carries: verb, resource, namespace, name, subresource, the body as
  canonical JSON text (sorted keys, no spaces: a trace shows what was sent and replays without reading the
  cluster), a read's resourceVersion, a list's label and field selectors.

The rules (kmodel.checker.collide_rules) draw the values from the small pools of kmodel.checker.draws, so that
they meet what is there: a binding of a pod already bound or being deleted, a status write or Lease update on a
resourceVersion gone stale, a list at a resourceVersion the cache has not reached, a selector with an operator
the parser refuses, a Service asking for a ClusterIP another Service holds. Each answer (201, 400, 403, 409, 422,
504) is kubectl's recorded result.

`ApplySizedPod` is the user's side of a node near its capacity: a bare pod sized from what a node has left (its
allocatable less the requests of the pods bound to it, worked out when the rule runs), exactly that or one unit
more, or asking for a resource the node does not have (with the limit an extended resource needs), or the host
port a pod there holds; pinned to the node (the kubelet's admission judges it) or sent to it through the
scheduler (its filters judge it).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Optional
from urllib.parse import quote

import attrs

from kmodel.apiserver.authentication import NODE_PREFIX, node_token
from kmodel.apiserver.resources import RESOURCES
from kmodel.checker.access_actions import one_of
from kmodel.checker.actions import IMAGE, Action
from kmodel.checker.patch_actions import canonical_json
from kmodel.checker.simpler import Simplest, default
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply, Raw
from kmodel.loop.events import at_least

ADMIN = "admin"
#: the label every node carries with its name (the kubelet sets it), which a pod's nodeSelector can name
HOSTNAME_LABEL = "kubernetes.io/hostname"
SCHEDULER = "system:kube-scheduler"
#: who a request is made as, simplest first; a kubelet is `system:node:<node>` of a drawn node
ACTORS: tuple[str, ...] = (ADMIN, "alice", SCHEDULER, NODE_PREFIX)
#: the tokens of the fixed actors ("": kubectl's own, the admin's)
_TOKENS = {ADMIN: "", "alice": "alice-token", SCHEDULER: "scheduler-token"}
VERBS: tuple[str, ...] = ("get", "list", "create", "update")
_METHODS = {"get": "GET", "list": "GET", "create": "POST", "update": "PUT"}


def token_for(actor: str) -> str:
    """The bearer token `actor` sends (a kubelet's is its node's)."""
    if actor.startswith(NODE_PREFIX):
        return node_token(actor[len(NODE_PREFIX):])
    return _TOKENS[actor]


def _actor(instance: Any, attribute: Any, value: str) -> None:
    if value not in _TOKENS and not (value.startswith(NODE_PREFIX) and len(value) > len(NODE_PREFIX)):
        raise ValueError(f"actor must be one of {', '.join(map(repr, _TOKENS))} or 'system:node:<node>', not {value!r}")


def _body(value: Any) -> str:
    return "" if value in ("", None) else canonical_json(value)


def request_path(resource: str, namespace: str, name: str, subresource: str) -> str:
    """The request's URL path, as kube-apiserver serves it (/api/v1/... or /apis/<group>/<version>/...)."""
    res = RESOURCES.get(resource)
    version = res.api_version if res else "v1"
    path = f"/api/{version}" if "/" not in version else f"/apis/{version}"
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{resource}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


@attrs.frozen
class SendRequest(Action):
    """One request of `verb` on `resource` (see the module docstring), made as `actor`."""

    kind: ClassVar[str] = "send-request"
    simplest: ClassVar[Simplest] = (("actor", default(ADMIN)), ("label_selector", default("")),
                                    ("field_selector", default("")), ("resource_version", default("")))
    verb: str = attrs.field(validator=one_of(VERBS))
    resource: str = attrs.field(validator=one_of(sorted(RESOURCES)))
    namespace: str = ""
    object: str = ""
    subresource: str = ""
    body: str = attrs.field(default="", converter=_body)
    resource_version: str = ""
    label_selector: str = ""
    field_selector: str = ""
    actor: str = attrs.field(default=ADMIN, validator=_actor)

    @property
    def name(self) -> str:
        query = [f"{key}={quote(value, safe='=!,()')}" for key, value in (
            ("labelSelector", self.label_selector), ("fieldSelector", self.field_selector),
            ("resourceVersion", self.resource_version)) if value]
        line = f"{_METHODS[self.verb]} {request_path(self.resource, self.namespace, self.object, self.subresource)}"
        if query:
            line += "?" + "&".join(query)
        if self.body:
            line += f" {self.body}"
        return line + ("" if self.actor == ADMIN else f" (as {self.actor})")

    def apply(self, cluster: Cluster) -> None:
        body: Optional[Any] = json.loads(self.body) if self.body else None
        cluster.submit(Raw(self.verb, self.resource, self.namespace, self.object, self.subresource, body,
                           self.resource_version, self.label_selector, self.field_selector, token_for(self.actor)))


@attrs.frozen
class ApplySizedPod(Action):
    """kubectl apply of a bare pod of the apps' image that requests `quantity` of `resource` (none when ""), with a
    host port (`host_port`, over `protocol` on `host_ip`: 0 for none), placed on `node`: pinned there
    (spec.nodeName: the kubelet's admission alone judges it, and rejects a pod that does not fit with OutOfcpu,
    OutOfmemory, ... or a host port in use) or by the scheduler (a nodeSelector on the node's hostname: its
    filters judge it, and a pod that does not fit stays Pending, Unschedulable)."""

    kind: ClassVar[str] = "apply-sized-pod"
    simplest: ClassVar[Simplest] = (("pinned", default(False)), ("host_port", default(0)),
                                    (("resource", "quantity"), lambda v: () if v == ("", "") else (("", ""),)))
    pod: str
    node: str
    pinned: bool = False
    resource: str = ""
    quantity: str = ""
    host_port: int = at_least(0, default=0)
    protocol: str = attrs.field(default="TCP", validator=one_of(("TCP", "UDP", "SCTP")))
    host_ip: str = ""

    @property
    def name(self) -> str:
        where = f"pinned to {self.node}" if self.pinned else f"nodeSelector hostname={self.node}"
        parts = [where]
        if self.resource:
            parts.append(f"requests {self.resource}={self.quantity}")
        if self.host_port:
            parts.append(f"hostPort {self.host_port}/{self.protocol}" + (f" on {self.host_ip}" if self.host_ip else ""))
        return f"kubectl apply pod {self.pod} ({'; '.join(parts)})"

    def manifest(self) -> dict:
        container: dict[str, Any] = {"name": "app", "image": IMAGE, "ports": [{"containerPort": 80}]}
        if self.host_port:
            port = container["ports"][0]
            port.update({"hostPort": self.host_port, "protocol": self.protocol})
            if self.host_ip:
                port["hostIP"] = self.host_ip
        if self.resource:
            container["resources"] = {"requests": {self.resource: self.quantity}}
            if "/" in self.resource:  # an extended resource cannot be overcommitted: its limit is required, equal
                container["resources"]["limits"] = {self.resource: self.quantity}
        spec: dict[str, Any] = {"containers": [container]}
        if self.pinned:
            spec["nodeName"] = self.node
        else:
            spec["nodeSelector"] = {HOSTNAME_LABEL: self.node}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": self.pod, "namespace": "default", "labels": {"run": self.pod}}, "spec": spec}

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(self.manifest()))
