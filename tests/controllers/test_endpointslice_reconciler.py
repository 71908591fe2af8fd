"""The EndpointSlice reconciler against upstream's own cases (staging/src/k8s.io/endpointslice/reconciler_test.go,
release-1.31): the same slices and the same writes for the same Service, pods and existing slices.

`apply` plays a plan against a fake API as upstream's tests play it against client-go's fake clientset: creates
get a name from generateName and generation 1, updates bump the generation, deletes remove."""

from __future__ import annotations

import attrs

from kmodel.controllers.endpointslice_logic import Plan, new_slice, pod_to_endpoint, reconcile
from kmodel.objects import (
    Container, ContainerPort, Node, ObjectMeta, Pod, PodCondition, PodIP, PodSpec, PodStatus, Service, ServicePort,
    ServiceSpec, frozen_map,
)
from kmodel.objects.discovery import Endpoint, EndpointConditions

NODE = Node(metadata=ObjectMeta(name="node-1"))
MANAGED = {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
           "kubernetes.io/service-name": "foo"}


def service(labels=None, cluster_ip="", families=("IPv4",), publish=False, target=80) -> Service:
    """newServiceAndEndpointMeta: a Service foo selecting foo=bar, port 80, IPv4 single stack, no ClusterIP."""
    return Service(metadata=ObjectMeta(name="foo", namespace="test", uid="svc-uid",
                                       labels=frozen_map(labels or {})),
                   spec=ServiceSpec(selector=frozen_map({"foo": "bar"}), cluster_ip=cluster_ip,
                                    ip_families=tuple(families), publish_not_ready_addresses=publish,
                                    ports=(ServicePort(name="", port=80, protocol="TCP", target_port=target),)))


def pod(i: int, ready: bool = True, ips=None, hostname: str = "", port_name: str = "", port: int = 0) -> Pod:
    """newPod: pod<i> on node-1, Running, Ready or not."""
    ips = ips or (f"10.0.{i // 250}.{i % 250 + 1}",)
    ports = (ContainerPort(name=port_name, container_port=port, protocol="TCP"),) if port_name else ()
    return Pod(metadata=ObjectMeta(name=f"pod{i}", namespace="test", uid=f"uid-{i}",
                                   labels=frozen_map({"foo": "bar"})),
               spec=PodSpec(node_name="node-1", hostname=hostname,
                            containers=(Container(name="c", image="img", ports=ports),)),
               status=PodStatus(phase="Running", pod_ip=ips[0], pod_ips=tuple(PodIP(ip=ip) for ip in ips),
                                conditions=(PodCondition(type="Ready", status="True" if ready else "False"),)))


def nodes(*known: Node):
    by_name = {n.metadata.name: n for n in known}
    return by_name.get


class FakeAPI:
    """client-go's fake clientset, as far as the reconciler's writes go."""

    def __init__(self, existing=()) -> None:
        self.slices = {s.metadata.name: s for s in existing}
        self.actions: list[str] = []
        self.counter = 0

    def apply(self, plans: list[Plan]) -> None:
        for plan in plans:
            for s in plan.create:
                self.actions.append("create")
                self.counter += 1
                name = f"{s.metadata.generate_name}{self.counter:05d}"
                self.slices[name] = attrs.evolve(s, metadata=attrs.evolve(s.metadata, name=name, uid=name,
                                                                          generation=1))
            for s in plan.update:
                self.actions.append("update")
                old = self.slices[s.metadata.name]
                self.slices[s.metadata.name] = attrs.evolve(s, metadata=attrs.evolve(
                    s.metadata, uid=old.metadata.uid, generation=old.metadata.generation + 1))
            for s in plan.delete:
                self.actions.append("delete")
                del self.slices[s.metadata.name]

    def lengths(self) -> list[int]:
        return sorted(len(s.endpoints) for s in self.slices.values())

    def listed(self) -> list:
        return sorted(self.slices.values(), key=lambda s: s.metadata.name)


def existing_slice(n: int, svc: Service, pods=(), address_type="IPv4", ports=None):
    """newEmptyEndpointSlice(n) filled with podToEndpoint of each pod (with an unnamed node, as upstream's tests)."""
    ports = new_slice(svc, (), address_type).ports if ports is None else ports
    s = new_slice(svc, ports, address_type)
    eps = tuple(pod_to_endpoint(p, Node(), svc, address_type) for p in pods)
    return attrs.evolve(s, metadata=attrs.evolve(s.metadata, name=f"foo-{n}", uid=f"slice-{n}", generation=1),
                        endpoints=eps)


def default_ports(svc: Service):
    from kmodel.controllers.endpointslice_logic import endpoint_ports
    return endpoint_ports(svc, pod(0))


