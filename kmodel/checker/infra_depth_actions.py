"""Actions that take the scheduler's rarer placement rules: a bare pod whose node affinity and tolerations use
what real manifests use and the other rules' pods never do.

`ApplyPlacedPod` is `kubectl apply` of a bare pod of the apps' image, with a required node-affinity row
(`REQUIRED`), a preferred one (`PREFERRED`) and tolerations (`TOLERATIONS`), each an index into its table
(simplest first). The rows use every operator of a node selector requirement (DoesNotExist, Gt and Lt beside
In, NotIn and Exists), a field requirement on `metadata.name` (how the DaemonSet controller pins its pods,
In or NotIn one node), an empty term beside one that matches (an empty term matches nothing, ORed with the
others), a Gt or Lt whose bound is not an integer (the API accepts it; the scheduler cannot parse it and the
term matches nothing, as upstream's `NodeSelectorRequirementsAsSelector`), and tolerations that do not
tolerate a taint for each reason upstream's `ToleratesTaint` has (another key, another value with the operator
left empty, as it may be) or that tolerate every PreferNoSchedule taint, or a cordoned node's unschedulable
taint (as the DaemonSet controller's pods do: NodeUnschedulable lets them onto a cordoned node). The pod may
also restart its
container OnFailure or Never (`kubectl run --restart=Never` of a debug pod: it runs to completion, and exits
0 or 1 by the model's convention, kmodel.kubelet.completion) and run on the host's network, as
the pods of a DaemonSet like kube-proxy or a CNI agent do (with a Exists toleration and a `metadata.name`
field requirement, a pod of those is a DaemonSet's pod as its controller writes it), or an ingress controller
that a Service fronts: a pod on the host's network carries the label `app: web` (`HOST_NETWORK_APP`), so the
Service web selects it and its endpoint is the node's own address (a request the in-cluster client sends there
reaches it through the node's IP, kmodel.traffic.dataplane); no ReplicaSet adopts it (theirs select their
pod-template-hash too). `{node}` in a row is the
node the action names; the pod's spec is otherwise that of the other bare pods, so applying another row over an
existing pod of that name is refused (422: a pod's spec is immutable), as kubectl's apply would be.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from kmodel.checker.actions import BARE_PODS, IMAGE, Action
from kmodel.checker.simpler import Simplest, default, earlier, fewer
from kmodel.checker.workload_actions import (
    HOST_NETWORK_APP, LABEL_CORES, LABEL_DISK, LABEL_ZONE, TAINT_KEY, TAINT_VALUE, host_network_labels,
)
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply
from kmodel.kubelet.completion import EXIT_CODE_ANNOTATION
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import at_least

#: a whole-number node label that only the workload rules' label_node puts on a node (4): a Gt 2 on it matches
#: that node alone, and an Lt whose bound is not an integer matches none
CORES_LABEL = LABEL_CORES
NAME_FIELD = "metadata.name"
#: the taint a cordoned node is treated as having (node.kubernetes.io/unschedulable:NoSchedule)
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def _in_name(operator: str) -> dict:
    return {"key": NAME_FIELD, "operator": operator, "values": ["{node}"]}


#: required node affinity: (words, its nodeSelectorTerms), simplest first; none for the first
REQUIRED: tuple[tuple[str, tuple[dict, ...]], ...] = (
    ("", ()),
    (f"{LABEL_DISK} DoesNotExist", ({"matchExpressions": [{"key": LABEL_DISK, "operator": "DoesNotExist"}]},)),
    ("metadata.name In {node}", ({"matchFields": [_in_name("In")]},)),
    ("metadata.name NotIn {node}", ({"matchFields": [_in_name("NotIn")]},)),
    (f"{LABEL_ZONE} Exists and metadata.name In {{node}}",
     ({"matchExpressions": [{"key": LABEL_ZONE, "operator": "Exists"}], "matchFields": [_in_name("In")]},)),
    ("an empty term or metadata.name In {node}", ({}, {"matchFields": [_in_name("In")]})),
    (f"{CORES_LABEL} Gt 2", ({"matchExpressions": [{"key": CORES_LABEL, "operator": "Gt", "values": ["2"]}]},)),
    (f"{CORES_LABEL} Lt many (not an integer)",
     ({"matchExpressions": [{"key": CORES_LABEL, "operator": "Lt", "values": ["many"]}]},)),
)
#: preferred node affinity: (words, its terms), simplest first
PREFERRED: tuple[tuple[str, tuple[dict, ...]], ...] = (
    ("", ()),
    ("metadata.name In {node} (40)", ({"weight": 40, "preference": {"matchFields": [_in_name("In")]}},)),
    (f"{LABEL_DISK} DoesNotExist (1)",
     ({"weight": 1, "preference": {"matchExpressions": [{"key": LABEL_DISK, "operator": "DoesNotExist"}]}},)),
)
#: tolerations: (words, the list), simplest first; the taint the workload rules put on nodes is TAINT_KEY=TAINT_VALUE
TOLERATIONS: tuple[tuple[str, tuple[dict, ...]], ...] = (
    ("", ()),
    (f"{TAINT_KEY}={TAINT_VALUE} (operator left empty)", ({"key": TAINT_KEY, "value": TAINT_VALUE},)),
    (f"{TAINT_KEY}=other", ({"key": TAINT_KEY, "operator": "Equal", "value": "other"},)),
    ("another key, Exists", ({"key": "example.com/other", "operator": "Exists"},)),
    ("every PreferNoSchedule taint", ({"operator": "Exists", "effect": "PreferNoSchedule"},)),
    # what the DaemonSet controller adds to its pods: a cordoned node still takes them (NodeUnschedulable)
    ("a cordoned node", ({"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"},)),
)


#: how the pod runs: (spec.restartPolicy, the exit code of its process: "" for a server that runs until stopped),
#: the default first; a run-to-completion pod exits after the model's default 5 s (kmodel.kubelet.completion)
RUNS: tuple[tuple[str, str], ...] = (("Always", ""), ("OnFailure", "0"), ("OnFailure", "1"), ("Never", "0"),
                                     ("Never", "1"))


def _filled(value: Any, node: str) -> Any:
    """`value` (a row of a table above) with `{node}` replaced by `node`."""
    if isinstance(value, dict):
        return {k: _filled(v, node) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_filled(v, node) for v in value]
    return value.replace("{node}", node) if isinstance(value, str) else value


@attrs.frozen
class ApplyPlacedPod(Action):
    """kubectl apply of the bare pod `pod` with the node affinity and tolerations the rows `required`,
    `preferred` and `tolerations` name (see the module docstring), its restart policy `restart`, on the host's
    network, in the Service web's rotation, when `host_network`; `node` fills the rows' `{node}`."""

    kind: ClassVar[str] = "apply-placed-pod"
    simplest: ClassVar[Simplest] = (("pod", earlier(BARE_PODS)), ("required", fewer(0)),
                                    ("preferred", fewer(0)), ("tolerations", fewer(0)),
                                    ("runs", fewer(0)), ("host_network", default(False)))
    pod: str
    node: str
    required: int = at_least(0, default=0)
    preferred: int = at_least(0, default=0)
    tolerations: int = at_least(0, default=0)
    runs: int = at_least(0, default=0)
    host_network: bool = False

    def __attrs_post_init__(self) -> None:
        for value, table, field in ((self.required, REQUIRED, "required"), (self.preferred, PREFERRED, "preferred"),
                                    (self.tolerations, TOLERATIONS, "tolerations"), (self.runs, RUNS, "runs")):
            if value >= len(table):
                raise ValueError(f"{field} {value} is past its table's {len(table)} rows")

    @property
    def name(self) -> str:
        parts = [f"requires {REQUIRED[self.required][0]}" if self.required else "",
                 f"prefers {PREFERRED[self.preferred][0]}" if self.preferred else "",
                 f"tolerates {TOLERATIONS[self.tolerations][0]}" if self.tolerations else "",
                 "restart {}, exits {}".format(*RUNS[self.runs]) if self.runs else "",
                 f"hostNetwork, app={HOST_NETWORK_APP}" if self.host_network else ""]
        words = "; ".join(p for p in parts if p).replace("{node}", self.node)
        return f"kubectl apply pod {self.pod}" + (f" ({words})" if words else "")

    def manifest(self) -> dict:
        spec: dict[str, Any] = {"containers": [{"name": "app", "image": IMAGE, "ports": [{"containerPort": 80}]}]}
        affinity: dict[str, Any] = {}
        if self.required:
            affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": _filled(REQUIRED[self.required][1], self.node)}
        if self.preferred:
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = _filled(PREFERRED[self.preferred][1],
                                                                                  self.node)
        if affinity:
            spec["affinity"] = {"nodeAffinity": affinity}
        if self.tolerations:
            spec["tolerations"] = _filled(TOLERATIONS[self.tolerations][1], self.node)
        policy, code = RUNS[self.runs]
        if self.runs:
            spec["restartPolicy"] = policy
        if self.host_network:
            spec["hostNetwork"] = True  # the host port defaults to the container port
        meta: dict[str, Any] = {"name": self.pod, "namespace": "default",
                                "labels": host_network_labels(self.pod, self.host_network)}
        if code:
            meta["annotations"] = {EXIT_CODE_ANNOTATION: code}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(self.manifest()))


def freezable_nodes(cluster: Cluster) -> list[str]:
    """The nodes whose every endpoint (kubelet, proxy, the node's traffic) is up and not paused, in name order."""
    loop = cluster.loop
    return [n for n in cluster.nodes
            if all(loop.is_up(e) and not loop.is_paused(e) for e in cluster.endpoints_of(n))]


@attrs.frozen
class FreezeNode(Action):
    """A node's VM frozen for `seconds` (a live migration, a hypervisor stall, a SIGSTOP of the node's processes):
    every endpoint of the node runs nothing until then, the messages to it are held, and it wakes with
    everything it believed, its timers due at once (kmodel.loop: `Loop.pause`)."""

    kind: ClassVar[str] = "freeze-node"
    simplest: ClassVar[Simplest] = (("seconds", fewer(1)),)
    node: str
    seconds: int = at_least(1)

    @property
    def name(self) -> str:
        return f"freeze {self.node} for {self.seconds} s (its VM stopped)"

    def apply(self, cluster: Cluster) -> None:
        if self.node not in freezable_nodes(cluster):
            raise EventNotEnabled(f"cannot freeze {self.node!r}: not a node of this cluster whose processes all run")
        until = cluster.now + self.seconds * 1000
        for endpoint in cluster.endpoints_of(self.node):
            cluster.loop.pause(endpoint, until)
