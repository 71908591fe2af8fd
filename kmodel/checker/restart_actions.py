"""The actions of the restart family (kmodel.checker.restart_rules): an operator's change that lands while
kube-controller-manager starts again.

A controller that starts lists what it needs before its informers have synced, and acts on the difference
when they have: between the two, a change is seen by one and not the other. Random exploration rarely puts a
change in that window (a few dozen events of a restart that takes a hundred and more), so an action here
restarts the process and makes its change at a point it anchors on the starting controller's own progress, as
CrashMidReconcile anchors a crash on a reconcile's writes.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from kmodel.checker.actions import CONTROLLER_MANAGER, Action, CrashProcess, RemoveNode, RestartProcess
from kmodel.checker.simpler import Simplest, earlier_node, fewer
from kmodel.cluster import Cluster
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import at_least

#: the node IPAM controller of the first kube-controller-manager (its startup list is the anchor)
NODE_IPAM = "controller/nodeipam"
#: the most events a restart may take to reach its anchor (a restart that must first wait out the lease takes
#: about 130 on the dev cluster); logical time is bounded too, to a minute
MAX_RESTART_EVENTS = 20_000
RESTART_WINDOW_MS = 60_000


@attrs.frozen
class RestartManagerRemovingNode(Action):
    """kube-controller-manager crashes and starts again, and `node` is removed (`Cluster.remove_node`: its
    machine stops and `kubectl delete node` is sent) `after` events after the restarted node IPAM controller's
    startup list of nodes was answered: before its informer's first list (node IPAM then holds the node's
    block from the startup list and never hears the delete, upstream's leak), or after it (the informer sees
    the delete). A cluster-autoscaler scaling a node down during a control-plane upgrade does this."""

    kind: ClassVar[str] = "restart-manager-removing-node"
    simplest: ClassVar[Simplest] = (("node", earlier_node()), ("after", fewer(0)))
    node: str
    after: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        return (f"restart {CONTROLLER_MANAGER}; remove {self.node} {self.after} events after its node IPAM's "
                f"startup list was answered")

    def apply(self, cluster: Cluster) -> None:
        loop = cluster.loop
        ipam = loop.components.get(NODE_IPAM)
        if ipam is None or self.node not in cluster.nodes:
            raise EventNotEnabled(f"{self.name}: no node IPAM controller or no node {self.node} in this cluster")
        CrashProcess().apply(cluster)
        RestartProcess().apply(cluster)
        deadline = cluster.now + RESTART_WINDOW_MS
        events = 0
        while not ipam.initial_listed and events < MAX_RESTART_EVENTS:  # type: ignore[attr-defined]
            if loop.run_fair(deadline, max_events=1) == 0:
                break
            events += 1
        if self.after:
            loop.run_fair(deadline, max_events=self.after)
        RemoveNode(self.node).apply(cluster)
