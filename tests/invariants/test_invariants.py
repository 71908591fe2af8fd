"""Each invariant holds on a real cluster run, and catches a state that really breaks it (a write that bypasses
the API server, a blind put, a duplicate IP set through pods/status, a message sent around the API, ...)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kmodel import invariants
from kmodel.invariants._history import change_feed, condition
from kmodel.invariants.registry import LIVENESS, REGISTRY, SAFETY, registered
from kmodel.apiserver.authentication import service_account_token
from kmodel.apiserver.wire import Request, Response, WatchEvent
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.cluster.kubectl import Delete
from kmodel.loop.events import Deliver, DropHead, SlowLink, Work
from kmodel.objects import Lease, LeaseSpec, Node, NodeCondition, NodeStatus, ObjectMeta, load_yaml
from kmodel.store import Compare, PutOp
from kmodel.store.types import KeyEvent, KeyValue, WatchResponse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
S = 1000

EXPECTED = {
    "unique-pod-ips": SAFETY, "pod-ip-in-node-cidr": SAFETY, "node-cidrs-disjoint": SAFETY, "cluster-ips-reserved": SAFETY,
    "occ-no-lost-update": SAFETY, "resource-version-monotonic": SAFETY, "watch-ordered": SAFETY,
    "watch-unique": SAFETY, "watch-reliable": SAFETY, "watch-atomic": SAFETY, "informer-no-time-travel": SAFETY,
    "restart-no-time-travel": SAFETY,
    "no-overcommit": SAFETY, "host-ports-unique": SAFETY, "binding-immutable": SAFETY,
    "api-single-contract": SAFETY, "admission-enforced": SAFETY, "rbac-enforced": SAFETY,
    "eviction-timing": SAFETY, "grace-only-for-running-pods": SAFETY, "converges-replicas": LIVENESS,
    # leader election's two are judged after every step (the second bounds how long a handover may take)
    "leader-acts-within-lease": SAFETY, "leader-elected-after-loss": SAFETY,
    "converges-endpoints": LIVENESS, "converges-endpointslices": LIVENESS,
    "converges-proxy-rules": LIVENESS, "converges-node-status": LIVENESS, "no-ip-leak": LIVENESS,
    "no-cidr-leak": LIVENESS, "no-sandbox-leak": LIVENESS, "api-status-codes": SAFETY, "store-keys-canonical": SAFETY, "namespaces-terminate": LIVENESS, "settles": LIVENESS,
    "service-reachability": LIVENESS,
    "watch-delivers-after-start": SAFETY, "refused-request-changes-nothing": SAFETY,
    "deleted-stays-deleted": SAFETY, "finalizers-hold-deletion": SAFETY,
    "replicaset-within-expectations": SAFETY, "rollout-within-surge": SAFETY,
    "endpoints-list-real-pods": SAFETY, "dependents-collected": LIVENESS,
    "statefulset-one-pod-per-identity": SAFETY, "statefulset-ordered-ready": SAFETY, "converges-statefulsets": LIVENESS,
    "statefulset-pods-at-their-revision": SAFETY,
    "custom-objects-valid": SAFETY, "custom-objects-scoped": SAFETY, "crd-objects-removed": LIVENESS,
    "namespace-content-removed": SAFETY,
    "merge-patch-applied": SAFETY,
    "job-pods-counted-once": SAFETY, "job-finalizer-after-counting": SAFETY, "job-complete-has-its-completions": SAFETY,
    "job-indexes-counted-once": SAFETY, "job-completed-indexes-kept": SAFETY, "finished-jobs-release-pods": LIVENESS,
}


def manifest(name: str) -> list:
    return load_yaml((EXAMPLES / name).read_text())


def check(cluster: Cluster, name: str, memo: dict | None = None) -> list[str]:
    return list(REGISTRY[name].check(cluster, {} if memo is None else memo))


def web_cluster(nodes: int = 3, **config) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=nodes, **config))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    return cluster


def pods(cluster: Cluster) -> list:
    return [p for p in cluster.objects("pods", "default") if p.metadata.name.startswith("storefront-")]


_request_ids = iter(range(10**6, 10**7))


def call(cluster: Cluster, verb: str, resource: str, namespace: str = "", name: str = "", *, body=None,
         subresource: str = "", token: str = "admin-token") -> Response:
    """A request handled by apiserver-0's pipeline (the real path: authn, authz, admission, the etcd handle)."""
    replica = cluster.replicas[0]
    request = Request(next(_request_ids), verb, resource, namespace, name, subresource, body, token)
    response = replica.pipeline.handle(request, now=cluster.now, replica=replica.name)
    cluster.etcd.poke()
    return response


def cas_put(cluster: Cluster, key: str, value) -> None:
    """A conditional write straight into etcd (the txn an API server makes, but made by no API server)."""
    kv = cluster.store.range(key).kvs[0]
    assert cluster.store.txn([Compare(key, "MOD", "EQUAL", kv.mod_revision)], [PutOp(key, value)], []).succeeded


@pytest.fixture(scope="module")
def settled() -> tuple[Cluster, dict]:
    """A 3-node cluster running the web-service example, every safety invariant checked after every event."""
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(manifest("web-service.yaml"))
    memos = {inv.name: {} for inv in registered()}
    found = []
    while cluster.now < 60 * S:
        events = cluster.loop.enabled_events()
        cluster.loop.step(events[0])
        for inv in registered(SAFETY):
            found += [(inv.name, m) for m in inv.check(cluster, memos[inv.name])]
    return cluster, {"memos": memos, "found": found}


# -- the registry --------------------------------------------------------------------------------------------


def test_every_invariant_is_registered_with_its_kind_principle_and_guarantee():
    names = {inv.name: inv.kind for inv in registered()}
    assert names == EXPECTED
    for inv in registered():
        assert inv.principle and inv.guarantee.endswith(".")


# -- holding on a real run -----------------------------------------------------------------------------------


def test_every_safety_invariant_holds_after_every_event_of_a_real_run(settled):
    cluster, state = settled
    assert state["found"] == []
    assert len(cluster.audit.records) > 100 and len(pods(cluster)) == 3


def test_every_liveness_invariant_holds_once_the_cluster_settled(settled):
    cluster, _ = settled
    for inv in registered(LIVENESS):
        assert list(inv.check(cluster, {})) == [], inv.name


def test_safety_invariants_hold_through_a_partition_an_eviction_and_a_heal():
    cluster = web_cluster()
    memos = {inv.name: {} for inv in registered(SAFETY)}
    cluster.partition("node-2")
    for until in range(60, 600, 30):
        cluster.run(until * S)
        for inv in registered(SAFETY):
            assert list(inv.check(cluster, memos[inv.name])) == [], inv.name
    evicted = [r for r in cluster.audit.records if r.verb == "delete" and r.resource == "pods"
               and r.user == "system:serviceaccount:kube-system:node-controller"]
    assert evicted  # the taint eviction really happened, and eviction-timing found it on time
    cluster.heal("node-2")
    cluster.run(cluster.now + 120 * S)
    for inv in registered():
        assert list(inv.check(cluster, memos.get(inv.name, {}))) == [], inv.name


