"""The data plane: where a packet sent inside the cluster ends up, read from the machines' own state.

Theory of operation
-------------------
The control plane talks in messages (kmodel.network: every message is counted on the communication graph and
must have an API server at one end). Application traffic does not: a packet leaves a process, the node's
kernel rewrites it with the rules kube-proxy programmed (iptables DNAT of ClusterIP:port to one ready
endpoint), and the pod network carries it to whichever network namespace holds the destination IP. None of
that is a control-plane message, so `DataPlane` sends nothing and is never on the communication graph; it
*reads*, as the kernel and the wire do:

* `service_rules(node, namespace, name)`: the rules node's kube-proxy programmed for one Service,
  {"<clusterIP>:<port>": ["<podIP>:<port>", ...]}. They are the kernel's state (kmodel.proxy.component keeps
  them across a kube-proxy crash), kept per Service as iptables keeps the Service's name in its rule comments
  ("default/web cluster IP"); an empty dict when the node has no rules for that Service.
* `pod_at(ip)`: the pod that a packet to `ip` reaches: the READY sandbox whose network namespace holds `ip`
  (open, not closed by a reboot) with at least one running container, on any node still in the cluster
  (read from each kubelet's `ContainerRuntime`, which outlives the kubelet process as the node's processes
  do). A packet to a node's own IP reaches the hostNetwork pod of that node that publishes the packet's port
  (pods on the host network share the node's address; their ports tell them apart). None when nothing answers
  (the packet times out).

`machines` is the loop's live table of components by name (it grows when a node joins), and `gone` the
nodes taken out of the cluster for good (their machines are off: no rules, no pods). The DataPlane is handed
to the components that send traffic by the cluster wiring (kmodel.cluster.components.wire).

Differences from upstream: no ports, protocols or connection tracking on the pod side (a packet to a pod's IP
reaches the pod; only on a node's IP, shared by its hostNetwork pods, does the port choose the pod); no NodePort, session affinity or traffic policies; readiness is not a property of the
packet (a running container that is not ready still answers a packet sent to its IP; kube-proxy is what
keeps unready pods out of the rules).
"""

from __future__ import annotations

from typing import Any, Collection, Mapping, Optional

import attrs

from kmodel.kubelet.runtime import ContainerState, PodSandboxState

KUBELET_PREFIX = "kubelet/"
PROXY_PREFIX = "proxy/"


@attrs.frozen
class Reached:
    """The pod a packet reached: where it runs and who it is (from the sandbox's CRI metadata)."""

    node: str
    namespace: str
    name: str
    uid: str
    ip: str

    def __str__(self) -> str:
        return f"pod {self.namespace}/{self.name} ({self.ip} on {self.node})"


def split_host_port(address: str) -> tuple[str, int]:
    """"10.244.1.3:80" -> ("10.244.1.3", 80); "[fd00::3]:80" -> ("fd00::3", 80); a "/UDP" suffix is dropped."""
    address = address.split("/", 1)[0]
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


class DataPlane:
    """See the module docstring."""

    def __init__(self, machines: Mapping[str, Any], gone: Collection[str] = ()) -> None:
        self.machines = machines
        self.gone = gone
        self._kubelets: tuple[tuple[str, Any], ...] = ()
        self._known = -1  # len(machines) when _kubelets was built

    def _nodes(self) -> tuple[tuple[str, Any], ...]:
        """(node, kubelet) of every kubelet, by name; rebuilt only when a machine joined."""
        if len(self.machines) != self._known:
            self._known = len(self.machines)
            self._kubelets = tuple((name[len(KUBELET_PREFIX):], c) for name, c in sorted(self.machines.items())
                                   if name.startswith(KUBELET_PREFIX))
        return self._kubelets

    def service_rules(self, node: str, namespace: str, name: str) -> dict[str, list[str]]:
        """The node's programmed rules for Service namespace/name ({} if none, or the node is gone)."""
        proxy = self.machines.get(PROXY_PREFIX + node)
        if proxy is None or node in self.gone:
            return {}
        # the kernel's table, kept per Service by kube-proxy (see the module docstring)
        per_service = proxy._programmed  # noqa: SLF001
        return dict(per_service.get(f"{namespace}/{name}", {}))

    def pod_at(self, ip: str, port: int = 0) -> Optional[Reached]:
        """The pod a packet to `ip` (and `port`) reaches, or None (see the module docstring)."""
        for node, kubelet in self._nodes():
            if node in self.gone:
                continue
            runtime = kubelet.runtime
            for sandbox in runtime.sandboxes.values():
                if ip not in sandbox.ips or sandbox.state != PodSandboxState.SANDBOX_READY or sandbox.netns_closed:
                    continue
                if self._running(runtime, sandbox):
                    md = sandbox.metadata
                    return Reached(node, md.namespace, md.name, md.uid, ip)
        return self._host_network_pod_at(ip, port)

    @staticmethod
    def _running(runtime: Any, sandbox: Any) -> bool:
        return any(c.state == ContainerState.CONTAINER_RUNNING for c in runtime.sandbox_containers(sandbox.id))

    def _host_network_pod_at(self, ip: str, port: int) -> Optional[Reached]:
        """A packet to a node's own IP reaches the hostNetwork pod listening there: the READY hostNetwork sandbox
        of that node with a running container that publishes `port` (any, when `port` is 0), the first the
        runtime made."""
        for node, kubelet in self._nodes():
            if node in self.gone or getattr(getattr(kubelet, "config", None), "node_ip", None) != ip:
                continue
            runtime = kubelet.runtime
            for sandbox in runtime.sandboxes.values():
                if not sandbox.host_network or sandbox.state != PodSandboxState.SANDBOX_READY:
                    continue
                if port and not any(port in (m.container_port, m.host_port) for m in sandbox.port_mappings):
                    continue
                if self._running(runtime, sandbox):
                    md = sandbox.metadata
                    return Reached(node, md.namespace, md.name, md.uid, ip)
        return None
