"""The scheduler cache: one NodeInfo per node, kept incrementally, with assumed pods (pkg/scheduler/backend/cache).

Theory of operation
-------------------
The cache is fed by the informers: nodes (add/update/remove) and pods bound to a node (add/update/remove). It
never rebuilds anything; each event adjusts one or two NodeInfos.

Assume. When a scheduling cycle picks a node, the pod is *assumed* there at once (AssumePod): it counts on
that node's NodeInfo before the Binding is even sent, so the next cycle, which may run before the bind
answer and long before the informer shows the pod bound, sees the slot taken. When the informer then shows the
pod bound, the assumption is confirmed (moved if the pod ended up elsewhere); when the binding fails it is
forgotten (ForgetPod). Upstream's assumed pods never expire by default (ttl 0 since 1.29), nor here.

Order. `node_infos()` lists the nodes as upstream's nodeTree does: zones (topology.kubernetes.io/region and
zone labels) in the order they first appeared, nodes in each zone in the order they were added, taken round
robin across zones. A pod bound to a node the cache has not seen gets a NodeInfo without a Node, which is
not listed until the Node arrives (as upstream's "imaginary" node).

Not modelled: image states, PVC reference counts, the snapshot/generation machinery (the model schedules
straight from the cache, which no one changes during a cycle: a cycle is one loop event).
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Node, Pod
from kmodel.scheduler.framework import NodeInfo, pod_key

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone, "" when the node has neither."""
    labels = node.metadata.labels
    zone = labels.get(LABEL_ZONE) or labels.get(LABEL_ZONE_BETA) or ""
    region = labels.get(LABEL_REGION) or labels.get(LABEL_REGION_BETA) or ""
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class SchedulerCache:
    """See the module docstring."""

    def __init__(self, *, count_port_holders: bool = False) -> None:
        #: the `scheduler-count-host-port-holders` fix (kmodel.fixes): NodeInfos count each host port's holders
        self.count_port_holders = count_port_holders
        self.infos: dict[str, NodeInfo] = {}
        self._zones: dict[str, list[str]] = {}  # nodeTree: zone -> node names in insertion order
        self._zone_of: dict[str, str] = {}
        self._pod_node: dict[str, str] = {}  # pod key -> the node it is counted on
        self.assumed: dict[str, str] = {}  # pod key -> node, for assumed pods not yet confirmed
        self._listed: Optional[list[NodeInfo]] = None

    # -- nodes ---------------------------------------------------------------------------------------------

    def _info(self, name: str) -> NodeInfo:
        info = self.infos.get(name)
        if info is None:
            info = self.infos[name] = NodeInfo(count_port_holders=self.count_port_holders)
        return info

    def add_node(self, node: Node) -> None:
        name = node.metadata.name
        self._info(name).set_node(node)
        zone = zone_key(node)
        old_zone = self._zone_of.get(name)
        if old_zone != zone:
            if old_zone is not None:
                self._tree_remove(name, old_zone)
            self._zones.setdefault(zone, []).append(name)
            self._zone_of[name] = zone
            self._listed = None

    update_node = add_node

    def remove_node(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is not None:
            self._tree_remove(name, zone)
            self._listed = None
        info = self.infos.get(name)
        if info is not None:
            if info.pods:
                info.clear_node()  # pods still point at it: keep an imaginary node, unlisted
            else:
                del self.infos[name]

    def _tree_remove(self, name: str, zone: str) -> None:
        names = self._zones[zone]
        names.remove(name)
        if not names:
            del self._zones[zone]

    def node_infos(self) -> list[NodeInfo]:
        """The nodes in nodeTree order (see the module docstring); the list is cached until a node comes or goes."""
        if self._listed is None:
            zones = list(self._zones.values())
            order: list[str] = []
            for i in range(max((len(z) for z in zones), default=0)):
                order.extend(z[i] for z in zones if i < len(z))
            self._listed = [self.infos[n] for n in order]
        return self._listed

    # -- pods ----------------------------------------------------------------------------------------------

    def _place(self, pod: Pod, node: str) -> None:
        key = pod_key(pod)
        old = self._pod_node.get(key)
        if old is not None and old != node:
            self._unplace(key, pod)
        self._info(node).add_pod(pod)
        self._pod_node[key] = node

    def _unplace(self, key: str, pod: Pod) -> None:
        node = self._pod_node.pop(key, None)
        if node is None:
            return
        info = self.infos.get(node)
        if info is not None:
            info.remove_pod(pod)
            if info.node is None and not info.pods:
                del self.infos[node]

    def assume(self, pod: Pod, node: str) -> None:
        """AssumePod: count `pod` on `node` from now on."""
        self._place(pod, node)
        self.assumed[pod_key(pod)] = node

    def forget(self, pod: Pod) -> None:
        """ForgetPod: undo assume (the binding failed)."""
        key = pod_key(pod)
        if self.assumed.pop(key, None) is not None:
            self._unplace(key, pod)

    def is_assumed(self, pod: Pod) -> bool:
        return pod_key(pod) in self.assumed

    def add_pod(self, pod: Pod) -> None:
        """AddPod / UpdatePod for a pod bound to a node: confirms an assumption."""
        self.assumed.pop(pod_key(pod), None)
        self._place(pod, pod.spec.node_name)

    update_pod = add_pod

    def remove_pod(self, pod: Pod) -> None:
        key = pod_key(pod)
        self.assumed.pop(key, None)
        self._unplace(key, pod)

    def node_of(self, pod: Pod) -> str:
        return self._pod_node.get(pod_key(pod), "")
