"""The guarantees judged after every step: each holds on a real run (test_invariants.py runs every registered
safety invariant after every event of one) and catches a planted mistake of the kind it is there for."""

from __future__ import annotations

import attrs
import pytest

from kmodel.invariants.registry import REGISTRY
from kmodel.apiserver import errors
from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.wire import Request, Status, WatchEvent
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Scale
from kmodel.component import Out
from kmodel.controllers import deployment_logic, replicaset, rolling_update
from kmodel.controllers.replicaset_logic import ReplicasDiff
from kmodel.objects import ConfigMap, EndpointAddress, ObjectMeta, ObjectReference, OwnerReference
from kmodel.checker.actions import deployment_manifest
from tests.invariants.test_invariants import call, check, manifest, web_cluster

S = 1000


def run_checked(cluster: Cluster, until_ms: int, names: tuple[str, ...], memos: dict) -> list[str]:
    """Run to `until_ms`, checking `names` after every event; every violation found."""
    found: list[str] = []
    while cluster.now < until_ms:
        events = cluster.loop.enabled_events()
        if not events:
            break
        cluster.loop.step(events[0])
        for name in names:
            found += list(REGISTRY[name].check(cluster, memos.setdefault(name, {})))
    return found


# -- watch-delivers-after-start ------------------------------------------------------------------------------


def test_watch_delivers_after_start_catches_an_event_older_than_the_watch_start():
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "watch-delivers-after-start", memo) == []
    kubelet = cluster.loop.components["kubelet/node-1"]
    inf = next(i for i in _informers(kubelet) if i.resource == "pods" and i.watch_stream)
    start = next(r[1] for r in reversed(inf.watch_received) if len(r) == 2 and r[0] == inf.watch_stream)
    stale = next(iter(inf.indexer.items.values()))
    old = attrs.evolve(stale, metadata=attrs.evolve(stale.metadata, resource_version=str(start)))
    # what a watch cache that served from below the start would send, delivered as the client delivers it
    inf._on_event(cluster.now, inf.watch_stream, WatchEvent("MODIFIED", old), Out())
    found = check(cluster, "watch-delivers-after-start", memo)
    assert len(found) == 1 and "not after its start" in found[0]


def test_watch_delivers_after_start_catches_an_event_delivered_twice():
    cluster = web_cluster()
    memo: dict = {}
    cluster.submit(Scale("deployments", "default", "storefront", 4))
    cluster.run(cluster.now + 20 * S)
    assert check(cluster, "watch-delivers-after-start", memo) == []
    kubelet = cluster.loop.components["kubelet/node-1"]
    inf = next(i for i in _informers(kubelet) if i.resource == "pods" and i.watch_stream)
    stream, rv, key = next(r for r in reversed(inf.watch_received) if len(r) == 3 and r[0] == inf.watch_stream)
    ns, name = key.split("/")
    obj = inf.get(ns, name)
    again = attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version=str(rv)))
    inf._on_event(cluster.now, stream, WatchEvent("MODIFIED", again), Out())
    found = check(cluster, "watch-delivers-after-start", memo)
    assert len(found) == 1 and "an event again" in found[0]


def _informers(component):
    from kmodel.invariants.watch import informers_of
    return informers_of(component)


# -- refused-request-changes-nothing -------------------------------------------------------------------------


def test_refused_request_changes_nothing_holds_for_refusals_of_every_kind():
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "refused-request-changes-nothing", memo) == []
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert call(cluster, "create", "pods", "default", body=pod, token="bob-token").code == 403
    assert call(cluster, "get", "pods", "default", "missing").code == 404
    assert check(cluster, "refused-request-changes-nothing", memo) == []


def test_refused_request_changes_nothing_catches_an_authorizer_that_writes_before_it_refuses(monkeypatch):
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "refused-request-changes-nothing", memo) == []
    original = Pipeline._authorize

    def leaky(self, request, res, user):
        if user.name == "bob":
            self.registry.store.put("/registry/secrets/default/leak", "written")  # the planted mistake
            raise errors.APIError(Status(403, "Forbidden", "no"))
        return original(self, request, res, user)

    monkeypatch.setattr(Pipeline, "_authorize", leaky)
    assert call(cluster, "get", "pods", "default", "x", token="bob-token").code == 403
    found = check(cluster, "refused-request-changes-nothing", memo)
    assert len(found) == 1 and "refused get default/pods/x from bob with 403" in found[0]


# -- deleted-stays-deleted -----------------------------------------------------------------------------------


