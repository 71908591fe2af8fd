"""The EndpointSlice controller in a cluster (pkg/controller/endpointslice, release-1.31): slices that follow the
pods, its expectations of its own writes (the slice tracker), slices others changed, and its retries."""

from __future__ import annotations

import attrs

from kmodel.cluster import ClusterConfig
from kmodel.cluster.cluster import Cluster
from kmodel.cluster.kubectl import Delete
from kmodel.component import Out
from kmodel.controllers.endpointslice import NAME, EndpointSliceController
from kmodel.controllers.endpointslice_tracker import DELETION_EXPECTED, EndpointSliceTracker
from kmodel.objects import (
    Container, ContainerPort, Node, ObjectMeta, Pod, PodSpec, Service, ServicePort, ServiceSpec, frozen_map,
)
from kmodel.objects.discovery import EndpointSlice

from .status_writer import with_status_writer
from .test_endpoints_controller import start_pods, status

KEY = "default/web"


def pod(name: str, app: str = "web", node: str = "node-1") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", labels=frozen_map({"app": app})),
               spec=PodSpec(node_name=node, containers=(Container(name="c", image="img", ports=(
                   ContainerPort(name="http", container_port=8080),)),)))


def service(labels=None) -> Service:
    return Service(metadata=ObjectMeta(name="web", namespace="default", labels=frozen_map(labels or {"team": "a"})),
                   spec=ServiceSpec(selector=frozen_map({"app": "web"}), cluster_ip="10.96.0.50",
                                    ports=(ServicePort(name="p", port=80, target_port=8080),)))


def slices(c) -> list[EndpointSlice]:
    return [s for s in c.objects("endpointslices", "default") if s.metadata.labels.get(
        "kubernetes.io/service-name") == "web"]


def endpoints(c) -> dict[str, tuple]:
    """pod -> (address, ready, serving, terminating) over the Service's slices."""
    return {e.target_ref.name: (e.addresses[0], e.conditions.ready, e.conditions.serving, e.conditions.terminating)
            for s in slices(c) for e in s.endpoints}


def setup(components=("endpointslice", "endpoints")):
    c, writer = with_status_writer(ClusterConfig(components=components))
    c.apply([Node(metadata=ObjectMeta(name="node-1")), pod("a"), pod("b"), pod("c"), pod("other", app="db"),
             service()])
    start_pods(c, writer)
    c.run(3_000)
    return c, writer


