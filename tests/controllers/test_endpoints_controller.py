"""The Endpoints controller in a cluster: addresses, notReadyAddresses, ports, updates, deletion, restarts."""

from __future__ import annotations

import attrs

from kmodel.cluster import ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.endpoints import NAME
from kmodel.objects import (
    Container, ContainerPort, ObjectMeta, Pod, PodCondition, PodIP, PodSpec, Service, ServicePort, ServiceSpec,
    frozen_map,
)

from .status_writer import with_status_writer, write_status


def pod(name: str, app: str = "web") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", labels=frozen_map({"app": app})),
               spec=PodSpec(containers=(Container(name="c", image="img", ports=(
                   ContainerPort(name="http", container_port=8080),)),)))


def service(name: str = "web", target=8080) -> Service:
    return Service(metadata=ObjectMeta(name=name, namespace="default", labels=frozen_map({"team": "a"})),
                   spec=ServiceSpec(selector=frozen_map({"app": "web"}),
                                    ports=(ServicePort(name="p", port=80, target_port=target),)))


def status(c, writer, name: str, ip: str, ready: bool) -> None:
    p = c.get("pods", "default", name)
    cond = PodCondition(type="Ready", status="True" if ready else "False", last_transition_time=c.now)
    write_status(c, writer, "pods", attrs.evolve(
        p, metadata=attrs.evolve(p.metadata, resource_version=""),
        status=attrs.evolve(p.status, phase="Running", pod_ip=ip, pod_ips=(PodIP(ip=ip),), conditions=(cond,))))


def addresses(ep) -> tuple[list[str], list[str], list]:
    ready = [a.ip for s in ep.subsets for a in s.addresses]
    not_ready = [a.ip for s in ep.subsets for a in s.not_ready_addresses]
    ports = sorted({(p.name, p.port, p.protocol) for s in ep.subsets for p in s.ports})
    return ready, not_ready, ports


def start_pods(c, writer) -> None:
    """a Ready, b not Ready, other (selected by no Service) Ready; c gets no IP."""
    c.run(1_000)
    status(c, writer, "a", "10.244.0.5", True)
    status(c, writer, "b", "10.244.1.7", False)
    status(c, writer, "other", "10.244.0.9", True)


def setup(target=8080):
    c, writer = with_status_writer(ClusterConfig(components=("endpoints",)))
    c.apply([pod("a"), pod("b"), pod("c"), pod("other", app="db"), service(target=target)])
    start_pods(c, writer)
    c.run(2_000)
    return c, writer


def test_ready_and_not_ready_addresses_and_ports():
    c, _ = setup()
    ep = c.get("endpoints", "default", "web")
    assert addresses(ep) == (["10.244.0.5"], ["10.244.1.7"], [("p", 8080, "TCP")])  # c has no IP yet
    assert dict(ep.metadata.labels) == {"team": "a"}
    a = ep.subsets[0].addresses[0]
    assert a.target_ref.kind == "Pod" and a.target_ref.name == "a"


def test_named_target_port():
    c, _ = setup(target="http")
    assert addresses(c.get("endpoints", "default", "web"))[2] == [("p", 8080, "TCP")]


def test_updates_when_a_pod_becomes_unready_or_terminating_and_skips_idle_writes():
    c, writer = setup()
    ctrl = c.loop.components[NAME]
    writes = ctrl.writes
    c.apply([pod("d", app="db")])  # a pod no Service selects: nothing to write
    c.run(3_000)
    assert ctrl.writes == writes
    status(c, writer, "a", "10.244.0.5", False)
    status(c, writer, "b", "10.244.1.7", True)
    c.run(4_000)
    assert addresses(c.get("endpoints", "default", "web"))[:2] == (["10.244.1.7"], ["10.244.0.5"])
    c.submit(Delete("pods", "default", "b"))  # bound to no node: deleted at once
    c.run(5_000)
    assert addresses(c.get("endpoints", "default", "web"))[:2] == ([], ["10.244.0.5"])


def test_terminating_pod_leaves_the_endpoints():
    c, writer = setup()
    # bind it so the delete is graceful: the pod stays, terminating
    c.apply([attrs.evolve(pod("a2"), spec=attrs.evolve(pod("a2").spec, node_name="node-1"))])
    c.run(3_000)
    status(c, writer, "a2", "10.244.2.2", True)
    c.run(4_000)
    assert "10.244.2.2" in addresses(c.get("endpoints", "default", "web"))[0]
    c.submit(Delete("pods", "default", "a2"))
    c.run(5_000)
    assert c.get("pods", "default", "a2").metadata.deletion_timestamp is not None
    ready, not_ready, _ = addresses(c.get("endpoints", "default", "web"))
    assert "10.244.2.2" not in ready + not_ready


def test_deleted_with_the_service_and_recreated_when_deleted_alone():
    c, _ = setup()
    c.submit(Delete("endpoints", "default", "web"))
    c.run(3_000)
    assert c.get("endpoints", "default", "web") is not None  # recreated from the Service
    c.submit(Delete("services", "default", "web"))
    c.run(4_000)
    assert c.get("endpoints", "default", "web") is None


def test_restart_does_not_empty_the_endpoints():
    c, _ = setup()
    before = c.get("endpoints", "default", "web")
    c.crash(NAME)
    c.restart(NAME)
    c.run(6_000)
    after = c.get("endpoints", "default", "web")
    assert after.metadata.resource_version == before.metadata.resource_version
    assert addresses(after) == addresses(before)