def test_deleted_stays_deleted_catches_a_write_that_brings_a_deleted_pod_back():
    cluster = web_cluster()
    memo: dict = {}
    pod = next(p for p in cluster.objects("pods", "default"))
    key = f"/registry/pods/default/{pod.metadata.name}"
    cluster.submit(Delete("pods", "default", pod.metadata.name))
    cluster.run(cluster.now + 40 * S)
    assert not cluster.store.range(key).kvs
    assert check(cluster, "deleted-stays-deleted", memo) == []
    cluster.store.put(key, pod)  # a late status write that re-creates the pod it was for
    found = check(cluster, "deleted-stays-deleted", memo)
    assert len(found) == 1 and pod.metadata.uid in found[0]


# -- replicaset-within-expectations ----------------------------------------------------------------------------


def test_replicaset_within_expectations_holds_through_a_scale_up_and_down_in_quick_succession():
    cluster = web_cluster()
    memos: dict = {}
    cluster.submit(Scale("deployments", "default", "storefront", 6))
    cluster.run(cluster.now + 1)
    cluster.submit(Scale("deployments", "default", "storefront", 0))
    assert run_checked(cluster, cluster.now + 60 * S, ("replicaset-within-expectations",), memos) == []


def test_replicaset_within_expectations_catches_a_controller_that_creates_one_too_many(monkeypatch):
    def one_too_many(listed, counted, replicas, *, edge_triggered, burst_replicas=500):
        return ReplicasDiff(create=replicas - listed + 1, delete=0) if listed <= replicas else \
            ReplicasDiff(create=0, delete=listed - replicas)

    monkeypatch.setattr(replicaset, "desired_diff", one_too_many)
    cluster = Cluster(ClusterConfig(nodes=2))
    found = []
    memos: dict = {}
    cluster.apply(manifest("web-service.yaml"))
    found = run_checked(cluster, 30 * S, ("replicaset-within-expectations",), memos)
    assert found and "which asked for at most 3" in found[0]


# -- rollout-within-surge --------------------------------------------------------------------------------------


def _rollout(cluster: Cluster, cpu: int) -> None:
    cluster.submit(Apply(deployment_manifest("api", 4, cpu, False)))


def test_rollout_within_surge_holds_through_rollouts_back_to_back():
    cluster = Cluster(ClusterConfig(nodes=3))
    memos: dict = {}
    _rollout(cluster, 0)
    assert run_checked(cluster, 30 * S, ("rollout-within-surge",), memos) == []
    _rollout(cluster, 100)
    _rollout(cluster, 200)  # a second template before the controller saw the first's ReplicaSet
    assert run_checked(cluster, cluster.now + 60 * S, ("rollout-within-surge",), memos) == []


def test_rollout_within_surge_catches_a_controller_that_ignores_the_surge(monkeypatch):
    def no_surge_bound(d, all_rss, new_rs):
        return deployment_logic.replicas_of(d)  # scale the new ReplicaSet up to everything at once

    monkeypatch.setattr(rolling_update, "new_rs_new_replicas", no_surge_bound)
    monkeypatch.setattr(deployment_logic, "new_rs_new_replicas", no_surge_bound)
    cluster = Cluster(ClusterConfig(nodes=3))
    memos: dict = {}
    _rollout(cluster, 0)
    run_checked(cluster, 30 * S, ("rollout-within-surge",), memos)
    _rollout(cluster, 100)
    found = run_checked(cluster, cluster.now + 30 * S, ("rollout-within-surge",), memos)
    assert found and "above spec.replicas + maxSurge = 5" in found[0]


# -- endpoints-list-real-pods ----------------------------------------------------------------------------------


def _with_address(cluster: Cluster, address: EndpointAddress):
    from kmodel.objects import dump
    ep = cluster.get("endpoints", "default", "storefront")
    subset = ep.subsets[0]
    subset = attrs.evolve(subset, addresses=(*subset.addresses, address))
    return dump(attrs.evolve(ep, subsets=(subset,)))


def test_endpoints_list_real_pods_catches_a_pod_that_never_existed_and_one_never_ready():
    cluster = web_cluster()
    memo: dict = {}
    assert check(cluster, "endpoints-list-real-pods", memo) == []
    ghost = EndpointAddress(ip="10.244.9.9", target_ref=ObjectReference(kind="Pod", namespace="default",
                                                                          name="ghost", uid="no-such-uid"))
    assert call(cluster, "update", "endpoints", "default", "storefront", body=_with_address(cluster, ghost)).ok
    found = check(cluster, "endpoints-list-real-pods", memo)
    assert len(found) == 1 and "ghost (uid no-such-uid), which never existed" in found[0]


