"""Network invariants: pod IPs, node CIDRs, and who may talk to whom.

Each reads the store's history incrementally (`_history.change_feed`): after every step it looks only at
the pods and nodes the step changed, so a check costs what the step wrote, not the size of the cluster.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any, Iterator

from kmodel.invariants._history import (
    NODES, PODS, WriteReader, change_feed, describe_write, is_terminal, name_of, node_cidrs, node_key, pod_ips,
)
from kmodel.invariants.records import record
from kmodel.invariants.inputs import ETCD_WRITTEN, NETWORK_PAIRS, SERVICE_IPS, writes
from kmodel.invariants.registry import SAFETY, invariant

ETCD = "etcd"


def _ip_holder(pod: Any) -> bool:
    """A pod that holds its own pod-network IP: not hostNetwork, not terminated."""
    return pod is not None and not pod.spec.host_network and not is_terminal(pod)


@invariant("unique-pod-ips", kind=SAFETY, principle="network model",
           reads=(writes(PODS, NODES),))
def unique_pod_ips(cluster: Any, memo: dict) -> Iterator[str]:
    """No two live pods (not hostNetwork, not Succeeded or Failed) on nodes that exist have the same IP.

    A pod whose node was deleted is left out: node IPAM released that node's podCIDR with it (so a new node may
    get it and hand its addresses out again) and the pod runs nowhere; it keeps its podIP in the API until
    PodGC deletes it, as upstream. Incremental: an index IP -> pods holding it is kept up to date from the pod
    and node writes of each step."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (PODS, NODES))
        memo["owners"] = {}  # ip -> {pod key}
        memo["counted"] = {}  # pod key -> the ips it is counted under
        memo["on_node"] = {}  # node name -> {pod key} of the live pods bound to it
        memo["bad"] = set()
    owners: dict[str, dict[str, None]] = memo["owners"]
    counted: dict[str, tuple[str, ...]] = memo["counted"]
    on_node: dict[str, dict[str, None]] = memo["on_node"]
    bad: set = memo["bad"]

    def uncount(key: str) -> None:
        for ip in counted.pop(key, ()):
            group = owners.get(ip)
            if group is not None:
                group.pop(key, None)
                if len(group) < 2:
                    bad.discard(ip)
                if not group:
                    del owners[ip]

    def count(key: str) -> None:
        pod = reader.value(key)
        if not _ip_holder(pod) or not pod.spec.node_name or reader.value(node_key(pod.spec.node_name)) is None:
            return
        ips = tuple(pod_ips(pod))
        counted[key] = ips
        for ip in ips:
            group = owners.setdefault(ip, {})
            group[key] = None
            if len(group) > 1:
                bad.add(ip)

    for ch in reader.read(cluster.store):
        if ch.key.startswith(NODES):
            if (ch.prev is None) != (ch.value is None):  # a node came or went: its pods count or stop counting
                for key in on_node.get(ch.key[len(NODES):], {}):
                    uncount(key)
                    count(key)
            continue
        if ch.prev is not None and ch.prev.spec.node_name:
            group = on_node.get(ch.prev.spec.node_name)
            if group is not None:
                group.pop(ch.key, None)
        uncount(ch.key)
        if _ip_holder(ch.value) and ch.value.spec.node_name:
            on_node.setdefault(ch.value.spec.node_name, {})[ch.key] = None
            count(ch.key)
    for ip in sorted(bad):
        holders = ", ".join(name_of(k) for k in sorted(owners[ip]))
        yield f"pod IP {ip} is held by {len(owners[ip])} live pods: {holders}"


@functools.lru_cache(maxsize=4096)
def _in_any(ip: str, cidrs: tuple[str, ...]) -> bool:
    """Is `ip` in one of `cidrs`? (A pure function of two strings, asked again for every write of a pod: the
    answers are kept, so an address and a range are parsed once, not at every check.)"""
    addr = ipaddress.ip_address(ip)
    for c in cidrs:
        net = ipaddress.ip_network(c, strict=False)
        if net.version == addr.version and addr in net:
            return True
    return False


@invariant("pod-ip-in-node-cidr", kind=SAFETY, principle="network model",
           reads=(writes(PODS, NODES),))