# -- network ------------------------------------------------------------------------------------------------


def test_unique_pod_ips_catches_a_duplicate_ip_set_through_pods_status():
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "unique-pod-ips", memo) == []
    a, b = pods(cluster)[:2]
    status = attrs.evolve(b.status, pod_ip=a.status.pod_ip, pod_ips=a.status.pod_ips)
    assert call(cluster, "update", "pods", "default", b.metadata.name, subresource="status",
                body=attrs.evolve(b, status=status)).code == 200
    [message] = check(cluster, "unique-pod-ips", memo)
    assert a.status.pod_ip in message and a.metadata.name in message and b.metadata.name in message


def test_unique_pod_ips_leaves_out_a_pod_whose_node_was_deleted():
    cluster = web_cluster()
    memo: dict = {}
    a, b = pods(cluster)[:2]
    assert a.spec.node_name != b.spec.node_name
    # a's node is deleted (its podCIDR is released with it); a awaits PodGC, still holding its IP in the API
    assert call(cluster, "delete", "nodes", "", a.spec.node_name).code == 200
    status = attrs.evolve(b.status, pod_ip=a.status.pod_ip, pod_ips=a.status.pod_ips)
    assert call(cluster, "update", "pods", "default", b.metadata.name, subresource="status",
                body=attrs.evolve(b, status=status)).code == 200
    assert check(cluster, "unique-pod-ips", memo) == []


def test_pod_ip_in_node_cidr_catches_an_ip_outside_the_nodes_cidr():
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "pod-ip-in-node-cidr", memo) == []
    pod = pods(cluster)[0]
    status = attrs.evolve(pod.status, pod_ip="10.99.0.7", pod_ips=())
    assert call(cluster, "update", "pods", "default", pod.metadata.name, subresource="status",
                body=attrs.evolve(pod, status=status)).code == 200
    [message] = check(cluster, "pod-ip-in-node-cidr", memo)
    assert "10.99.0.7" in message and pod.spec.node_name in message


def test_node_cidrs_disjoint_catches_two_nodes_with_the_same_cidr():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.run(15 * S)
    memo: dict = {}
    assert check(cluster, "node-cidrs-disjoint", memo) == []
    node2 = cluster.get("nodes", "", "node-2")
    cidr = cluster.get("nodes", "", "node-1").spec.pod_cidr
    cas_put(cluster, "/registry/minions/node-2",
            attrs.evolve(node2, spec=attrs.evolve(node2.spec, pod_cidr=cidr, pod_cidrs=(cidr,))))
    [message] = check(cluster, "node-cidrs-disjoint", memo)
    assert "node-1" in message and "node-2" in message and cidr in message


def test_cluster_ips_reserved_holds_through_creates_and_deletes_and_catches_a_leak_and_a_lost_reservation():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "cluster-ips-reserved", memo) == []
    svc = cluster.get("services", "default", "storefront")
    ip = svc.spec.cluster_ip
    assert ip and cluster.service_ips.has(ip)
    cluster.submit(Delete("services", "default", "storefront"))
    cluster.run(5 * S)
    assert check(cluster, "cluster-ips-reserved", memo) == []  # released with the Service
    cluster.service_ips.allocate(ip)
    assert check(cluster, "cluster-ips-reserved", memo) == [
        f"the ClusterIP allocator reserves {ip}, which no Service has"]
    cluster.service_ips.release(ip)
    kubernetes = cluster.get("services", "default", "kubernetes").spec.cluster_ip
    cluster.service_ips.release(kubernetes)
    assert check(cluster, "cluster-ips-reserved", memo) == [
        f"Service default/kubernetes has the ClusterIP {kubernetes}, which the allocator does not reserve"]
    cluster.service_ips.allocate(kubernetes)
    cluster.service_ips.count += 1
    assert check(cluster, "cluster-ips-reserved", memo) == [
        "the ClusterIP allocator counts 2 address(es) used but reserves 1"]


def test_grace_only_for_running_pods_holds_for_a_graceful_delete_and_catches_grace_for_an_unbound_pod():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    first, second = pods(cluster)[:2]
    cluster.submit(Delete("pods", "default", first.metadata.name))  # running: 30 s of grace
    cluster.run(5 * S)
    first_key = f"/registry/pods/default/{first.metadata.name}"
    graces = [ch.value.metadata.deletion_grace_period_seconds for ch in change_feed({}).read(cluster.store)
              if ch.key == first_key and ch.value is not None]
    assert 30 in graces  # its deletion began with the pod's 30 s of grace
    assert check(cluster, "grace-only-for-running-pods", memo) == []
    key = f"/registry/pods/default/{second.metadata.name}"
    unbound = attrs.evolve(second, spec=attrs.evolve(second.spec, node_name=""))
    cas_put(cluster, key, unbound)
    cas_put(cluster, key, attrs.evolve(unbound, metadata=attrs.evolve(
        unbound.metadata, deletion_timestamp=cluster.now, deletion_grace_period_seconds=30)))
    [message] = check(cluster, "grace-only-for-running-pods", memo)
    assert second.metadata.name in message and "bound to no node" in message and "30 s" in message


def test_api_single_contract_catches_a_message_around_the_api_and_a_write_around_the_api_server():
    cluster = web_cluster(nodes=2)
    memo: dict = {}
    assert check(cluster, "api-single-contract", memo) == []
    cluster.network.send("kubelet/node-1", "scheduler", "psst")
    [message] = check(cluster, "api-single-contract", memo)
    assert "kubelet/node-1" in message and "scheduler" in message
    cas_put(cluster, "/registry/namespaces/default", cluster.get("namespaces", "", "default"))
    messages = check(cluster, "api-single-contract", memo)
    assert any("/registry/namespaces/default" in m and "not through an API server" in m for m in messages)
    cluster.network.send("kubelet/node-2", "etcd", "put")
    assert any("only API servers talk to etcd" in m for m in check(cluster, "api-single-contract", memo))


# -- storage ------------------------------------------------------------------------------------------------


def test_occ_no_lost_update_catches_a_blind_put_over_an_existing_key():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "occ-no-lost-update", memo) == []
    ns = cluster.get("namespaces", "", "default")
    cluster.store.put("/registry/namespaces/default", ns)
    [message] = check(cluster, "occ-no-lost-update", memo)
    assert "blind put of /registry/namespaces/default" in message