def run(svc, pods, api: FakeAPI, max_endpoints=100, node_of=None) -> list[Plan]:
    plans = reconcile(svc, pods, api.listed(), node_of or nodes(NODE), max_endpoints)
    api.apply(plans)
    return plans


# -- TestReconcileEmpty, TestReconcile1EndpointSlice, TestPlaceHolderSliceCompare -------------------------------

def test_empty_service_gets_one_placeholder_slice():
    api = FakeAPI()
    run(service(), [], api)
    assert api.actions == ["create"]
    (s,) = api.listed()
    assert s.metadata.name.startswith("foo-") and s.metadata.labels["kubernetes.io/service-name"] == "foo"
    assert s.ports == () and s.endpoints == ()


def test_an_existing_placeholder_is_kept_and_a_different_one_updated():
    svc = service()
    same = existing_slice(1, svc)
    api = FakeAPI([same])
    run(svc, [], api)
    assert api.actions == []  # "Existing placeholder that's the same"
    different = attrs.evolve(same, metadata=attrs.evolve(same.metadata, labels=frozen_map({"bar": "baz"})))
    api = FakeAPI([different])
    run(svc, [], api)
    assert api.actions == ["update"]  # "Existing placeholder that's different": updated, not deleted and created
    (s,) = api.listed()
    assert s.metadata.name == "foo-1" and dict(s.metadata.labels) == {**MANAGED, "service.kubernetes.io/headless": ""}


def test_the_placeholder_of_a_service_made_again_under_its_name_is_kept_unless_owners_are_compared():
    """1.31's placeholderSliceCompare ignores owner references: the old Service's placeholder passes for the new
    one's (it is not owned by it, so it is listed for deletion, then kept). kubernetes#141593's comparison of the
    owners' UIDs (the endpointslice-compare-placeholder-owners fix) deletes it and creates the new one's."""
    old = existing_slice(1, service())
    svc = attrs.evolve(service(), metadata=attrs.evolve(service().metadata, uid="new-svc-uid"))
    api = FakeAPI([old])
    api.apply(reconcile(svc, [], api.listed(), nodes(NODE)))
    assert api.actions == [] and api.listed() == [old]
    api = FakeAPI([old])
    api.apply(reconcile(svc, [], api.listed(), nodes(NODE), compare_placeholder_owners=True))
    assert api.actions == ["create", "delete"]
    (s,) = api.listed()
    assert [o.uid for o in s.metadata.owner_references] == ["new-svc-uid"] and s.endpoints == ()
    api = FakeAPI([existing_slice(1, svc)])  # its own placeholder: still kept with the fix
    api.apply(reconcile(svc, [], api.listed(), nodes(NODE), compare_placeholder_owners=True))
    assert api.actions == []


# -- TestReconcile1Pod ------------------------------------------------------------------------------------------

POD1_IPS = ("1.2.3.4", "1234::5678:0000:0000:9abc:def0")
ZONED = Node(metadata=ObjectMeta(name="node-1", labels=frozen_map({"topology.kubernetes.io/zone": "us-central1-a",
                                                                      "topology.kubernetes.io/region": "us-central1"})))


def _one_pod(svc: Service) -> FakeAPI:
    api = FakeAPI()
    run(svc, [pod(1, ips=POD1_IPS, hostname="example-hostname")], api, node_of=nodes(ZONED))
    return api


def _expected(address: str) -> Endpoint:
    from kmodel.objects import ObjectReference
    return Endpoint(addresses=(address,), conditions=EndpointConditions(ready=True, serving=True, terminating=False),
                    zone="us-central1-a", node_name="node-1",
                    target_ref=ObjectReference(kind="Pod", namespace="test", name="pod1", uid="uid-1"))


def test_one_pod_by_service_family():
    cases = {
        "no-family-service": (service(cluster_ip="10.0.0.10", families=()), {"IPv4": "1.2.3.4"}, {}),
        "ipv4": (service(), {"IPv4": "1.2.3.4"}, {"service.kubernetes.io/headless": ""}),
        "ipv4-clusterip": (service(cluster_ip="1.1.1.1"), {"IPv4": "1.2.3.4"}, {}),
        "ipv4-labels": (service(labels={"foo": "bar"}), {"IPv4": "1.2.3.4"},
                        {"foo": "bar", "service.kubernetes.io/headless": ""}),
        "ipv4-bad-labels": (service(labels={"kubernetes.io/service-name": "bad",
                                            "endpointslice.kubernetes.io/managed-by": "actor",
                                            "service.kubernetes.io/headless": "invalid"}),
                            {"IPv4": "1.2.3.4"}, {"service.kubernetes.io/headless": ""}),
        "ipv6": (service(families=("IPv6",)), {"IPv6": "1234::5678:0:0:9abc:def0"},
                 {"service.kubernetes.io/headless": ""}),
        "ipv6-clusterip": (service(cluster_ip="1234::5678:0000:0000:9abc:def1", families=("IPv6",)),
                           {"IPv6": "1234::5678:0:0:9abc:def0"}, {}),
        "dualstack-service": (service(cluster_ip="10.0.0.10", families=("IPv4", "IPv6")),
                              {"IPv4": "1.2.3.4", "IPv6": "1234::5678:0:0:9abc:def0"}, {}),
    }
    for name, (svc, by_type, extra_labels) in cases.items():
        api = _one_pod(svc)
        assert api.actions == ["create"] * len(by_type), name
        got = {s.address_type: s for s in api.listed()}
        assert set(got) == set(by_type), name
        for address_type, address in by_type.items():
            s = got[address_type]
            assert s.metadata.name.startswith("foo"), name
            assert dict(s.metadata.labels) == {**MANAGED, **extra_labels}, name
            # the hostname is not set: pod1's subdomain is not the Service's name
            assert s.endpoints == (_expected(address),), name


