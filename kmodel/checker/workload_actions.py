"""Workload actions: the user's edits of nodes, pods, Services and Deployments, beyond applying and deleting them.

Theory of operation
-------------------
Each action is one kubectl invocation, sent through the cluster's kubectl component (`Cluster.submit`), as a user
at a terminal would type it: ``kubectl label node``, ``kubectl taint``, ``kubectl cordon``/``uncordon``, ``kubectl
label pod``, ``kubectl patch service``/``deployment``, ``kubectl rollout pause``/``resume``/``undo``, and
``kubectl apply`` of a bare pod built from a few small numbers (`pod_shape_manifest`) or of a manifest the API
refuses (`INVALID_MANIFESTS`). kubectl label, cordon, pause and resume send the merge patch of the fields they
change (kmodel.cluster.kubectl.Patch); taint and rollout undo read first and write what kubectl computes
(`TaintNode`, `RolloutUndo`).

The feature tables below are ordered simplest first: a rule's draw is an index into one of them, so a failure
shrinks toward the first row (the first node, the zone label, a NoSchedule taint, a pod with no extras), and
each action's `simplest` leads minimization toward it too (kmodel.checker.simpler).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from kmodel.checker.actions import (
    APPS, BARE_PODS, IMAGE, Action, app_container, deployment_manifest, service_manifest,
)
from kmodel.checker.simpler import Simplest, default, each, earlier, earlier_node, fewer
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply, Patch, RolloutUndo, TaintNode
from kmodel.loop.events import at_least

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_DISK = "disktype"
#: a whole-number label, as node-feature-discovery puts on nodes: the one a Gt or Lt node-affinity term compares
LABEL_CORES = "example.com/cores"

#: label_node's choices: (key, value), "" removing the label (kubectl label node N key-)
NODE_LABELS: tuple[tuple[str, str], ...] = (
    (LABEL_ZONE, "zone-a"), (LABEL_ZONE, "zone-b"), (LABEL_REGION, "region-1"), (LABEL_DISK, "ssd"),
    (LABEL_CORES, "4"), (LABEL_ZONE, ""), (LABEL_REGION, ""), (LABEL_DISK, ""),
)

TAINT_KEY = "dedicated"
#: the taint a cordoned node stands for (node.kubernetes.io/unschedulable:NoSchedule)
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_VALUE = "infra"
#: taint_node's choices: (effect, remove); a removal with effect "" removes every taint of the key
NODE_TAINTS: tuple[tuple[str, bool], ...] = (
    ("NoSchedule", False), ("NoExecute", False), ("PreferNoSchedule", False), ("", True), ("NoExecute", True),
)


# -- nodes -----------------------------------------------------------------------------------------------------

def label_patch(key: str, value: str) -> dict:
    """The merge patch kubectl label sends: the key set (--overwrite), or removed (`key-`) when `value` is ""."""
    return {"metadata": {"labels": {key: value or None}}}


@attrs.frozen
class LabelNode(Action):
    """kubectl label node `node` key=value --overwrite (key- when `value` is "")."""

    kind: ClassVar[str] = "label-node"
    simplest: ClassVar[Simplest] = (
        ("node", earlier_node()), (("key", "value"), earlier(NODE_LABELS)))
    node: str
    key: str
    value: str = ""

    @property
    def name(self) -> str:
        arg = f"{self.key}={self.value} --overwrite" if self.value else f"{self.key}-"
        return f"kubectl label node {self.node} {arg}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("nodes", "", self.node, label_patch(self.key, self.value)))


@attrs.frozen
class TaintNodeAction(Action):
    """kubectl taint nodes `node` key=value:effect --overwrite, or with `remove` key:effect- (key- when `effect` is
    ""). NoSchedule keeps new pods off (TaintToleration), NoExecute also evicts the running ones that do not
    tolerate it (taint eviction), PreferNoSchedule only lowers the node's score."""

    kind: ClassVar[str] = "taint-node"
    simplest: ClassVar[Simplest] = (
        ("node", earlier_node()), (("effect", "remove"), earlier(NODE_TAINTS)))
    node: str
    key: str = TAINT_KEY
    value: str = TAINT_VALUE
    effect: str = "NoSchedule"
    remove: bool = False

    @property
    def name(self) -> str:
        if self.remove:
            return f"kubectl taint nodes {self.node} {self.key}{':' + self.effect if self.effect else ''}-"
        return f"kubectl taint nodes {self.node} {self.key}={self.value}:{self.effect} --overwrite"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(TaintNode(self.node, self.key, self.value, self.effect, self.remove))