# -- dependents-collected --------------------------------------------------------------------------------------


def test_dependents_collected_holds_once_the_garbage_collector_ran_and_fails_without_it():
    for with_gc in (True, False):
        components = ClusterConfig().components
        if not with_gc:
            components = tuple(c for c in components if "garbagecollector" not in c)
        cluster = Cluster(ClusterConfig(nodes=2, components=components))
        cluster.apply(manifest("web-service.yaml"))
        cluster.run(40 * S)
        cluster.submit(Delete("deployments", "default", "storefront"))
        cluster.run(cluster.now + 60 * S)
        found = list(REGISTRY["dependents-collected"].check(cluster, {}))
        if with_gc:
            assert found == []
        else:
            assert found and "names Deployment storefront" in found[0]


@pytest.mark.parametrize("every", [True, False])
def test_dependents_collected_judges_every_kind_the_garbage_collector_monitors(every):
    """A ConfigMap naming a deleted Service is judged when the GC monitors every resource (and collected by it);
    under the flag of traces recorded before it did, only workload owners are judged."""
    components = tuple(c for c in ClusterConfig().components if "garbagecollector" not in c)
    cluster = Cluster(ClusterConfig(nodes=1, components=components, gc_monitors_every_resource=every))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(20 * S)
    uid = cluster.get("services", "default", "storefront").metadata.uid
    ref = OwnerReference(api_version="v1", kind="Service", name="storefront", uid=uid)
    body = ConfigMap(metadata=ObjectMeta(name="settings", namespace="default", owner_references=(ref,)))
    assert call(cluster, "create", "configmaps", "default", body=body).ok
    cluster.submit(Delete("services", "default", "storefront"))
    cluster.run(cluster.now + 20 * S)
    found = list(REGISTRY["dependents-collected"].check(cluster, {}))
    if every:
        [eps] = [s.metadata.name for s in cluster.objects("endpointslices", "default")
                 if s.metadata.labels.get("kubernetes.io/service-name") == "storefront"]
        assert found == [f"configmaps default/settings still names Service storefront (uid {uid}) as its owner, "
                         "which is gone",
                         # the EndpointSlice controller's slice, owned by the Service too
                         f"endpointslices default/{eps} still names Service storefront (uid {uid}) as its owner, "
                         "which is gone"]
    else:
        assert found == []


@pytest.mark.parametrize("with_gc", [True, False])
def test_dependents_collected_judges_custom_resources_as_owners_and_dependents(with_gc):
    """A pod and a Database owned by a deleted Database, and a Database owned by a deleted pod: judged while the
    Database CRD is served (and collected by the GC); once the CRD is deleted its kind is no longer judged."""
    from tests.apiserver.crd_fixtures import crd_body, database

    cluster = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",) if with_gc else ()))
    cluster.run(1 * S)
    assert call(cluster, "create", "customresourcedefinitions", "", body=crd_body()).ok
    owner = call(cluster, "create", "databases", "default", body=database("owner")).body
    pod_owner = call(cluster, "create", "pods", "default", body=_bare_pod("pod-owner")).body

    def ref(obj):
        m = obj.metadata
        return {"apiVersion": obj.api_version, "kind": obj.kind, "name": m.name, "uid": m.uid}

    child = database("child")
    child["metadata"]["ownerReferences"] = [ref(owner)]
    assert call(cluster, "create", "databases", "default", body=child).ok
    orphan = database("of-a-pod")
    orphan["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "pod-owner",
                                              "uid": pod_owner.metadata.uid}]
    assert call(cluster, "create", "databases", "default", body=orphan).ok
    worker = _bare_pod("worker", OwnerReference(api_version=owner.api_version, kind="Database", name="owner",
                                                uid=owner.metadata.uid))
    assert call(cluster, "create", "pods", "default", body=worker).ok
    cluster.run_for(5 * S)
    assert list(REGISTRY["dependents-collected"].check(cluster, {})) == []
    assert call(cluster, "delete", "databases", "default", "owner").ok
    assert call(cluster, "delete", "pods", "default", "pod-owner").ok
    cluster.run_for(10 * S)
    found = sorted(REGISTRY["dependents-collected"].check(cluster, {}))
    if with_gc:
        assert found == [] and [o.metadata.name for o in cluster.objects("databases")] == []
    else:
        assert found == [
            f"databases default/child still names Database owner (uid {owner.metadata.uid}) as its owner, "
            "which is gone",
            f"databases default/of-a-pod still names Pod pod-owner (uid {pod_owner.metadata.uid}) as its owner, "
            "which is gone",
            f"pods default/worker still names Database owner (uid {owner.metadata.uid}) as its owner, "
            "which is gone"]
        # the CRD deleted (its objects with it): a Database owner is no longer a kind the API serves
        assert call(cluster, "delete", "customresourcedefinitions", "", "databases.example.com").ok
        cluster.run_for(30 * S)
        assert cluster.objects("customresourcedefinitions") == []
        assert list(REGISTRY["dependents-collected"].check(cluster, {})) == []