def pod_ip_in_node_cidr(cluster: Any, memo: dict) -> Iterator[str]:
    """Every IP of a live pod that is not hostNetwork lies in one of its node's podCIDRs (while that node exists).

    Incremental: a pod is checked when it changes, and the pods of a node when the node's CIDRs change."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (PODS, NODES))
        memo["on_node"] = {}  # node name -> {pod key}
        memo["bad"] = {}  # pod key -> message
    on_node: dict[str, dict[str, None]] = memo["on_node"]
    bad: dict[str, str] = memo["bad"]
    recheck: dict[str, None] = {}
    for ch in reader.read(cluster.store):
        if ch.key.startswith(NODES):
            old = node_cidrs(ch.prev) if ch.prev is not None else ()
            new = node_cidrs(ch.value) if ch.value is not None else ()
            if old != new:
                recheck.update(on_node.get(ch.key[len(NODES):], {}))
            continue
        if ch.prev is not None and ch.prev.spec.node_name:
            group = on_node.get(ch.prev.spec.node_name)
            if group is not None:
                group.pop(ch.key, None)
        if ch.value is not None and ch.value.spec.node_name:
            on_node.setdefault(ch.value.spec.node_name, {})[ch.key] = None
        recheck[ch.key] = None
    for key in recheck:
        bad.pop(key, None)
        pod = reader.value(key)
        if not _ip_holder(pod) or not pod.spec.node_name:
            continue
        ips = pod_ips(pod)
        if not ips:
            continue
        node = reader.value(node_key(pod.spec.node_name))
        if node is None:
            continue  # its node is gone (PodGC will remove the pod): there is no CIDR left to hold it to
        cidrs = node_cidrs(node)
        outside = [ip for ip in ips if not _in_any(ip, cidrs)]
        if outside:
            where = f"podCIDRs {', '.join(cidrs)}" if cidrs else "no podCIDR"
            bad[key] = (f"pod {name_of(key)} on {pod.spec.node_name} has IP {', '.join(outside)}, outside its "
                        f"node's {where}")
    for key in sorted(bad):
        yield bad[key]


@invariant("node-cidrs-disjoint", kind=SAFETY, principle="network model",
           reads=(writes(NODES),))
def node_cidrs_disjoint(cluster: Any, memo: dict) -> Iterator[str]:
    """No two nodes have overlapping podCIDRs.

    Incremental: only a node whose CIDRs changed is compared with the others."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (NODES,))
        memo["cidrs"] = {}  # node name -> tuple of ip_network
        memo["bad"] = {}  # (a, b) -> message
    cidrs: dict[str, tuple] = memo["cidrs"]
    bad: dict[tuple[str, str], str] = memo["bad"]
    for ch in reader.read(cluster.store):
        name = ch.key[len(NODES):]
        old = node_cidrs(ch.prev) if ch.prev is not None else ()
        new = node_cidrs(ch.value) if ch.value is not None else ()
        if old == new:
            continue
        for pair in [p for p in bad if name in p]:
            del bad[pair]
        nets = tuple(ipaddress.ip_network(c, strict=False) for c in new)
        if nets:
            cidrs[name] = nets
        else:
            cidrs.pop(name, None)
        for other, other_nets in cidrs.items():
            if other == name:
                continue
            for a in nets:
                for b in other_nets:
                    if a.version == b.version and a.overlaps(b):
                        pair = (min(name, other), max(name, other))
                        bad[pair] = f"nodes {pair[0]} and {pair[1]} have overlapping podCIDRs {a} and {b}"
    for pair in sorted(bad):
        yield bad[pair]


@invariant("api-single-contract", kind=SAFETY, principle="the API as the single contract",
           reads=(NETWORK_PAIRS, ETCD_WRITTEN, writes("/registry/"),))