@attrs.frozen
class CordonNode(Action):
    """kubectl cordon `node` (spec.unschedulable: true), or uncordon when not `unschedulable` (the field
    removed): the merge patch kubectl's PatchOrReplace sends."""

    kind: ClassVar[str] = "cordon-node"
    simplest: ClassVar[Simplest] = (("node", earlier_node()),)
    node: str
    unschedulable: bool = True

    @property
    def name(self) -> str:
        return f"kubectl {'cordon' if self.unschedulable else 'uncordon'} {self.node}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("nodes", "", self.node, {"spec": {"unschedulable": True if self.unschedulable else None}}))


# -- pods ------------------------------------------------------------------------------------------------------

#: the name a pod shape's port and a Service's targetPort share
NAMED_PORT = "http"


def _port(container_port: int, host_port: int = 0, protocol: str = "", host_ip: str = "") -> dict:
    port: dict[str, Any] = {"containerPort": container_port}
    if host_port:
        port["hostPort"] = host_port
    if protocol:
        port["protocol"] = protocol
    if host_ip:
        port["hostIP"] = host_ip
    return port


#: the app whose Service selects a bare pod on the host's network (label app: web), as a Service fronts an ingress
#: controller there: the in-cluster client (kmodel.traffic.client) reaches it at its node's own address
HOST_NETWORK_APP = APPS[0]
#: the pod's networking: (its containers' ports, one list per container, hostNetwork)
POD_PORTS: tuple[tuple[tuple[tuple[dict, ...], ...], bool], ...] = (
    (((_port(80),),), False),
    (((_port(80, 8080),),), False),
    (((_port(80, 8080, "UDP"),),), False),
    (((_port(80, 8080, "TCP", "127.0.0.1"),),), False),
    (((_port(80),),), True),  # hostNetwork: the host port defaults to the container port
    (((_port(80, 8080),), (_port(9090, 8080, "SCTP"),)), False),  # two containers, one host port per protocol
    (((dict(_port(80), name=NAMED_PORT),),), False),  # a named port: a Service's targetPort may name it
)
#: the key of a POD_RESOURCES row that gives the pod an init container with those resources
INIT = "init"
#: the pod's resources (of its first container): requests, limits (requests default to limits when unset)
POD_RESOURCES: tuple[dict, ...] = (
    {},
    {"requests": {"cpu": "250m", "memory": "64Mi"}},
    {"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
    {"limits": {"cpu": "1", "memory": "512Mi"}},
    {"requests": {"cpu": "3", "memory": "1Gi"}},
    # an init container asking for more than the app container: the scheduler counts the larger of the two per
    # resource (the kubelet does not run init containers: docs/differences.md)
    {"requests": {"cpu": "100m", "memory": "32Mi"},
     INIT: {"requests": {"cpu": "1", "memory": "64Mi", "ephemeral-storage": "1Gi"}}},
)
def _node_affinity(required: tuple = (), preferred: tuple = ()) -> dict:
    affinity: dict[str, Any] = {}
    if required:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [dict(e) for e in term]} for term in required]}
    if preferred:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": weight, "preference": {"matchExpressions": [dict(e) for e in term]}} for weight, term in preferred]
    return {"affinity": {"nodeAffinity": affinity}}


