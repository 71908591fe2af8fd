"""converges-proxy-rules over EndpointSlices: it holds on a real cluster run, and catches rules that really differ
from what the Services and their slices imply."""

from __future__ import annotations

from kmodel.cluster.kubectl import Delete
from kmodel.invariants.endpointslices import reference_rules
from kmodel.objects import ObjectMeta, Service, ServicePort, ServiceSpec
from kmodel.objects.discovery import Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort

from tests.invariants.test_invariants import S, check, pods, web_cluster


def _slices(cluster) -> list:
    return [s for s in cluster.objects("endpointslices", "default")
            if s.metadata.labels.get("kubernetes.io/service-name") == "storefront"]


def test_converges_proxy_rules_holds_on_a_settled_cluster():
    cluster = web_cluster(nodes=2)
    assert len(_slices(cluster)) == 1 and len(_slices(cluster)[0].endpoints) == 3
    assert check(cluster, "converges-proxy-rules") == []


def test_converges_proxy_rules_fails_for_a_proxy_that_missed_a_slice_change():
    cluster = web_cluster(nodes=2)
    cluster.partition("proxy/node-2")
    victim = sorted(p.metadata.name for p in pods(cluster))[0]
    cluster.submit(Delete("pods", "default", victim))
    cluster.run(cluster.now + 30 * S)
    [message] = check(cluster, "converges-proxy-rules")
    svc_ip = cluster.get("services", "default", "storefront").spec.cluster_ip
    assert message.startswith(f"proxy/node-2's rules differ from the Services and EndpointSlices: {svc_ip}:80: has [")


def _svc(ip="10.96.0.50") -> Service:
    return Service(metadata=ObjectMeta(name="web", namespace="default"),
                   spec=ServiceSpec(cluster_ip=ip, ports=(ServicePort(name="http", port=80, protocol="TCP"),)))


def _slice(name, *endpoints, service="web", labels=None) -> EndpointSlice:
    return EndpointSlice(metadata=ObjectMeta(name=name, namespace="default", labels={
        "kubernetes.io/service-name": service, **(labels or {})}), address_type="IPv4",
        endpoints=endpoints, ports=(EndpointSlicePort(name="http", port=8080, protocol="TCP"),))


def _ep(ip, ready=True, serving=None, terminating=None) -> Endpoint:
    return Endpoint(addresses=(ip,), conditions=EndpointConditions(ready=ready, serving=serving,
                                                                  terminating=terminating))


def test_reference_rules_take_ready_endpoints_else_serving_terminating_ones():
    going = _ep("10.244.0.7", ready=False, serving=True, terminating=True)
    assert reference_rules([_svc()], [_slice("a", going, _ep("10.244.1.5"))]) == {"10.96.0.50:80": ["10.244.1.5:8080"]}
    assert reference_rules([_svc()], [_slice("a", going), _slice("b", _ep("10.244.0.9", ready=False))]) == {
        "10.96.0.50:80": ["10.244.0.7:8080"]}
    # another Service's, or another proxy's, slices are not the Service's
    assert reference_rules([_svc()], [_slice("a", _ep("10.244.1.5"), service="other"),
                                      _slice("b", _ep("10.244.1.6"),
                                             labels={"service.kubernetes.io/service-proxy-name": "x"})]) == {
        "10.96.0.50:80": []}
    assert reference_rules([_svc(ip="None")], [_slice("a", _ep("10.244.1.5"))]) == {}


def test_converges_proxy_rules_judges_the_terminating_fallback():
    """Every storefront pod terminating while still Ready (no kubelet confirms the deletion on a partitioned node):
    the slices hold them serving and terminating, and the proxies must keep sending to them."""
    cluster = web_cluster(nodes=1)
    cluster.partition("kubelet/node-1")
    for p in pods(cluster):
        cluster.submit(Delete("pods", "default", p.metadata.name))
    cluster.run(cluster.now + 5 * S)
    conditions = {(e.conditions.ready, e.conditions.serving, e.conditions.terminating)
                  for s in _slices(cluster) for e in s.endpoints}
    assert (False, True, True) in conditions
    rules = cluster.loop.components["proxy/node-1"].rules
    svc_ip = cluster.get("services", "default", "storefront").spec.cluster_ip
    assert rules[f"{svc_ip}:80"]  # not empty: the terminating pods still serve
    assert check(cluster, "converges-proxy-rules") == []
    cluster.loop.components["proxy/node-1"]._programmed["default/storefront"] = {f"{svc_ip}:80": []}
    cluster.loop.components["proxy/node-1"]._view = None
    [message] = check(cluster, "converges-proxy-rules")
    assert f"{svc_ip}:80: has [], should be [" in message
