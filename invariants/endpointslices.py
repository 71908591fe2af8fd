"""EndpointSlice invariants: the rules kube-proxy programs from the slices (liveness, judged after faults have
healed and the cluster has run fairly to quiescence).

It judges from the stored Services and slices with a small reference computation of its own (release-1.31's
rules, restated here): it never calls kube-proxy's rule builder.

* What kube-proxy should program (`reference_rules`): for a Service with a ClusterIP, per Service port, the
  endpoints its slices (labelled kubernetes.io/service-name, whoever wrote them) give the port of that name and
  protocol, at the slice port's number, in the Service's IP family: the ready ones, or, if none is, the serving
  terminating ones. An address two slices list counts once, the first slice by name deciding its conditions.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from kmodel.invariants.liveness import _in, _labels_ok, _machines, _namespaces
from kmodel.invariants.registry import LIVENESS, invariant

SERVICE_NAME = "kubernetes.io/service-name"
PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"
HEADLESS_LABEL = "service.kubernetes.io/headless"


def _v6(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return False


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