def test_resource_version_monotonic_catches_a_wrong_resource_version_and_a_cache_going_back():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "resource-version-monotonic", memo) == []
    ns = cluster.get("namespaces", "", "default")
    cas_put(cluster, "/registry/namespaces/default", ns)  # still says its old resourceVersion
    [message] = check(cluster, "resource-version-monotonic", memo)
    assert f"says resourceVersion {ns.metadata.resource_version}" in message
    cluster.replicas[0].cache.resource_version -= 5
    assert any("watch cache went back" in m for m in check(cluster, "resource-version-monotonic", memo))


# -- watch ----------------------------------------------------------------------------------------------------


def _deliver_etcd(cluster: Cluster, *responses) -> None:
    replica = cluster.replicas[0]
    for response in responses:
        cluster.network.send("etcd", replica.name, response, replica.etcd_stream)
        cluster.loop.step(Deliver("etcd", replica.name))


def _watch_memos() -> dict:
    return {name: {} for name in ("watch-ordered", "watch-unique", "watch-reliable", "watch-atomic")}


def _watch_check(cluster: Cluster, memos: dict) -> dict:
    return {name: check(cluster, name, memo) for name, memo in memos.items()}


def test_watch_guarantees_hold_on_a_real_run_with_two_replicas_and_a_broken_stream():
    cluster = web_cluster(apiservers=2)
    memos = _watch_memos()
    assert _watch_check(cluster, memos) == {n: [] for n in memos}
    assert all(len(r.etcd_received) > 5 for r in cluster.replicas)


def test_watch_ordered_and_unique_catch_an_old_event_delivered_again():
    cluster = web_cluster(nodes=1)
    memos = _watch_memos()
    assert _watch_check(cluster, memos)["watch-ordered"] == []
    stream, old = next((s, r) for s, r in cluster.replicas[0].etcd_received
                       if isinstance(r, WatchResponse) and r.events)
    _deliver_etcd(cluster, old)
    found = _watch_check(cluster, memos)
    assert found["watch-ordered"] and "came after" in found["watch-ordered"][0]
    assert found["watch-unique"] and "delivered twice" in found["watch-unique"][0]


def test_watch_reliable_catches_a_response_dropped_from_the_etcd_stream():
    cluster = web_cluster(nodes=1)
    memos = _watch_memos()
    _watch_check(cluster, memos)
    ns = cluster.get("namespaces", "", "kube-public")
    cas_put(cluster, "/registry/namespaces/kube-public", ns)
    cluster.etcd.poke()
    cluster.loop.step(Work("etcd"))  # etcd sends the response on apiserver-0's watch stream ...
    cluster.loop.step(DropHead("etcd", "apiserver-0"))  # ... and the network loses it
    cluster.run_for(15 * S)  # later writes (heartbeats, ...) do arrive
    found = _watch_check(cluster, memos)
    assert any("/registry/namespaces/kube-public" in m and "never delivered" in m for m in found["watch-reliable"])


class _Out:
    """Sends straight onto the network (to push etcd's outbox by hand)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def send(self, dst, payload, stream=None) -> None:
        self.cluster.network.send("etcd", dst, payload, stream)


def test_watch_atomic_catches_a_revision_split_over_two_responses():
    cluster = web_cluster(nodes=1)
    memos = _watch_memos()
    _watch_check(cluster, memos)
    store = cluster.store
    a, b = "/registry/limitranges/default/a", "/registry/limitranges/default/b"  # a prefix the model serves nothing under
    replica = cluster.replicas[0]
    etcd_watch = cluster.etcd._watches[replica.name]
    store.txn([], [PutOp(a, "x"), PutOp(b, "y")], [])
    [response] = store.take_watch_responses(etcd_watch.watch_id)
    first, second = response.events
    _deliver_etcd(cluster, response._replace(events=[first]), response._replace(events=[second]))
    found = _watch_check(cluster, memos)
    assert any(f"revision {response.header_revision}" in m for m in found["watch-atomic"])


def test_informer_no_time_travel_catches_an_informer_that_lost_its_last_resource_version():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "informer-no-time-travel", memo) == []
    scheduler = cluster.loop.components["scheduler"]
    informer = scheduler.nodes
    old = informer.list()[0]
    old = attrs.evolve(old, metadata=attrs.evolve(old.metadata, resource_version="3"))
    informer.last_rv = 0  # a reflector that forgot where it was, then hears an old event
    informer._on_event(cluster.now, informer.watch_stream, WatchEvent("MODIFIED", old), _Out(cluster))
    [message] = check(cluster, "informer-no-time-travel", memo)
    assert "scheduler" in message and "resourceVersion 3" in message


def _kubelet_restarted_while_its_cache_lags(**config) -> tuple[Cluster, dict, list[str]]:
    """A kubelet writes a pod's status (a container died) while etcd -> apiserver-0, the replica it reads from,
    is slowed for 60 s; then it crashes and restarts, and its informers list again. Returns the cluster, the
    invariant's memo and what the invariant said before the crash."""
    cluster = web_cluster(nodes=1, **config)
    memo: dict = {}
    kubelet = cluster.loop.components["kubelet/node-1"]
    assert kubelet.client.endpoint == "apiserver-0"
    cluster.loop.step(SlowLink("etcd", "apiserver-0", 60 * S))
    storefront = pods(cluster)[0].metadata.name
    kubelet.fail_container("default", storefront, "web", now=cluster.now)
    cluster.loop.notify_work(kubelet.name)
    cluster.run(5 * S)
    written = kubelet.client.written_rvs["pods"][kubelet.client.incarnation]
    assert cluster.replicas[0].cache.resource_version < written  # the cache has not seen the kubelet's write
    before = check(cluster, "restart-no-time-travel", memo)
    cluster.crash("kubelet/node-1")
    cluster.restart("kubelet/node-1")
    cluster.run(5 * S)
    return cluster, memo, before


def test_restart_no_time_travel_catches_a_restarted_kubelet_listing_older_than_its_own_write():
    cluster, memo, before = _kubelet_restarted_while_its_cache_lags()
    assert before == []
    found = check(cluster, "restart-no-time-travel", memo)
    assert found and all(m.startswith("kubelet/node-1's ") for m in found)
    assert any("pods informer (spec.nodeName=node-1) exposed resourceVersion" in m
               and "which one of its writes to pods came back with before" in m for m in found)
    assert check(cluster, "informer-no-time-travel") == []  # each life alone never goes back


def test_restart_no_time_travel_holds_with_consistent_first_lists():
    cluster, memo, before = _kubelet_restarted_while_its_cache_lags(fixes=("reflector-consistent-first-list",))
    assert before == []
    kubelet = cluster.loop.components["kubelet/node-1"]
    assert kubelet.pods.has_synced  # the restarted kubelet listed (from etcd, waiting out the slow link)
    assert check(cluster, "restart-no-time-travel", memo) == []


