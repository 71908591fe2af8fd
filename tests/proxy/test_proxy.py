"""kube-proxy: the rules a Service and its Endpoints make, and every node following the API."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.objects import (
    EndpointAddress, EndpointPort, Endpoints, EndpointSubset, ObjectMeta, Service, ServicePort, ServiceSpec,
)
from kmodel.proxy.component import KubeProxy
from kmodel.proxy.rules import service_rules

KUBERNETES = "10.96.0.1:443"  # the boot Service; no endpoint reconciler in these clusters


def svc(ports, cluster_ip="10.96.0.50", type_="ClusterIP") -> Service:
    return Service(metadata=ObjectMeta(name="web", namespace="default"),
                   spec=ServiceSpec(cluster_ip=cluster_ip, type=type_, ports=tuple(ports)))


def eps(*subsets) -> Endpoints:
    return Endpoints(metadata=ObjectMeta(name="web", namespace="default"), subsets=tuple(subsets))


def subset(ready, ports, not_ready=()) -> EndpointSubset:
    return EndpointSubset(addresses=tuple(EndpointAddress(ip=ip) for ip in ready),
                          not_ready_addresses=tuple(EndpointAddress(ip=ip) for ip in not_ready),
                          ports=tuple(ports))


def test_ports_match_by_name_and_protocol_not_number():
    service = svc([ServicePort(name="http", port=80, protocol="TCP", target_port=8080),
                   ServicePort(name="dns", port=53, protocol="UDP"),
                   ServicePort(name="dns-tcp", port=53, protocol="TCP")])
    endpoints = eps(subset(["10.244.1.5", "10.244.0.7"], [EndpointPort(name="http", port=8080, protocol="TCP"),
                                                         EndpointPort(name="dns", port=5353, protocol="UDP")],
                           not_ready=["10.244.2.9"]))
    assert service_rules(service, endpoints) == {
        "10.96.0.50:80": ["10.244.0.7:8080", "10.244.1.5:8080"],  # ready only, sorted
        "10.96.0.50:53/UDP": ["10.244.0.7:5353/UDP", "10.244.1.5:5353/UDP"],
        "10.96.0.50:53": [],  # no endpoint port named dns-tcp: upstream's REJECT rule
    }


def test_unnamed_port_and_services_without_a_cluster_ip():
    endpoints = eps(subset(["10.244.1.5"], [EndpointPort(port=9376, protocol="TCP")]))
    assert service_rules(svc([ServicePort(port=80, protocol="TCP")]), endpoints) == {
        "10.96.0.50:80": ["10.244.1.5:9376"]}
    assert service_rules(svc([ServicePort(port=80)], cluster_ip="None"), endpoints) == {}
    assert service_rules(svc([ServicePort(port=80)], cluster_ip=""), endpoints) == {}
    assert service_rules(svc([ServicePort(port=80)], type_="ExternalName"), endpoints) == {}


def _service_manifest() -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"clusterIP": "10.96.0.50", "selector": {"app": "web"},
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def _endpoints_manifest(ready, not_ready=()) -> dict:
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": ip} for ip in ready],
                         "notReadyAddresses": [{"ip": ip} for ip in not_ready],
                         "ports": [{"name": "http", "port": 8080}]}]}


def _proxies(cluster: Cluster) -> list[KubeProxy]:
    return [c for c in cluster.components if isinstance(c, KubeProxy)]


def test_every_node_follows_services_and_endpoints():
    cluster = Cluster(ClusterConfig(nodes=3, components=("proxy",)))
    proxies = _proxies(cluster)
    assert [p.name for p in proxies] == ["proxy/node-1", "proxy/node-2", "proxy/node-3"]

    cluster.apply([_service_manifest()])
    cluster.run(1_000)
    assert all(p.rules == {KUBERNETES: ["172.18.1.1:6443"], "10.96.0.50:80": []} for p in proxies)

    cluster.apply([_endpoints_manifest(["10.244.1.5", "10.244.0.7"], not_ready=["10.244.2.2"])])
    cluster.run_for(1_000)
    assert all(p.rules["10.96.0.50:80"] == ["10.244.0.7:8080", "10.244.1.5:8080"] for p in proxies)
    assert all(list(p.rules) == sorted(p.rules) for p in proxies)

    cluster.apply([_endpoints_manifest(["10.244.0.7"], not_ready=["10.244.1.5"])])
    cluster.run_for(1_000)
    assert all(p.rules["10.96.0.50:80"] == ["10.244.0.7:8080"] for p in proxies)

    cluster.submit(Delete("services", "default", "web"))
    cluster.run_for(1_000)
    assert all(p.rules == {KUBERNETES: ["172.18.1.1:6443"]} for p in proxies)
    assert all(r.user == "system:kube-proxy" and r.verb in ("list", "watch")
               for r in cluster.audit if r.user == "system:kube-proxy")


def test_rules_survive_a_crash_and_are_rebuilt_after_the_restart_syncs():
    cluster = Cluster(ClusterConfig(nodes=1, components=("proxy",)))
    proxy = _proxies(cluster)[0]
    cluster.apply([_service_manifest(), _endpoints_manifest(["10.244.0.7"])])
    cluster.run(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.7:8080"]

    cluster.crash("proxy/node-1")
    cluster.apply([_endpoints_manifest(["10.244.0.8"])])
    cluster.run_for(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.7:8080"]  # the kernel keeps the old rules meanwhile

    cluster.restart("proxy/node-1")
    cluster.run_for(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.8:8080"]
