"""The Endpoints controller's decision (pkg/controller/endpoint/endpoints_controller.go syncService,
pkg/api/v1/endpoints RepackSubsets, endpointslice util ShouldPodBeInEndpoints, podutil.FindPort).

Theory of operation
-------------------
For a Service with a selector, every selected pod that `should_pod_be_in_endpoints` (not Succeeded or
Failed, has an IP, not terminating unless publishNotReadyAddresses) becomes an EndpointAddress (IP of the
Service's family, nodeName, targetRef to the pod; hostname when pod.spec.hostname is set and its
subdomain is the Service's name in the same namespace). For each Service port the target port is found
(`find_port`: a number as is, a name looked up among the containers' ports with the same protocol; a pod
without it is skipped for that port). Each (address, port) pair becomes a one-address subset, ready
(addresses) when the pod is Ready or the Service publishes not-ready addresses, else notReadyAddresses.
A headless Service without ports gets port-less subsets. `repack_subsets` then merges them as upstream:
per port, an address not ready on any subset is not ready; ports with the same address set share one
subset; addresses sorted by IP (bytewise) then targetRef UID.

`endpoints_need_update` is the skip test: an existing Endpoints (resourceVersion set) with equal subsets
(ignoring the pods' resourceVersions in targetRef) and labels equal to the Service's (ignoring the headless
label) is left alone.

Difference: upstream orders ports and subsets by an MD5 of a go-spew dump (portsByHash, subsetsByHash);
that order is arbitrary but stable. Here ports sort by (name, port, protocol) and subsets by their ports
then addresses: equally stable, readable, but not byte-for-byte upstream's order. The 1000-address
truncation (over-capacity annotation) and the last-change-trigger-time annotation are not modelled.
"""

from __future__ import annotations

import ipaddress
from typing import Sequence

from kmodel.objects import (
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectMeta, ObjectReference, Pod, Service, ServicePort,
)
from kmodel.objects.fastevolve import evolve

from .pod_state import is_pod_ready, is_pod_terminal

HEADLESS_SERVICE_LABEL = "service.kubernetes.io/headless"


class PortNotFound(LookupError):
    """FindPort's error: `no suitable port for manifest: <uid>`."""


def should_pod_be_in_endpoints(pod: Pod, include_terminating: bool) -> bool:
    """endpointsliceutil.ShouldPodBeInEndpoints."""
    if is_pod_terminal(pod):
        return False
    if not pod.status.pod_ip and not pod.status.pod_ips:
        return False
    if not include_terminating and pod.metadata.deletion_timestamp is not None:
        return False
    return True


def find_port(pod: Pod, port: ServicePort) -> int:
    """podutil.FindPort: the container port a Service port targets."""
    target = port.target_port
    if isinstance(target, str):
        for c in pod.spec.containers:
            for p in c.ports:
                if p.name == target and (p.protocol or "TCP") == (port.protocol or "TCP"):
                    return p.container_port
    elif isinstance(target, int):
        return target
    raise PortNotFound(f"no suitable port for manifest: {pod.metadata.uid}")


def _family(ip: str) -> int | None:
    try:
        return ipaddress.ip_address(ip).version
    except ValueError:
        return None


def _service_family(svc: Service) -> int | None:
    if svc.spec.ip_families:
        return 6 if svc.spec.ip_families[0] == "IPv6" else 4
    if svc.spec.cluster_ip and svc.spec.cluster_ip != "None":
        return _family(svc.spec.cluster_ip)
    return None


def pod_address_for_service(svc: Service, pod: Pod) -> EndpointAddress | None:
    """podToEndpointAddressForService: None when the pod has no IP of the Service's family."""
    want = _service_family(svc)
    ip = ""
    if want is None:
        ip = pod.status.pod_ip
    else:
        ips = [p.ip for p in pod.status.pod_ips] or ([pod.status.pod_ip] if pod.status.pod_ip else [])
        ip = next((x for x in ips if _family(x) == want), "")
    if not ip:
        return None
    m = pod.metadata
    return EndpointAddress(ip=ip, node_name=pod.spec.node_name,
                           target_ref=ObjectReference(kind="Pod", namespace=m.namespace, name=m.name, uid=m.uid))


def should_set_hostname(pod: Pod, svc: Service) -> bool:
    return (bool(pod.spec.hostname) and pod.spec.subdomain == svc.metadata.name
            and svc.metadata.namespace == pod.metadata.namespace)


def _addr_key(a: EndpointAddress) -> tuple:
    """LessEndpointAddress: IP bytes, then targetRef (none first) by UID."""
    return (a.ip.encode(), a.target_ref is not None, a.target_ref.uid if a.target_ref else "")


def _port_key(p: EndpointPort) -> tuple:
    return (p.name, p.port, p.protocol, p.app_protocol or "")


