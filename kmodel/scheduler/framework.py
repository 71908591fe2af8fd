"""The scheduler framework's data: Status, Resource, HostPortInfo, NodeInfo, Diagnosis and FitError.

A port of kubernetes/kubernetes pkg/scheduler/framework (types.go, interface.go) and of the HostPortInfo type
(k8s.io/kube-scheduler/framework, formerly pkg/scheduler/framework/types.go).

Theory of operation
-------------------
The real scheduler keeps a cache with one NodeInfo per node: the Node object, the pods bound (or assumed) to it,
the sum of their resource requests and the host ports they hold. It is updated incrementally from the informers
(add_pod / remove_pod / set_node), never rebuilt, so a scheduling cycle costs O(nodes) and not O(pods). The Filter
plugins read one NodeInfo and answer a Status; a node passes when every plugin answers success. When no node
passes, the scheduler reports a FitError whose text is the histogram of the plugins' reasons.

Resource sums are plain integers, exactly as upstream: cpu in millicores (Quantity.MilliValue), memory, ephemeral
storage and scalar resources in units (Quantity.Value), the allowed pod number from allocatable "pods". A pod's
request is the sum over its containers, then the per-resource max with each init container (they run one at a
time). Besides the real request, NodeInfo keeps the "non-zero" request used by scoring: a container with no cpu or
memory request counts as 100m / 200MB (schedutil.DefaultMilliCPURequest / DefaultMemoryRequest).

HostPortInfo is a map ip -> set of (protocol, port). An empty hostIP means 0.0.0.0, an empty protocol TCP, a port
<= 0 is ignored. 0.0.0.0 conflicts with the same protocol/port on any IP; another IP conflicts with the same
protocol/port on itself or on 0.0.0.0; different protocols never conflict. Like upstream it is a set, not a
multiset: removing a pod frees its (ip, protocol, port) even if another pod on the node (bound without the
scheduler, say) declared the same one. The scheduler's cache then believes the port free for good, and every pod
it places there is rejected by the kubelet (docs/upstream-bugs.md). With `count_holders` (the
`scheduler-count-host-port-holders` fix, kmodel.fixes) it counts the pods holding each one, and frees it when the
last goes.

Differences from upstream: pod Overhead, pod-level resources, restartable (sidecar) init containers, in-place
resize, image states, PVC reference counts and the affinity bookkeeping of NodeInfo are not modelled (the objects
layer does not carry those fields). NodeInfo.generation is a counter local to the NodeInfo, not a global one.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Iterator, Mapping, Optional

from kmodel.objects import Node, Pod, Taint

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
PROTOCOL_TCP = "TCP"

# pkg/scheduler/util: the request assumed for a container that names none (scoring only).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# The kubelet's default --max-pods; the kubelet reports it as allocatable "pods". The scheduler itself reads only
# allocatable: a node that reports no "pods" allows none (Too many pods), as upstream.
DEFAULT_MAX_PODS = 110

RESOURCE_CPU = "cpu"
RESOURCE_MEMORY = "memory"
RESOURCE_PODS = "pods"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"

NO_NODE_AVAILABLE_MSG = "0/%d nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class Code(enum.IntEnum):
    """framework.Code: the outcome of a plugin."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


class Status:
    """framework.Status: a code, the reasons (upstream's exact texts) and the plugin that answered."""

    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        """Status.Message: the reasons joined by ", "."""
        return ", ".join(self.reasons)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code, self.reasons, self.plugin) == (other.code, other.reasons, other.plugin)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons, self.plugin))

    def __repr__(self) -> str:
        return f"Status({self.code.name}, {self.reasons!r}, plugin={self.plugin!r})"


# ---------------------------------------------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------------------------------------------


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName, approximately: extended (domain-prefixed) resources and hugepages."""
    return "/" in name or name.startswith("hugepages-")


class Resource:
    """framework.Resource: integer sums per resource (see the module docstring for the units)."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: Optional[dict[str, int]] = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = dict(scalar) if scalar else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, Any]) -> Resource:
        """NewResource(rl)."""
        r = cls()
        r.add(rl)
        return r

    def add(self, rl: Mapping[str, Any]) -> None:
        """Resource.Add: add a ResourceList (name -> Quantity)."""
        for name, q in rl.items():
            if name == RESOURCE_CPU:
                self.milli_cpu += q.milli_value()
            elif name == RESOURCE_MEMORY:
                self.memory += q.value()
            elif name == RESOURCE_PODS:
                self.allowed_pod_number += q.value()
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage += q.value()
            elif is_scalar_resource_name(name):
                self.scalar[name] = self.scalar.get(name, 0) + q.value()

    def set_max(self, rl: Mapping[str, Any]) -> None:
        """Resource.SetMaxResource: per resource, the max of this and the list."""
        for name, q in rl.items():
            if name == RESOURCE_CPU:
                self.milli_cpu = max(self.milli_cpu, q.milli_value())
            elif name == RESOURCE_MEMORY:
                self.memory = max(self.memory, q.value())
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, q.value())
            elif is_scalar_resource_name(name):
                self.scalar[name] = max(self.scalar.get(name, 0), q.value())

    def add_resource(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, v in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * v

    def is_zero(self) -> bool:
        return (
            self.milli_cpu == 0
            and self.memory == 0
            and self.ephemeral_storage == 0
            and not self.scalar
        )

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, self.scalar)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        return (
            f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, ephemeral_storage={self.ephemeral_storage}"
            f", allowed_pod_number={self.allowed_pod_number}, scalar={self.scalar})"
        )


