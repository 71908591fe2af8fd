"""Scheduling invariants: what a node runs fits it, host ports do not clash on it, a binding never moves.

no-overcommit and host-ports-unique judge what each node *runs* (its runtime's ready sandboxes, which carry the
pod's host port mappings and requests), not what the store binds to it: real Kubernetes lets a scheduler with
a stale cache bind one pod too many to a node (the API server takes any binding of an unbound pod), and the
kubelet's admission is what refuses to run it. They are incremental: a node is judged again only when its
runtime's sandboxes changed. binding-immutable reads the pod writes of the last step from the store's history.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from kmodel.invariants._history import PODS, change_feed, name_of
from kmodel.invariants.inputs import KUBELET_RUNTIMES, writes
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.objects.quantity import parse_quantity

KUBELET_PREFIX = "kubelet/"


def _node_runtimes(cluster: Any, memo: dict) -> list[tuple[str, Any]]:
    """(node, kubelet) for every machine still in the cluster, by node name (a removed machine runs nothing).
    Components are only ever added and machines only ever removed, so the list is kept until either count
    changes."""
    components = cluster.loop.components
    removed = cluster.removed_nodes
    key = (len(components), len(removed))
    cached = memo.get("runtimes")
    if cached is None or cached[0] != key:
        gone = set(removed)
        found = [(name[len(KUBELET_PREFIX):], components[name]) for name in sorted(components)
                 if name.startswith(KUBELET_PREFIX) and name[len(KUBELET_PREFIX):] not in gone]
        cached = memo["runtimes"] = (key, found)
    return cached[1]


def _per_node(cluster: Any, memo: dict, judge: Callable[[str, Any], list[str]]) -> Iterator[str]:
    """Judge each node again only when its runtime's sandboxes changed (the runtime's generation moved)."""
    seen: dict[str, tuple[int, list[str]]] = memo.setdefault("nodes", {})
    for node, kubelet in _node_runtimes(cluster, memo):
        generation = kubelet.runtime.generation
        entry = seen.get(node)
        if entry is None or entry[0] != generation:
            entry = seen[node] = (generation, judge(node, kubelet))
        yield from entry[1]


def _pod_name(sandbox: Any) -> str:
    return f"{sandbox.metadata.namespace}/{sandbox.metadata.name}"


# no-overcommit's own arithmetic, never the scheduler's (framework.Resource, pod_requests) nor the kubelet's
# (node_status.resources), which its admission and the sandboxes' recorded requests come from: a mistake there
# cannot move the oracle with it.

def _allocatable(config: Any) -> tuple[int, int, int]:
    """(milli cpu, memory bytes, pods) a node offers: the machine's configured cpu, memory and max pods (the
    model's kubelet reserves nothing, so allocatable is capacity)."""
    return parse_quantity(config.cpu).milli_value(), parse_quantity(config.memory).value(), config.max_pods


def _requests(pod: Any) -> tuple[int, int]:
    """(milli cpu, memory bytes) a pod requests (computePodResourceRequest): the sum over its containers, or
    the largest init container's if that is more, per resource."""
    def of(containers: Any) -> list[tuple[int, int]]:
        out = []
        for c in containers:
            cpu, memory = c.resources.requests.get("cpu"), c.resources.requests.get("memory")
            out.append((cpu.milli_value() if cpu is not None else 0, memory.value() if memory is not None else 0))
        return out
    running, init = of(pod.spec.containers), of(pod.spec.init_containers)
    cpu, memory = sum(r[0] for r in running), sum(r[1] for r in running)
    return max([cpu, *(r[0] for r in init)]), max([memory, *(r[1] for r in init)])


def _pod_requests(cluster: Any, memo: dict) -> dict[str, tuple[int, int]]:
    """pod uid -> its requests, for every pod the store ever held (a sandbox may outlive its pod object)."""
    feed = memo.get("pods")
    if feed is None:
        feed = memo["pods"] = change_feed(memo, (PODS,))
        memo["requests"] = {}
    requests: dict[str, tuple[int, int]] = memo["requests"]
    for ch in feed.read(cluster.store):
        if ch.value is not None and ch.prev is None:
            requests[ch.value.metadata.uid] = _requests(ch.value)
    return requests


