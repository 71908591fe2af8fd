"""What kube-proxy programs for one Service: ClusterIP:port → the ready endpoints of that port (pure).

A port of the matching half of pkg/proxy (servicechangetracker.go, endpointschangetracker.go,
ServicePortName): a Service port and an endpoint port belong together when they have the same ServicePortName
= (namespace/name, port *name*, protocol). The numbers do not matter for the match: a service port
`http` 80 → targetPort 8080 matches the Endpoints port `http` 8080, and the rule sends 80 to 8080; an unnamed
port matches the unnamed endpoint port. Only `addresses` (ready endpoints) are used, never
`notReadyAddresses`.

Which Services get rules (the iptables proxier): those with a ClusterIP (not "" and not "None", i.e. not
headless, and not type ExternalName). A Service port without any ready endpoint gets a rule with no backend:
upstream installs a REJECT rule for it ("has no endpoints"); the model shows it as an empty list.

Keys and backends: "<ip>:<port>" (IPv6 addresses in brackets, as net.JoinHostPort); a protocol other than
TCP is appended as "/UDP" or "/SCTP" so that a Service with 53/TCP and 53/UDP keeps two rules. Backends are
sorted and deduplicated.

Differences from upstream: only the primary clusterIP (spec.clusterIP), no NodePort, externalIPs, load
balancer, session affinity, traffic policies or topology hints; Endpoints rather than EndpointSlices (the
model's RBAC for system:node-proxier grants endpoints).
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Endpoints, Service


def endpoint_string(ip: str, port: int, protocol: str = "TCP") -> str:
    """net.JoinHostPort(ip, port), plus "/<protocol>" for protocols other than TCP."""
    host = f"[{ip}]" if ":" in ip else ip
    suffix = "" if (protocol or "TCP") == "TCP" else f"/{protocol}"
    return f"{host}:{port}{suffix}"


def has_cluster_ip(service: Service) -> bool:
    """ShouldSkipService, inverted: a ClusterIP that is set, not None, and a type other than ExternalName."""
    ip = service.spec.cluster_ip
    return bool(ip) and ip != "None" and service.spec.type != "ExternalName"


def service_rules(service: Service, endpoints: Optional[Endpoints]) -> dict[str, list[str]]:
    """The rules of one Service (empty if it has no ClusterIP), given its Endpoints (or None)."""
    if not has_cluster_ip(service):
        return {}
    backends: dict[tuple[str, str], set[str]] = {}
    if endpoints is not None:
        for subset in endpoints.subsets:
            for port in subset.ports:
                proto = port.protocol or "TCP"
                targets = backends.setdefault((port.name, proto), set())
                for address in subset.addresses:
                    targets.add(endpoint_string(address.ip, port.port, proto))
    rules: dict[str, list[str]] = {}
    for sp in service.spec.ports:
        proto = sp.protocol or "TCP"
        rules[endpoint_string(service.spec.cluster_ip, sp.port, proto)] = sorted(backends.get((sp.name, proto), ()))
    return rules
