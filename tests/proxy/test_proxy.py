"""kube-proxy: the rules a Service and its EndpointSlices make, and every node following the API."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.objects import ObjectMeta, Service, ServicePort, ServiceSpec
from kmodel.objects.discovery import Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort
from kmodel.proxy.component import KubeProxy
from kmodel.proxy.rules import service_rules

KUBERNETES = "10.96.0.1:443"  # the boot Service; no endpoint reconciler in these clusters


def svc(ports, cluster_ip="10.96.0.50", type_="ClusterIP") -> Service:
    return Service(metadata=ObjectMeta(name="web", namespace="default"),
                   spec=ServiceSpec(cluster_ip=cluster_ip, type=type_, ports=tuple(ports)))


def endpoint(ip, ready=True, serving=None, terminating=None) -> Endpoint:
    return Endpoint(addresses=(ip,), conditions=EndpointConditions(ready=ready, serving=serving,
                                                                  terminating=terminating))


def eps(name, endpoints, ports, address_type="IPv4") -> EndpointSlice:
    return EndpointSlice(metadata=ObjectMeta(name=name, namespace="default",
                                             labels={"kubernetes.io/service-name": "web"}),
                         address_type=address_type, endpoints=tuple(endpoints), ports=tuple(ports))


def port(name, number, protocol="TCP") -> EndpointSlicePort:
    return EndpointSlicePort(name=name, port=number, protocol=protocol)


def test_ports_match_by_name_and_protocol_not_number():
    service = svc([ServicePort(name="http", port=80, protocol="TCP", target_port=8080),
                   ServicePort(name="dns", port=53, protocol="UDP"),
                   ServicePort(name="dns-tcp", port=53, protocol="TCP")])
    slices = [eps("web-a", [endpoint("10.244.1.5"), endpoint("10.244.0.7"), endpoint("10.244.2.9", ready=False)],
                  [port("http", 8080), port("dns", 5353, "UDP")])]
    assert service_rules(service, slices) == {
        "10.96.0.50:80": ["10.244.0.7:8080", "10.244.1.5:8080"],  # ready only, sorted
        "10.96.0.50:53/UDP": ["10.244.0.7:5353/UDP", "10.244.1.5:5353/UDP"],
        "10.96.0.50:53": [],  # no endpoint port named dns-tcp: upstream's REJECT rule
    }


def test_unnamed_port_and_services_without_a_cluster_ip():
    slices = [eps("web-a", [endpoint("10.244.1.5")], [port("", 9376)])]
    assert service_rules(svc([ServicePort(port=80, protocol="TCP")]), slices) == {
        "10.96.0.50:80": ["10.244.1.5:9376"]}
    assert service_rules(svc([ServicePort(port=80)], cluster_ip="None"), slices) == {}
    assert service_rules(svc([ServicePort(port=80)], cluster_ip=""), slices) == {}
    assert service_rules(svc([ServicePort(port=80)], type_="ExternalName"), slices) == {}


def test_slices_of_a_service_merge_and_an_endpoint_counts_once():
    """endpointslicecache: the slices of a Service are merged per port; an endpoint in two slices counts once
    (the first by slice name); unset conditions mean ready and serving."""
    service = svc([ServicePort(name="http", port=80, protocol="TCP")])
    slices = [eps("web-b", [endpoint("10.244.0.7", ready=None), endpoint("10.244.1.5", ready=False)],
                  [port("http", 8080)]),
              eps("web-a", [endpoint("10.244.1.5")], [port("http", 8080)]),
              eps("web-c", [endpoint("10.244.2.2")], [port("http", 9090)])]
    assert service_rules(service, slices) == {
        "10.96.0.50:80": ["10.244.0.7:8080", "10.244.1.5:8080", "10.244.2.2:9090"]}


def test_ports_without_a_name_or_number_and_other_families_are_ignored():
    service = svc([ServicePort(name="http", port=80, protocol="TCP")])
    slices = [eps("web-a", [endpoint("10.244.0.7")], [EndpointSlicePort(port=8080, protocol="TCP")]),  # name nil
              eps("web-b", [endpoint("10.244.0.8")], [EndpointSlicePort(name="http", port=0, protocol="TCP")]),
              eps("web-c", [endpoint("fd00::7")], [port("http", 8080)], address_type="IPv6")]
    assert service_rules(service, slices) == {"10.96.0.50:80": []}


def test_terminating_serving_endpoints_are_used_only_when_none_is_ready():
    """CategorizeEndpoints (1.31): the ready endpoints; if there are none, the serving terminating ones, so the
    last connections of a Service shutting down are not dropped."""
    service = svc([ServicePort(name="http", port=80, protocol="TCP")])
    going = endpoint("10.244.0.7", ready=False, serving=True, terminating=True)
    not_serving = endpoint("10.244.0.9", ready=False, serving=False, terminating=True)
    assert service_rules(service, [eps("web-a", [going, not_serving, endpoint("10.244.1.5")],
                                       [port("http", 8080)])]) == {"10.96.0.50:80": ["10.244.1.5:8080"]}
    assert service_rules(service, [eps("web-a", [going, not_serving], [port("http", 8080)])]) == {
        "10.96.0.50:80": ["10.244.0.7:8080"]}
    assert service_rules(service, [eps("web-a", [not_serving], [port("http", 8080)])]) == {"10.96.0.50:80": []}


def _service_manifest() -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"clusterIP": "10.96.0.50", "selector": {"app": "web"},
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def _slice_manifest(ready, not_ready=(), name="web-x", service="web") -> dict:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": "default", "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in ready]
            + [{"addresses": [ip], "conditions": {"ready": False}} for ip in not_ready],
            "ports": [{"name": "http", "port": 8080}]}


def _proxies(cluster: Cluster) -> list[KubeProxy]:
    return [c for c in cluster.components if isinstance(c, KubeProxy)]


def test_every_node_follows_services_and_slices():
    cluster = Cluster(ClusterConfig(nodes=3, components=("proxy",)))
    proxies = _proxies(cluster)
    assert [p.name for p in proxies] == ["proxy/node-1", "proxy/node-2", "proxy/node-3"]

    cluster.apply([_service_manifest()])
    cluster.run(1_000)
    assert all(p.rules == {KUBERNETES: ["172.18.1.1:6443"], "10.96.0.50:80": []} for p in proxies)

    cluster.apply([_slice_manifest(["10.244.1.5", "10.244.0.7"], not_ready=["10.244.2.2"])])
    cluster.run_for(1_000)
    assert all(p.rules["10.96.0.50:80"] == ["10.244.0.7:8080", "10.244.1.5:8080"] for p in proxies)
    assert all(list(p.rules) == sorted(p.rules) for p in proxies)

    cluster.apply([_slice_manifest(["10.244.0.7"], not_ready=["10.244.1.5"])])
    cluster.run_for(1_000)
    assert all(p.rules["10.96.0.50:80"] == ["10.244.0.7:8080"] for p in proxies)

    # a second slice of the Service adds to the first
    cluster.apply([_slice_manifest(["10.244.2.3"], name="web-y")])
    cluster.run_for(1_000)
    assert all(p.rules["10.96.0.50:80"] == ["10.244.0.7:8080", "10.244.2.3:8080"] for p in proxies)

    cluster.submit(Delete("services", "default", "web"))
    cluster.run_for(1_000)
    assert all(p.rules == {KUBERNETES: ["172.18.1.1:6443"]} for p in proxies)
    assert all(r.user == "system:kube-proxy" and r.verb in ("list", "watch")
               for r in cluster.audit if r.user == "system:kube-proxy")
    assert all(p.slices.has_synced for p in proxies)  # system:node-proxier lets it list and watch slices


def test_a_slice_relabelled_to_another_service_leaves_the_first():
    cluster = Cluster(ClusterConfig(nodes=1, components=("proxy",)))
    proxy = _proxies(cluster)[0]
    cluster.apply([_service_manifest(), _slice_manifest(["10.244.0.7"])])
    cluster.run(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.7:8080"]
    cluster.apply([_slice_manifest(["10.244.0.7"], service="other")])
    cluster.run_for(1_000)
    assert proxy.rules["10.96.0.50:80"] == []


def test_rules_survive_a_crash_and_are_rebuilt_after_the_restart_syncs():
    cluster = Cluster(ClusterConfig(nodes=1, components=("proxy",)))
    proxy = _proxies(cluster)[0]
    cluster.apply([_service_manifest(), _slice_manifest(["10.244.0.7"])])
    cluster.run(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.7:8080"]

    cluster.crash("proxy/node-1")
    cluster.apply([_slice_manifest(["10.244.0.8"])])
    cluster.run_for(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.7:8080"]  # the kernel keeps the old rules meanwhile

    cluster.restart("proxy/node-1")
    cluster.run_for(1_000)
    assert proxy.rules["10.96.0.50:80"] == ["10.244.0.8:8080"]
