"""What kube-proxy programs for one Service: ClusterIP:port → the endpoints its slices offer for that port (pure).

A port of the matching half of pkg/proxy (release-1.31: servicechangetracker.go, endpointslicecache.go,
topology.go's CategorizeEndpoints). The Service's EndpointSlices are merged (`merged_endpoints`): every slice
port with a name and a non-zero number is a ServicePortName = (namespace/name, port *name*, protocol), and each
endpoint of the slice with an address of the Service's IP family (its first address) becomes an endpoint of that
port at that port's number, with the conditions ready (unset means true), serving (unset means true) and
terminating (unset means false). An endpoint listed by two slices counts once: the first, taking the slices in
name order (upstream keeps whichever its map gives it first). The numbers do not matter for the match: a service
port `http` 80 → targetPort 8080 matches the slice port `http` 8080, and the rule sends 80 to 8080.

Which endpoints a port's rule uses (CategorizeEndpoints, for a Service with cluster-wide traffic policy): its
ready endpoints; if it has none, its endpoints that are serving and terminating (so a connection is not
dropped while the last pods of a Service shut down); else none.

Which Services get rules (the iptables proxier): those with a ClusterIP (not "" and not "None", i.e. not
headless, and not type ExternalName). A Service port without any endpoint gets a rule with no backend: upstream
installs a REJECT rule for it ("has no endpoints"); the model shows it as an empty list.

Keys and backends: "<ip>:<port>" (IPv6 addresses in brackets, as net.JoinHostPort); a protocol other than
TCP is appended as "/UDP" or "/SCTP" so that a Service with 53/TCP and 53/UDP keeps two rules. Backends are
sorted and deduplicated.

Differences from upstream: only the primary clusterIP (spec.clusterIP), no NodePort, externalIPs, load
balancer, session affinity, internal or external traffic policies (every Service routes cluster-wide) or
topology hints.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable

import attrs

from kmodel.objects import Service


def endpoint_string(ip: str, port: int, protocol: str = "TCP") -> str:
    """net.JoinHostPort(ip, port), plus "/<protocol>" for protocols other than TCP."""
    host = f"[{ip}]" if ":" in ip else ip
    suffix = "" if (protocol or "TCP") == "TCP" else f"/{protocol}"
    return f"{host}:{port}{suffix}"


def has_cluster_ip(service: Service) -> bool:
    """ShouldSkipService, inverted: a ClusterIP that is set, not None, and a type other than ExternalName."""
    ip = service.spec.cluster_ip
    return bool(ip) and ip != "None" and service.spec.type != "ExternalName"


@attrs.frozen
class ProxyEndpoint:
    """BaseEndpointInfo: one endpoint of one service port, as the proxy sees it."""
    address: str  # "<ip>:<port>[/<protocol>]"
    ready: bool
    serving: bool
    terminating: bool


def _is_ipv6(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return False


def merged_endpoints(service: Service, slices: Iterable) -> dict[tuple[str, str], list[ProxyEndpoint]]:
    """(port name, protocol) -> the endpoints the Service's slices give that port (see the module docstring)."""
    ipv6 = _is_ipv6(service.spec.cluster_ip)
    out: dict[tuple[str, str], dict[str, ProxyEndpoint]] = {}
    for eps in sorted(slices, key=lambda s: s.metadata.name):
        for port in eps.ports:
            if port.name is None or not port.port:
                continue  # "Ignoring port with nil name" / "Ignoring invalid endpoint port"
            proto = port.protocol or "TCP"
            seen = out.setdefault((port.name, proto), {})
            for ep in eps.endpoints:
                if not ep.addresses or _is_ipv6(ep.addresses[0]) != ipv6:
                    continue  # no address, or another IP family than the proxier's
                address = endpoint_string(ep.addresses[0], port.port, proto)
                if address in seen:
                    continue
                c = ep.conditions
                seen[address] = ProxyEndpoint(address, c.ready is not False, c.serving is not False, c.terminating is True)
    return {k: list(v.values()) for k, v in out.items()}


def cluster_endpoints(endpoints: list[ProxyEndpoint]) -> list[str]:
    """CategorizeEndpoints' clusterEndpoints: the ready ones, or if none, the serving terminating ones."""
    ready = [e.address for e in endpoints if e.ready]
    if ready:
        return ready
    return [e.address for e in endpoints if e.serving and e.terminating]


def service_rules(service: Service, slices: Iterable) -> dict[str, list[str]]:
    """The rules of one Service (empty if it has no ClusterIP), given its EndpointSlices."""
    if not has_cluster_ip(service):
        return {}
    by_port = merged_endpoints(service, slices)
    rules: dict[str, list[str]] = {}
    for sp in service.spec.ports:
        proto = sp.protocol or "TCP"
        backends = cluster_endpoints(by_port.get((sp.name, proto), []))
        rules[endpoint_string(service.spec.cluster_ip, sp.port, proto)] = sorted(set(backends))
    return rules
