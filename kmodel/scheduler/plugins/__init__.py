"""The in-tree scheduler plugins the model runs, one module each (Filter, and Score where upstream scores).

FILTERS lists the Filter plugins in the default profile's order (pkg/scheduler/apis/config/v1 default_plugins.go:
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, then volume and
topology plugins that the model does not have). The order matters: a node's filtering stops at the first plugin
that rejects it, so only that plugin's reasons count in the FitError message.
"""

from kmodel.scheduler.plugins import (
    nodeaffinity, nodename, nodeports, noderesources, nodeunschedulable, tainttoleration,
)

FILTERS = (
    (nodeunschedulable.NAME, nodeunschedulable.filter),
    (nodename.NAME, nodename.filter),
    (tainttoleration.NAME, tainttoleration.filter),
    (nodeaffinity.NAME, nodeaffinity.filter),
    (nodeports.NAME, nodeports.filter),
    (noderesources.NAME, noderesources.filter),
)

__all__ = [
    "FILTERS", "nodeaffinity", "nodename", "nodeports", "noderesources", "nodeunschedulable", "tainttoleration",
]
