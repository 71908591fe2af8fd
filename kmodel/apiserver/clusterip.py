"""Service ClusterIP allocation, as the service registry does it (pkg/registry/core/service/storage/alloc.go).

* create: a ClusterIP/NodePort/LoadBalancer Service without clusterIP gets the allocator's next address;
  an explicit clusterIP is reserved, or refused with 422 `Service "x" is invalid: spec.clusterIPs:
  Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: provided IP is already
  allocated` (or the allocator's "not in the valid range" text); "None" (headless) and ExternalName get
  nothing. A full range is 500 `Internal error occurred: failed to allocate a serviceIP: range is full`.
  clusterIPs, ipFamilies (IPv4) and ipFamilyPolicy (SingleStack) are filled in as upstream does.
  `allocate_for_create` returns the addresses it took so a create that fails later can give them back
  (upstream's finishCreate(success=false)).
* update: an update that omits the clusterIP keeps the allocated one (patchAllocatedValues). A Service switched
  to ExternalName drops the clusterIP(s), ipFamilies and ipFamilyPolicy it kept unchanged (strategy.go's
  dropTypeDependentFields) and its addresses are released once the update is stored; one switched from
  ExternalName to a type that needs a ClusterIP is given one as on create (alloc.go's allocateUpdate).
* delete: the address is released when the Service is removed from the store.

The allocator is shared by every replica of a cluster (upstream keeps its bitmap in etcd); see Pipeline.
"""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.apiserver import errors
from kmodel.apiserver.resources import Resource
from kmodel.ipam.serviceip import ServiceIPAllocator, ServiceIPError
from kmodel.objects.field_errors import GoValue, go_string_slice, invalid

from kmodel.apiserver.fastevolve import evolve as _evolve


EXTERNAL_NAME = "ExternalName"


def _needs_cluster_ip(svc: Any) -> bool:
    return svc.spec.type != EXTERNAL_NAME and svc.spec.cluster_ip != "None"


def switched_to_external_name(svc: Any, old: Any) -> bool:
    """needsClusterIP(old) && !needsClusterIP(svc): the update makes the Service an ExternalName one ("None"
    counts as a value here: a headless Service switched to ExternalName drops it too)."""
    return old.spec.type != EXTERNAL_NAME and svc.spec.type == EXTERNAL_NAME


def switched_from_external_name(svc: Any, old: Any) -> bool:
    """!needsClusterIP(old) && needsClusterIP(svc): the update gives an ExternalName Service another type."""
    return old.spec.type == EXTERNAL_NAME and svc.spec.type != EXTERNAL_NAME


def allocate_for_create(res: Resource, svc: Any, allocator: ServiceIPAllocator) -> tuple[Any, list[str]]:
    """The Service with its ClusterIP assigned, and the addresses taken (to release if the create fails)."""
    if not _needs_cluster_ip(svc):
        return svc, []
    spec = svc.spec
    if spec.cluster_ip:
        try:
            allocator.allocate(spec.cluster_ip)
        except (ServiceIPError, ValueError) as e:
            ips = spec.cluster_ips or (spec.cluster_ip,)
            err = invalid("spec.clusterIPs", GoValue(go_string_slice(ips)),
                          f"failed to allocate IP {spec.cluster_ip}: {e}")
            raise errors.invalid(res.group_kind, res.group, res.kind, svc.metadata.name, [err]) from None
        ip = spec.cluster_ip
    else:
        try:
            ip = str(allocator.allocate_next())
        except ServiceIPError as e:
            # upstream's allocIPs: not a field's fault, so NewInternalError (500), not 422
            raise errors.internal_error(f"failed to allocate a serviceIP: {e}") from None
    new_spec = _evolve(spec, cluster_ip=ip, cluster_ips=(ip,), ip_families=spec.ip_families or ("IPv4",),
                       ip_family_policy=spec.ip_family_policy or "SingleStack")
    return _evolve(svc, spec=new_spec), [ip]


def keep_allocated(svc: Any, old: Any) -> Any:
    """An update that leaves clusterIP empty keeps the old one (and clusterIPs, ipFamilies)."""
    if svc.spec.cluster_ip or not old.spec.cluster_ip or not _needs_cluster_ip(svc):
        return svc
    o = old.spec
    return _evolve(svc, spec=_evolve(svc.spec, cluster_ip=o.cluster_ip, cluster_ips=o.cluster_ips,
                                     ip_families=svc.spec.ip_families or o.ip_families,
                                     ip_family_policy=svc.spec.ip_family_policy or o.ip_family_policy))


def drop_type_dependent(svc: Any, old: Any) -> Any:
    """dropTypeDependentFields' ClusterIP part: a Service switched to ExternalName loses the clusterIP(s),
    ipFamilies and ipFamilyPolicy the update left as they were (kubectl apply leaves the values the server set);
    a field the update changed itself is kept, for validation to judge."""
    if not switched_to_external_name(svc, old):
        return svc
    s, o = svc.spec, old.spec
    changes: dict[str, Any] = {}
    if s.cluster_ip == o.cluster_ip and tuple(s.cluster_ips) == tuple(o.cluster_ips):
        changes.update(cluster_ip="", cluster_ips=())
    if tuple(s.ip_families) == tuple(o.ip_families):
        changes["ip_families"] = ()
    if (s.ip_family_policy or "") == (o.ip_family_policy or ""):
        changes["ip_family_policy"] = None
    return _evolve(svc, spec=_evolve(s, **changes)) if changes else svc


def release(svc: Any, allocator: ServiceIPAllocator) -> None:
    for ip in svc.spec.cluster_ips or ((svc.spec.cluster_ip,) if svc.spec.cluster_ip else ()):
        if ip != "None":
            try:
                allocator.release(ip)
            except (ServiceIPError, ValueError):
                pass
