"""discovery.k8s.io/v1 EndpointSlice (k8s.io/api/discovery/v1/types.go).

The fields the model's writers and readers use: addressType, endpoints (addresses, the ready/serving/terminating
conditions, hostname, targetRef, nodeName, zone) and ports (name, protocol, port, appProtocol: all pointers
upstream, so an unnamed port is `name: ""` once defaulted). Not modelled: an endpoint's hints (topology-aware
routing) and deprecatedTopology.
"""

from __future__ import annotations

import attrs

from .meta import ObjectMeta, ObjectReference
from .registry import api_kind
from .schema import BOOL, INT32, STRING, STRINGS, enum_string, fld, list_of, struct

#: the label naming the Service a slice belongs to (discovery.LabelServiceName)
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
#: the label naming the controller that manages a slice (discovery.LabelManagedBy)
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")  # supportedAddressTypes, sorted as upstream's error lists them


@attrs.frozen
class EndpointConditions:
    ready: bool | None = fld(BOOL, ptr=True)
    serving: bool | None = fld(BOOL, ptr=True)
    terminating: bool | None = fld(BOOL, ptr=True)


@attrs.frozen
class Endpoint:
    addresses: tuple = fld(STRINGS, keep=True)
    conditions: EndpointConditions = fld(struct(EndpointConditions))
    hostname: str | None = fld(STRING, ptr=True)
    target_ref: ObjectReference | None = fld(struct(ObjectReference), ptr=True)
    node_name: str | None = fld(STRING, ptr=True)
    zone: str | None = fld(STRING, ptr=True)


@attrs.frozen
class EndpointSlicePort:
    """discovery/v1 EndpointPort (named apart from core/v1's EndpointPort, whose fields are not pointers)."""
    name: str | None = fld(STRING, ptr=True)
    protocol: str | None = fld(enum_string("v1.Protocol"), ptr=True)
    port: int | None = fld(INT32, ptr=True)
    app_protocol: str | None = fld(STRING, ptr=True)


@api_kind("discovery.k8s.io/v1", "EndpointSlice", "endpointslices", namespaced=True)
@attrs.frozen
class EndpointSlice:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    address_type: str = fld(enum_string("v1.AddressType"), keep=True)
    endpoints: tuple = fld(list_of(struct(Endpoint)), keep=True)
    ports: tuple = fld(list_of(struct(EndpointSlicePort)))
