"""EndpointSlice invariants: what a Service's slices hold once the cluster has settled, and the rules kube-proxy
programs from them (liveness, judged after faults have healed and the cluster has run fairly to quiescence).

Both judge from the stored Services, pods, nodes and slices with a small reference computation of their own
(release-1.31's rules, restated here): they never call the EndpointSlice controller's reconciler or kube-proxy's
rule builder.

* What a Service's slices should hold (`_reference_endpoints`): for a Service with a selector, not ExternalName,
  not being deleted, every selected pod that is not Succeeded or Failed, has an IP, and runs on a Node the store
  has (or the Service publishes not-ready addresses) is an endpoint per address type the Service has (its
  ipFamilies; else its ClusterIP's family; else, headless, both) with its IPs of that family, under the ports
  its Service ports resolve to on that pod (a number as is, a name looked up among its containers' ports of the
  same protocol), with ready = publishNotReadyAddresses or (Ready and not terminating), serving = Ready,
  terminating = it has a deletionTimestamp.
* What kube-proxy should program (`reference_rules`): for a Service with a ClusterIP, per Service port, the
  endpoints its slices (labelled kubernetes.io/service-name, whoever wrote them) give the port of that name and
  protocol, at the slice port's number, in the Service's IP family: the ready ones, or, if none is, the serving
  terminating ones. An address two slices list counts once, the first slice by name deciding its conditions.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from typing import Any, Iterator

from kmodel.invariants.liveness import _in, _labels_ok, _machines, _namespaces, _objects, _ready
from kmodel.invariants.registry import LIVENESS, invariant

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER = "endpointslice-controller.k8s.io"
PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"
HEADLESS_LABEL = "service.kubernetes.io/headless"
MAX_ENDPOINTS_PER_SLICE = 100
CONTROLLER_COMPONENT = "controller/endpointslice"


def _v6(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return False


def _canonical(ip: str) -> str:
    try:
        return str(ipaddress.ip_address(ip))
    except ValueError:
        return ""


def _has_cluster_ip(svc: Any) -> bool:
    return svc.spec.cluster_ip not in ("", "None")


def _address_types(svc: Any) -> tuple[str, ...]:
    families = sorted({f for f in svc.spec.ip_families if f in ("IPv4", "IPv6")})
    if families:
        return tuple(families)
    if _has_cluster_ip(svc):
        return ("IPv6",) if _v6(svc.spec.cluster_ip) else ("IPv4",)
    return ("IPv4", "IPv6")


def _target(pod: Any, port: Any) -> int | None:
    target, protocol = port.target_port, port.protocol or "TCP"
    if isinstance(target, int):
        return target
    for c in pod.spec.containers:
        for p in c.ports:
            if p.name == target and (p.protocol or "TCP") == protocol:
                return p.container_port
    return None


def _reference_endpoints(svc: Any, pods: list, nodes: set) -> Counter:
    """(address type, ports, pod, addresses, ready, serving, terminating) of each endpoint svc's slices should
    hold (see the module docstring)."""
    want: Counter = Counter()
    publish = svc.spec.publish_not_ready_addresses
    for pod in pods:
        if any(pod.metadata.labels.get(k) != v for k, v in svc.spec.selector.items()):
            continue
        if pod.status.phase in ("Succeeded", "Failed") or not (pod.status.pod_ips or pod.status.pod_ip):
            continue
        if pod.spec.node_name not in nodes and not publish:
            continue
        ports = []
        for sp in svc.spec.ports:
            number = _target(pod, sp)
            if number is not None:
                ports.append((sp.name, sp.protocol or "TCP", number, sp.app_protocol or ""))
        serving = _ready(pod)
        terminating = pod.metadata.deletion_timestamp is not None
        ready = publish or (serving and not terminating)
        for address_type in _address_types(svc):
            ips = tuple(sorted(_canonical(p.ip) for p in pod.status.pod_ips
                               if _canonical(p.ip) and _v6(p.ip) == (address_type == "IPv6")))
            if ips:
                want[(address_type, tuple(sorted(ports)), pod.metadata.name, ips, ready, serving, terminating)] += 1
    return want


def _held(slices: list) -> Counter:
    have: Counter = Counter()
    for eps in slices:
        ports = tuple(sorted((p.name or "", p.protocol or "", p.port or 0, p.app_protocol or "") for p in eps.ports))
        for ep in eps.endpoints:
            c = ep.conditions
            pod = ep.target_ref.name if ep.target_ref is not None else ""
            have[(eps.address_type, ports, pod, tuple(sorted(ep.addresses)), bool(c.ready), bool(c.serving),
                  bool(c.terminating))] += 1
    return have


def _describe(key: tuple) -> str:
    address_type, ports, pod, ips, ready, serving, terminating = key
    flags = ",".join(n for n, v in (("ready", ready), ("serving", serving), ("terminating", terminating)) if v)
    return f"{pod} {'/'.join(ips)} [{flags or 'not ready'}] {address_type} ports {[p[2] for p in ports]}"


def _slice_problems(name: str, svc: Any, slices: list, want: Counter) -> Iterator[str]:
    uid = svc.metadata.uid
    for eps in slices:
        if not any(o.uid == uid and o.kind == "Service" and o.controller for o in eps.metadata.owner_references):
            yield f"service {name}'s slice {eps.metadata.name} is not owned by it (uid {uid})"
        if len(eps.endpoints) > MAX_ENDPOINTS_PER_SLICE:
            yield f"service {name}'s slice {eps.metadata.name} holds {len(eps.endpoints)} endpoints, above 100"
    types = _address_types(svc)
    for address_type in sorted({s.address_type for s in slices} | set(types)):
        of_type = [s for s in slices if s.address_type == address_type]
        if address_type not in types:
            yield f"service {name} still has {len(of_type)} {address_type} slices, an address type it does not have"
        elif not any(k[0] == address_type for k in want):
            if len(of_type) != 1 or of_type[0].endpoints:
                yield f"service {name} has no {address_type} endpoint but {len(of_type)} slices, not one empty one"
        elif any(not s.endpoints for s in of_type):
            yield f"service {name} keeps an empty {address_type} slice beside its endpoints"


@invariant("converges-endpointslices", kind=LIVENESS, principle="level-driven reconciliation")
def converges_endpointslices(cluster: Any, memo: dict) -> Iterator[str]:
    """Each Service with a selector has EndpointSlices, managed by the EndpointSlice controller and owned by it,
    that hold exactly the endpoints its live pods imply (ready, serving, terminating; each once), at most 100 to a
    slice, and one empty slice per address type when it has no endpoint."""
    if not cluster.instances(CONTROLLER_COMPONENT):
        return  # a cluster without the controller (a trace recorded before it ran by default) has none to judge
    nodes = {n.metadata.name for n in _objects(cluster, memo, "nodes")}
    for ns in _namespaces(cluster, memo):
        pods = _in(cluster, memo, "pods", ns)
        managed: dict[str, list] = {}
        for eps in _in(cluster, memo, "endpointslices", ns):
            labels = eps.metadata.labels
            if labels.get(MANAGED_BY) == CONTROLLER and eps.metadata.deletion_timestamp is None:
                managed.setdefault(labels.get(SERVICE_NAME, ""), []).append(eps)
        for svc in _in(cluster, memo, "services", ns):
            if svc.spec.type == "ExternalName" or not svc.spec.selector or svc.metadata.deletion_timestamp is not None:
                continue
            name = f"{ns}/{svc.metadata.name}"
            slices = managed.get(svc.metadata.name, [])
            want = _reference_endpoints(svc, pods, nodes)
            have = _held(slices)
            if have != want:
                missing = sorted(want - have)
                extra = sorted(have - want)
                details = "; ".join([*(f"missing {_describe(k)}" for k in missing[:3]),
                                     *(f"stray {_describe(k)}" for k in extra[:3])])
                yield f"service {name}'s EndpointSlices differ from what its pods imply: {details}"
            yield from _slice_problems(name, svc, slices, want)


def reference_rules(services: list, slices: list) -> dict[str, list[str]]:
    """The rules kube-proxy should program for `services` given every slice of their namespace (see the module
    docstring), keyed "<clusterIP>:<port>[/<protocol>]"."""
    by_service: dict[tuple[str, str], list] = {}
    for eps in sorted(slices, key=lambda s: s.metadata.name):
        if _labels_ok(eps, PROXY_NAME_LABEL, HEADLESS_LABEL) and eps.metadata.labels.get(SERVICE_NAME):
            by_service.setdefault((eps.metadata.namespace, eps.metadata.labels[SERVICE_NAME]), []).append(eps)
    rules: dict[str, list[str]] = {}
    for svc in services:
        ip = svc.spec.cluster_ip
        if not _labels_ok(svc, PROXY_NAME_LABEL, HEADLESS_LABEL) or ip in ("", "None") \
                or svc.spec.type == "ExternalName":
            continue
        v6 = _v6(ip)
        offered: dict[tuple[str, str], dict[str, tuple[bool, bool, bool]]] = {}
        for eps in by_service.get((svc.metadata.namespace, svc.metadata.name), []):
            for port in eps.ports:
                if port.name is None or not port.port:
                    continue
                protocol = port.protocol or "TCP"
                seen = offered.setdefault((port.name, protocol), {})
                for ep in eps.endpoints:
                    if ep.addresses and _v6(ep.addresses[0]) == v6:
                        c = ep.conditions
                        seen.setdefault(_join(ep.addresses[0], port.port, protocol),
                                        (c.ready is not False, c.serving is not False, c.terminating is True))
        for sp in svc.spec.ports:
            protocol = sp.protocol or "TCP"
            endpoints = offered.get((sp.name, protocol), {})
            chosen = [a for a, (ready, _, _) in endpoints.items() if ready] or \
                [a for a, (_, serving, terminating) in endpoints.items() if serving and terminating]
            rules[_join(ip, sp.port, protocol)] = sorted(set(chosen))
    return rules


def _join(ip: str, port: int, protocol: str) -> str:
    host = f"[{ip}]" if ":" in ip else ip
    return f"{host}:{port}" + ("" if protocol == "TCP" else f"/{protocol}")


@invariant("converges-proxy-rules", kind=LIVENESS, principle="level-driven reconciliation")
def converges_proxy_rules(cluster: Any, memo: dict) -> Iterator[str]:
    """Every running kube-proxy's rules are exactly what the Services and their EndpointSlices imply.

    Judged on the kube-proxies of the machines in the cluster (`_machines`)."""
    want: dict[str, list[str]] = {}
    for ns in _namespaces(cluster, memo):
        want.update(reference_rules(_in(cluster, memo, "services", ns), _in(cluster, memo, "endpointslices", ns)))
    want = {k: v for k, v in sorted(want.items())}
    for node in _machines(cluster):
        name = f"proxy/{node}"
        comp = cluster.loop.components.get(name)
        if comp is None or not cluster.loop.is_up(name):
            continue
        have = {k: sorted(v) for k, v in comp.rules.items()}
        if have != want:
            diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
            details = "; ".join(f"{k}: has {have.get(k)}, should be {want.get(k)}" for k in diff[:5])
            yield f"{name}'s rules differ from the Services and EndpointSlices: {details}"