def _gc_cluster(with_gc: bool) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",) if with_gc else ()))
    cluster.run(2 * S)
    return cluster


def _config_map(cluster: Cluster, name: str, namespace: str = "default", *refs: OwnerReference):
    body = ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, owner_references=refs))
    created = call(cluster, "create", "configmaps", namespace, body=body)
    assert created.ok
    return created.body


@pytest.mark.parametrize("with_gc", [True, False])
def test_dependents_collected_judges_an_owner_where_its_reference_names_it(with_gc):
    """An owner found by uid in another namespace, or under another name or kind, is no owner: without a GC the
    three dependents are reported (saying where that uid is); the GC collects them. A reference with the right
    coordinates is no violation."""
    from kmodel.objects import Namespace

    cluster = _gc_cluster(with_gc)
    assert call(cluster, "create", "namespaces", "", body=Namespace(metadata=ObjectMeta(name="other"))).ok
    owner = _config_map(cluster, "owner", "other")
    uid = owner.metadata.uid
    cluster.run_for(2 * S)
    _config_map(cluster, "right", "other", OwnerReference(api_version="v1", kind="ConfigMap", name="owner", uid=uid))
    for name, kind, owner_name in (("elsewhere", "ConfigMap", "owner"), ("wrong-name", "ConfigMap", "another"),
                                   ("wrong-kind", "Service", "owner")):
        _config_map(cluster, name, "default", OwnerReference(api_version="v1", kind=kind, name=owner_name, uid=uid))
    cluster.run_for(5 * S)
    found = list(REGISTRY["dependents-collected"].check(cluster, {}))
    if with_gc:
        assert found == []
        return
    there = "(that uid is configmaps other/owner: an owner is looked up where its reference names it)"
    assert found == [
        f"configmaps default/elsewhere still names ConfigMap owner (uid {uid}) as its owner, which is gone from "
        f"default {there}",
        f"configmaps default/wrong-kind still names Service owner (uid {uid}) as its owner, which is gone from "
        f"default {there}",
        f"configmaps default/wrong-name still names ConfigMap another (uid {uid}) as its owner, which is gone from "
        f"default {there}"]


@pytest.mark.parametrize("with_gc", [True, False])
def test_dependents_collected_does_not_judge_a_namespaced_owner_of_a_cluster_scoped_object(with_gc):
    """A ClusterRole naming a ConfigMap: upstream's GC never collects it (the reference cannot resolve), so it is
    no violation, even with the ConfigMap gone; a ClusterRole naming a gone ClusterRole (cluster-scoped) is one."""
    from kmodel.objects import ClusterRole

    cluster = _gc_cluster(with_gc)
    owner = _config_map(cluster, "owner")
    admins = call(cluster, "create", "clusterroles", "", body=ClusterRole(metadata=ObjectMeta(name="admins"))).body
    for name, ref in (("reader", OwnerReference(api_version="v1", kind="ConfigMap", name="owner",
                                                uid=owner.metadata.uid)),
                      ("helper", OwnerReference(api_version="rbac.authorization.k8s.io/v1", kind="ClusterRole",
                                                name="admins", uid=admins.metadata.uid))):
        role = ClusterRole(metadata=ObjectMeta(name=name, owner_references=(ref,)))
        assert call(cluster, "create", "clusterroles", "", body=role).ok
    cluster.run_for(2 * S)
    assert call(cluster, "delete", "configmaps", "default", "owner").ok
    assert call(cluster, "delete", "clusterroles", "", "admins").ok
    cluster.run_for(10 * S)
    found = list(REGISTRY["dependents-collected"].check(cluster, {}))
    assert cluster.get("clusterroles", "", "reader") is not None
    if with_gc:
        assert found == [] and cluster.get("clusterroles", "", "helper") is None
    else:
        assert found == [f"clusterroles helper still names ClusterRole admins (uid {admins.metadata.uid}) as its "
                         "owner, which is gone"]


