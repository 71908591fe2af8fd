"""The Endpoints a Service's selected pods imply, computed by `converges-endpoints` for itself (never the
Endpoints controller's kmodel.controllers.endpoints_logic: a mistake there must not move the oracle with it).

Upstream 1.31 (pkg/controller/endpoint syncService, endpointsliceutil.ShouldPodBeInEndpoints, podutil.FindPort,
pkg/api/v1/endpoints RepackSubsets):

* a selected pod counts unless it is Succeeded or Failed, has no IP, or is being deleted (a Service that
  publishes not-ready addresses keeps a pod being deleted);
* its address is its IP of the Service's family (spec.ipFamilies[0], else the clusterIP's; with neither, the
  pod's primary IP), its node, a reference to it, and its hostname when the pod names one and its subdomain is
  the Service's name;
* it is ready when the Service publishes not-ready addresses or the pod's Ready condition is True;
* each Service port targets a number as is, or a name among the pod's container ports of the same protocol (a
  pod without it has no address for that port); a headless Service without ports lists port-less addresses;
* subsets: per port, the addresses (an address not ready for a port is not ready for it); ports with the
  same addresses share one subset.

Subsets are compared as sets (of ports, ready and not-ready addresses): the order of subsets and of addresses
is the controller's choice (docs/differences.md: it sorts where upstream hashes); a pod's resourceVersion in
targetRef is ignored, as the controller's own skip test ignores it.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from typing import Any, Iterable, Optional

#: the label the controller adds to a headless Service's Endpoints (upstream's v1.IsHeadlessService label)
HEADLESS_LABEL = "service.kubernetes.io/headless"


def _version(ip: str) -> Optional[int]:
    try:
        return ipaddress.ip_address(ip).version
    except ValueError:
        return None


def _address_ip(svc: Any, pod: Any) -> str:
    """The pod's IP the Service lists ("" for none)."""
    spec = svc.spec
    if spec.ip_families:
        family: Optional[int] = 6 if spec.ip_families[0] == "IPv6" else 4
    elif spec.cluster_ip and spec.cluster_ip != "None":
        family = _version(spec.cluster_ip)
    else:
        family = None
    if family is None:
        return pod.status.pod_ip or ""
    ips = [p.ip for p in pod.status.pod_ips] or [pod.status.pod_ip]
    return next((ip for ip in ips if ip and _version(ip) == family), "")


def _target_port(pod: Any, service_port: Any) -> Optional[int]:
    target = service_port.target_port
    if isinstance(target, int):
        return target
    if isinstance(target, str):
        protocol = service_port.protocol or "TCP"
        for container in pod.spec.containers:
            for p in container.ports:
                if p.name == target and (p.protocol or "TCP") == protocol:
                    return p.container_port
    return None


def _pod_ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def _address_key(ip: str, hostname: str, node: Optional[str], ref: Any) -> tuple:
    return (ip, hostname or "", node or "", ref)


def expected_subsets(svc: Any, pods: Iterable[Any]) -> Counter:
    """The subsets (ports, ready addresses, not-ready addresses) the pods selected by `svc` imply."""
    publish = svc.spec.publish_not_ready_addresses
    by_port: dict[Any, dict[tuple, bool]] = {}  # port (None: a headless Service's port-less list) -> addr -> ready
    for pod in pods:
        m = pod.metadata
        if pod.status.phase in ("Succeeded", "Failed") or not (pod.status.pod_ip or pod.status.pod_ips):
            continue
        if m.deletion_timestamp is not None and not publish:
            continue
        ip = _address_ip(svc, pod)
        if not ip:
            continue
        named = bool(pod.spec.hostname) and pod.spec.subdomain == svc.metadata.name
        address = _address_key(ip, pod.spec.hostname if named else "", pod.spec.node_name,
                               ("Pod", m.namespace, m.name, m.uid, "", ""))
        ready = bool(publish) or _pod_ready(pod)
        if not svc.spec.ports:
            ports: list = [None] if svc.spec.cluster_ip == "None" else []
        else:
            ports = []
            for sp in svc.spec.ports:
                number = _target_port(pod, sp)
                if number is not None:
                    ports.append((sp.name or "", number, sp.protocol or "TCP", sp.app_protocol))
        for port in ports:
            addresses = by_port.setdefault(port, {})
            addresses[address] = addresses.get(address, True) and ready  # not ready on a port trumps ready
    grouped: dict[frozenset, set] = {}
    for port, addresses in by_port.items():
        ports_of = grouped.setdefault(frozenset(addresses.items()), set())
        if port is not None:
            ports_of.add(port)
    return Counter((frozenset(ports), frozenset(a for a, ready in addresses if ready),
                    frozenset(a for a, ready in addresses if not ready)) for addresses, ports in grouped.items())


def _ref(ref: Any) -> Optional[tuple]:
    if ref is None:
        return None
    return (ref.kind, ref.namespace, ref.name, ref.uid, ref.api_version or "", ref.field_path or "")


def stored_subsets(endpoints: Any) -> Counter:
    """The subsets an Endpoints object lists, in the form of `expected_subsets`."""
    def addresses(listed: Iterable[Any]) -> frozenset:
        return frozenset(_address_key(a.ip, a.hostname, a.node_name, _ref(a.target_ref)) for a in listed)

    return Counter((frozenset((p.name or "", p.port, p.protocol or "TCP", p.app_protocol) for p in s.ports),
                    addresses(s.addresses), addresses(s.not_ready_addresses)) for s in endpoints.subsets)


def endpoints_match(endpoints: Any, svc: Any, pods: Iterable[Any]) -> bool:
    """`endpoints` lists what the pods selected by `svc` imply and carries the Service's labels (plus, for a
    headless Service, the headless label)."""
    labels = {k: v for k, v in endpoints.metadata.labels.items() if k != HEADLESS_LABEL}
    return labels == dict(svc.metadata.labels) and stored_subsets(endpoints) == expected_subsets(svc, pods)