def test_restart_no_time_travel_catches_a_life_older_than_an_earlier_lifes_exposure():
    """Judged from the client's record, not the component's informers: a life that began and ended between two
    checks is judged too, and so is a life going back past what the informer had exposed."""
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    proxy = cluster.loop.components["proxy/node-1"]
    assert check(cluster, "restart-no-time-travel", memo) == []
    newest = max(proxy.services.exposed)
    cluster.crash("proxy/node-1")  # a new life of its services informer, which lists from a cache gone back
    proxy.services.exposed.append(newest - 1)  # (as a lagging cache would answer it)
    cluster.crash("proxy/node-1")  # ... and ends before any check
    [message] = check(cluster, "restart-no-time-travel", memo)
    assert message.startswith("proxy/node-1's services informer (")
    assert f"exposed resourceVersion {newest - 1} after its process restarted, older than resourceVersion " \
           f"{newest}, which its informer had exposed before" in message


# -- scheduling ------------------------------------------------------------------------------------------------


def _pod(name: str, node: str, *, cpu: str = "100m", host_port: int = 0) -> dict:
    port = {"containerPort": 80, **({"hostPort": host_port} if host_port else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx", "ports": [port],
                                                       "resources": {"requests": {"cpu": cpu}}}]}}


def _run_unadmitted(cluster: Cluster, node: str, name: str, *, cpu: str = "100m", host_port: int = 0) -> None:
    """Start a pod's sandbox on the node's runtime directly: what a kubelet without admission would run."""
    from kmodel.kubelet.pod_worker import _sandbox_config
    from kmodel.objects import load

    pod = load(_pod(name, node, cpu=cpu, host_port=host_port))
    pod = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, uid=f"uid-{name}"))
    cluster.loop.components[f"kubelet/{node}"].runtime.run_pod_sandbox(_sandbox_config(pod, 0), cluster.now)


def _status(cluster: Cluster, name: str):
    return cluster.get("pods", "default", name).status


def test_no_overcommit_holds_when_a_pod_bound_around_the_scheduler_is_refused_by_the_kubelet():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "no-overcommit", memo) == []
    # nodeName set by hand: the store takes it, the kubelet's admission refuses to run it
    assert call(cluster, "create", "pods", "default", body=_pod("big", "node-1", cpu="10")).code == 201
    cluster.run(10 * S)
    assert check(cluster, "no-overcommit", memo) == []
    status = _status(cluster, "big")
    assert (status.phase, status.reason) == ("Failed", "OutOfcpu")
    assert status.message.startswith("Pod was rejected: Node didn't have enough resource: cpu, requested: 10000")


def test_no_overcommit_catches_a_node_running_more_than_it_has():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "no-overcommit", memo) == []
    _run_unadmitted(cluster, "node-1", "big", cpu="10")
    [message] = check(cluster, "no-overcommit", memo)
    assert "node-1" in message and "cpu requests" in message and "default/big" in message


def test_host_ports_unique_holds_when_the_kubelet_refuses_the_second_pod_on_a_host_port():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    for name in ("hp-1", "hp-2"):
        assert call(cluster, "create", "pods", "default", body=_pod(name, "node-1", host_port=8080)).code == 201
    cluster.run(10 * S)
    assert check(cluster, "host-ports-unique", memo) == []
    assert _status(cluster, "hp-1").phase == "Running"
    refused = _status(cluster, "hp-2")
    assert (refused.phase, refused.reason) == ("Failed", "NodePorts")
    assert refused.message == ("Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the "
                               "requested pod ports")


def test_host_ports_unique_catches_a_node_running_two_pods_on_one_host_port():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "host-ports-unique", memo) == []
    for name in ("hp-1", "hp-2"):
        _run_unadmitted(cluster, "node-1", name, host_port=8080)
    [message] = check(cluster, "host-ports-unique", memo)
    assert "hp-1" in message and "hp-2" in message and "8080" in message


def test_binding_immutable_catches_a_pod_moved_to_another_node():
    cluster = web_cluster(nodes=2)
    memo: dict = {}
    assert check(cluster, "binding-immutable", memo) == []
    pod = pods(cluster)[0]
    other = "node-2" if pod.spec.node_name == "node-1" else "node-1"
    cas_put(cluster, f"/registry/pods/default/{pod.metadata.name}",
            attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=other)))
    [message] = check(cluster, "binding-immutable", memo)
    assert pod.metadata.name in message and f"moved to {other}" in message


# -- contract ------------------------------------------------------------------------------------------------


def test_admission_enforced_catches_objects_written_without_admission():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.apply(manifest("refused/restricted-namespace.yaml"))
    cluster.run(10 * S)
    memo: dict = {}
    assert check(cluster, "admission-enforced", memo) == []
    [namespace, pod] = cluster.kubectl.results
    assert pod.response.code == 403  # admission said no; now write it straight into etcd
    rejected = pod.command.obj
    rejected = attrs.evolve(rejected, metadata=attrs.evolve(rejected.metadata, uid="u-1", creation_timestamp=0))
    key = f"/registry/pods/{rejected.metadata.namespace}/{rejected.metadata.name}"
    cluster.store.txn([Compare(key, "CREATE", "EQUAL", 0)], [PutOp(key, rejected)], [])
    messages = check(cluster, "admission-enforced", memo)
    assert any("violates Pod Security baseline" in m and "hostNetwork" in m for m in messages)
    assert any("does not tolerate" in m for m in messages)
    assert any("has priority None, not 0 (PriorityClass (none))" in m for m in messages)
    bare = "/registry/namespaces/bare"
    from kmodel.objects import Namespace, ObjectMeta
    cluster.store.txn([Compare(bare, "CREATE", "EQUAL", 0)], [PutOp(bare, Namespace(metadata=ObjectMeta(
        name="bare")))], [])
    assert any(bare in m and "no uid" in m for m in check(cluster, "admission-enforced", memo))


def test_rbac_enforced_catches_an_authorizer_that_allows_everyone():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(5 * S)
    memo: dict = {}
    assert check(cluster, "rbac-enforced", memo) == []
    assert call(cluster, "create", "pods", "default", body=_pod("p", ""), token="alice-token").code == 403
    assert check(cluster, "rbac-enforced", memo) == []
    cluster.replicas[0].pipeline.authorizer.allows = lambda *args, **kwargs: None  # the anti-pattern
    assert call(cluster, "create", "pods", "default", body=_pod("p", ""), token="alice-token").code == 201
    [message] = check(cluster, "rbac-enforced", memo)
    assert "alice" in message and "create default/pods" in message


# -- lifecycle ---------------------------------------------------------------------------------------------------


NODE_CONTROLLER_TOKEN = service_account_token("node-controller")  # node lifecycle's and taint eviction's