def pod_requests(pod: Pod) -> Resource:
    """computePodResourceRequest: sum of the containers' requests, then max with each init container's."""
    r = Resource()
    for c in pod.spec.containers:
        r.add(c.resources.requests)
    for c in pod.spec.init_containers:
        r.set_max(c.resources.requests)
    return r


def pod_non_zero_requests(pod: Pod) -> tuple[int, int]:
    """(milli cpu, memory) with the scheduler's defaults for containers that request no cpu / memory."""
    cpu = mem = 0
    for c in pod.spec.containers:
        ccpu, cmem = _container_non_zero(c.resources.requests)
        cpu += ccpu
        mem += cmem
    for c in pod.spec.init_containers:
        ccpu, cmem = _container_non_zero(c.resources.requests)
        cpu = max(cpu, ccpu)
        mem = max(mem, cmem)
    return cpu, mem


def _container_non_zero(requests: Mapping[str, Any]) -> tuple[int, int]:
    q = requests.get(RESOURCE_CPU)
    cpu = DEFAULT_MILLI_CPU_REQUEST if q is None else q.milli_value()
    q = requests.get(RESOURCE_MEMORY)
    mem = DEFAULT_MEMORY_REQUEST if q is None else q.value()
    return cpu, mem


# ---------------------------------------------------------------------------------------------------------------
# Host ports
# ---------------------------------------------------------------------------------------------------------------


class HostPortInfo:
    """HostPortInfo: ip -> {(protocol, port)} (see the module docstring for the conflict rules)."""

    __slots__ = ("_by_ip", "_holders")

    def __init__(self, count_holders: bool = False) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}
        #: with `count_holders`: how many adds of each (ip, protocol, port) are not removed yet; None: a set
        self._holders: Optional[dict[tuple[str, str, int], int]] = {} if count_holders else None

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return (ip or DEFAULT_BIND_ALL_HOST_IP, protocol or PROTOCOL_TCP)

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        holders = self._holders
        if holders is not None:
            key = (ip, protocol, port)
            holders[key] = holders.get(key, 0) + 1
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        holders = self._holders
        if holders is not None:
            key = (ip, protocol, port)
            left = holders.get(key, 0) - 1
            if left > 0:
                holders[key] = left
                return  # another pod still holds it
            holders.pop(key, None)
        pps = self._by_ip.get(ip)
        if pps is not None:
            pps.discard((protocol, port))
            if not pps:
                del self._by_ip[ip]

    def __len__(self) -> int:
        return sum(len(pps) for pps in self._by_ip.values())

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """CheckConflict: whether (ip, protocol, port) collides with a port already held."""
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in pps for pps in self._by_ip.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            pps = self._by_ip.get(key)
            if pps is not None and pp in pps:
                return True
        return False

    def items(self) -> list[tuple[str, str, int]]:
        """Every held (ip, protocol, port), sorted (a view for tests and invariants)."""
        return sorted((ip, proto, port) for ip, pps in self._by_ip.items() for proto, port in pps)


def pod_host_ports(pod: Pod) -> Iterator[tuple[str, str, int]]:
    """The (hostIP, protocol, hostPort) of every container port, as upstream's getContainerPorts lists them."""
    for c in pod.spec.containers:
        for p in c.ports:
            yield p.host_ip, p.protocol, p.host_port


# ---------------------------------------------------------------------------------------------------------------
# NodeInfo
# ---------------------------------------------------------------------------------------------------------------


def pod_key(pod: Pod) -> str:
    """The cache key of a pod: its UID (upstream's GetPodKey), or namespace/name when it has none."""
    return pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"


class PodInfo:
    """A pod on a node with its requests computed once (framework.PodInfo + its cached PodResource)."""

    __slots__ = ("pod", "requests", "non0_cpu", "non0_mem")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.requests = pod_requests(pod)
        self.non0_cpu, self.non0_mem = pod_non_zero_requests(pod)