def test_one_slice_holds_the_ready_and_not_ready_pods_beside_the_endpoints():
    c, _ = setup()
    [s] = slices(c)
    svc = c.get("services", "default", "web")
    assert endpoints(c) == {"a": ("10.244.0.5", True, True, False), "b": ("10.244.1.7", False, False, False)}
    assert dict(s.metadata.labels) == {"team": "a", "kubernetes.io/service-name": "web",
                                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    [owner] = s.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Service", "web", svc.metadata.uid, True)
    assert s.metadata.name.startswith("web-") and s.address_type == "IPv4"
    assert [(p.name, p.port, p.protocol) for p in s.ports] == [("p", 8080, "TCP")]
    assert s.endpoints[0].node_name == "node-1"
    assert c.get("endpoints", "default", "web") is not None  # the Endpoints controller still serves legacy readers


def test_a_terminating_pod_stays_as_serving_and_terminating_not_ready():
    c, _ = setup()
    c.submit(Delete("pods", "default", "a"))  # bound, and no kubelet confirms: it stays, terminating
    c.run(c.now + 2_000)
    assert c.get("pods", "default", "a").metadata.deletion_timestamp is not None
    assert endpoints(c)["a"] == ("10.244.0.5", False, True, True)


def test_idle_events_write_nothing_and_own_writes_queue_no_sync():
    c, writer = setup()
    ctrl = c.loop.components[NAME]
    writes, syncs = ctrl.writes, ctrl.syncs
    c.apply([pod("d", app="db")])  # a pod no Service selects
    c.run(c.now + 3_000)
    assert (ctrl.writes, ctrl.syncs) == (writes, syncs)
    status(c, writer, "b", "10.244.1.7", True)
    c.run(c.now + 3_000)
    # one sync for the pod's change, none for the slice update it wrote
    assert (ctrl.writes, ctrl.syncs) == (writes + 1, syncs + 1) and endpoints(c)["b"][1] is True
    # its own update came back through the informer at the generation it wrote: no sync queued for it
    [s] = slices(c)
    assert ctrl.tracker.generations[KEY] == {s.metadata.uid: s.metadata.generation}
    assert not ctrl.queue.has_work() and not ctrl.queue.waiting


def test_a_slice_deleted_or_changed_by_someone_else_is_made_right():
    c, _ = setup()
    [s] = slices(c)
    c.submit(Delete("endpointslices", "default", s.metadata.name))
    c.run(c.now + 3_000)
    [again] = slices(c)
    assert again.metadata.name != s.metadata.name and set(endpoints(c)) == {"a", "b"}
    edited = attrs.evolve(again, metadata=attrs.evolve(again.metadata, resource_version=""), endpoints=())
    c.apply([edited])
    c.run(c.now + 3_000)
    [fixed] = slices(c)
    assert fixed.metadata.name == again.metadata.name and set(endpoints(c)) == {"a", "b"}


def test_a_service_deleted_takes_its_slices_through_the_garbage_collector():
    c, _ = setup(components=("endpointslice", "garbagecollector"))
    assert slices(c)
    c.submit(Delete("services", "default", "web"))
    c.run(c.now + 10_000)
    assert slices(c) == []
    assert KEY not in c.loop.components[NAME].tracker.generations


def test_a_service_without_pods_deleted_and_made_again_at_once_keeps_no_slice_without_the_fix():
    """The controller syncs the deleted Service (its tracker forgets the slices), then the new one, whose reconcile
    keeps the old Service's placeholder (placeholderSliceCompare ignores owners); the garbage collector deletes it
    and, the tracker not knowing it, nothing queues the Service. With the endpointslice-compare-placeholder-owners
    fix the new Service gets a placeholder of its own."""
    for fixes, owned in (((), False), (("endpointslice-compare-placeholder-owners",), True)):
        c = Cluster(ClusterConfig(components=("endpointslice", "garbagecollector"), fixes=fixes))
        c.apply([service()])
        c.run(3_000)
        [old] = slices(c)
        c.submit(Delete("services", "default", "web"))
        c.apply([service()])
        c.run(c.now + 600_000)
        uid = c.get("services", "default", "web").metadata.uid
        assert [[o.uid for o in s.metadata.owner_references] for s in slices(c)] == ([[uid]] if owned else [])
        assert old.metadata.uid not in {s.metadata.uid for s in slices(c)}


def test_a_pod_on_an_unknown_node_fails_the_sync_until_the_budget_is_spent():
    """A pod whose Node the cache lacks is left out and the sync fails (event FailedToUpdateEndpointSlices,
    retried 1 s x 2^n); after maxRetries the key is dropped, and a Node showing up later does not queue it
    (the controller watches nodes only for topology): the next Service or pod event does."""
    c, writer = setup()
    ctrl = c.loop.components[NAME]
    c.apply([pod("e", node="node-9")])
    c.run(c.now + 1_000)
    status(c, writer, "e", "10.244.9.3", True)
    c.run(c.now + 3 * 3600_000)
    assert "e" not in endpoints(c)
    events = [e for e in c.objects("events", "default") if e.reason == "FailedToUpdateEndpointSlices"]
    # one event per sync: the first and maxRetries (15) retries
    assert [e.message for e in events] == 16 * [
        "Error updating Endpoint Slices for Service default/web: skipping Pod e for Service default/web: "
        "Node node-9 Not Found"]
    assert events[0].source.component == "endpoint-slice-controller" and events[0].type == "Warning"
    assert not ctrl.queue.has_work() and KEY not in ctrl.queue.waiting  # dropped after maxRetries
    c.apply([Node(metadata=ObjectMeta(name="node-9"))])
    c.run(c.now + 60_000)
    assert "e" not in endpoints(c)
    c.apply([service(labels={"team": "b"})])
    c.run(c.now + 3_000)
    assert endpoints(c)["e"] == ("10.244.9.3", True, True, False)


def test_max_retries_and_back_off_follow_upstream():
    ctrl = EndpointSliceController(["apiserver-0"])
    assert ctrl.max_retries == 15
    assert [ctrl.queue.rate_limiter.when("k") for _ in range(12)] == [
        1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000, 1_000_000]
    ctrl.crash()  # a new life, a new queue: the same back-off
    assert ctrl.queue.rate_limiter.when("k") == 1000


def test_a_slice_event_queues_its_service_one_second_later():
    ctrl = EndpointSliceController(["apiserver-0"])
    s = EndpointSlice(metadata=ObjectMeta(name="web-x", namespace="default", uid="u", generation=1, labels=frozen_map({
        "kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})))
    out = Out()
    ctrl._slice_added(0, s, out)
    assert ctrl.queue.waiting == {KEY: 1000}
    other = attrs.evolve(s, metadata=attrs.evolve(s.metadata, labels=frozen_map({"kubernetes.io/service-name": "web"})))
    ctrl2 = EndpointSliceController(["apiserver-0"])
    ctrl2._slice_added(0, other, out)  # not managed by the controller: none of its business
    assert not ctrl2.queue.waiting


def _managed_slice(generation: int) -> EndpointSlice:
    return EndpointSlice(metadata=ObjectMeta(name="web-x", namespace="default", uid="u", generation=generation,
                                             labels=frozen_map({"kubernetes.io/service-name": "web",
                                                                "endpointslice.kubernetes.io/managed-by":
                                                                    "endpointslice-controller.k8s.io"})))


def test_the_cache_catching_up_on_its_own_write_queues_a_service_only_with_the_fix():
    """A Service whose last sync found the cache behind the controller's own write (generation 4 written, 3
    cached): upstream's update handler queues nothing when generation 4 arrives, since it is the controller's own
    (ShouldSync), so the Service waits out its back-off; the endpointslice-sync-when-cache-catches-up fix queues
    it one second later. A Service not marked stale is not queued by its own writes either way."""
    for fix in (False, True):
        ctrl = EndpointSliceController(["apiserver-0"], sync_when_cache_catches_up=fix)
        ctrl.tracker.update(_managed_slice(4))
        ctrl._slice_updated(0, _managed_slice(3), _managed_slice(4), Out())
        assert not ctrl.queue.waiting
        ctrl.stale_services.add(KEY)  # as a sync that found generation 3 cached leaves it
        ctrl._slice_updated(0, _managed_slice(3), _managed_slice(4), Out())
        assert ctrl.queue.waiting == ({KEY: 1000} if fix else {})


def test_a_sync_marks_a_service_stale_until_one_finds_the_cache_caught_up():
    c, _ = setup()
    ctrl = c.loop.components[NAME]
    [s] = slices(c)
    assert KEY not in ctrl.stale_services
    stale = ctrl.stale_retries
    ctrl.tracker.update(attrs.evolve(s, metadata=attrs.evolve(s.metadata, generation=s.metadata.generation + 1)))
    c.apply([service(labels={"team": "b"})])  # a sync, which finds the cache one generation behind
    c.run(c.now + 500)
    assert KEY in ctrl.stale_services and ctrl.stale_retries == stale + 1
    ctrl.tracker.update(s)  # as if that generation had come: the retry, 1 s later, reconciles
    c.run(c.now + 3_000)
    assert KEY not in ctrl.stale_services and slices(c)[0].metadata.labels["team"] == "b"


# -- the tracker (endpointslice_tracker_test.go) --------------------------------------------------------------

def _slice(uid: str, generation: int, service_name: str = "svc1") -> EndpointSlice:
    return EndpointSlice(metadata=ObjectMeta(name=uid, namespace="ns1", uid=uid, generation=generation,
                                             labels=frozen_map({"kubernetes.io/service-name": service_name})))


def test_tracker_should_sync():
    t = EndpointSliceTracker()
    assert t.should_sync(_slice("a", 1))  # untracked
    t.update(_slice("a", 1))
    assert not t.should_sync(_slice("a", 1)) and t.should_sync(_slice("a", 2)) and t.should_sync(_slice("b", 1))


def test_tracker_stale_slices():
    key = "ns1/svc1"
    t = EndpointSliceTracker()
    assert not t.stale_slices(key, [_slice("a", 1)])  # nothing tracked for the Service
    t.update(_slice("a", 2))
    assert not t.stale_slices(key, [_slice("a", 2)])
    assert not t.stale_slices(key, [_slice("a", 3)])  # newer than what it wrote: someone else's change
    assert t.stale_slices(key, [_slice("a", 1)])  # older than what it wrote
    assert t.stale_slices(key, [])  # one it wrote is not cached yet
    t.expect_deletion(_slice("b", 1))
    assert t.generations[key]["b"] == DELETION_EXPECTED
    assert t.stale_slices(key, [_slice("a", 2), _slice("b", 1)])  # one it deleted is still cached
    assert not t.stale_slices(key, [_slice("a", 2)])


def test_tracker_handle_deletion():
    t = EndpointSliceTracker()
    t.update(_slice("a", 1))
    t.expect_deletion(_slice("b", 1))
    assert t.has(_slice("a", 1)) and t.has(_slice("b", 1))
    assert not t.handle_deletion(_slice("a", 1))  # not its own deletion: make it again
    assert t.handle_deletion(_slice("b", 1))
    assert not t.has(_slice("a", 1)) and not t.has(_slice("b", 1))
    t.update(_slice("c", 1))
    t.delete_service("ns1/svc1")
    assert not t.has(_slice("c", 1))
