"""Pod admission on the node: the kubelet's last check before it runs a pod the scheduler bound to it
(pkg/kubelet/lifecycle/predicate.go, predicateAdmitHandler.Admit and generalFilter; kubelet.go
HandlePodAdditions, canAdmitPod, rejectPod).

Theory of operation
-------------------
The scheduler decides from its cache, and its cache can be stale: a scheduler restarted against a lagging
watch cache does not see a pod it bound a moment ago, and binds a second pod with the same host port, or one
more than the node has room for, to the same node. The API server takes both bindings. The kubelet is where
that stops: before a pod runs, `admit` checks it against the pods the kubelet already runs (the *active*
pods: admitted, not finished) with the scheduler's own filters, as upstream's AdmissionCheck does:

* resources (NodeResourcesFit): cpu, memory, ephemeral storage, pod count against the node's allocatable;
  reason ``OutOfcpu`` / ``OutOfmemory`` / ``OutOfephemeral-storage`` / ``OutOfpods``, message
  ``Node didn't have enough resource: cpu, requested: 500, used: 3800, capacity: 4000``;
* node affinity (nodeSelector and required node affinity terms), node name, host ports: reasons ``NodeAffinity``, ``NodeName``,
  ``NodePorts`` with the message ``Predicate NodePorts failed: node(s) didn't have free ports for the
  requested pod ports``;
* an untolerated NoExecute taint (not for static pods): ``TaintToleration``.

Only the first failure is reported. A rejected pod never runs: the kubelet records a Warning event with the
reason and message and sets its status to phase Failed, reason, and message ``Pod was rejected: <message>``
(`rejected_status`). Its controller sees a failed pod and makes another.

Order: upstream admits the pods of one update in creation order (HandlePodAdditions sorts them), so after a
restart the oldest of two conflicting pods keeps its place; the component does the same with the pods it
learnt of together (`admission_order`).

Differences from upstream: the OS label and OS field checks, extended and device-plugin resources, the
eviction manager's admit handler (node pressure) and the admission failure handler (critical-pod preemption)
are not modelled; the node used is the informer's Node or, before it is known, the kubelet's initial Node
(getNodeAnyWay) without the synchronous re-fetch on a node-affinity failure.
"""

from __future__ import annotations

from typing import Iterable, Optional

import attrs

from kmodel.objects import Node, Pod
from kmodel.objects.core import PodStatus
from kmodel.scheduler.framework import NodeInfo
from kmodel.scheduler.plugins import nodeaffinity, nodename, nodeports, noderesources, tainttoleration

#: tainttoleration.ErrReasonNotMatch
ERR_UNTOLERATED = "node(s) had taints that the pod didn't tolerate"
OUT_OF = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "ephemeral-storage": "OutOfephemeral-storage",
          "pods": "OutOfpods"}


@attrs.frozen
class Rejection:
    reason: str
    message: str


def _predicate(name: str, description: str) -> Rejection:
    return Rejection(name, f"Predicate {name} failed: {description}")


def admit(pod: Pod, active: Iterable[Pod], node: Node, *, static: bool = False) -> Optional[Rejection]:
    """Admit: None when the pod may run beside the `active` pods on `node`, else the first failure."""
    info = NodeInfo(node, active)
    for r in noderesources.fits(pod, info):
        return Rejection(OUT_OF.get(r.resource_name, f"OutOf{r.resource_name}"),
                         f"Node didn't have enough resource: {r.resource_name}, requested: {r.requested}, "
                         f"used: {r.used}, capacity: {r.capacity}")
    if not nodeaffinity.matches_required(pod, info):
        return _predicate(nodeaffinity.NAME, nodeaffinity.ERR_REASON_POD)
    if not nodename.fits(pod, info):
        return _predicate(nodename.NAME, nodename.ERR_REASON)
    if not nodeports.fits(pod, info):
        return _predicate(nodeports.NAME, nodeports.ERR_REASON)
    if not static:
        taint = tainttoleration.find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations,
            lambda t: t.effect == tainttoleration.TAINT_EFFECT_NO_EXECUTE)
        if taint is not None:
            return _predicate(tainttoleration.NAME, ERR_UNTOLERATED)
    return None


def admission_order(pods: Iterable[Pod]) -> list[Pod]:
    """HandlePodAdditions' order: by creation time (ties: namespace, name, as a stable sort of a list would)."""
    return sorted(pods, key=lambda p: (p.metadata.creation_timestamp or 0, p.metadata.namespace,
                                       p.metadata.name))


def rejected_status(old: PodStatus, rejection: Rejection, now: int) -> PodStatus:
    """rejectPod's status (phase Failed, the reason, `Pod was rejected: …`, no conditions of the kubelet's own)
    with the start time the status manager keeps or sets; `merge_status` adds other writers' conditions."""
    return PodStatus(phase="Failed", reason=rejection.reason, message=f"Pod was rejected: {rejection.message}",
                     start_time=old.start_time if old.start_time is not None else now, qos_class=old.qos_class)