def repack_subsets(subsets: Sequence[EndpointSubset]) -> tuple:
    """RepackSubsets + SortSubsets (see the module docstring for the order)."""
    all_addrs: dict[tuple, EndpointAddress] = {}
    port_to_addrs: dict[EndpointPort, dict[tuple, bool]] = {}

    def map_addr(addr: EndpointAddress, port: EndpointPort, ready: bool) -> None:
        key = (addr.ip, addr.target_ref.uid if addr.target_ref else "")
        if key not in all_addrs:
            all_addrs[key] = addr
        addrs = port_to_addrs.setdefault(port, {})
        if key not in addrs or addrs[key]:
            addrs[key] = ready   # not ready always trumps ready

    sentinel = EndpointPort(port=-1)
    for s in subsets:
        for port in (s.ports or (sentinel,)):
            for a in s.addresses:
                map_addr(a, port, True)
            for a in s.not_ready_addresses:
                map_addr(a, port, False)
    groups: dict[tuple, list[EndpointPort]] = {}
    group_addrs: dict[tuple, dict[tuple, bool]] = {}
    for port, addrs in port_to_addrs.items():
        gkey = tuple(sorted(addrs.items()))
        group_addrs[gkey] = addrs
        ports = groups.setdefault(gkey, [])
        if port.port > 0:
            ports.append(port)
    final = []
    for gkey, ports in groups.items():
        addrs = group_addrs[gkey]
        ready = sorted((all_addrs[k] for k, r in addrs.items() if r), key=_addr_key)
        not_ready = sorted((all_addrs[k] for k, r in addrs.items() if not r), key=_addr_key)
        final.append(EndpointSubset(addresses=tuple(ready), not_ready_addresses=tuple(not_ready),
                                    ports=tuple(sorted(ports, key=_port_key))))
    final.sort(key=lambda s: (tuple(_port_key(p) for p in s.ports),
                              tuple(_addr_key(a) for a in s.addresses),
                              tuple(_addr_key(a) for a in s.not_ready_addresses)))
    return tuple(final)


def endpoint_subsets(svc: Service, pods: Sequence[Pod]) -> tuple:
    """syncService's subsets for svc from the pods its selector matched."""
    publish = svc.spec.publish_not_ready_addresses
    subsets: list[EndpointSubset] = []
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, publish):
            continue
        epa = pod_address_for_service(svc, pod)
        if epa is None:
            continue
        if should_set_hostname(pod, svc):
            epa = evolve(epa, hostname=pod.spec.hostname)
        ready = publish or is_pod_ready(pod)
        if not svc.spec.ports:
            if svc.spec.cluster_ip == "None":
                subsets.append(_subset(epa, (), ready))
            continue
        for sp in svc.spec.ports:
            try:
                num = find_port(pod, sp)
            except PortNotFound:
                continue
            epp = EndpointPort(name=sp.name, port=num, protocol=sp.protocol or "TCP", app_protocol=sp.app_protocol)
            subsets.append(_subset(epa, (epp,), ready))
    return repack_subsets(subsets)


def _subset(epa: EndpointAddress, ports: tuple, ready: bool) -> EndpointSubset:
    if ready:
        return EndpointSubset(addresses=(epa,), ports=ports)
    return EndpointSubset(not_ready_addresses=(epa,), ports=ports)


def _strip_rv(subsets: Sequence[EndpointSubset]) -> tuple:
    def addr(a: EndpointAddress) -> EndpointAddress:
        if a.target_ref is None or not a.target_ref.resource_version:
            return a
        return evolve(a, target_ref=evolve(a.target_ref, resource_version=""))

    return tuple(evolve(s, addresses=tuple(map(addr, s.addresses)),
                              not_ready_addresses=tuple(map(addr, s.not_ready_addresses))) for s in subsets)


def endpoints_labels(svc: Service) -> dict:
    """The labels the controller writes: the Service's, plus service.kubernetes.io/headless for a headless
    Service."""
    labels = svc.metadata.labels
    if svc.spec.cluster_ip == "None":
        labels = labels.set(HEADLESS_SERVICE_LABEL, "")
    return labels


def endpoints_need_update(current: Endpoints | None, svc: Service, subsets: Sequence[EndpointSubset]) -> bool:
    """False when syncService would skip the write (equal subsets ignoring resourceVersion, equal labels)."""
    if current is None or not current.metadata.resource_version:
        return True
    labels = current.metadata.labels.without(HEADLESS_SERVICE_LABEL)
    return not (_strip_rv(current.subsets) == _strip_rv(subsets) and dict(labels) == dict(svc.metadata.labels))


def desired_endpoints(svc: Service, pods: Sequence[Pod], current: Endpoints | None = None) -> Endpoints:
    """The Endpoints object syncService writes (the current one's metadata kept when it exists)."""
    subsets = endpoint_subsets(svc, pods)
    if current is not None:
        meta = evolve(current.metadata, labels=endpoints_labels(svc))
    else:
        meta = ObjectMeta(name=svc.metadata.name, namespace=svc.metadata.namespace, labels=endpoints_labels(svc))
    return Endpoints(metadata=meta, subsets=subsets)
