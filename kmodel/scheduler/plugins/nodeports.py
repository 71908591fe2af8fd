"""NodePorts: the pod's host ports must be free on the node.

A port of pkg/scheduler/framework/plugins/nodeports/node_ports.go: every port of every container of the pod
(hostIP, protocol, hostPort) is checked against the node's HostPortInfo (see kmodel.scheduler.framework for the
conflict rules); the first conflict rejects the node, Unschedulable,
`node(s) didn't have free ports for the requested pod ports`. Ports with hostPort 0 never conflict.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Pod
from kmodel.scheduler.framework import Code, NodeInfo, Status, pod_host_ports

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Fits / fitsPorts."""
    used = node_info.used_ports
    for ip, protocol, port in pod_host_ports(pod):
        if used.check_conflict(ip, protocol, port):
            return False
    return True


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001
    if fits(pod, node_info):
        return None
    return Status(Code.UNSCHEDULABLE, ERR_REASON, plugin=NAME)
