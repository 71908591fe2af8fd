"""The EndpointSlice controller's reconcile, pure (staging/src/k8s.io/endpointslice reconciler.go and utils.go,
release-1.31): a Service, the pods its selector matches and the slices it already has -> the slices to create,
update and delete.

Theory of operation
-------------------
For each address type the Service supports (`address_types`: its ipFamilies, else its ClusterIP's family, else
both for a headless Service) the pods that should be in endpoints (terminating ones included) become endpoints
(`pod_to_endpoint`: the pod's IPs of that family; ready = publishNotReadyAddresses or (serving and not
terminating); serving = the pod is Ready; terminating = it has a deletionTimestamp; targetRef, nodeName, the
node's zone, a hostname as the Endpoints controller sets it), grouped by their ports (`endpoint_ports`: one per
Service port whose target the pod has). A pod whose node is not in the node cache is skipped with an error
(the sync is retried) unless the Service publishes not-ready addresses.

Per group of ports (`_reconcile_by_port_mapping`), as upstream:
1. each existing slice keeps the endpoints still desired (an endpoint is identified by its addresses, hostname
   and targetRef namespace/name; a kept one that changed beyond that identity marks the slice for update); a
   slice left empty is deleted; a slice whose labels differ from the Service's (reserved labels aside) is
   updated;
2. the endpoints left over fill the slices marked for update, fullest first, up to max_endpoints (100);
3. what is still left goes into the unchanged slice that comes closest to full (when fewer than max remain),
   else into new slices (`new_slice`: generateName "<service>-", the Service as controller owner, its labels
   plus kubernetes.io/service-name, endpointslice.kubernetes.io/managed-by and, headless, service.kubernetes.io/headless).
Slices of ports no longer desired, and slices owned by another Service object of that name, are deleted. A
Service with no endpoint of a type keeps one empty placeholder slice of that type. `finalize` turns creates into
updates of slices about to be deleted (same address type, owned by the Service), and creates nothing for a Service
being deleted. Slices of an address type the Service no longer supports are deleted last.

Order: upstream walks Go maps and sets, an order that is random; the model's is stable and documented here:
address types sorted, port groups in the order their first pod (by name) appears, endpoints popped in the order
of their identity (addresses, then pod name), slices by name (fullest first where upstream sorts by length).

Not modelled: topology hints (the Service's topology annotation and trafficDistribution), the
last-change-trigger-time annotation, and metrics.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import attrs

from kmodel.objects import ObjectMeta, ObjectReference, OwnerReference, Pod, Service
from kmodel.objects.discovery import (
    MANAGED_BY_LABEL, SERVICE_NAME_LABEL, Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort,
)
from kmodel.objects.fastevolve import evolve
from kmodel.objects.frozendict import frozen_map

from .endpoints_logic import HEADLESS_SERVICE_LABEL, PortNotFound, find_port, should_pod_be_in_endpoints, \
    should_set_hostname
from .pod_state import is_pod_ready

CONTROLLER_NAME = "endpointslice-controller.k8s.io"  # controllerQualifiedName, the managed-by label's value
MAX_ENDPOINTS_PER_SLICE = 100  # --max-endpoints-per-slice's default
ZONE_LABEL = "topology.kubernetes.io/zone"
_RESERVED_LABELS = (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_SERVICE_LABEL)


@attrs.frozen
class Plan:
    """The writes of one reconcile, in the order finalize sends them, and the errors met on the way."""
    create: tuple = ()
    update: tuple = ()
    delete: tuple = ()
    errors: tuple = ()
    #: each write is tried even when one before it failed (Reconcile's deletes of the slices of an address type
    #: the Service no longer supports), where finalize stops at the first failure
    each_tried: bool = False


# -- the Service and its pods ---------------------------------------------------------------------------------

def _is_ipv6(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return False


def service_ip_set(svc: Service) -> bool:
    """isServiceIPSet: a ClusterIP that is neither None nor empty."""
    return svc.spec.cluster_ip not in ("None", "")


def address_types(svc: Service) -> tuple[str, ...]:
    """getAddressTypesForService, sorted."""
    found = {"IPv4" if f == "IPv4" else "IPv6" for f in svc.spec.ip_families if f in ("IPv4", "IPv6")}
    if found:
        return tuple(sorted(found))
    if service_ip_set(svc):
        return ("IPv6",) if _is_ipv6(svc.spec.cluster_ip) else ("IPv4",)
    return ("IPv4", "IPv6")


def endpoint_ports(svc: Service, pod: Pod) -> tuple:
    """getEndpointPorts: a port per Service port whose target the pod has (none for a headless Service without
    ports)."""
    ports = []
    for sp in svc.spec.ports:
        try:
            number = find_port(pod, sp)
        except PortNotFound:
            continue
        ports.append(EndpointSlicePort(name=sp.name, protocol=sp.protocol or "TCP", port=number,
                                       app_protocol=sp.app_protocol))
    return tuple(ports)


def endpoint_addresses(pod: Pod, address_type: str) -> tuple:
    """getEndpointAddresses: the pod's IPs of the address type's family, re-stringified."""
    out = []
    for pod_ip in pod.status.pod_ips:
        try:
            ip = ipaddress.ip_address(pod_ip.ip)
        except ValueError:
            continue
        if (ip.version == 6) == (address_type == "IPv6"):
            out.append(str(ip))
    return tuple(out)


def pod_to_endpoint(pod: Pod, node: Any, svc: Service, address_type: str) -> Endpoint:
    """podToEndpoint."""
    serving = is_pod_ready(pod)
    terminating = pod.metadata.deletion_timestamp is not None
    # "ready" is never true for a terminating pod unless the Service publishes not-ready addresses
    ready = svc.spec.publish_not_ready_addresses or (serving and not terminating)
    m = pod.metadata
    zone = node.metadata.labels.get(ZONE_LABEL) if node is not None else None
    return Endpoint(
        addresses=endpoint_addresses(pod, address_type),
        conditions=EndpointConditions(ready=ready, serving=serving, terminating=terminating),
        hostname=pod.spec.hostname if should_set_hostname(pod, svc) else None,
        target_ref=ObjectReference(kind="Pod", namespace=m.namespace, name=m.name, uid=m.uid),
        node_name=pod.spec.node_name or None,
        zone=zone or None)


def endpoint_identity(ep: Endpoint) -> tuple:
    """hashEndpoint: what identifies an endpoint (its sorted addresses, hostname and targetRef namespace/name);
    anything else may change in place."""
    ref = ep.target_ref
    return (tuple(sorted(ep.addresses)), ep.hostname or "", ref.namespace if ref else "", ref.name if ref else "")


def endpoints_equal_beyond_identity(a: Endpoint, b: Endpoint) -> bool:
    """EndpointsEqualBeyondHash: nodeName, zone, the three conditions and the targetRef (its resourceVersion
    ignored)."""
    if a.node_name != b.node_name or a.zone != b.zone or a.conditions != b.conditions:
        return False
    ra, rb = a.target_ref, b.target_ref
    if ra is not None and rb is not None:
        return evolve(ra, resource_version="") == evolve(rb, resource_version="")
    return ra == rb


def ports_key(ports: Iterable[EndpointSlicePort]) -> tuple:
    """NewPortMapKey: the group a slice or pod belongs to, whatever the order of its ports."""
    return tuple(sorted((p.name or "", p.protocol or "", p.port or 0, p.app_protocol or "") for p in ports))


# -- slices ---------------------------------------------------------------------------------------------------

def owned_by(eps: EndpointSlice, svc: Service) -> bool:
    """ownedBy: an owner reference to this very Service (its UID), kind Service, apiVersion v1."""
    return any(o.uid == svc.metadata.uid and o.kind == "Service" and o.api_version == "v1"
               for o in eps.metadata.owner_references)


def slice_labels(labels: Mapping[str, str], svc: Service) -> tuple[Any, bool]:
    """setEndpointSliceLabels: the labels a slice of svc should have, and whether its own (the reserved ones
    aside) differ from the Service's."""
    own = {k: v for k, v in labels.items() if k not in _RESERVED_LABELS}
    want = {k: v for k, v in svc.metadata.labels.items() if k not in _RESERVED_LABELS}
    changed = own != want
    if not service_ip_set(svc):
        want[HEADLESS_SERVICE_LABEL] = ""
    want[SERVICE_NAME_LABEL] = svc.metadata.name
    want[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return frozen_map({k: want[k] for k in sorted(want)}), changed


def new_slice(svc: Service, ports: tuple, address_type: str) -> EndpointSlice:
    """newEndpointSlice: empty, named by the API server from "<service>-", owned by the Service."""
    m = svc.metadata
    owner = OwnerReference(api_version="v1", kind="Service", name=m.name, uid=m.uid, controller=True,
                           block_owner_deletion=True)
    labels, _ = slice_labels({}, svc)
    meta = ObjectMeta(generate_name=f"{m.name}-", namespace=m.namespace, labels=labels, owner_references=(owner,))
    return EndpointSlice(metadata=meta, address_type=address_type, endpoints=(), ports=ports)


def _is_placeholder_of(eps: EndpointSlice, placeholder: EndpointSlice, *, compare_owners: bool = False) -> bool:
    """placeholderSliceCompare.DeepEqual: same namespace and labels, no ports, no endpoints, same address type.

    Release 1.31's comparison of the ObjectMeta looks at the namespace and labels only, so it ignores the owner
    references: the placeholder of a Service deleted and made again under its name passes for the new Service's
    own, and is neither deleted nor made again. With `compare_owners` (the endpointslice-compare-placeholder-owners
    fix, kmodel.fixes: kubernetes#141593, 1.38) the owner references' UIDs must match too, in order."""
    if compare_owners and [o.uid for o in eps.metadata.owner_references] != \
            [o.uid for o in placeholder.metadata.owner_references]:
        return False
    return (eps.metadata.namespace == placeholder.metadata.namespace
            and dict(eps.metadata.labels) == dict(placeholder.metadata.labels)
            and not eps.ports and not eps.endpoints and eps.address_type == placeholder.address_type)


def _slice_to_fill(slices: Sequence[EndpointSlice], count: int, most: int) -> Optional[EndpointSlice]:
    """getSliceToFill: the slice that comes closest to full once `count` endpoints are added."""
    closest_diff, closest = most, None
    for eps in slices:
        diff = most - (count + len(eps.endpoints))
        if 0 <= diff < closest_diff:
            closest_diff, closest = diff, eps
            if diff == 0:
                break
    return closest


# -- the reconcile --------------------------------------------------------------------------------------------

def _reconcile_by_port_mapping(svc: Service, existing: Sequence[EndpointSlice], desired: dict, ports: tuple,
                               address_type: str, most: int) -> tuple[list, list, list]:
    """reconcileByPortMapping: (to create, to update, to delete) for one group of ports; `desired` maps an
    endpoint's identity to the endpoint and is consumed."""
    by_name: dict[str, EndpointSlice] = {}
    unchanged: set[str] = set()
    to_update: set[str] = set()
    to_delete: set[str] = set()
    # 1. keep the endpoints still desired, and see what changed
    for eps in existing:
        name = eps.metadata.name
        by_name[name] = eps
        kept = []
        updated = False
        for ep in eps.endpoints:
            got = desired.pop(endpoint_identity(ep), None)
            if got is not None:
                kept.append(got)
                if not endpoints_equal_beyond_identity(got, ep):
                    updated = True
        labels, labels_changed = slice_labels(eps.metadata.labels, svc)
        if updated or len(kept) != len(eps.endpoints):
            if not kept:
                to_delete.add(name)
            else:
                by_name[name] = evolve(eps, endpoints=tuple(kept), metadata=evolve(eps.metadata, labels=labels))
                to_update.add(name)
        elif labels_changed:
            by_name[name] = evolve(eps, metadata=evolve(eps.metadata, labels=labels))
            to_update.add(name)
        else:
            unchanged.add(name)
    remaining = [desired[k] for k in sorted(desired)]
    desired.clear()
    # 2. fill the slices being updated, fullest first
    if remaining and to_update:
        for name in sorted(sorted(to_update), key=lambda n: -len(by_name[n].endpoints)):
            eps = by_name[name]
            room = most - len(eps.endpoints)
            if room > 0 and remaining:
                by_name[name] = evolve(eps, endpoints=eps.endpoints + tuple(remaining[:room]))
                remaining = remaining[room:]
    # 3. fit the rest into the unchanged slice closest to full, or into new slices
    to_create = []
    while remaining:
        target = None
        if len(remaining) < most and unchanged:
            target = _slice_to_fill([by_name[n] for n in sorted(unchanged)], len(remaining), most)
        if target is None:
            target = new_slice(svc, ports, address_type)
        room = most - len(target.endpoints)
        target = evolve(target, endpoints=target.endpoints + tuple(remaining[:room]))
        remaining = remaining[room:]
        name = target.metadata.name
        if name:
            by_name[name] = target
            to_update.add(name)
            unchanged.discard(name)
        else:
            to_create.append(target)
    return to_create, [by_name[n] for n in sorted(to_update)], [by_name[n] for n in sorted(to_delete)]


def _reconcile_by_address_type(svc: Service, pods: Sequence[Pod], existing: Sequence[EndpointSlice],
                               node_of: Callable[[str], Any], address_type: str, most: int,
                               compare_placeholder_owners: bool) -> tuple[Plan, list]:
    """reconcileByAddressType then finalize's create-to-update swap: the plan of one address type."""
    errors: list[str] = []
    to_delete: list = []
    existing_by_ports: dict[tuple, list] = {}
    for eps in existing:
        if owned_by(eps, svc):
            existing_by_ports.setdefault(ports_key(eps.ports), []).append(eps)
        else:
            to_delete.append(eps)
    desired_by_ports: dict[tuple, dict] = {}
    ports_of: dict[tuple, tuple] = {}
    m = svc.metadata
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, True):
            continue
        ports = endpoint_ports(svc, pod)
        key = ports_key(ports)
        desired = desired_by_ports.setdefault(key, {})
        ports_of.setdefault(key, ports)
        node = node_of(pod.spec.node_name)
        if node is None and not svc.spec.publish_not_ready_addresses:
            # requeue the Service, but update the slices without the pod (a missing node must not keep them stuck)
            errors.append(f"skipping Pod {pod.metadata.name} for Service {m.namespace}/{m.name}: "
                          f"Node {pod.spec.node_name} Not Found")
            continue
        ep = pod_to_endpoint(pod, node, svc, address_type)
        if ep.addresses:
            desired[endpoint_identity(ep)] = ep
    to_create: list = []
    to_update: list = []
    for key, desired in desired_by_ports.items():
        c, u, d = _reconcile_by_port_mapping(svc, existing_by_ports.get(key, []), desired, ports_of[key],
                                             address_type, most)
        to_create += c
        to_update += u
        to_delete += d
    for key in sorted(existing_by_ports):
        if key not in desired_by_ports:
            to_delete += existing_by_ports[key]
    if len(existing) == len(to_delete) and not to_create:
        placeholder = new_slice(svc, (), address_type)
        if len(to_delete) == 1 and _is_placeholder_of(to_delete[0], placeholder,
                                                      compare_owners=compare_placeholder_owners):
            to_delete = []  # it is already there: do not delete and create it again
        else:
            to_create.append(placeholder)
    # finalize: a create becomes the update of a slice about to be deleted (same address type, this Service's)
    i = 0
    while i < len(to_delete) and to_create:
        doomed = to_delete[i]
        if doomed.address_type == to_create[-1].address_type and owned_by(doomed, svc):
            eps = to_create.pop()
            to_update.append(evolve(eps, metadata=evolve(eps.metadata, name=doomed.metadata.name,
                                                         generate_name=doomed.metadata.generate_name)))
            del to_delete[i]
        else:
            i += 1
    if m.deletion_timestamp is not None:
        to_create = []  # no new slices for a Service being deleted (the garbage collector is removing them)
    return Plan(tuple(to_create), tuple(to_update), tuple(to_delete)), errors


