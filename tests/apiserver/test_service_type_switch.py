"""A Service switched to and from ExternalName (upstream 1.31 pkg/registry/core/service: strategy.go's
dropTypeDependentFields, storage/alloc.go's allocateUpdate): switched to ExternalName, it drops the ClusterIPs,
IP families and family policy it kept and its addresses are released; switched back, it is given a new one."""

from __future__ import annotations

import random

import attrs

from kmodel.apiserver.pipeline import Pipeline
from kmodel.ipam.serviceip import ServiceIPAllocator
from kmodel.objects import dump
from tests.apiserver.conftest import manifest, req

NOW = 1_000


def _tiny(store) -> Pipeline:
    return Pipeline(store, service_ips=ServiceIPAllocator("10.96.0.0/29", random.Random(0)))  # 6 addresses


def _switched(svc, kind: str, **spec):
    return attrs.evolve(svc, spec=attrs.evolve(svc.spec, type=kind, **spec))


def _created(api):
    (svc,) = manifest("k-service-cart.yaml")
    r = api.handle(req("create", "services", "shop", body=dump(svc)), now=NOW)
    assert r.code == 201
    return r.body


def test_a_service_switched_to_external_name_drops_and_releases_its_cluster_ip(store):
    api = _tiny(store)
    svc = _created(api)
    ip = svc.spec.cluster_ip
    assert api.service_ips.has(ip)
    # what kubectl apply sends: the new type, the fields the server set (clusterIP, families) left as they are
    r = api.handle(req("update", "services", "shop", "cart",
                       body=_switched(svc, "ExternalName", external_name="cart.example.com")), now=NOW)
    assert r.code == 200, r.body
    spec = r.body.spec
    assert (spec.type, spec.cluster_ip, spec.cluster_ips, spec.ip_families, spec.ip_family_policy) == (
        "ExternalName", "", (), (), None)
    assert not api.service_ips.has(ip)


def test_a_dry_run_switch_releases_nothing(store):
    api = _tiny(store)
    svc = _created(api)
    r = api.handle(req("update", "services", "shop", "cart", dry_run=True,
                       body=_switched(svc, "ExternalName", external_name="cart.example.com")), now=NOW)
    assert r.code == 200 and r.body.spec.cluster_ip == ""
    assert api.service_ips.has(svc.spec.cluster_ip)


def test_a_service_switched_back_from_external_name_gets_a_new_cluster_ip(store):
    api = _tiny(store)
    svc = _created(api)
    r = api.handle(req("update", "services", "shop", "cart",
                       body=_switched(svc, "ExternalName", external_name="cart.example.com")), now=NOW)
    external = r.body
    r = api.handle(req("update", "services", "shop", "cart",
                       body=_switched(external, "ClusterIP", external_name="")), now=NOW)
    assert r.code == 200, r.body
    spec = r.body.spec
    assert spec.cluster_ip and spec.cluster_ips == (spec.cluster_ip,) and api.service_ips.has(spec.cluster_ip)
    assert (spec.ip_families, spec.ip_family_policy) == (("IPv4",), "SingleStack")


def test_switching_back_into_a_full_range_is_an_internal_error_and_takes_nothing(store):
    api = _tiny(store)
    svc = _created(api)
    external = api.handle(req("update", "services", "shop", "cart",
                              body=_switched(svc, "ExternalName", external_name="cart.example.com")), now=NOW).body
    for i in range(api.service_ips.free):
        body = dump(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, name=f"s{i}", uid="",
                                                            resource_version="", creation_timestamp=None),
                                 spec=attrs.evolve(svc.spec, cluster_ip="", cluster_ips=())))
        assert api.handle(req("create", "services", "shop", body=body), now=NOW).code == 201
    r = api.handle(req("update", "services", "shop", "cart",
                       body=_switched(external, "ClusterIP", external_name="")), now=NOW)
    assert (r.code, r.body.message) == (500, "Internal error occurred: failed to allocate a serviceIP: range is full")
    assert api.service_ips.free == 0
