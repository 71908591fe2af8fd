"""Validation of Namespace, Node, Service, Endpoints, Event, Binding and Lease (core and coordination)."""

from __future__ import annotations

from ..coordination import Lease
from ..core import Binding, Endpoints, Event, Namespace, Node, Service
from ..field_errors import FieldError, GoValue, duplicate, forbidden, go_quote, invalid, not_supported, required
from .common import (
    IMMUTABLE, dns1123_label, nonnegative, port_num_or_name, protocol, valid_ip, validate_labels, validate_object_meta,
)
from .names import CIDR_ERROR, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, \
    is_valid_label_value, is_valid_port_num, parse_cidr
from .discovery import non_special_ip
from .events import validate_new_style
from .pod import validate_resources, validate_taint_effect

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def validate_namespace(ns: Namespace) -> list[FieldError]:
    errs = validate_object_meta(ns.metadata, False, is_dns1123_label)
    for i, fin in enumerate(ns.spec.finalizers):
        if "/" not in fin and fin != "kubernetes":
            errs.append(invalid(f"spec.finalizers[{i}]", fin,
                                "name is neither a standard finalizer name nor is it fully qualified"))
        else:
            errs += [invalid(f"spec.finalizers[{i}]", fin, m) for m in is_qualified_name(fin)]
    return errs


def validate_node(node: Node) -> list[FieldError]:
    errs = validate_object_meta(node.metadata, False, is_dns1123_subdomain)
    errs += _taints(node)
    for attr in ("capacity", "allocatable"):
        res = getattr(node.status, attr)
        for name in sorted(res):
            p = f"status.{attr}[{name}]"
            errs += [invalid(p, name, m) for m in is_qualified_name(name)]
            if res[name].nano < 0:
                errs.append(invalid(p, str(res[name]), "must be greater than or equal to 0"))
    cidrs = node.spec.pod_cidrs or ((node.spec.pod_cidr,) if node.spec.pod_cidr else ())
    families = []
    for i, c in enumerate(cidrs):
        net = parse_cidr(c)
        if net is None:
            errs.append(invalid(f"spec.podCIDRs[{i}]", c, CIDR_ERROR))
        families.append(net.version if net is not None else None)
    if len(cidrs) > 1 and None not in families:
        if len(cidrs) > 2 or families[0] == families[1]:
            errs.append(invalid("spec.podCIDRs", tuple(cidrs), "may specify no more than one CIDR for each IP family"))
    return errs


def _taint_go(t) -> str:
    added = "<nil>" if t.time_added is None else "time"
    return (f"core.Taint{{Key:{go_quote(t.key)}, Value:{go_quote(t.value)}, Effect:{go_quote(t.effect)}, "
            f"TimeAdded:{added}}}")


def _taints(node: Node) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(node.spec.taints):
        p = f"spec.taints[{i}]"
        errs += [invalid(f"{p}.key", t.key, m) for m in is_qualified_name(t.key)]
        msgs = is_valid_label_value(t.value)
        if msgs:
            errs.append(invalid(f"{p}.value", t.value, ";".join(msgs)))
        if not t.effect:
            errs.append(required(f"{p}.effect"))
        else:
            errs += validate_taint_effect(t.effect, f"{p}.effect")
        if (t.key, t.effect) in seen:
            e = duplicate(p, GoValue(_taint_go(t)))
            errs.append(FieldError(e.type, e.field, e.value, "taints must be unique by key and effect pair"))
            continue
        seen.add((t.key, t.effect))
    return errs


