"""NodeAffinity, nodeSelector part: every key/value of spec.nodeSelector must be among the node's labels.

A port of the nodeSelector half of pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
(component-helpers RequiredNodeAffinity: the selector is labels.SelectorFromSet, an AND of equalities).
Rejection: UnschedulableAndUnresolvable, `node(s) didn't match Pod's node affinity/selector`.

Differences from upstream: spec.affinity.nodeAffinity (required terms, preferred terms and their score) is not
modelled, because the objects layer does not carry it; the plugin's Score is therefore 0 on every node and is
left out.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Pod
from kmodel.scheduler.framework import Code, NodeInfo, Status

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"


def matches_node_selector(pod: Pod, node_info: NodeInfo) -> bool:
    selector = pod.spec.node_selector
    if not selector:
        return True
    node = node_info.node
    labels = node.metadata.labels if node is not None else {}
    for key, value in selector.items():
        if labels.get(key) != value:
            return False
    return True


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001
    if matches_node_selector(pod, node_info):
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD, plugin=NAME)