def api_single_contract(cluster: Any, memo: dict) -> Iterator[str]:
    """Components meet only in the API: every message on the communication graph has an API server at one end,
    only API servers talk to etcd, and every store write was made through an API server's etcd handle.

    The graph is the network's communication graph (`communication_graph()`), of which each check reads only
    the edges new since the last (`pairs_since`: a pair that talks for the first time); the writes are the revisions the store history's writes created (`WriteReader`), matched
    against the revisions the replicas' `EtcdHandle`s recorded."""
    apiservers = {r.name for r in cluster.replicas}
    network = cluster.network
    bad_edges: dict = memo.setdefault("bad_edges", {})
    known = memo.get("pairs", 0)
    if network.pairs_talked != known:
        # only the edges new on the graph since the last check (an edge, once there, stays)
        memo["pairs"] = network.pairs_talked
        for (src, dst), n in network.pairs_since(known):
            if ETCD in (src, dst) and not ({src, dst} - {ETCD}) <= apiservers:
                bad_edges[(src, dst)] = f"{src} sent {n} message(s) to {dst}: only API servers talk to etcd"
            elif src not in apiservers and dst not in apiservers:
                bad_edges[(src, dst)] = (f"{src} sent {n} message(s) straight to {dst}: every message must have "
                                         f"an API server at one end")
    for edge in sorted(bad_edges):
        yield bad_edges[edge]
    # every write in the store's history was made by some replica's handle
    written: set = memo.setdefault("written", set())
    positions: dict = memo.setdefault("positions", {})  # replica name -> entries of its handle's log read
    for replica in cluster.replicas:
        log = record(replica.etcd, "written")
        done = positions.get(replica.name, 0)
        if len(log) > done:
            written.update(log[done:])
            positions[replica.name] = len(log)
    writes = memo.get("writes")
    if writes is None:
        writes = memo["writes"] = WriteReader()
        memo["bypassed"] = {}
    bypassed: dict = memo["bypassed"]
    for rev, index in writes.read(cluster.store):
        if rev not in written and rev not in bypassed:
            request, response = cluster.store.history[index]
            bypassed[rev] = (f"store revision {rev} ({describe_write(request, response)}) was written straight into etcd, "
                             f"not through an API server")
    for rev in sorted(bypassed):
        yield bypassed[rev]


SERVICES = "/registry/services/specs/"


def _service_ips(svc: Any) -> tuple[str, ...]:
    """The ClusterIPs a Service holds (none for a headless or ExternalName one)."""
    spec = svc.spec
    ips = tuple(spec.cluster_ips) or ((spec.cluster_ip,) if spec.cluster_ip else ())
    return tuple(ip for ip in ips if ip != "None")


@invariant("cluster-ips-reserved", kind=SAFETY, principle="network model",
           reads=(writes(SERVICES), SERVICE_IPS,))
def cluster_ips_reserved(cluster: Any, memo: dict) -> Iterator[str]:
    """The ClusterIP allocator reserves exactly the ClusterIPs of the Services in the store: every Service's
    address is reserved (one that is not could be handed to the next Service, two Services sharing it), and no
    address is reserved that no Service holds (a leak, which in time exhausts the range); and the allocator's
    count of used addresses, which decides when the range is full, is the number it reserves.

    The service registry allocates a Service's address in the same request that stores it and releases it in
    the request that removes it (a create that fails gives its address back), so between two steps the two
    agree exactly; upstream's repair loop exists for API servers that crash between the two, which the model's
    atomic requests do not. Incremental: the Services' addresses are kept from the service writes of each step,
    and compared with the allocator only when either changed."""
    allocator = cluster.service_ips
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (SERVICES,))
        memo["held"] = {}  # service key -> its ClusterIPs
        memo["changes"] = 0  # changes of `held` so far
        memo["seen"] = None  # (allocator state, changes) when last compared
    held: dict[str, tuple[str, ...]] = memo["held"]
    for ch in reader.read(cluster.store):
        ips = _service_ips(ch.value) if ch.value is not None else None
        if held.get(ch.key) != ips:
            memo["changes"] += 1
            if ips is None:
                del held[ch.key]
            else:
                held[ch.key] = ips
    state = (allocator.state(), memo["changes"])
    if state != memo["seen"]:
        memo["seen"] = state
        owners: dict[str, list[str]] = {}
        for key in sorted(held):
            for ip in held[key]:
                owners.setdefault(ip, []).append(key[len(SERVICES):])
        reserved = {str(ip) for ip in allocator.allocated()}
        problems = []
        for ip in sorted(owners):
            if len(owners[ip]) > 1:
                problems.append(f"Services {', '.join(owners[ip])} share the ClusterIP {ip}")
            if ip not in reserved:
                problems.append(f"Service {owners[ip][0]} has the ClusterIP {ip}, which the allocator does not "
                                f"reserve")
        for ip in sorted(reserved - set(owners)):
            problems.append(f"the ClusterIP allocator reserves {ip}, which no Service has")
        if allocator.used != len(reserved):
            problems.append(f"the ClusterIP allocator counts {allocator.used} address(es) used but reserves "
                            f"{len(reserved)}")
        memo["problems"] = problems
    yield from memo["problems"]