def _tainted_node_2_pod(cluster: Cluster, memo: dict):
    """node-2 cut off for 60 s (Unknown and tainted, 5 minutes from eviction); its first pod, marked with taint
    eviction's DisruptionTarget condition by the node-controller service account, as taint eviction's first write
    does."""
    from kmodel.objects import PodCondition

    cluster.partition("node-2")
    cluster.run(cluster.now + 60 * S)
    assert check(cluster, "eviction-timing", memo) == []
    victim = next(p for p in pods(cluster) if p.spec.node_name == "node-2")
    marked = attrs.evolve(victim, status=attrs.evolve(victim.status, conditions=victim.status.conditions + (
        PodCondition(type="DisruptionTarget", status="True", reason="DeletionByTaintManager"),)))
    assert call(cluster, "update", "pods", "default", victim.metadata.name, subresource="status", body=marked,
                token=NODE_CONTROLLER_TOKEN).code == 200
    return victim


def test_eviction_timing_catches_an_eviction_before_the_toleration_ran_out():
    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    assert call(cluster, "delete", "pods", "default", victim.metadata.name, token=NODE_CONTROLLER_TOKEN).code == 200
    [message] = check(cluster, "eviction-timing", memo)
    assert victim.metadata.name in message and "before its toleration" in message


def test_eviction_timing_judges_only_taint_evictions_delete_that_starts_a_termination():
    """A pod marked by taint eviction (DisruptionTarget) whose eviction was cut short, then deleted by a user, and
    deleted again by taint eviction's service account once it is terminating, was evicted by neither delete:
    neither is judged (both were, by the old condition)."""
    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    assert call(cluster, "delete", "pods", "default", victim.metadata.name).code == 200  # the user (admin)
    assert check(cluster, "eviction-timing", memo) == []
    # terminating now (no kubelet will finish it): taint eviction's delete evicts nothing more
    assert call(cluster, "delete", "pods", "default", victim.metadata.name, token=NODE_CONTROLLER_TOKEN).code == 200
    assert check(cluster, "eviction-timing", memo) == []


def test_eviction_timing_does_not_blame_taint_eviction_for_another_controllers_delete_of_a_pod_it_marked():
    """Each controller has its own service account: the ReplicaSet controller scaling down a pod that taint eviction
    marked before it crashed is not a taint eviction (with one identity for the controller manager it was judged
    as one)."""
    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    assert call(cluster, "delete", "pods", "default", victim.metadata.name,
                token=service_account_token("replicaset-controller")).code == 200
    assert check(cluster, "eviction-timing", memo) == []


def _untaint(cluster: Cluster, node: str) -> None:
    """An admin takes the node's NoExecute taints off in the store (no loop runs: no controller hears it yet)."""
    current = cluster.get("nodes", "", node)
    kept = tuple(t for t in current.spec.taints if t.effect != "NoExecute")
    assert call(cluster, "update", "nodes", "", node,
                body=attrs.evolve(current, spec=attrs.evolve(current.spec, taints=kept))).code == 200


def test_eviction_timing_judges_an_eviction_by_the_taint_as_of_the_eviction_not_the_end_of_the_step():
    """An eviction that was due, then, in the same step, the taint taken off and put on again later (a step can
    run minutes): the eviction is judged by the taint it had, not by the newer one (campaign seed 2 with every
    fix found the invariant doing that: tests/regressions/eviction-judged-by-the-taint-it-had-not-a-later-one.json)."""
    from kmodel.objects import Taint

    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    cluster.run(cluster.now + 310 * S)  # the toleration (300 s from the taint) has run out
    assert call(cluster, "delete", "pods", "default", victim.metadata.name, token=NODE_CONTROLLER_TOKEN).code == 200
    _untaint(cluster, "node-2")
    current = cluster.get("nodes", "", "node-2")
    again = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute", time_added=cluster.now)
    assert call(cluster, "update", "nodes", "", "node-2", body=attrs.evolve(
        current, spec=attrs.evolve(current.spec, taints=current.spec.taints + (again,)))).code == 200
    assert check(cluster, "eviction-timing", memo) == []  # one check after all three writes


def test_eviction_timing_judges_an_untainted_node_by_what_taint_eviction_had_seen():
    """The store lost node-2's NoExecute taint, but taint eviction had not heard of it when it decided: the
    eviction is judged by the taint it saw (here: before its toleration ran out), not flagged as evicting from
    an untainted node (found by `kmodel check --profile campaign --seed 17 --fix all`: its watch hung on a
    partitioned API server)."""
    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    _untaint(cluster, "node-2")
    assert call(cluster, "delete", "pods", "default", victim.metadata.name, token=NODE_CONTROLLER_TOKEN).code == 200
    [message] = check(cluster, "eviction-timing", memo)
    assert "before its toleration of node.kubernetes.io/unreachable on node-2" in message, message


def test_eviction_timing_catches_an_eviction_after_taint_eviction_heard_the_taint_go():
    cluster = web_cluster()
    memo: dict = {}
    victim = _tainted_node_2_pod(cluster, memo)
    _untaint(cluster, "node-2")
    cluster.run(cluster.now + 1 * S)  # taint eviction's informer delivers the change
    heard = cluster.loop.components["controller/tainteviction"].heard
    assert heard[-1][1:] == ("node-2", ())
    assert call(cluster, "delete", "pods", "default", victim.metadata.name, token=NODE_CONTROLLER_TOKEN).code == 200
    [message] = check(cluster, "eviction-timing", memo)
    assert "had no NoExecute taint, in the store nor as taint eviction had seen it" in message, message


def test_eviction_timing_catches_a_node_marked_unknown_while_it_heartbeats():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "eviction-timing", memo) == []
    node = cluster.get("nodes", "", "node-1")
    # marked 1 ms after "now": a heartbeat in the mark's own millisecond would not count against it
    conditions = tuple(attrs.evolve(c, status="Unknown", reason="NodeStatusUnknown",
                                    last_transition_time=cluster.now + 1)
                       if c.type == "Ready" else c for c in node.status.conditions)
    assert call(cluster, "update", "nodes", "", "node-1", subresource="status",
                body=attrs.evolve(node, status=attrs.evolve(node.status, conditions=conditions)),
                token=NODE_CONTROLLER_TOKEN).code == 200
    [message] = check(cluster, "eviction-timing", memo)
    assert "node-1 was marked Ready=Unknown" in message


def _ready_condition(cluster: Cluster, node: str):
    return next(c for c in cluster.get("nodes", "", node).status.conditions if c.type == "Ready")