#: where the pod may go: spec.nodeSelector, required node affinity (terms ORed), preferred node affinity
POD_PLACEMENTS: tuple[dict, ...] = (
    {},
    {"nodeSelector": {LABEL_ZONE: "zone-a"}},
    {"nodeSelector": {LABEL_DISK: "ssd"}},
    {"nodeSelector": {LABEL_REGION: "region-1", LABEL_ZONE: "zone-b"}},
    _node_affinity(required=(({"key": LABEL_ZONE, "operator": "In", "values": ["zone-a", "zone-b"]},),
                             ({"key": LABEL_DISK, "operator": "Exists"},))),
    _node_affinity(required=(({"key": LABEL_ZONE, "operator": "NotIn", "values": ["zone-a"]},),)),
    _node_affinity(preferred=((50, ({"key": LABEL_DISK, "operator": "In", "values": ["ssd"]},)),
                              (10, ({"key": LABEL_ZONE, "operator": "Exists"},)))),
    # an empty term (it matches no node) ORed with a core count above 2 (a node without the label, or with one
    # that is not a whole number, does not match)
    _node_affinity(required=((), ({"key": LABEL_CORES, "operator": "Gt", "values": ["2"]},))),
)
#: the taints the pod tolerates
POD_TOLERATIONS: tuple[tuple[dict, ...], ...] = (
    (),
    ({"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE, "effect": "NoSchedule"},),
    ({"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},),
    ({"operator": "Exists"},),
    # what a DaemonSet's pods carry: a cordoned node still takes the pod
    ({"key": TAINT_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"},),
    # the operator left out (it means Equal), and 0 s: a NoExecute taint of that value evicts the pod at once
    ({"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoExecute", "tolerationSeconds": 0},),
)
#: a pod's shape: an index into each table above (ports, resources, placement, tolerations)
POD_SHAPE_SIZES = (len(POD_PORTS), len(POD_RESOURCES), len(POD_PLACEMENTS), len(POD_TOLERATIONS))


def pod_shape_manifest(pod: str, node: str, shape: tuple[int, ...]) -> dict:
    """A bare pod of the shape `shape` (indices into POD_PORTS, POD_RESOURCES, POD_PLACEMENTS, POD_TOLERATIONS,
    each taken modulo the table's length), pinned to `node` when not ""."""
    ports, resources, placement, tolerations = (shape[k] % POD_SHAPE_SIZES[k] for k in range(4))
    container_ports, host_network = POD_PORTS[ports]
    containers = []
    for k, these in enumerate(container_ports):
        c = app_container(0, False) if k == 0 else {"name": f"sidecar-{k}", "image": IMAGE}
        c["ports"] = [dict(p) for p in these]
        containers.append(c)
    own = {k: v for k, v in POD_RESOURCES[resources].items() if k != INIT}
    if own:
        containers[0]["resources"] = own
    spec: dict[str, Any] = {"containers": containers, **POD_PLACEMENTS[placement]}
    if INIT in POD_RESOURCES[resources]:
        spec["initContainers"] = [{"name": INIT, "image": IMAGE, "resources": POD_RESOURCES[resources][INIT]}]
    if host_network:
        spec["hostNetwork"] = True
    if POD_TOLERATIONS[tolerations]:
        spec["tolerations"] = [dict(t) for t in POD_TOLERATIONS[tolerations]]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": "default", "labels": host_network_labels(pod, host_network)},
            "spec": spec}


def host_network_labels(pod: str, host_network: bool) -> dict:
    """A bare pod's labels: run=<pod>, and app=HOST_NETWORK_APP on the host's network (in that Service's rotation;
    no ReplicaSet adopts it, theirs select their pod-template-hash too)."""
    return {"run": pod, **({"app": HOST_NETWORK_APP} if host_network else {})}


def _expression(e: dict) -> str:
    values = ",".join(e.get("values", ()))
    return f"{e['key']} {e['operator']}" + (f" ({values})" if values else "")


def describe_shape(shape: tuple[int, ...]) -> str:
    """What a pod shape adds to a plain pod, in words ("" for the plain pod)."""
    ports, resources, placement, tolerations = (shape[k] % POD_SHAPE_SIZES[k] for k in range(4))
    parts = []
    container_ports, host_network = POD_PORTS[ports]
    if host_network:
        parts.append(f"hostNetwork, app={HOST_NETWORK_APP}")
    if len(container_ports) > 1:
        parts.append(f"{len(container_ports)} containers")
    for these in container_ports:
        for p in these:
            if p.get("hostPort"):
                parts.append(f"hostPort {p.get('hostIP', '')}{':' if p.get('hostIP') else ''}{p['hostPort']}"
                             f"/{p.get('protocol', 'TCP')}")
    for what, amounts in sorted(POD_RESOURCES[resources].items()):
        if what == INIT:
            amounts = amounts["requests"]
            what = "init container requests"
        parts.append(f"{what} " + ",".join(f"{k}={v}" for k, v in sorted(amounts.items())))
    for k, v in sorted(POD_PLACEMENTS[placement].get("nodeSelector", {}).items()):
        parts.append(f"nodeSelector {k}={v}")
    affinity = POD_PLACEMENTS[placement].get("affinity", {}).get("nodeAffinity", {})
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
    if terms:  # the terms are ORed
        parts.append("requires " + " or ".join(" and ".join(_expression(e) for e in t["matchExpressions"])
                                                or "(an empty term)" for t in terms))
    for t in affinity.get("preferredDuringSchedulingIgnoredDuringExecution", []):
        parts.append(f"prefers ({t['weight']}) " + " and ".join(_expression(e) for e in t["preference"]["matchExpressions"]))
    for t in POD_TOLERATIONS[tolerations]:
        key = t.get("key", "*")
        secs = f" {t['tolerationSeconds']}s" if "tolerationSeconds" in t else ""
        parts.append(f"tolerates {key}:{t.get('effect') or 'any'}{secs}")
    return ", ".join(parts)


@attrs.frozen
class ApplyPodShape(Action):
    """kubectl apply a bare pod of a drawn shape: ports (host ports by protocol and hostIP, hostNetwork, two
    containers), resources (requests, limits), a nodeSelector or node affinity (required, preferred), tolerations (NoSchedule, NoExecute for a while,
    everything); pinned to `node` when not "". A pod's spec is immutable: applying another shape over an
    existing pod is refused (422), as kubectl's would be."""

    kind: ClassVar[str] = "apply-pod-shape"
    simplest: ClassVar[Simplest] = (
        ("pod", earlier(BARE_PODS)), ("node", earlier_node(unpinned=True)), ("shape", each(fewer(0))))
    pod: str
    node: str = ""
    shape: tuple[int, ...] = attrs.field(default=(0, 0, 0, 0), converter=tuple)

    @shape.validator
    def _check_shape(self, attribute: Any, value: tuple) -> None:
        if len(value) != len(POD_SHAPE_SIZES) or any(type(v) is not int or v < 0 for v in value):
            raise ValueError(f"shape must be {len(POD_SHAPE_SIZES)} whole numbers >= 0, not {list(value)}")

    @property
    def name(self) -> str:
        extra = describe_shape(self.shape)
        where = f" on {self.node}" if self.node else ""
        return f"kubectl apply pod {self.pod}{where}" + (f" ({extra})" if extra else "")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(pod_shape_manifest(self.pod, self.node, self.shape)))


@attrs.frozen
class LabelPod(Action):
    """kubectl label pod `pod` app=`value` --overwrite (app- when `value` is ""): a pod whose label leaves its
    ReplicaSet's selector is released by it (its ownerReference removed) and replaced; one whose label matches a
    ReplicaSet's selector again while it has no controller is adopted (ClaimPods), and a surplus pod deleted."""

    kind: ClassVar[str] = "label-pod"
    pod: str
    value: str = ""
    key: str = "app"

    @property
    def name(self) -> str:
        arg = f"{self.key}={self.value} --overwrite" if self.value else f"{self.key}-"
        return f"kubectl label pod {self.pod} {arg}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("pods", "default", self.pod, label_patch(self.key, self.value)))


# -- Services --------------------------------------------------------------------------------------------------

#: edit_service's selectors, for the Service of `app`: its own app, the other app, its own app and a tier no pod has
SERVICE_SELECTORS = ("own", "other", "tier")
#: edit_service's port lists
SERVICE_PORTS: tuple[tuple[dict, ...], ...] = (
    ({"port": 80, "targetPort": 80, "protocol": "TCP"},),
    ({"port": 8080, "targetPort": 80, "protocol": "TCP"},),
    ({"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"},
     {"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"}),
    # a named targetPort: a pod that declares no port of that name has no endpoint for it
    ({"port": 80, "targetPort": NAMED_PORT, "protocol": "TCP"},),
)


def _to_target(port: dict) -> str:
    """How a Service port's readable line names its targetPort: nothing when it is the port itself."""
    return "" if port["targetPort"] == port["port"] else f" to {port['targetPort']}"


def service_selector(app: str, selector: int) -> dict:
    """The merge patch of the selector `SERVICE_SELECTORS[selector]` (every key the rules use, set or removed)."""
    kind = SERVICE_SELECTORS[selector % len(SERVICE_SELECTORS)]
    other = next(a for a in APPS if a != app)
    return {"app": other if kind == "other" else app, "tier": "canary" if kind == "tier" else None}


@attrs.frozen
class EditService(Action):
    """kubectl patch service `app`: its selector (SERVICE_SELECTORS) and ports (SERVICE_PORTS, a list replaced
    whole). The endpoints controller follows the selector; kube-proxy the ports."""

    kind: ClassVar[str] = "edit-service"
    simplest: ClassVar[Simplest] = (
        ("app", earlier(APPS)), ("selector", fewer(0)), ("ports", fewer(0)))
    app: str
    selector: int = at_least(0, default=0)
    ports: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        sel = ",".join(f"{k}={v}" for k, v in service_selector(self.app, self.selector).items() if v)
        rows = SERVICE_PORTS[self.ports % len(SERVICE_PORTS)]
        ports = ",".join(f"{p['port']}/{p['protocol']}{_to_target(p)}" for p in rows)
        return f"kubectl patch service {self.app} (selector {sel}, ports {ports})"

    def apply(self, cluster: Cluster) -> None:
        ports = [dict(p) for p in SERVICE_PORTS[self.ports % len(SERVICE_PORTS)]]
        cluster.submit(Patch("services", "default", self.app,
                             {"spec": {"selector": service_selector(self.app, self.selector), "ports": ports}}))


# -- Deployments -----------------------------------------------------------------------------------------------

#: set_strategy's choices: the default first, then Recreate and rolling updates of other bounds
STRATEGIES: tuple[dict, ...] = (
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    {"type": "Recreate", "rollingUpdate": None},
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "50%"}},
)


def describe_strategy(strategy: dict) -> str:
    ru = strategy.get("rollingUpdate")
    if not ru:
        return strategy["type"]
    return f"{strategy['type']} maxSurge={ru['maxSurge']} maxUnavailable={ru['maxUnavailable']}"


@attrs.frozen
class SetStrategy(Action):
    """kubectl patch deployment `app` spec.strategy: STRATEGIES[strategy] (Recreate drops rollingUpdate, which
    validation forbids beside it)."""

    kind: ClassVar[str] = "set-strategy"
    simplest: ClassVar[Simplest] = (("app", earlier(APPS)), ("strategy", fewer(0)))
    app: str
    strategy: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        return f"kubectl patch deployment {self.app} strategy {describe_strategy(self._strategy)}"

    @property
    def _strategy(self) -> dict:
        return STRATEGIES[self.strategy % len(STRATEGIES)]

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("deployments", "default", self.app, {"spec": {"strategy": dict(self._strategy)}}))


@attrs.frozen
class PauseDeployment(Action):
    """kubectl rollout pause deployment `app` (spec.paused: true), or resume when not `paused` (the field
    removed). A paused Deployment scales but does not roll out a new template."""

    kind: ClassVar[str] = "pause-deployment"
    simplest: ClassVar[Simplest] = (("app", earlier(APPS)),)
    app: str
    paused: bool = True

    @property
    def name(self) -> str:
        return f"kubectl rollout {'pause' if self.paused else 'resume'} deployment {self.app}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("deployments", "default", self.app, {"spec": {"paused": True if self.paused else None}}))


@attrs.frozen
class UndoRollout(Action):
    """kubectl rollout undo deployment `app` --to-revision=`to_revision` (0: the previous revision): the
    template of an earlier ReplicaSet copied back into the Deployment, which makes that ReplicaSet its new one
    again. Refused by kubectl for a paused Deployment or a revision not in its history."""

    kind: ClassVar[str] = "rollout-undo"
    simplest: ClassVar[Simplest] = (("app", earlier(APPS)), ("to_revision", default(0)))
    app: str
    to_revision: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        rev = f" --to-revision={self.to_revision}" if self.to_revision else ""
        return f"kubectl rollout undo deployment {self.app}{rev}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(RolloutUndo("default", self.app, self.to_revision))


# -- invalid manifests -----------------------------------------------------------------------------------------

def _negative_replicas(node: str) -> Any:
    return Apply(deployment_manifest("web", -1, 0, False))


def _selector_mismatch(node: str) -> Any:
    manifest = deployment_manifest("web", 2, 0, False)
    manifest["spec"]["template"]["metadata"]["labels"] = {"app": "web-canary"}
    return Apply(manifest)


def _service_port_out_of_range(node: str) -> Any:
    manifest = service_manifest("web")
    manifest["spec"]["ports"][0]["port"] = 70000
    return Apply(manifest)


def _pod_port_zero(node: str) -> Any:
    manifest = pod_shape_manifest("debug-1", "", (0, 0, 0, 0))
    manifest["spec"]["containers"][0]["ports"][0]["containerPort"] = 0
    return Apply(manifest)


def _taint_effect(node: str) -> Any:
    return Patch("nodes", "", node, {"spec": {"taints": [{"key": TAINT_KEY, "value": TAINT_VALUE,
                                                         "effect": "Sometimes"}]}})


def _no_progress_strategy(node: str) -> Any:
    return Patch("deployments", "default", "web", {"spec": {"strategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}})


#: manifests a user may send by mistake, each refused by validation (422 Invalid) whatever the cluster holds:
#: (what it is, the command)
INVALID_MANIFESTS: tuple[tuple[str, Any], ...] = (
    ("deployment web with replicas -1", _negative_replicas),
    ("deployment web whose selector does not match its template's labels", _selector_mismatch),
    ("service web with port 70000", _service_port_out_of_range),
    ("pod debug-1 with containerPort 0", _pod_port_zero),
    ("a taint of effect Sometimes on {node}", _taint_effect),
    ("deployment web with maxSurge 0 and maxUnavailable 0", _no_progress_strategy),
)


@attrs.frozen
class ApplyInvalid(Action):
    """A manifest the API refuses (INVALID_MANIFESTS[case]): the API server answers 422 Invalid and the cluster
    is unchanged. `node` is the node the taint case patches."""

    kind: ClassVar[str] = "apply-invalid"
    simplest: ClassVar[Simplest] = (("case", fewer(0)),)
    case: int = at_least(0, default=0)
    node: str = ""

    @property
    def name(self) -> str:
        what = INVALID_MANIFESTS[self.case % len(INVALID_MANIFESTS)][0].format(node=self.node or "a node")
        return f"kubectl sends an invalid manifest: {what}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(INVALID_MANIFESTS[self.case % len(INVALID_MANIFESTS)][1](self.node))