def reconcile(svc: Service, pods: Sequence[Pod], existing: Sequence[EndpointSlice], node_of: Callable[[str], Any],
              max_endpoints: int = MAX_ENDPOINTS_PER_SLICE, *, compare_placeholder_owners: bool = False) -> list[Plan]:
    """Reconcile: one plan per address type the Service supports (each finalized on its own, as upstream), then
    one that deletes the slices of the address types it no longer supports. `pods` are the pods its selector
    matches, `existing` its slices managed by this controller and not being deleted, `node_of(name)` the cached
    Node or None. Each plan's `errors` are the errors met before its writes. `compare_placeholder_owners`: an
    existing placeholder must be owned by this very Service to be kept (`_is_placeholder_of`)."""
    supported = address_types(svc)
    by_type: dict[str, list] = {}
    unsupported = []
    for eps in existing:
        if eps.address_type in supported:
            by_type.setdefault(eps.address_type, []).append(eps)
        else:
            unsupported.append(eps)
    pods = sorted(pods, key=lambda p: p.metadata.name)
    plans = []
    for address_type in supported:
        plan, errors = _reconcile_by_address_type(svc, pods, by_type.get(address_type, []), node_of, address_type,
                                                  max_endpoints, compare_placeholder_owners)
        plans.append(attrs.evolve(plan, errors=tuple(errors)))
    if unsupported:
        plans.append(Plan(delete=tuple(unsupported), each_tried=True))
    return plans
