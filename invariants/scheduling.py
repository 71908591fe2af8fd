"""Scheduling invariants: what is bound to a node fits it, host ports do not clash, a binding never moves.

Incremental: each check reads the pod and node writes of the last step from the store's history and
re-examines only the nodes they touched.
"""

from __future__ import annotations

from typing import Any, Iterator

from invariants._history import NODES, PODS, HistoryReader, is_terminal, name_of, node_key
from invariants.registry import SAFETY, invariant
from kmodel.scheduler.framework import Resource, pod_host_ports, pod_requests


def _counts(pod: Any) -> bool:
    """A pod that occupies its node: bound, not Succeeded or Failed."""
    return pod is not None and bool(pod.spec.node_name) and not is_terminal(pod)


def _touched_nodes(reader: HistoryReader, changes: list, on_node: dict) -> dict[str, None]:
    """Apply the pod changes to the node -> pods index; return the nodes to re-examine."""
    touched: dict[str, None] = {}
    for ch in changes:
        if ch.key.startswith(NODES):
            touched[ch.key[len(NODES):]] = None
            continue
        if _counts(ch.prev):
            group = on_node.get(ch.prev.spec.node_name)
            if group is not None:
                group.pop(ch.key, None)
            touched[ch.prev.spec.node_name] = None
        if _counts(ch.value):
            on_node.setdefault(ch.value.spec.node_name, {})[ch.key] = None
            touched[ch.value.spec.node_name] = None
    return touched


@invariant("no-overcommit", kind=SAFETY, principle="scheduling")
def no_overcommit(cluster: Any, memo: dict) -> Iterator[str]:
    """On every node, the requests of the live pods bound to it fit its allocatable cpu and memory, and there are
    no more of them than its allocatable pods."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader((PODS, NODES))
        memo["on_node"] = {}
        memo["bad"] = {}
    on_node: dict = memo["on_node"]
    bad: dict[str, str] = memo["bad"]
    for node_name in _touched_nodes(reader, reader.read(cluster.store), on_node):
        bad.pop(node_name, None)
        node = reader.value(node_key(node_name))
        if node is None:
            continue
        alloc = Resource.from_list(node.status.allocatable)
        keys = on_node.get(node_name, {})
        used = Resource()
        for key in keys:
            used.add_resource(pod_requests(reader.value(key)))
        problems = []
        if "pods" in node.status.allocatable and len(keys) > alloc.allowed_pod_number:
            problems.append(f"{len(keys)} pods > {alloc.allowed_pod_number} allowed")
        if "cpu" in node.status.allocatable and used.milli_cpu > alloc.milli_cpu:
            problems.append(f"cpu requests {used.milli_cpu}m > allocatable {alloc.milli_cpu}m")
        if "memory" in node.status.allocatable and used.memory > alloc.memory:
            problems.append(f"memory requests {used.memory} > allocatable {alloc.memory}")
        if problems:
            bad[node_name] = f"node {node_name} is overcommitted: {'; '.join(problems)}"
    for name in sorted(bad):
        yield bad[name]


def _port_conflict(a: tuple[str, str, int], b: tuple[str, str, int]) -> bool:
    """HostPortInfo.CheckConflict: same protocol and port, and the same IP or either one 0.0.0.0."""
    ip_a, proto_a, port_a = a
    ip_b, proto_b, port_b = b
    if port_a != port_b or proto_a != proto_b:
        return False
    return ip_a == ip_b or ip_a == "0.0.0.0" or ip_b == "0.0.0.0"


def _host_ports(pod: Any) -> list[tuple[str, str, int]]:
    return [(ip or "0.0.0.0", proto or "TCP", port) for ip, proto, port in pod_host_ports(pod) if port > 0]


@invariant("host-ports-unique", kind=SAFETY, principle="scheduling")
def host_ports_unique(cluster: Any, memo: dict) -> Iterator[str]:
    """No two live pods bound to the same node claim conflicting host ports (same protocol and port, and the
    same hostIP or either 0.0.0.0; an empty hostIP is 0.0.0.0, an empty protocol TCP)."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader((PODS, NODES))
        memo["on_node"] = {}
        memo["bad"] = {}
    on_node: dict = memo["on_node"]
    bad: dict[str, list[str]] = memo["bad"]
    for node_name in _touched_nodes(reader, reader.read(cluster.store), on_node):
        bad.pop(node_name, None)
        claims: list[tuple[tuple[str, str, int], str]] = []
        found: list[str] = []
        for key in sorted(on_node.get(node_name, {})):
            pod = reader.value(key)
            if pod.spec.host_network and not _host_ports(pod):
                continue
            for hp in _host_ports(pod):
                for other, owner in claims:
                    if owner != key and _port_conflict(hp, other):
                        found.append(f"node {node_name}: pods {name_of(owner)} and {name_of(key)} both claim host "
                                     f"port {hp[2]}/{hp[1]} ({other[0]} and {hp[0]})")
                claims.append((hp, key))
        if found:
            bad[node_name] = found
    for name in sorted(bad):
        yield from bad[name]


@invariant("binding-immutable", kind=SAFETY, principle="scheduling")
def binding_immutable(cluster: Any, memo: dict) -> Iterator[str]:
    """A pod's spec.nodeName, once set, never changes while the pod exists (read from the store's history)."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader((PODS,))
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
