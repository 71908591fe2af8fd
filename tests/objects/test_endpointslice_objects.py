"""discovery.k8s.io/v1 EndpointSlice: decoding, defaults, validation messages (pkg/apis/discovery/validation,
release-1.31), the generation the API server keeps (endpointSliceStrategy), and kubectl's columns."""

from __future__ import annotations

import attrs

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.objects import EndpointSlice, decode, dump, invalid_message_for, validate, validate_update, with_defaults
from kmodel.serve.printers import PRINTERS


def body(**changes) -> dict:
    b = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "web-abc", "namespace": "default", "labels": {"kubernetes.io/service-name": "web"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": True}, "nodeName": "node-1"}],
         "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}
    b.update(changes)
    return b


def message(b: dict) -> str:
    obj = with_defaults(decode(b))
    return invalid_message_for(obj, validate(obj))


def test_round_trip_and_port_defaults():
    obj = with_defaults(decode(body(ports=[{"port": 80}])))
    assert isinstance(obj, EndpointSlice) and validate(obj) == []
    out = dump(obj)
    assert out["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]  # SetDefaults_EndpointPort
    assert out["endpoints"] == [{"addresses": ["10.244.1.5"], "conditions": {"ready": True}, "nodeName": "node-1"}]


def test_validation_messages():
    assert message(body(addressType="")) == 'EndpointSlice.discovery.k8s.io "web-abc" is invalid: addressType: Required value'
    assert message(body(addressType="IP")) == (
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: addressType: Unsupported value: "IP": '
        'supported values: "FQDN", "IPv4", "IPv6"')
    assert message(body(endpoints=[{"addresses": []}])) == (
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: endpoints[0].addresses: Required value: '
        'must contain at least 1 address')
    assert message(body(endpoints=[{"addresses": ["fd00::1"]}])) == (
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: endpoints[0].addresses[0]: Invalid value: "fd00::1": '
        'must be a valid IPv4 address')
    assert "may not be in the loopback range" in message(body(endpoints=[{"addresses": ["127.0.0.1"]}]))
    assert message(body(ports=[{"name": "a", "port": 1}, {"name": "a", "port": 2}])) == (
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: ports[1].name: Duplicate value: "a"')
    assert message(body(ports=[{"name": "A_b", "port": 1, "protocol": "HTTP"}])).startswith(
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: [ports[0].name: Invalid value: "A_b": ')
    assert "ports[0].protocol: Unsupported value" in message(body(ports=[{"name": "a", "port": 1,
                                                                           "protocol": "HTTP"}]))
    assert message(body(endpoints=[{"addresses": [f"10.0.0.{i % 250 + 1}"]} for i in range(1001)])) == (
        'EndpointSlice.discovery.k8s.io "web-abc" is invalid: endpoints: Too many: 1001: must have at most 1000 items')


def test_address_type_is_immutable():
    old = with_defaults(decode(body()))
    new = attrs.evolve(old, address_type="IPv6", endpoints=())
    assert [str(e) for e in validate_update(new, old)] == ['addressType: Invalid value: "IPv6": field is immutable']


def test_generation_moves_with_endpoints_ports_and_labels_not_with_annotations():
    """endpointSliceStrategy: generation 1 on create; +1 when anything but metadata, or the labels, changed."""
    cluster = Cluster(ClusterConfig(nodes=1, components=()))
    cluster.apply([body()])
    cluster.run(100)
    assert cluster.get("endpointslices", "default", "web-abc").metadata.generation == 1
    cluster.apply([body(metadata={"name": "web-abc", "namespace": "default", "annotations": {"a": "b"},
                                  "labels": {"kubernetes.io/service-name": "web"}})])
    cluster.run(200)
    assert cluster.get("endpointslices", "default", "web-abc").metadata.generation == 1
    cluster.apply([body(endpoints=[{"addresses": ["10.244.1.6"]}])])
    cluster.run(300)
    assert cluster.get("endpointslices", "default", "web-abc").metadata.generation == 2
    cluster.apply([body(endpoints=[{"addresses": ["10.244.1.6"]}],
                        metadata={"name": "web-abc", "namespace": "default", "labels": {"x": "y"}})])
    cluster.run(400)
    assert cluster.get("endpointslices", "default", "web-abc").metadata.generation == 3


def test_kubectl_columns():
    columns, row = PRINTERS["endpointslices"]
    assert [c["name"] for c in columns] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    obj = with_defaults(decode(body(endpoints=[{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)],
                                    ports=[{"name": f"p{i}", "port": 80 + i} for i in range(4)]
                                    + [{"name": "named"}])))
    assert row(obj, 0)[:4] == ["web-abc", "IPv4", "80,81,82 + 2 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."]
    empty = with_defaults(decode(body(endpoints=[], ports=[])))
    assert row(empty, 0)[2:4] == ["<unset>", "<unset>"]