def test_eviction_timing_holds_when_node_lifecycle_has_not_received_the_renewals():
    """Upstream's grace period runs from when the controller *noticed* a heartbeat change (probeTimestamp, its
    own clock), so with its informers cut off it marks a node Unknown although the node's Lease keeps being
    renewed (found by the checker, seed 19: a renewal's watch event held on the wire past the grace period).
    The admin renews the Lease every 10 s in place of a kubelet (which would also post status, and a status
    write makes the controller's stale mark conflict and re-read the node)."""
    cluster = Cluster(ClusterConfig(components=("nodelifecycle",)))
    ready = NodeCondition(type="Ready", status="True", last_heartbeat_time=0, last_transition_time=0)
    cluster.apply([Node(metadata=ObjectMeta(name="node-1"), status=NodeStatus(conditions=(ready,)))])
    cluster.run(cluster.now)
    memo: dict = {}

    def renew_for(ms: int) -> None:
        end = cluster.now + ms
        while cluster.now < end and _ready_condition(cluster, "node-1").status != "Unknown":
            if cluster.now % (10 * S) == 0:
                cluster.apply([Lease(metadata=ObjectMeta(name="node-1", namespace="kube-node-lease"),
                                     spec=LeaseSpec(holder_identity="node-1", renew_time=cluster.now))])
            cluster.run(cluster.now + S)

    renew_for(30 * S)
    assert check(cluster, "eviction-timing", memo) == []
    for apiserver in cluster.config.apiserver_names():
        cluster.loop.step(SlowLink(apiserver, SHARED_INFORMERS, 120 * S))  # its informers' watches
    cut = cluster.now
    renew_for(60 * S)
    marked = _ready_condition(cluster, "node-1")
    assert marked.status == "Unknown"  # by the real controller, from its stale caches
    renewed = cluster.get("leases", "kube-node-lease", "node-1").spec.renew_time
    assert marked.last_transition_time - renewed < 40 * S  # renewed (committed) within the grace period ...
    heard = [t for t, node in cluster.loop.components["controller/nodelifecycle"].heard if node == "node-1"]
    assert max(heard) < cut < renewed  # ... but no renewal reached the controller after the cut
    assert marked.last_transition_time > max(heard) + 40 * S
    assert check(cluster, "eviction-timing", memo) == []


def test_eviction_timing_counts_the_grace_period_from_when_node_lifecycle_heard_the_heartbeat():
    """A renewal stamped long ago but delivered late restarts the controller's clock: marking the node 41 s
    after its renewTime, but only ~20 s after the controller received it, breaks upstream's guarantee."""
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    cluster.partition("kubelet/node-1")  # no more heartbeats from the kubelet itself
    cluster.run(cluster.now + S)
    lease = cluster.get("leases", "kube-node-lease", "node-1")
    stamped = lease.spec.renew_time + 1  # a renewal sent just after the last one, held on the wire until now
    cluster.run(cluster.now + 19 * S)
    late = attrs.evolve(lease, spec=attrs.evolve(lease.spec, renew_time=stamped))
    assert call(cluster, "update", "leases", "kube-node-lease", "node-1", body=late).code == 200
    cluster.run(stamped + 41 * S)  # the controller itself would wait until 40 s after it heard the renewal
    assert _ready_condition(cluster, "node-1").status == "True"
    assert check(cluster, "eviction-timing", memo) == []
    node = cluster.get("nodes", "", "node-1")
    conditions = tuple(attrs.evolve(c, status="Unknown", reason="NodeStatusUnknown",
                                    last_transition_time=cluster.now)
                       if c.type == "Ready" else c for c in node.status.conditions)
    assert call(cluster, "update", "nodes", "", "node-1", subresource="status",
                body=attrs.evolve(node, status=attrs.evolve(node.status, conditions=conditions)),
                token=NODE_CONTROLLER_TOKEN).code == 200
    [message] = check(cluster, "eviction-timing", memo)
    assert "node-1 was marked Ready=Unknown" in message and "reached node lifecycle's informers" in message


# -- liveness ------------------------------------------------------------------------------------------------------


def test_converges_replicas_fails_without_a_replicaset_controller():
    components = tuple(c for c in ClusterConfig().components if c != "replicaset")
    cluster = web_cluster(nodes=1, components=components)
    messages = check(cluster, "converges-replicas")
    assert any("replicaset default/storefront-" in m and "0 live pods" in m for m in messages)


def test_converges_replicas_does_not_count_pods_left_on_a_removed_machine():
    """A machine switched off for good leaves its pods Ready=True in the API until the node lifecycle controller
    marks them (40 s grace) or PodGC deletes them (the Node gone, after its 40 s quarantine): they serve nothing,
    so the ReplicaSet has not converged until they are replaced."""
    cluster = web_cluster(nodes=3)
    node = pods(cluster)[0].spec.node_name
    cluster.remove_node(node)
    cluster.run(cluster.now + 2 * S)
    assert any(p.spec.node_name == node and condition(p, "Ready").status == "True" for p in pods(cluster))
    messages = check(cluster, "converges-replicas")
    assert any(m.startswith("replicaset default/storefront-") and f"1 on machines gone from the cluster ({node}), "
               f"1 of them still Ready in the API" in m for m in messages), messages
    cluster.run(cluster.now + 120 * S)
    assert check(cluster, "converges-replicas") == []
    assert all(p.spec.node_name != node for p in pods(cluster))


def test_converges_replicas_waits_for_a_foreground_deletion_a_lost_machines_pod_holds_while_its_node_exists():
    """A ReplicaSet deleted in the foreground whose pod is bound to a machine lost for good: the pod stays
    Terminating (no kubelet confirms it, PodGC waits for the Node to go), so the ReplicaSet stays, the deployment
    controller claims it and makes no other, and the Deployment has no pods: not judged while the Node exists.
    Once the Node is deleted PodGC removes the pod and the Deployment is judged again (and converges)."""
    cluster = web_cluster(nodes=3)
    node = pods(cluster)[0].spec.node_name
    rs = cluster.objects("replicasets", "default")[0].metadata.name
    cluster.lose_node(node)
    cluster.run(cluster.now + 2 * S)
    cluster.submit(Delete("replicasets", "default", rs, propagation_policy="Foreground"))
    cluster.run(cluster.now + 120 * S)
    held = cluster.get("replicasets", "default", rs)
    assert held is not None and "foregroundDeletion" in held.metadata.finalizers
    assert [p.spec.node_name for p in pods(cluster)] == [node]  # the lost machine's pod, Terminating
    assert pods(cluster)[0].metadata.deletion_timestamp is not None
    assert check(cluster, "converges-replicas") == []
    cluster.submit(Delete("nodes", "", node))
    cluster.run(cluster.now + 1 * S)  # the Node is gone, PodGC's quarantine has not run out: judged, and failing
    messages = check(cluster, "converges-replicas")
    assert any(m.startswith("deployment default/storefront wants") for m in messages), messages
    cluster.run(cluster.now + 180 * S)
    assert check(cluster, "converges-replicas") == []
    assert cluster.get("replicasets", "default", rs).metadata.uid != held.metadata.uid  # made again once it went


