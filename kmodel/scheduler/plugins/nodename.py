"""NodeName: a pod that names a node (spec.nodeName) fits only that node.

A port of pkg/scheduler/framework/plugins/nodename/node_name.go: UnschedulableAndUnresolvable,
`node(s) didn't match the requested node name`. (The real scheduler never queues a pod whose nodeName is set,
so in a cluster this filter only matters to callers that run the filters themselves, like the kubelet's
admission or a simulator.)
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Pod
from kmodel.scheduler.framework import Code, NodeInfo, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.spec.node_name or pod.spec.node_name == node_info.name


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001
    if fits(pod, node_info):
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON, plugin=NAME)
