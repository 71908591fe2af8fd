"""Validation of discovery.k8s.io/v1 EndpointSlices (pkg/apis/discovery/validation/validation.go, release-1.31).

addressType is required and one of FQDN, IPv4, IPv6, and immutable; at most 1000 endpoints, each with 1 to 100
addresses valid for the address type (an IP address must not be unspecified, loopback or link-local: upstream's
ValidateNonSpecialIP), a node name that is a DNS subdomain and a hostname that is a DNS label; at most 20000
ports, their names DNS labels (or empty) and unique, each with a protocol among SCTP, TCP and UDP and an
appProtocol that is a qualified name. Hints and deprecatedTopology are not modelled.
"""

from __future__ import annotations

import ipaddress

from ..discovery import ADDRESS_TYPES, EndpointSlice
from ..field_errors import ErrorType, FieldError, duplicate, invalid, not_supported, required
from .common import IMMUTABLE, dns1123_label, protocol, validate_object_meta
from .names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, parse_ip

MAX_ENDPOINTS = 1000
MAX_ADDRESSES = 100
MAX_PORTS = 20000


def _too_many(path: str, actual: int, most: int) -> FieldError:
    """field.TooMany: `Too many: <n>: must have at most <m> items`."""
    return FieldError(ErrorType.TOO_MANY, path, actual, f"must have at most {most} items")


def non_special_ip(address: str, path: str) -> list[FieldError]:
    """apivalidation.ValidateNonSpecialIP."""
    ip = parse_ip(address)
    if ip is None:
        return [invalid(path, address, "must be a valid IP address")]
    errs = []
    if ip.is_unspecified:
        errs.append(invalid(path, address, f"may not be unspecified ({address})"))
    if ip.is_loopback:
        errs.append(invalid(path, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip in _LINK_LOCAL[ip.version]:
        errs.append(invalid(path, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if ip in _LINK_LOCAL_MULTICAST[ip.version]:
        errs.append(invalid(path, address,
                            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return errs


_LINK_LOCAL = {4: ipaddress.ip_network("169.254.0.0/16"), 6: ipaddress.ip_network("fe80::/10")}
_LINK_LOCAL_MULTICAST = {4: ipaddress.ip_network("224.0.0.0/24"), 6: ipaddress.ip_network("ff02::/16")}


def _address(address: str, address_type: str, path: str) -> list[FieldError]:
    """One address, by the slice's address type (an unknown type's addresses are not checked, as upstream)."""
    if address_type in ("IPv4", "IPv6"):
        ip = parse_ip(address)
        version = 4 if address_type == "IPv4" else 6
        if ip is None or ip.version != version:
            return [invalid(path, address, f"must be a valid {address_type} address")]
        return non_special_ip(address, path)
    if address_type == "FQDN":
        return [invalid(path, address, m) for m in is_dns1123_subdomain(address)]
    return []


def validate_endpointslice(eps: EndpointSlice) -> list[FieldError]:
    """ValidateEndpointSlice."""
    errs = validate_object_meta(eps.metadata, True, is_dns1123_subdomain)
    if not eps.address_type:
        errs.append(required("addressType"))
    elif eps.address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", eps.address_type, ADDRESS_TYPES))
    if len(eps.endpoints) > MAX_ENDPOINTS:
        errs.append(_too_many("endpoints", len(eps.endpoints), MAX_ENDPOINTS))
    else:
        for i, ep in enumerate(eps.endpoints):
            p = f"endpoints[{i}]"
            if not ep.addresses:
                errs.append(required(f"{p}.addresses", "must contain at least 1 address"))
            elif len(ep.addresses) > MAX_ADDRESSES:
                errs.append(_too_many(f"{p}.addresses", len(ep.addresses), MAX_ADDRESSES))
            for j, address in enumerate(ep.addresses):
                errs += _address(address, eps.address_type, f"{p}.addresses[{j}]")
            if ep.node_name is not None:
                errs += [invalid(f"{p}.nodeName", ep.node_name, m) for m in is_dns1123_subdomain(ep.node_name)]
            if ep.hostname is not None:
                errs += dns1123_label(ep.hostname, f"{p}.hostname")
    if len(eps.ports) > MAX_PORTS:
        errs.append(_too_many("ports", len(eps.ports), MAX_PORTS))
        return errs
    names: set[str] = set()
    for i, port in enumerate(eps.ports):
        p = f"ports[{i}]"
        name = port.name or ""
        if name:
            errs += [invalid(f"{p}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(f"{p}.name", name))
        names.add(name)
        if port.protocol is None:
            errs.append(required(f"{p}.protocol"))
        else:
            errs += protocol(port.protocol, f"{p}.protocol")
        if port.app_protocol is not None:
            errs += [invalid(f"{p}.appProtocol", port.app_protocol, m) for m in is_qualified_name(port.app_protocol)]
    return errs


def validate_endpointslice_update(new: EndpointSlice, old: EndpointSlice) -> list[FieldError]:
    """ValidateEndpointSliceUpdate: addressType may not change."""
    errs = validate_endpointslice(new)
    if new.address_type != old.address_type:
        errs.append(invalid("addressType", new.address_type, IMMUTABLE))
    return errs
