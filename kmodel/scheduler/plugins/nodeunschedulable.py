"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate its taint.

A port of pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go. The pod passes when it
tolerates the taint {key: node.kubernetes.io/unschedulable, effect: NoSchedule} (which is how DaemonSet pods
land on cordoned nodes); otherwise a node with spec.unschedulable is rejected, UnschedulableAndUnresolvable,
`node(s) were unschedulable`. Upstream answers `node(s) had unknown conditions` for a NodeInfo with no Node.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Pod, Taint
from kmodel.scheduler.framework import Code, NodeInfo, Status
from kmodel.scheduler.plugins.tainttoleration import (
    TAINT_EFFECT_NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE, tolerations_tolerate_taint,
)

NAME = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE)


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001
    node = node_info.node
    if node is None:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION, plugin=NAME)
    if not node.spec.unschedulable:
        return None
    if tolerations_tolerate_taint(pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE, plugin=NAME)
