"""The `pessimistic-locking` variant: the controller manager's writers lock an object (a Lease without
expiry) around each update; a holder that crashes or is cut off leaves it locked for good."""

from __future__ import annotations

from kmodel.invariants.liveness import converges_replicas
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.manager import PROCESS as CONTROLLER_MANAGER_LEASE
from kmodel.controllers.replicaset import ReplicaSetController
from kmodel.objects import Lease, LeaseSpec, ObjectMeta
from kmodel.variants import DEFAULT, PESSIMISTIC_LOCKING, variant
from kmodel.client.pessimistic_locking import LOCK_NAMESPACE, LOCK_WAIT_MS, lock_name, takes_locks
from tests.controllers.cluster_helpers import admin, live_pods, mark_ready, replicaset

LOCK = "replicasets.default.web"


def rs_cluster(name: str) -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=("replicaset",), variant=name))


def controller(c: Cluster) -> ReplicaSetController:
    return next(x for x in c.components if isinstance(x, ReplicaSetController))


def trail(c: Cluster, since: int) -> list[tuple]:
    """The requests of the ReplicaSet controller after audit record `since`, minus pods and events."""
    return [(r.verb, r.resource, r.name, r.subresource, r.code) for r in c.audit.records[since:]
            if r.user == "system:serviceaccount:kube-system:replicaset-controller"
            and r.resource in ("leases", "replicasets")
            and r.verb not in ("list", "watch", "get")]


def locks(c: Cluster) -> list[Lease]:
    """The Leases in the locks' namespace but kube-controller-manager's leader-election Lease (it elects by
    default, a lone one too, and its Lease lives in kube-system as well)."""
    return [x for x in c.objects("leases", LOCK_NAMESPACE) if x.metadata.name != CONTROLLER_MANAGER_LEASE]


def test_the_variant_is_registered_where_it_switches():
    v = variant(PESSIMISTIC_LOCKING)
    assert v.where == "kmodel/client/api_client.py"
    assert {"settles", "converges-replicas"} <= set(v.expect)
    assert lock_name("replicasets", "default", "web") == LOCK and lock_name("nodes", "", "node-1") == "nodes.node-1"


def test_only_the_controller_manager_takes_locks():
    c = Cluster(ClusterConfig(nodes=1, variant=PESSIMISTIC_LOCKING))
    lockers = sorted(x.name for x in c.components if hasattr(x, "client") and takes_locks(x.client))
    assert lockers and all(name.startswith("controller/") for name in lockers)
    assert not takes_locks(next(x for x in c.components if x.name == "kubelet/node-1").client)


def test_each_update_is_locked_and_released_and_the_default_takes_no_lock():
    for name in (DEFAULT, PESSIMISTIC_LOCKING):
        c = rs_cluster(name)
        since = len(c.audit.records)
        c.apply([replicaset(2)])
        c.run(5_000)
        requests = trail(c, since)
        updates = [i for i, r in enumerate(requests) if r[0] == "update"]
        assert updates and requests[updates[-1]][-1] == 200
        if name == DEFAULT:
            assert all(r[1] == "replicasets" for r in requests)
        else:
            for i in updates:  # one writer, one key: each update sits between its acquire and its release
                assert requests[i - 1] == ("create", "leases", "", "", 201)
                assert requests[i + 1] == ("delete", "leases", LOCK, "", 200)
            assert len(requests) == 3 * len(updates)
        assert locks(c) == []


def test_a_writer_that_finds_the_lock_taken_waits_and_gives_up_after_a_while():
    c = rs_cluster(PESSIMISTIC_LOCKING)
    c.apply([replicaset(2)])
    c.run(5_000)
    other = Lease(metadata=ObjectMeta(name=LOCK, namespace=LOCK_NAMESPACE),
                  spec=LeaseSpec(holder_identity="controller/deployment#1"))
    assert admin(c, "create", "leases", namespace=LOCK_NAMESPACE, body=other).code == 201
    since = len(c.audit.records)
    mark_ready(c, live_pods(c)[0])
    c.run_for(LOCK_WAIT_MS + 5_000)
    requests = trail(c, since)
    assert ("update", "replicasets", "web", "status", 200) not in requests
    assert requests.count(("create", "leases", "", "", 409)) >= LOCK_WAIT_MS // 1_000
    assert c.get("replicasets", "default", "web").status.ready_replicas == 0
    assert admin(c, "delete", "leases", namespace=LOCK_NAMESPACE, name=LOCK).code == 200  # its holder lets go
    c.run_for(30_000)  # the controller requeued the key after the give-up: it takes the lock now
    assert c.get("replicasets", "default", "web").status.ready_replicas == 1


def crash_while_writing_status(name: str) -> Cluster:
    """Two pods, one marked ready; the controller crashes while its status update is on its way (under the
    variant it holds the lock then); it restarts and a second pod becomes ready."""
    c = rs_cluster(name)
    c.apply([replicaset(2)])
    c.run(5_000)
    mark_ready(c, live_pods(c)[0])
    ctrl = controller(c)

    def status_write_in_flight() -> bool:
        return any(getattr(m.payload, "verb", "") == "update" for m in c.network.in_flight(ctrl.name, "apiserver-0"))

    until = c.now + 5_000
    while not status_write_in_flight():
        assert c.loop.run_fair(until, max_events=1)
    c.crash(ctrl.name)
    c.restart(ctrl.name)
    mark_ready(c, live_pods(c)[1])
    c.run_for(600_000)
    return c


def test_a_holder_that_crashes_holding_the_lock_blocks_its_object_for_good():
    c = crash_while_writing_status(PESSIMISTIC_LOCKING)
    (lease,) = locks(c)
    assert lease.spec.holder_identity == "controller/replicaset#1"  # the process before the crash
    assert c.get("replicasets", "default", "web").status.ready_replicas == 1
    assert any("status says replicas=2 ready=1" in m for m in converges_replicas(c, {}))


def test_without_the_lock_the_same_crash_costs_nothing():
    c = crash_while_writing_status(DEFAULT)
    assert locks(c) == []
    assert c.get("replicasets", "default", "web").status.ready_replicas == 2
    assert list(converges_replicas(c, {})) == []
