"""The Node a kubelet registers and the status it posts (pkg/kubelet/kubelet_node_status.go, nodestatus/setters.go).

Theory of operation
-------------------
On start the kubelet registers its Node (registerWithAPIServer → initialNode): labels kubernetes.io/hostname,
kubernetes.io/os, kubernetes.io/arch; capacity and allocatable cpu, memory, ephemeral-storage and pods from the
KubeletConfig; addresses InternalIP (node_ip) and Hostname; the daemon endpoint 10250; and the conditions the setters
produce, in their order: MemoryPressure, DiskPressure, PIDPressure (False, "has sufficient …") and Ready
(True, KubeletReady, `kubelet is posting ready status`), each updated where it is in the Node's list, the
conditions of other writers kept. Ready is False (KubeletNotReady, the runtime's network error as its message)
while the container runtime's network is not ready, i.e. until the CNI plugin is configured from the Node's
podCIDR (setters.go ReadyCondition with runtimeState.networkErrors, kmodel.kubelet.cni). A 409 AlreadyExists is fine (the Node is there from
an earlier run). Then every nodeStatusUpdateFrequency (10 s) it recomputes the status from the Node it reads
(`status`: lastHeartbeatTime = now for every condition, lastTransitionTime kept unless the condition's status
changed, as the setters keep it) and writes it to nodes/status only when it differs from the Node's in more
than the heartbeat times (`status_changed`, nodeStatusHasChanged), when the Node's podCIDRs are news to this
kubelet process, or when nodeStatusReportFrequency (5 min) has passed since its last write: the Lease is the
heartbeat (tryUpdateNodeStatus).

This module is pure: `initial_node`, `status` and `status_changed` build and compare values, the component
sends them.
"""

from __future__ import annotations

import functools
import operator
from typing import Optional

import attrs

from kmodel.kubelet.config import KubeletConfig
from kmodel.objects import Node, ObjectMeta, frozen_map, parse_quantity
from kmodel.objects.core import (
    DaemonEndpoint, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus, NodeSystemInfo,
)
from kmodel.objects.fastevolve import evolve

KUBELET_PORT = 10250
KUBELET_VERSION = "v1.31.0"

#: Ready while the runtime's network is not ready (setters.go ReadyCondition: the runtime state's errors,
#: aggregated, are the message)
NOT_READY_REASON = "KubeletNotReady"

# (type, status, reason, message), in the order nodestatus setters append them.
CONDITIONS: tuple[tuple[str, str, str, str], ...] = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_labels(node: str) -> dict:
    return {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": node, "kubernetes.io/os": "linux"}


def resources(config: KubeletConfig) -> dict:
    return frozen_map({"cpu": parse_quantity(config.cpu), "memory": parse_quantity(config.memory),
                       "ephemeral-storage": parse_quantity(config.ephemeral_storage),
                       "pods": parse_quantity(str(config.max_pods))})


def conditions(now: int, old: tuple = (), network_error: Optional[str] = None) -> tuple:
    """The kubelet's four conditions with heartbeat now, lastTransitionTime kept from `old` while the status is the
    same, beside the conditions of other writers (node-problem-detector's, a user's), which are kept as they are:
    each of upstream's setters (nodestatus/setters.go) finds its own type in node.Status.Conditions and updates it
    in place, or appends it when it is missing, so every condition stays where it was and the others are left.
    With a `network_error` (the runtime's network is not ready) Ready is False, reason KubeletNotReady, the error
    as its message."""
    previous = {c.type: c for c in old}
    own = {}
    for typ, status, reason, message in CONDITIONS:
        if typ == "Ready" and network_error is not None:
            status, reason, message = "False", NOT_READY_REASON, network_error
        before = previous.get(typ)
        transition = before.last_transition_time if before is not None and before.status == status else now
        own[typ] = NodeCondition(type=typ, status=status, last_heartbeat_time=now, last_transition_time=transition,
                                 reason=reason, message=message)
    kept = [own.get(c.type, c) for c in old]
    return (*kept, *(c for typ, c in own.items() if typ not in previous))


@functools.lru_cache(maxsize=None)
def _static_fields(config: KubeletConfig) -> dict:
    """The status fields that follow from the configuration alone (the same frozen values every sync)."""
    node = config.node
    res = resources(config)
    return dict(
        capacity=res,
        allocatable=res,
        addresses=(NodeAddress(type="InternalIP", address=config.node_ip), NodeAddress(type="Hostname", address=node)),
        daemon_endpoints=NodeDaemonEndpoints(kubelet_endpoint=DaemonEndpoint(port=KUBELET_PORT)),
        node_info=NodeSystemInfo(machine_id=node, system_uuid=node, boot_id=node, kernel_version="6.8.0",
                                 os_image="Debian GNU/Linux 12 (bookworm)",
                                 container_runtime_version="containerd://1.7.18",
                                 kubelet_version=KUBELET_VERSION, kube_proxy_version="", operating_system="linux",
                                 architecture="amd64"),
    )


def status(config: KubeletConfig, now: int, old: Optional[NodeStatus] = None,
           network_error: Optional[str] = None) -> NodeStatus:
    """The status the kubelet posts (from the Node as last read, `old`); `network_error`: the runtime's network
    is not ready, with that error (see `conditions`)."""
    base = old if old is not None else NodeStatus()
    return evolve(base, conditions=conditions(now, base.conditions, network_error), **_static_fields(config))


def is_ready(node_obj: Optional[Node]) -> bool:
    """Whether the Node's Ready condition is True (a missing Node or condition is not)."""
    if node_obj is None:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in node_obj.status.conditions)


#: NodeStatus's fields but the conditions, and a NodeCondition's (type first) but its heartbeat, as tuples
_OTHER_FIELDS = operator.attrgetter(*(f.name for f in attrs.fields(NodeStatus) if f.name != "conditions"))
_CONDITION_FIELDS = operator.attrgetter("type", *(f.name for f in attrs.fields(NodeCondition)
                                                  if f.name not in ("type", "last_heartbeat_time")))


def status_changed(old: NodeStatus, new: NodeStatus) -> bool:
    """nodeStatusHasChanged: True when the statuses differ in anything but the conditions' lastHeartbeatTime
    (conditions compared by type, whatever their order)."""
    if _OTHER_FIELDS(old) != _OTHER_FIELDS(new):
        return True
    return sorted(map(_CONDITION_FIELDS, old.conditions)) != sorted(map(_CONDITION_FIELDS, new.conditions))


def initial_node(config: KubeletConfig, now: int, network_error: Optional[str] = None) -> Node:
    """initialNode: what registration creates (setNodeStatus runs on it, so Ready is False while the runtime's
    network is not ready, `network_error`)."""
    node = config.node
    return Node(metadata=ObjectMeta(name=node, labels=frozen_map(node_labels(node))), spec=NodeSpec(),
                status=status(config, now, network_error=network_error))


def pod_cidrs(node_obj: Optional[Node]) -> tuple[str, ...]:
    """The node's podCIDRs (podCIDR alone when podCIDRs is empty)."""
    if node_obj is None:
        return ()
    spec = node_obj.spec
    if spec.pod_cidrs:
        return tuple(spec.pod_cidrs)
    return (spec.pod_cidr,) if spec.pod_cidr else ()
