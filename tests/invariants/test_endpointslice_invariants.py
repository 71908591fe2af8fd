"""converges-endpointslices and converges-proxy-rules: each holds on a real cluster run, and catches slices or rules
that really differ from what the pods and slices imply."""

from __future__ import annotations

import attrs

from kmodel.cluster import ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.invariants.endpointslices import reference_rules
from kmodel.objects import ObjectMeta, Service, ServicePort, ServiceSpec
from kmodel.objects.discovery import Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort

from tests.invariants.test_invariants import S, check, pods, web_cluster


def _slices(cluster) -> list:
    return [s for s in cluster.objects("endpointslices", "default")
            if s.metadata.labels.get("kubernetes.io/service-name") == "storefront"]


def _put(cluster, obj) -> None:
    """Store a changed object as the controller would never write it (an admin's update, judged at once)."""
    cluster.apply([attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version=""))])
    cluster.run_for(50)


def test_both_hold_on_a_settled_cluster():
    cluster = web_cluster(nodes=2)
    assert len(_slices(cluster)) == 1 and len(_slices(cluster)[0].endpoints) == 3
    assert check(cluster, "converges-endpointslices") == []
    assert check(cluster, "converges-proxy-rules") == []


def test_converges_endpointslices_fails_while_the_controller_is_down_and_judges_no_cluster_without_it():
    cluster = web_cluster(nodes=1)
    cluster.crash("controller/endpointslice")
    for p in pods(cluster):
        cluster.submit(Delete("pods", "default", p.metadata.name))
    cluster.run(cluster.now + 60 * S)  # the ReplicaSet makes new pods; no one puts them in the slice
    messages = check(cluster, "converges-endpointslices")
    assert messages[0].startswith("service default/storefront's EndpointSlices differ from what its pods imply: "
                                  "missing storefront-")
    # a cluster that does not run the controller at all (a trace recorded before it ran by default): not judged
    components = tuple(c for c in ClusterConfig().components if c != "endpointslice")
    assert check(web_cluster(nodes=1, components=components), "converges-endpointslices") == []


def test_converges_endpointslices_catches_a_stray_a_missing_and_a_stale_endpoint():
    cluster = web_cluster(nodes=1)
    [good] = _slices(cluster)
    cluster.crash("controller/endpointslice")  # so nothing puts the slice right before the judge looks
    # a slice made by hand: the judge reads what is stored, whoever wrote it under the labels
    owner = good.metadata.owner_references[0]
    pod_names = sorted(p.metadata.name for p in pods(cluster))
    by_pod = {p.metadata.name: p for p in pods(cluster)}
    endpoints = [attrs.evolve(e, addresses=(by_pod[n].status.pod_ip,), target_ref=attrs.evolve(
        e.target_ref, name=n, uid=by_pod[n].metadata.uid), node_name=by_pod[n].spec.node_name)
        for e, n in zip(good.endpoints, pod_names)]
    cluster.submit(Delete("endpointslices", "default", good.metadata.name))
    made = attrs.evolve(good, metadata=ObjectMeta(name="storefront-hand", namespace="default",
                                                  labels=good.metadata.labels, owner_references=(owner,)),
                        endpoints=tuple(endpoints))
    _put(cluster, made)
    assert check(cluster, "converges-endpointslices") == []
    stale = endpoints[0].conditions
    wrong = (attrs.evolve(endpoints[0], conditions=attrs.evolve(stale, ready=False)),
             endpoints[1], attrs.evolve(endpoints[1], addresses=("10.244.9.9",)))
    _put(cluster, attrs.evolve(cluster.get("endpointslices", "default", "storefront-hand"), endpoints=wrong))
    [message] = check(cluster, "converges-endpointslices")
    first, second, third = pod_names
    assert message.startswith("service default/storefront's EndpointSlices differ from what its pods imply: ")
    assert f"missing {first} " in message and f"missing {third} " in message
    assert f"stray {first} " in message and "[serving]" in message and "stray storefront-" in message


def test_converges_endpointslices_catches_an_unowned_slice_and_a_spare_empty_one():
    cluster = web_cluster(nodes=1)
    [good] = _slices(cluster)
    for name in ("controller/endpointslice", "controller/garbagecollector"):
        cluster.crash(name)  # so nothing puts the slices right (or collects them) before the judge looks
    owner = attrs.evolve(good.metadata.owner_references[0], uid="someone-else")
    _put(cluster, attrs.evolve(good, metadata=attrs.evolve(good.metadata, owner_references=(owner,))))
    spare = attrs.evolve(good, metadata=ObjectMeta(name="storefront-spare", namespace="default",
                                                   labels=good.metadata.labels,
                                                   owner_references=good.metadata.owner_references), endpoints=())
    _put(cluster, spare)
    messages = check(cluster, "converges-endpointslices")
    uid = cluster.get("services", "default", "storefront").metadata.uid
    assert messages == [f"service default/storefront's slice {good.metadata.name} is not owned by it (uid {uid})",
                        "service default/storefront keeps an empty IPv4 slice beside its endpoints"]


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


def test_a_service_dropped_after_max_retries_keeps_stale_endpoints_but_not_stale_proxy_rules():
    """The verdict EndpointSlices change (docs/upstream-bugs.md, Endpoints max retries): the Endpoints controller
    drops the Service after 16 failed syncs (5 ms back-off, 164 s) and its Endpoints keep 2 of the 3 ready pods;
    the EndpointSlice controller backs off from 1 s and is still retrying when etcd is back, so the slices and
    kube-proxy's rules, which read them, hold all three."""
    from pathlib import Path

    from kmodel.checker.replay import replay
    from kmodel.checker.trace import read_trace

    regressions = Path(__file__).resolve().parents[1] / "regressions"
    trace = regressions / "endpoints-dropped-after-max-retries-while-etcd-was-down.json"
    result = replay(read_trace(trace), record_messages=False, record_changes=True)
    assert result.violation.invariant == "converges-endpoints"
    cluster = result.recorder.cluster
    svc = cluster.get("services", "default", "web")
    ready = sorted(p.status.pod_ip for p in cluster.objects("pods", "default")
                   if p.metadata.labels.get("app") == "web" and p.metadata.deletion_timestamp is None)
    assert len(ready) == 3
    endpoints = sorted(a.ip for s in cluster.get("endpoints", "default", "web").subsets for a in s.addresses)
    assert len(endpoints) == 2 and set(endpoints) < set(ready)
    rules = cluster.loop.components["proxy/node-1"].rules[f"{svc.spec.cluster_ip}:80"]
    assert rules == [f"{ip}:80" for ip in ready]
    for name in ("converges-endpointslices", "converges-proxy-rules", "service-reachability"):
        assert check(cluster, name) == [], name