def _overcommit(node: str, kubelet: Any, requests: dict[str, tuple[int, int]]) -> list[str]:
    cpu_alloc, memory_alloc, pods_alloc = _allocatable(kubelet.config)
    running = kubelet.runtime.ready_sandboxes()
    # a sandbox of a pod the store never held (a static pod's own uid) counts what the kubelet recorded for it
    asked = [requests.get(sb.metadata.uid, (sb.resources.milli_cpu, sb.resources.memory)) for sb in running]
    cpu = sum(a[0] for a in asked)
    memory = sum(a[1] for a in asked)
    problems = []
    if len(running) > pods_alloc:
        problems.append(f"{len(running)} pods > {pods_alloc} allowed")
    if cpu > cpu_alloc:
        problems.append(f"cpu requests {cpu}m > allocatable {cpu_alloc}m")
    if memory > memory_alloc:
        problems.append(f"memory requests {memory} > allocatable {memory_alloc}")
    if not problems:
        return []
    pods = ", ".join(_pod_name(sb) for sb in running)
    return [f"node {node} is overcommitted: {'; '.join(problems)} (running {pods})"]


@invariant("no-overcommit", kind=SAFETY, principle="scheduling",
           reads=(writes(PODS), KUBELET_RUNTIMES,))
def no_overcommit(cluster: Any, memo: dict) -> Iterator[str]:
    """The pods a node runs (its ready sandboxes) fit it: their cpu and memory requests within its allocatable
    and no more pods than it allows. The scheduler aims for this from its cache; the kubelet's admission is
    what guarantees it when that cache was stale."""
    requests = _pod_requests(cluster, memo)
    yield from _per_node(cluster, memo, lambda node, kubelet: _overcommit(node, kubelet, requests))


def _port_conflict(a: tuple[str, str, int], b: tuple[str, str, int]) -> bool:
    """HostPortInfo.CheckConflict: same protocol and port, and the same IP or either one 0.0.0.0."""
    ip_a, proto_a, port_a = a
    ip_b, proto_b, port_b = b
    if port_a != port_b or proto_a != proto_b:
        return False
    return ip_a == ip_b or ip_a == "0.0.0.0" or ip_b == "0.0.0.0"


def _host_ports(sandbox: Any) -> list[tuple[str, str, int]]:
    return [(m.host_ip or "0.0.0.0", m.protocol or "TCP", m.host_port) for m in sandbox.port_mappings
            if m.host_port > 0]


def _port_clashes(node: str, kubelet: Any) -> list[str]:
    claims: list[tuple[tuple[str, str, int], Any]] = []
    found: list[str] = []
    for sandbox in kubelet.runtime.ready_sandboxes():
        for hp in _host_ports(sandbox):
            for other, owner in claims:
                if owner.metadata.uid != sandbox.metadata.uid and _port_conflict(hp, other):
                    found.append(f"node {node} runs pods {_pod_name(owner)} and {_pod_name(sandbox)}, both holding "
                                 f"host port {hp[2]}/{hp[1]} ({other[0]} and {hp[0]})")
            claims.append((hp, sandbox))
    return found


@invariant("host-ports-unique", kind=SAFETY, principle="scheduling",
           reads=(KUBELET_RUNTIMES,))
def host_ports_unique(cluster: Any, memo: dict) -> Iterator[str]:
    """No node runs two pods (ready sandboxes) whose host ports conflict (same protocol and port, and the same
    hostIP or either 0.0.0.0; an empty hostIP is 0.0.0.0, an empty protocol TCP). A scheduler with a stale
    cache may bind both; the kubelet's admission must refuse the second."""
    yield from _per_node(cluster, memo, _port_clashes)


@invariant("binding-immutable", kind=SAFETY, principle="scheduling",
           reads=(writes(PODS),))
def binding_immutable(cluster: Any, memo: dict) -> Iterator[str]:
    """A pod's spec.nodeName, once set, never changes while the pod exists (read from the store's history)."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (PODS,))
        memo["bad"] = []
    bad: list = memo["bad"]
    for ch in reader.read(cluster.store):
        if ch.prev is None or ch.value is None:
            continue
        old, new = ch.prev.spec.node_name, ch.value.spec.node_name
        if old and new != old:
            bad.append(f"pod {name_of(ch.key)} was bound to {old} and moved to {new or '(no node)'} at revision "
                       f"{ch.rev}")
    yield from bad