def test_converges_replicas_judges_a_rolled_out_deployments_conditions_and_replicasets():
    """Once a Deployment's counts say it rolled out, its conditions and ReplicaSets must say so too: a
    Progressing condition left at ReplicaSetUpdated, an Available condition that is False, or an old ReplicaSet
    still scaled up beside the new one each fail (written straight into etcd, as a mistaken controller would)."""
    cluster = web_cluster(nodes=3)
    assert check(cluster, "converges-replicas") == []
    d = cluster.get("deployments", "default", "storefront")
    conditions = {c.type: c for c in d.status.conditions}
    assert conditions["Progressing"].reason == "NewReplicaSetAvailable"
    key = "/registry/deployments/default/storefront"
    stale = attrs.evolve(conditions["Progressing"], reason="ReplicaSetUpdated")
    cas_put(cluster, key, attrs.evolve(d, status=attrs.evolve(d.status, conditions=[
        conditions["Available"], stale])))
    assert check(cluster, "converges-replicas") == [
        "deployment default/storefront has rolled out but its Progressing condition is True/ReplicaSetUpdated, "
        "not True/NewReplicaSetAvailable"]
    unavailable = attrs.evolve(conditions["Available"], status="False")
    cas_put(cluster, key, attrs.evolve(d, status=attrs.evolve(d.status, conditions=[
        unavailable, conditions["Progressing"]])))
    assert check(cluster, "converges-replicas") == [
        "deployment default/storefront has rolled out but its Available condition is False/MinimumReplicasAvailable, "
        "not True"]
    cas_put(cluster, key, d)
    rs = cluster.objects("replicasets", "default")[0]
    old = attrs.evolve(rs, metadata=attrs.evolve(rs.metadata, name="storefront-old", uid="old-uid"),
                       spec=attrs.evolve(rs.spec, replicas=1))
    cluster.store.txn([], [PutOp("/registry/replicasets/default/storefront-old", old)], [])
    messages = check(cluster, "converges-replicas")
    assert f"deployment default/storefront has rolled out 3 replicas but its ReplicaSets want " \
           f"{rs.metadata.name}=3, storefront-old=1" in messages, messages


def test_namespaces_terminate_fails_for_content_left_in_a_namespace_that_is_gone():
    """An object in a namespace that no longer exists (admission let it in, or the namespace controller removed
    the namespace before sweeping it) is left for good: nothing deletes it."""
    cluster = web_cluster(nodes=1)
    assert check(cluster, "namespaces-terminate") == []
    pod = pods(cluster)[0]
    stray = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, namespace="gone", uid="stray-uid"))
    cluster.store.txn([], [PutOp(f"/registry/pods/gone/{pod.metadata.name}", stray)], [])
    assert check(cluster, "namespaces-terminate") == ["namespace gone does not exist, but 1 object(s) are left in it"]


def test_no_sandbox_leak_fails_for_a_sandbox_of_a_pod_the_kubelet_forgot():
    cluster = web_cluster(nodes=1)
    assert check(cluster, "no-sandbox-leak") == []
    kubelet = cluster.loop.components["kubelet/node-1"]
    uid = pods(cluster)[0].metadata.uid
    del kubelet.workers[uid]  # forgotten, as a kubelet that skips removing a deleted pod's sandboxes leaves it
    assert check(cluster, "no-sandbox-leak") == [
        f"node node-1's container runtime still holds sandboxes of pods its kubelet forgot: {uid}"]


def test_api_status_codes_fails_for_a_success_under_another_code():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "api-status-codes", memo) == []
    assert {r.code for r in cluster.audit.records if r.verb == "create"} >= {201}
    last = cluster.audit.records[-1]
    cluster.audit.records.append(last._replace(verb="create", code=200, time=last.time + 1))
    cluster.audit.records.append(last._replace(verb="update", code=299, time=last.time + 2))
    cluster.audit.records.append(last._replace(verb="patch", code=201, time=last.time + 3))  # an apply created it
    cluster.audit.records.append(last._replace(verb="get", code=201, time=last.time + 4))
    messages = check(cluster, "api-status-codes", memo)
    assert len(messages) == 3 and "with 200 at" in messages[0] and "a create succeeds with 201" in messages[0]
    assert "with 299 at" in messages[1] and "answered get" in messages[2]


def test_store_keys_canonical_fails_for_an_object_stored_under_another_key():
    cluster = web_cluster(nodes=1)
    memo: dict = {}
    assert check(cluster, "store-keys-canonical", memo) == []
    pod = pods(cluster)[0]
    cluster.store.txn([], [PutOp(f"/registry/pods/{pod.metadata.name}", pod)], [])  # the namespace left out
    [message] = check(cluster, "store-keys-canonical", memo)
    assert message.endswith(f"pods default/{pod.metadata.name} was stored under /registry/pods/{pod.metadata.name}, "
                            f"not /registry/pods/default/{pod.metadata.name}")


def test_converges_endpoints_fails_without_an_endpoints_controller():
    components = tuple(c for c in ClusterConfig().components if c != "endpoints")
    cluster = web_cluster(nodes=1, components=components)
    [message] = check(cluster, "converges-endpoints")
    assert "service default/storefront has no Endpoints" in message


def test_converges_proxy_rules_fails_for_a_proxy_cut_off_from_the_api():
    """(The invariant lives in invariants/endpointslices.py; tests/invariants/test_endpointslice_invariants.py
    has its other cases.)"""
    cluster = web_cluster(nodes=2)
    cluster.partition("proxy/node-1")
    cluster.submit(Delete("pods", "default", pods(cluster)[0].metadata.name))
    cluster.run(cluster.now + 30 * S)
    [message] = check(cluster, "converges-proxy-rules")
    assert message.startswith("proxy/node-1's rules differ")


def test_converges_node_status_fails_while_a_node_is_cut_off():
    cluster = web_cluster(nodes=2)
    cluster.partition("node-2")
    cluster.run(cluster.now + 60 * S)
    messages = check(cluster, "converges-node-status")
    assert "kubelet/node-2 cannot reach any API server" in messages
    assert any("node node-2 is not Ready" in m for m in messages)
    assert any("node-2 still has the taints node.kubernetes.io/unreachable" in m for m in messages)


def test_no_ip_leak_catches_a_reservation_no_pod_holds():
    cluster = web_cluster(nodes=1)
    disk = cluster.loop.components["kubelet/node-1"].cni_disk
    sample = next(k for k in disk if not k.startswith("last_reserved_ip."))
    stray = sample.rsplit(".", 1)[0] + ".200"
    disk[stray] = "leaked-container\r\neth0"
    [message] = check(cluster, "no-ip-leak")
    assert stray.rsplit("/", 1)[-1] in message and "node-1" in message