def test_dependents_collected_reports_the_dependents_an_owner_recreated_during_a_relist_leaks():
    """Upstream's GC keeps the old uid's graph node when a relist shows the re-created owner as an update, and
    never collects the old owner's dependents until it restarts: a finding the invariant reports; after a
    restart it holds."""
    from tests.controllers.test_garbagecollector_references import owner_recreated_while_the_watch_was_down

    cluster = owner_recreated_while_the_watch_was_down()
    (found,) = REGISTRY["dependents-collected"].check(cluster, {})
    assert found.startswith("configmaps default/child still names ConfigMap owner (uid ")
    assert found.endswith(") as its owner, which is gone")
    cluster.crash("kube-controller-manager")
    cluster.restart("kube-controller-manager")
    cluster.run_for(30 * S)
    assert list(REGISTRY["dependents-collected"].check(cluster, {})) == []


def _bare_pod(name: str, *owners: OwnerReference):
    from kmodel.objects import Pod
    from tests.controllers.cluster_helpers import template

    return Pod(metadata=ObjectMeta(name=name, namespace="default", owner_references=owners), spec=template().spec)


# -- finalizers-hold-deletion -----------------------------------------------------------------------------------


def _held_config_map(cluster: Cluster) -> None:
    body = ConfigMap(metadata=ObjectMeta(name="held", namespace="default", finalizers=("example.com/hold",)))
    assert call(cluster, "create", "configmaps", "default", body=body).ok


def test_finalizers_hold_deletion_holds_when_the_update_removing_the_last_finalizer_removes_the_object():
    cluster = web_cluster()
    memo: dict = {}
    _held_config_map(cluster)
    assert call(cluster, "delete", "configmaps", "default", "held").ok
    assert cluster.get("configmaps", "default", "held").metadata.deletion_timestamp is not None
    assert check(cluster, "finalizers-hold-deletion", memo) == []
    held = cluster.get("configmaps", "default", "held")
    released = attrs.evolve(held, metadata=attrs.evolve(held.metadata, finalizers=()))
    assert call(cluster, "update", "configmaps", "default", "held", body=released).ok
    assert cluster.get("configmaps", "default", "held") is None
    assert check(cluster, "finalizers-hold-deletion", memo) == []
    # a namespace: its first delete marks it, the namespace controller finalizes it and the API server removes it
    cluster.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    cluster.run(cluster.now + 5 * S)
    cluster.submit(Delete("namespaces", "", "team", propagation_policy="Orphan"))
    cluster.run(cluster.now + 30 * S)
    assert cluster.get("namespaces", "", "team") is None
    assert check(cluster, "finalizers-hold-deletion", memo) == []
    # upstream's DELETE replaces the garbage collector's finalizers as its policy says: a second DELETE with
    # Background removes at once what a first one with Orphan marked (nothing else holds it)
    orphaned = ConfigMap(metadata=ObjectMeta(name="orphaned", namespace="default"))
    assert call(cluster, "create", "configmaps", "default", body=orphaned).ok
    for policy in ("Orphan", "Background"):
        replica = cluster.replicas[0]
        request = Request(-7, "delete", "configmaps", "default", "orphaned", "", None, "admin-token",
                          propagation_policy=policy)
        assert replica.pipeline.handle(request, now=cluster.now, replica=replica.name).ok
        cluster.etcd.poke()
        if policy == "Orphan":
            assert cluster.get("configmaps", "default", "orphaned").metadata.finalizers == ("orphan",)
    assert cluster.get("configmaps", "default", "orphaned") is None
    assert check(cluster, "finalizers-hold-deletion", memo) == []


def test_finalizers_hold_deletion_catches_a_delete_that_ignores_the_objects_finalizers(monkeypatch):
    cluster = web_cluster()
    memo: dict = {}
    _held_config_map(cluster)
    uid = cluster.get("configmaps", "default", "held").metadata.uid
    from kmodel.apiserver import deletion

    monkeypatch.setattr(deletion, "gc_finalizers", lambda finalizers, policy: ())  # the mistake: finalizers dropped
    assert call(cluster, "delete", "configmaps", "default", "held").ok
    assert cluster.get("configmaps", "default", "held") is None
    found = check(cluster, "finalizers-hold-deletion", memo)
    assert len(found) == 1 and f"removed default/held (uid {uid}) while finalizers ['example.com/hold'] still " \
        "held it: a delete of configmaps default/held from admin" in found[0], found