class NodeInfo:
    """framework.NodeInfo: one node, the pods on it and what they hold, maintained incrementally."""

    __slots__ = ("node", "pods", "requested", "non_zero_requested", "allocatable", "used_ports", "generation",
                 "plain_room")

    def __init__(self, node: Optional[Node] = None, pods: Iterable[Pod] = (), *,
                 count_port_holders: bool = False) -> None:
        self.node: Optional[Node] = None
        self.pods: dict[str, PodInfo] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.used_ports = HostPortInfo(count_port_holders)
        self.generation = 0
        #: what is left for a pod that only NodeResourcesFit can reject (see kmodel.scheduler.fastpath): pods,
        #: milli cpu, memory, ephemeral storage; None when the node is missing, cordoned or tainted
        self.plain_room: Optional[tuple[int, int, int, int]] = None
        if node is not None:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    @property
    def name(self) -> str:
        return "" if self.node is None else self.node.metadata.name

    @property
    def taints(self) -> tuple[Taint, ...]:
        return () if self.node is None else self.node.spec.taints

    def set_node(self, node: Node) -> None:
        """SetNode: (re)place the Node object; allocatable is re-read from its status."""
        self.node = node
        self.allocatable = Resource.from_list(node.status.allocatable)
        self.generation += 1
        self._update_room()

    def clear_node(self) -> None:
        """RemoveNode while pods still point at the node: the NodeInfo stays, without a Node."""
        self.node = None
        self.generation += 1
        self._update_room()

    def _update_room(self) -> None:
        node = self.node
        if node is None or node.spec.unschedulable or node.spec.taints:
            self.plain_room = None
            return
        alloc, used = self.allocatable, self.requested
        self.plain_room = (alloc.allowed_pod_number - len(self.pods), alloc.milli_cpu - used.milli_cpu,
                           alloc.memory - used.memory, alloc.ephemeral_storage - used.ephemeral_storage)

    def add_pod(self, pod: Pod) -> None:
        """AddPod: account the pod's requests and host ports (replacing an older version of the same pod)."""
        key = pod_key(pod)
        if key in self.pods:
            self.remove_pod(self.pods[key].pod)
        info = PodInfo(pod)
        self.pods[key] = info
        self._update(info, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """RemovePod: undo add_pod for the pod with this key; False if it is not on the node."""
        info = self.pods.pop(pod_key(pod), None)
        if info is None:
            return False
        self._update(info, -1)
        return True

    def _update(self, info: PodInfo, sign: int) -> None:
        self.requested.add_resource(info.requests, sign)
        self.non_zero_requested.milli_cpu += sign * info.non0_cpu
        self.non_zero_requested.memory += sign * info.non0_mem
        for ip, protocol, port in pod_host_ports(info.pod):
            if sign > 0:
                self.used_ports.add(ip, protocol, port)
            else:
                self.used_ports.remove(ip, protocol, port)
        self.generation += 1
        self._update_room()

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested!r})"


# ---------------------------------------------------------------------------------------------------------------
# FitError
# ---------------------------------------------------------------------------------------------------------------


class Diagnosis:
    """framework.Diagnosis: the status of every rejected node (in evaluation order) and the plugins involved."""

    __slots__ = ("node_to_status", "unschedulable_plugins", "pre_filter_msg", "post_filter_msg")

    def __init__(self) -> None:
        self.node_to_status: dict[str, Status] = {}
        self.unschedulable_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""

    def record(self, node_name: str, status: Status) -> None:
        """A node the Filter plugins rejected: its status, and the plugin that rejected it."""
        self.node_to_status[node_name] = status
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)


class FitError:
    """framework.FitError: no node fits. str(fit_error) is upstream's message (see error())."""

    __slots__ = ("pod", "num_all_nodes", "diagnosis")

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def error(self) -> str:
        """FitError.Error: "0/N nodes are available: <count> <reason>, ….", the histogram entries sorted as
        strings (sort.Strings on "<count> <reason>", so "10 …" sorts before "2 …"), then the PostFilter message."""
        msg = NO_NODE_AVAILABLE_MSG % self.num_all_nodes + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            for status in d.node_to_status.values():
                for reason in status.reasons:
                    counts[reason] = counts.get(reason, 0) + 1
            histogram = sorted(f"{v} {k}" for k, v in counts.items())
            if histogram:
                msg += " " + ", ".join(histogram) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg

    def __str__(self) -> str:
        return self.error()

    def __repr__(self) -> str:
        return f"FitError({self.error()!r})"


class NoNodesAvailable:
    """ErrNoNodesAvailable: the scheduler's snapshot holds no node at all."""

    __slots__ = ()

    def error(self) -> str:
        return ERR_NO_NODES_AVAILABLE

    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE

    def __repr__(self) -> str:
        return "NoNodesAvailable()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoNodesAvailable)

    def __hash__(self) -> int:
        return hash(NoNodesAvailable)