# -- TestReconcile1EndpointSlicePublishNotReadyAddresses, TestReconcileManyPods -------------------------------

def test_publish_not_ready_addresses_makes_every_endpoint_ready():
    api = FakeAPI()
    run(service(publish=True), [pod(i, ready=i % 3 != 0) for i in range(50)], api)
    assert api.actions == ["create"] and api.lengths() == [50]
    assert all(e.conditions.ready for s in api.listed() for e in s.endpoints)


def test_many_pods_fill_slices_of_100():
    api = FakeAPI()
    run(service(), [pod(i, ready=i % 3 != 0) for i in range(250)], api)
    assert api.actions == ["create"] * 3 and api.lengths() == [50, 100, 100]


def test_max_endpoints_per_slice():
    api = FakeAPI()
    run(service(), [pod(i, ready=i % 3 != 0) for i in range(250)], api, max_endpoints=50)
    assert api.lengths() == [50] * 5


# -- TestReconcileEndpointSlicesSomePreexisting(WorseAllocation) --------------------------------------------

def _preexisting(count: int) -> tuple[Service, list, FakeAPI]:
    svc = service()
    pods = [pod(i, ready=i % 3 != 0) for i in range(count)]
    ports = default_ports(svc)
    s1 = existing_slice(1, svc, [pods[i] for i in range(1, count - 4, 4)], ports=ports)
    s2 = existing_slice(2, svc, [pods[i] for i in range(3, count - 4, 4)], ports=ports)
    return svc, pods, FakeAPI([s1, s2])


def test_some_preexisting_leftovers_go_to_the_slice_closest_to_full():
    svc, pods, api = _preexisting(250)
    run(svc, pods, api)
    assert api.actions == ["create", "update"]  # 1 new slice (0 -> 100) + 1 updated (62 -> 89)
    assert api.lengths() == [61, 89, 100]


def test_some_preexisting_worse_allocation_creates_rather_than_updates_two():
    svc, pods, api = _preexisting(300)
    run(svc, pods, api)
    assert api.actions == ["create", "create"]
    assert api.lengths() == [52, 74, 74, 100]


# -- TestReconcileEndpointSlicesUpdating, ServicesLabelsUpdating, ServicesReservedLabels ------------------------

def test_a_port_change_updates_every_slice_in_place():
    svc = service()
    pods = [pod(i, ready=i % 3 != 0) for i in range(250)]
    api = FakeAPI()
    run(svc, pods, api)
    run(attrs.evolve(svc, spec=attrs.evolve(svc.spec, ports=(ServicePort(name="", port=80, protocol="TCP",
                                                                          target_port=81),))), pods, api)
    assert api.actions == ["create"] * 3 + ["update"] * 3
    assert api.lengths() == [50, 100, 100]


def test_service_labels_are_copied_but_reserved_ones_are_not():
    svc = service()
    pods = [pod(i, ready=i % 3 != 0) for i in range(250)]
    api = FakeAPI()
    run(svc, pods, api)
    run(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, labels=frozen_map({"foo": "bar"}))), pods, api)
    assert api.actions == ["create"] * 3 + ["update"] * 3
    assert all(s.metadata.labels["foo"] == "bar" for s in api.listed())
    api = FakeAPI()
    run(svc, pods, api)
    reserved = {"kubernetes.io/service-name": "bad", "endpointslice.kubernetes.io/managed-by": "actor",
                "service.kubernetes.io/headless": "invalid"}
    run(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, labels=frozen_map(reserved))), pods, api)
    assert api.actions == ["create"] * 3  # no writes for reserved labels


# -- TestReconcileEndpointSlicesRecycling, UpdatePacking, ReplaceDeprecated, Recreation -------------------------