def validate_node_update(new: Node, old: Node) -> list[FieldError]:
    errs = validate_node(new)
    old_cidrs = old.spec.pod_cidrs or ((old.spec.pod_cidr,) if old.spec.pod_cidr else ())
    new_cidrs = new.spec.pod_cidrs or ((new.spec.pod_cidr,) if new.spec.pod_cidr else ())
    if old_cidrs and tuple(old_cidrs) != tuple(new_cidrs):
        errs.append(forbidden("spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'))
    if old.spec.provider_id and new.spec.provider_id != old.spec.provider_id:
        errs.append(forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'))
    return errs


def validate_service(svc: Service) -> list[FieldError]:
    errs = validate_object_meta(svc.metadata, True, is_dns1035_label)
    s = svc.spec
    headless = s.cluster_ip == "None"
    if not s.ports and not headless and s.type != "ExternalName":
        errs.append(required("spec.ports"))
    names: set[str] = set()
    for i, port in enumerate(s.ports):
        p = f"spec.ports[{i}]"
        if len(s.ports) > 1 and not port.name:
            errs.append(required(f"{p}.name"))
        elif port.name:
            errs += dns1123_label(port.name, f"{p}.name")
            if port.name in names:
                errs.append(duplicate(f"{p}.name", port.name))
            names.add(port.name)
        errs += [invalid(f"{p}.port", port.port, m) for m in is_valid_port_num(port.port)]
        errs += protocol(port.protocol, f"{p}.protocol")
        errs += port_num_or_name(port.target_port, f"{p}.targetPort")
    if s.type not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", s.type, SERVICE_TYPES))
    seen_node_ports: set[tuple[int, str]] = set()
    for i, port in enumerate(s.ports):
        p = f"spec.ports[{i}].nodePort"
        if port.node_port == 0:
            continue
        if s.type == "ClusterIP":
            errs.append(forbidden(p, "may not be used when `type` is 'ClusterIP'"))
            continue
        errs += [invalid(p, port.node_port, m) for m in is_valid_port_num(port.node_port)]
        key = (port.node_port, port.protocol)
        if key in seen_node_ports:
            errs.append(duplicate(p, port.node_port))
        seen_node_ports.add(key)
    errs += validate_labels(s.selector, "spec.selector")
    for i, ip in enumerate(s.cluster_ips):
        if i == 0 and ip == "None":
            continue
        errs += valid_ip(ip, f"spec.clusterIPs[{i}]")
    if s.cluster_ips and s.cluster_ip and s.cluster_ips[0] != s.cluster_ip:
        errs.append(invalid("spec.clusterIPs", tuple(s.cluster_ips), "first value must match `spec.clusterIP`"))
    for i, ip in enumerate(s.external_ips):
        errs += valid_ip(ip, f"spec.externalIPs[{i}]")
    if s.session_affinity not in ("None", "ClientIP"):
        errs.append(not_supported("spec.sessionAffinity", s.session_affinity, ("ClientIP", "None")))
    return errs


def validate_service_update(new: Service, old: Service) -> list[FieldError]:
    errs = validate_service(new)
    if old.spec.cluster_ip and new.spec.type == old.spec.type and new.spec.cluster_ip != old.spec.cluster_ip:
        errs.append(invalid("spec.clusterIPs[0]", new.spec.cluster_ip, "may not change once set"))
    return errs


def validate_endpoints(ep: Endpoints) -> list[FieldError]:
    errs = validate_object_meta(ep.metadata, True, is_dns1123_subdomain)
    for i, sub in enumerate(ep.subsets):
        p = f"subsets[{i}]"
        if not sub.addresses and not sub.not_ready_addresses:
            errs.append(required(p, "must specify `addresses` or `notReadyAddresses`"))
        for attr, json in (("addresses", "addresses"), ("not_ready_addresses", "notReadyAddresses")):
            for j, a in enumerate(getattr(sub, attr)):
                # validateEndpointAddress: the address's syntax, the hostname, the node name, then
                # ValidateNonSpecialIP (which says once more that an address that does not parse is none)
                ap = f"{p}.{json}[{j}]"
                errs += valid_ip(a.ip, f"{ap}.ip")
                if a.hostname:
                    errs += dns1123_label(a.hostname, f"{ap}.hostname")
                if a.node_name:
                    errs += [invalid(f"{ap}.nodeName", a.node_name, m) for m in is_dns1123_subdomain(a.node_name)]
                errs += non_special_ip(a.ip, f"{ap}.ip")
        names: set[str] = set()
        for j, port in enumerate(sub.ports):
            pp = f"{p}.ports[{j}]"
            if len(sub.ports) > 1 and not port.name:
                errs.append(required(f"{pp}.name"))
            elif port.name:
                errs += dns1123_label(port.name, f"{pp}.name")
                if port.name in names:
                    errs.append(duplicate(f"{pp}.name", port.name))
                names.add(port.name)
            errs += [invalid(f"{pp}.port", port.port, m) for m in is_valid_port_num(port.port)]
            errs += protocol(port.protocol, f"{pp}.protocol")
    return errs


def validate_event(ev: Event) -> list[FieldError]:
    """ValidateEventCreate for core/v1 Events (the subset the model uses): an Event with eventTime set is held to
    the rules of new-style Events (legacyValidateEvent), whatever the group version it is written through."""
    errs = validate_object_meta(ev.metadata, True, is_dns1123_subdomain)
    inv = ev.involved_object
    if ev.event_time is not None:
        errs += validate_new_style(ev)
    elif inv.namespace and inv.namespace != ev.metadata.namespace:
        errs.append(invalid("involvedObject.namespace", inv.namespace, "does not match event.namespace"))
    if ev.type and ev.type not in ("Normal", "Warning"):
        errs.append(not_supported("type", ev.type, ("Normal", "Warning")))
    errs += nonnegative(ev.count, "count")
    return errs


def validate_binding(b: Binding) -> list[FieldError]:
    """ValidatePodBinding."""
    errs: list[FieldError] = []
    if b.target.kind and b.target.kind != "Node":
        errs.append(not_supported("target.kind", b.target.kind, ("Node", "<empty>")))
    if not b.target.name:
        errs.append(required("target.name"))
    return errs


def validate_lease(lease: Lease) -> list[FieldError]:
    errs = validate_object_meta(lease.metadata, True, is_dns1123_subdomain)
    s = lease.spec
    if s.lease_duration_seconds is not None and s.lease_duration_seconds <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", s.lease_duration_seconds, "must be greater than 0"))
    if s.lease_transitions is not None:
        errs += nonnegative(s.lease_transitions, "spec.leaseTransitions")
    return errs


__all__ = ["validate_namespace", "validate_node", "validate_node_update", "validate_service",
           "validate_service_update", "validate_endpoints", "validate_event", "validate_binding", "validate_lease",
           "IMMUTABLE", "validate_resources"]