def test_liveness_judges_only_the_machines_still_in_the_cluster():
    """A removed machine's disk (CNI reservations) and its stopped kube-proxy left the cluster with it: no-ip-leak,
    converges-proxy-rules and converges-node-status do not judge them, and still judge the machines left."""
    cluster = web_cluster(nodes=2)
    on_1 = [p for p in pods(cluster) if p.spec.node_name == "node-1"]
    assert on_1  # node-1 has pods, so its disk holds reservations
    cluster.remove_node("node-1")
    cluster.run(cluster.now + 120 * S)  # PodGC deletes its pods (their reservations stay on the dead disk)
    disk = cluster.loop.components["kubelet/node-1"].cni_disk
    assert any(not k.startswith("last_reserved_ip.") for k in disk)
    for name in ("no-ip-leak", "converges-proxy-rules", "converges-node-status"):
        assert check(cluster, name) == [], name
    # node-2 is still judged
    disk2 = cluster.loop.components["kubelet/node-2"].cni_disk
    sample = next(k for k in disk2 if not k.startswith("last_reserved_ip."))
    disk2[sample.rsplit(".", 1)[0] + ".201"] = "leaked-container\r\neth0"
    [message] = check(cluster, "no-ip-leak")
    assert "node node-2 still reserves" in message


def test_no_cidr_leak_catches_a_block_no_node_has():
    cluster = web_cluster(nodes=1)
    cluster.loop.components["controller/nodeipam"].cidrs.occupy("10.244.9.0/24")
    assert check(cluster, "no-cidr-leak") == ["node IPAM holds 10.244.9.0/24, which no node has"]


def test_no_cidr_leak_catches_a_live_nodes_block_the_allocator_lost():
    cluster = web_cluster(nodes=1)
    block = cluster.get("nodes", "", "node-1").spec.pod_cidr
    cluster.loop.components["controller/nodeipam"].cidrs.release(block)
    assert check(cluster, "no-cidr-leak") == [f"node IPAM does not hold {block}, which a node has"]


@pytest.mark.parametrize("fixes", [(), ("nodeipam-release-only-on-delete",)])
def test_no_cidr_leak_takes_a_node_a_finalizer_keeps_with_its_block_held_or_released(fixes):
    """1.31's syncNode releases the block of a Node being deleted; 1.32's (the fix) keeps it until the Node is
    gone. Either way no block is leaked, and once the Node is gone its block must be free."""
    from kmodel.cluster.kubectl import EditFinalizers

    cluster = web_cluster(nodes=2, fixes=fixes)
    block = cluster.get("nodes", "", "node-1").spec.pod_cidr
    cluster.submit(EditFinalizers("nodes", "", "node-1", "example.com/hold"))
    cluster.run(cluster.now + 2 * S)
    cluster.submit(Delete("nodes", "", "node-1"))
    cluster.run(cluster.now + 5 * S)
    held = block in {str(b) for b in cluster.loop.components["controller/nodeipam"].cidrs.used_blocks()}
    assert held == bool(fixes)
    assert check(cluster, "no-cidr-leak") == []
    cluster.submit(EditFinalizers("nodes", "", "node-1", "example.com/hold", add=False))
    cluster.run(cluster.now + 5 * S)
    assert cluster.get("nodes", "", "node-1") is None
    assert check(cluster, "no-cidr-leak") == []
    cluster.loop.components["controller/nodeipam"].cidrs.occupy(block)  # as if its release had been lost
    assert check(cluster, "no-cidr-leak") == [f"node IPAM holds {block}, which no node has"]


def test_settles_fails_while_work_is_in_flight():
    cluster = web_cluster(nodes=1)
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "late"}}])
    assert any("work queued" in m for m in check(cluster, "settles"))
    cluster.run(cluster.now + 5 * S)
    assert check(cluster, "settles") == []


def test_eviction_timing_counts_from_when_taint_eviction_saw_the_taint_without_a_break():
    """Upstream counts a toleration from when taint eviction first saw the pod on a tainted node, by its informer;
    a removal in the store it never saw does not restart the count (campaign seed 8, the first with lose_node)."""
    from kmodel.invariants.lifecycle import _tainted_since_in_view

    taint = ("unreachable",)
    heard = [(80, taint), (91, taint), (97, taint), (150, ()), (160, taint)]
    assert _tainted_since_in_view(heard, [0], 100) == 80
    assert _tainted_since_in_view(heard, [0, 91], 100) == 91  # a restart at 91 s first saw it then
    assert _tainted_since_in_view(heard, [0], 155) is None  # seen untainted at 150 s
    assert _tainted_since_in_view(heard, [0], 170) == 160  # the count starts again
    assert _tainted_since_in_view([], [0], 100) is None


def test_admission_enforced_judges_a_pods_priority_against_its_class_as_stored_then():
    """The Priority plugin's rule, read from the stored classes: a pod's priority is its class's value, or the
    global default's, or 0; a pod written past admission with another, or naming a class that is not there, is
    caught."""
    from kmodel.objects import PriorityClass, load

    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(2 * S)
    memo: dict = {}
    assert check(cluster, "admission-enforced", memo) == []

    def put(key: str, value) -> None:
        assert cluster.store.txn([Compare(key, "CREATE", "EQUAL", 0)], [PutOp(key, value)], []).succeeded

    def bypassing(name: str, **spec):
        pod = load({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}], "tolerations": [
                        {"operator": "Exists", "effect": "NoExecute"}], **spec}})
        pod = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, uid=f"u-{name}", creation_timestamp=0))
        put(f"/registry/pods/default/{name}", pod)

    bypassing("right", priorityClassName="system-node-critical", priority=2_000_001_000)
    bypassing("zero", priority=0)
    assert check(cluster, "admission-enforced", memo) == []
    bypassing("wrong", priorityClassName="system-node-critical", priority=5)
    bypassing("ghost", priorityClassName="gold", priority=5)
    assert check(cluster, "admission-enforced", memo) == [
        "pod default/wrong has priority 5, not 2000001000 (PriorityClass system-node-critical): Priority admission did not "
        "run",
        "pod default/ghost names PriorityClass gold, which did not exist: Priority admission did not run"]
    put("/registry/priorityclasses/normal", PriorityClass(metadata=ObjectMeta(name="normal", uid="u-n",
                                                                               creation_timestamp=0),
                                                           value=100, global_default=True))
    bypassing("defaulted", priority=0)
    assert check(cluster, "admission-enforced", memo)[-1] == (
        "pod default/defaulted has priority 0, not 100 (PriorityClass (none)): Priority admission did not run")