def test_recycling_repacks_ten_slices_into_three_with_updates_and_deletes():
    svc = service()
    pods = [pod(i, ready=i % 3 != 0) for i in range(300)]
    ports = default_ports(svc)
    api = FakeAPI([existing_slice(n, svc, pods[n * 30:(n + 1) * 30], ports=ports) for n in range(10)])
    run(svc, pods, api)
    assert api.actions == []  # every pod is in a slice: nothing to repack
    changed = attrs.evolve(svc, spec=attrs.evolve(svc.spec, ports=(ServicePort(name="", port=80, protocol="TCP",
                                                                               target_port=81),)))
    run(changed, pods, api)
    assert sorted(api.actions) == ["delete"] * 7 + ["update"] * 3
    assert api.lengths() == [100, 100, 100]


def test_update_packing_adds_to_the_fullest_slice_being_updated():
    svc = service()
    ports = default_ports(svc)
    first = [pod(i) for i in range(80)]
    second = [pod(i) for i in range(100, 120)]
    api = FakeAPI([existing_slice(1, svc, first, ports=ports), existing_slice(2, svc, second, ports=ports)])
    pods = first + second
    pods = [pod(int(p.metadata.name[3:]), ready=False) if n % 10 == 0 else p for n, p in enumerate(pods)]
    pods += [pod(i) for i in range(200, 215)]
    run(svc, pods, api)
    assert api.actions == ["update", "update"]
    assert api.lengths() == [20, 95]


def test_slices_of_a_deprecated_address_type_are_replaced():
    svc = service()
    pods = [pod(i) for i in range(80)] + [pod(i) for i in range(100, 150)]
    ports = default_ports(svc)
    api = FakeAPI([existing_slice(1, svc, pods[:80], address_type="IP", ports=ports),
                   existing_slice(2, svc, pods[80:], address_type="IP", ports=ports)])
    run(svc, pods, api)
    assert api.actions == ["create", "create", "delete", "delete"]
    assert api.lengths() == [30, 100] and {s.address_type for s in api.listed()} == {"IPv4"}


def test_a_slice_of_another_service_uid_is_replaced():
    svc = service()
    ports = default_ports(svc)
    ours = existing_slice(1, svc, [pod(1)], ports=ports)
    api = FakeAPI([ours])
    run(svc, [pod(1)], api)
    assert api.actions == []  # "slice owned by Service"
    owner = attrs.evolve(ours.metadata.owner_references[0], uid="different")
    api = FakeAPI([attrs.evolve(ours, metadata=attrs.evolve(ours.metadata, owner_references=(owner,)))])
    run(svc, [pod(1)], api)
    assert api.actions == ["create", "delete"] and len(api.slices) == 1


# -- TestReconcileEndpointSlicesNamedPorts, TestReconcilerPodMissingNode ----------------------------------------

def test_named_ports_group_pods_by_the_number_they_map_to():
    svc = attrs.evolve(service(), spec=attrs.evolve(service().spec, ports=(
        ServicePort(name="", port=80, protocol="TCP", target_port="http"),)))
    pods = [pod(i, ready=i % 3 != 0, port_name="http", port=8080 + i % 5) for i in range(300)]
    api = FakeAPI()
    run(svc, pods, api)
    assert api.actions == ["create"] * 5 and api.lengths() == [60] * 5
    assert sorted(s.ports[0].port for s in api.listed()) == [8080, 8081, 8082, 8083, 8084]
    assert all(s.ports[0].name == "" and s.ports[0].protocol == "TCP" for s in api.listed())


def test_a_pod_on_a_missing_node_is_skipped_with_an_error_unless_not_ready_addresses_are_published():
    api = FakeAPI()
    (plan,) = run(service(), [pod(1), pod(2)], api, node_of=nodes())
    assert plan.errors == ("skipping Pod pod1 for Service test/foo: Node node-1 Not Found",
                           "skipping Pod pod2 for Service test/foo: Node node-1 Not Found")
    assert api.lengths() == [0]  # the placeholder
    api = FakeAPI()
    (plan,) = run(service(publish=True), [pod(1), pod(2)], api, node_of=nodes())
    assert plan.errors == () and api.lengths() == [2]


# -- podToEndpoint's conditions (TestPodToEndpoint) -----------------------------------------------------------

def test_terminating_pods_are_not_ready_but_may_be_serving():
    svc = service()
    going = attrs.evolve(pod(1), metadata=attrs.evolve(pod(1).metadata, deletion_timestamp=5))
    assert pod_to_endpoint(going, NODE, svc, "IPv4").conditions == EndpointConditions(
        ready=False, serving=True, terminating=True)
    assert pod_to_endpoint(going, NODE, service(publish=True), "IPv4").conditions == EndpointConditions(
        ready=True, serving=True, terminating=True)
    assert pod_to_endpoint(pod(2, ready=False), NODE, svc, "IPv4").conditions == EndpointConditions(
        ready=False, serving=False, terminating=False)