def test_leftover_endpoints_are_deleted_at_start():
    c, _ = setup()
    c.crash(NAME)
    c.submit(Delete("services", "default", "web"))
    c.run(3_000)
    assert c.get("endpoints", "default", "web") is not None
    c.restart(NAME)
    c.run(5_000)
    assert c.get("endpoints", "default", "web") is None


def _run_holding(c, held) -> None:
    """Apply enabled events at the current instant (no time advance), first that is not `held`, until none
    is left: a deterministic interleaving that keeps the held messages in flight."""
    from kmodel.loop.events import AdvanceTime

    for _ in range(10_000):
        events = [e for e in c.loop.enabled_events() if not isinstance(e, AdvanceTime) and not held(e)]
        if not events:
            return
        c.loop.step(events[0])
    raise AssertionError("the held run never fell quiet")


def _head(c, event):
    from kmodel.loop.events import Deliver

    if not isinstance(event, Deliver):
        return None
    return c.loop.network.head(event.src, event.dst).payload


def test_a_stale_endpoints_cache_does_not_hide_a_quick_ready_flip():
    """kubernetes#125638 (fixed by #125675/#127417, staleEndpointsTracker): a pod goes NotReady and Ready again
    while the controller's own Endpoints update is in flight; when it syncs again its endpoints cache still
    holds the Endpoints it replaced (which look right: the pod ready), so it must retry once the cache caught
    up instead of skipping, or the NotReady Endpoints it wrote stay for good."""
    c, writer = setup()
    ctrl = c.loop.components[NAME]
    assert addresses(c.get("endpoints", "default", "web"))[:2] == (["10.244.0.5"], ["10.244.1.7"])

    def update_request(e) -> bool:  # the controller's Endpoints update, on its way to the API server
        p = _head(c, e)
        return type(p).__name__ == "Request" and p.verb == "update" and p.resource == "endpoints"

    def endpoints_event(e) -> bool:  # the watch event of that update, on its way back to the controller
        p = _head(c, e)
        return (type(p).__name__ == "WatchEvent" and e.dst == NAME
                and type(p.object).__name__ == "Endpoints" and p.object.metadata.name == "web")

    status(c, writer, "a", "10.244.0.5", False)
    _run_holding(c, update_request)         # the controller saw a NotReady and sent its update: held
    status(c, writer, "a", "10.244.0.5", True)
    _run_holding(c, update_request)         # a is Ready again; the controller knows, its key is dirty
    _run_holding(c, endpoints_event)        # the update lands; the controller syncs again before its
    assert not ctrl.queue.has_work()        # endpoints cache shows it
    c.run(c.now + 5_000)
    assert addresses(c.get("endpoints", "default", "web"))[:2] == (["10.244.0.5"], ["10.244.1.7"])
    assert ctrl.stale_retries >= 1


class _RecordingSync:
    """Stands in for base.Sync: keeps each write and whether the sync failed."""

    def __init__(self) -> None:
        self.writes: list = []
        self.failed = False

    def update(self, now, out, resource, obj, *, on_done=None, **_):
        self.writes.append((obj, on_done))

    create = update

    def fail(self) -> None:
        self.failed = True


def test_stale_tracking_follows_the_resource_version_the_update_returned():
    """Only an update that moved the resourceVersion marks the cached one stale (kubernetes#127417): after a
    no-op update (same resourceVersion back) the cache is not behind, and treating it as stale would retry
    the key for ever."""
    from kmodel.apiserver.wire import Response
    from kmodel.controllers.endpoints import EndpointsController

    ctrl = EndpointsController(["apiserver-0"])
    svc = attrs.evolve(service(), metadata=attrs.evolve(service().metadata, resource_version="5"))
    ready_pod = attrs.evolve(pod("a"), metadata=attrs.evolve(pod("a").metadata, uid="u-a", resource_version="6"))
    ip = "10.244.0.5"
    ready_pod = attrs.evolve(ready_pod, status=attrs.evolve(
        ready_pod.status, phase="Running", pod_ip=ip, pod_ips=(PodIP(ip=ip),),
        conditions=(PodCondition(type="Ready", status="True"),)))
    from kmodel.objects import Endpoints
    empty = Endpoints(metadata=ObjectMeta(name="web", namespace="default", labels=frozen_map({"team": "a"}),
                                          resource_version="7"))
    ctrl.services.indexer.upsert(svc)
    ctrl.pods.indexer.upsert(ready_pod)
    ctrl.endpoints.indexer.upsert(empty)

    def sync_once():
        s = _RecordingSync()
        ctrl.sync("default/web", s, 0, None)
        return s

    s = sync_once()                       # the cache says no addresses: update, answered with the same RV
    (obj, on_done), = s.writes
    on_done(0, Response(1, 200, attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version="7"))), None)
    s = sync_once()
    assert not s.failed and len(s.writes) == 1 and ctrl.stale_retries == 0

    (obj, on_done), = s.writes             # this time the update moved the RV: the cached "7" is stale now
    on_done(0, Response(2, 200, attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version="9"))), None)
    s = sync_once()
    assert s.failed and s.writes == [] and ctrl.stale_retries == 1
    ctrl.endpoints.indexer.upsert(attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version="9")))
    s = sync_once()                       # the cache caught up: equal, nothing to write, no error
    assert not s.failed and s.writes == []
