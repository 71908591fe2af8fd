"""The garbage collector looks an owner up where its dependent's ownerReference names it, as upstream's
isDangling and the graph builder's addDependentToOwners (pkg/controller/garbagecollector, Kubernetes 1.28-1.32):
in the dependent's namespace (cluster-wide for a cluster-scoped kind), by the reference's name, kind and
apiVersion, and matched by uid. Each test names the upstream case it follows: TestConflictingData in
garbagecollector_test.go (its scenario names quoted), and TestCrossNamespaceReferences and TestClusterScopedOwners
in test/integration/garbagecollector."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.garbagecollector import EVENT_SOURCE
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.objects import ClusterRole, ConfigMap, Namespace, ObjectMeta, OwnerReference

from .cluster_helpers import admin

S = 1_000
GC_USER = "system:serviceaccount:kube-system:generic-garbage-collector"


def ref_to(owner, *, kind: str = "ConfigMap", name: str = "") -> OwnerReference:
    m = owner.metadata
    return OwnerReference(api_version="v1", kind=kind, name=name or m.name, uid=m.uid)


def config_map(name: str, namespace: str = "default", *refs: OwnerReference) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, owner_references=refs))


def create(c: Cluster, resource: str, body, namespace: str = "default"):
    r = admin(c, "create", resource, namespace=namespace, body=body)
    assert r.code == 201, r
    return r.body


def with_namespace(c: Cluster, name: str) -> None:
    create(c, "namespaces", Namespace(metadata=ObjectMeta(name=name)), namespace="")


def gc_cluster() -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))


def gc_requests(c: Cluster, verb: str) -> list[tuple]:
    return [(r.resource, r.namespace, r.name, r.code) for r in c.audit if r.user == GC_USER and r.verb == verb]


def warnings(c: Cluster) -> list[tuple]:
    return [(e.involved_object.kind, e.involved_object.namespace, e.involved_object.name, e.metadata.namespace,
             e.message) for e in c.objects("events") if e.reason == "OwnerRefInvalidNamespace"
            and e.type == "Warning" and e.source.component == EVENT_SOURCE]


def names(c: Cluster, resource: str, namespace: str = "default") -> list[str]:
    return [o.metadata.name for o in c.objects(resource, namespace)]


# -- an owner of another namespace ----------------------------------------------------------------------------


def test_a_dependent_naming_an_owner_of_another_namespace_is_collected_with_a_warning():
    """"bad child in ns1 -> owner in ns2 (owner first)": the graph builder sees the owner in ns2 and the child's
    reference, which would find it only in ns1; it records OwnerRefInvalidNamespace on the child and queues it,
    and attemptToDelete finds no owner of that name in ns1 (GET: 404) and deletes the child."""
    c = gc_cluster()
    c.run(2 * S)
    with_namespace(c, "other")
    owner = create(c, "configmaps", config_map("owner", "other"), namespace="other")
    c.run_for(2 * S)
    create(c, "configmaps", config_map("child", "default", ref_to(owner)))
    c.run_for(5 * S)
    assert names(c, "configmaps") == [] and names(c, "configmaps", "other") == ["owner"]
    assert ("configmaps", "default", "owner", 404) in gc_requests(c, "get")  # looked up in the child's namespace
    assert ("configmaps", "default", "child", 200) in gc_requests(c, "delete")
    assert warnings(c) == [("ConfigMap", "default", "child", "default",
                            f'ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {owner.metadata.uid}] '
                            'does not exist in namespace "default"')]


def test_a_child_seen_before_its_owner_of_another_namespace_is_collected_with_a_warning():
    """"bad child in ns1 -> owner in ns2 (child first)": the child comes first in the GC's first list (default/
    before other/), so its owner is a virtual node in the child's namespace; seen in other/, the node is corrected
    and the child, which disagrees with it, gets the warning."""
    c = gc_cluster()
    with_namespace(c, "other")
    owner = create(c, "configmaps", config_map("owner", "other"), namespace="other")
    create(c, "configmaps", config_map("child", "default", ref_to(owner)))
    c.run(5 * S)
    assert names(c, "configmaps") == [] and names(c, "configmaps", "other") == ["owner"]
    assert [w[2] for w in warnings(c)] == ["child"]


def test_a_dependent_of_an_owner_in_its_own_namespace_stays_and_gets_no_warning():
    c = gc_cluster()
    c.run(2 * S)
    owner = create(c, "configmaps", config_map("owner"))
    create(c, "configmaps", config_map("child", "default", ref_to(owner)))
    c.run_for(5 * S)
    assert names(c, "configmaps") == ["child", "owner"] and warnings(c) == []


# -- a cluster-scoped dependent of a namespaced owner -------------------------------------------------------


def test_a_cluster_role_owned_by_a_config_map_is_never_collected():
    """"bad cluster-scoped child -> owner in ns1 (owner first)": the warning (the namespace it names is the
    child's, ""), then attemptToDelete GETs the child and stops: a cluster-scoped object cannot name a namespaced
    owner (namespacedOwnerOfClusterScopedObjectErr), and the item is forgotten, not retried. Nor is it collected
    once the ConfigMap is deleted."""
    c = gc_cluster()
    c.run(2 * S)
    owner = create(c, "configmaps", config_map("owner"))
    c.run_for(2 * S)
    role = ClusterRole(metadata=ObjectMeta(name="reader", owner_references=(ref_to(owner),)))
    create(c, "clusterroles", role, namespace="")
    c.run_for(5 * S)
    assert c.get("clusterroles", "", "reader") is not None
    assert warnings(c) == [("ClusterRole", "", "reader", "default",
                            f'ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {owner.metadata.uid}] '
                            'does not exist in namespace ""')]
    assert [g for g in gc_requests(c, "get") if g[0] == "clusterroles"] == [("clusterroles", "", "reader", 200)]
    assert not [g for g in gc_requests(c, "get") if g[0] == "configmaps"]  # no look-up of the owner at all
    c.submit(Delete("configmaps", "default", "owner"))
    c.run_for(10 * S)
    assert names(c, "configmaps") == [] and c.get("clusterroles", "", "reader") is not None
    assert gc_requests(c, "delete") == []


# -- references at other coordinates ------------------------------------------------------------------------------


def test_references_naming_an_owners_uid_with_another_name_or_kind_are_dangling():
    """The graph builder sees the owner (by uid) at coordinates the reference does not name, and queues the
    child; attemptToDelete looks the owner up by the reference's name (or kind: a Service of that name) and finds
    none, so the child goes. A reference with the right coordinates keeps its child."""
    c = gc_cluster()
    c.run(2 * S)
    owner = create(c, "configmaps", config_map("owner"))
    c.run_for(2 * S)
    create(c, "configmaps", config_map("wrong-name", "default", ref_to(owner, name="another")))
    create(c, "configmaps", config_map("wrong-kind", "default", ref_to(owner, kind="Service")))
    create(c, "configmaps", config_map("right", "default", ref_to(owner)))
    c.run_for(5 * S)
    assert names(c, "configmaps") == ["owner", "right"]
    gets = gc_requests(c, "get")
    assert ("configmaps", "default", "another", 404) in gets and ("services", "default", "owner", 404) in gets


def test_a_reference_to_a_kind_the_api_does_not_serve_keeps_its_dependent_and_is_retried():
    """"child -> existing owner with inaccessible API version": the RESTMapper cannot map the kind at that
    apiVersion (apps/v1beta1 is served no more), so attemptToDelete fails and the child is retried with the rate
    limiter, for ever, and never collected."""
    c = gc_cluster()
    c.run(2 * S)
    owner = create(c, "configmaps", config_map("owner"))
    old = OwnerReference(api_version="apps/v1beta1", kind="Deployment", name="web", uid=owner.metadata.uid)
    create(c, "configmaps", config_map("child", "default", old))
    c.run_for(60 * S)
    assert names(c, "configmaps") == ["child", "owner"]
    looks = [g for g in gc_requests(c, "get") if g[2] == "child"]
    assert len(looks) > 5 and gc_requests(c, "delete") == []  # retried, with a growing back-off


# -- an owner re-created under its name, seen as one update after a relist ----------------------------------


def owner_recreated_while_the_watch_was_down() -> Cluster:
    """A cluster whose GC saw `default/owner` re-created (a new uid) only as one update after a relist, and whose
    `default/child` names the old owner."""
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.run(5 * S)
    old = create(c, "configmaps", config_map("owner"))
    create(c, "configmaps", config_map("child", "default", ref_to(old)))
    c.run_for(5 * S)
    c.partition(SHARED_INFORMERS)  # the watches end after the HTTP/2 health check gives up (30 + 15 s)
    c.run_for(60 * S)
    assert admin(c, "delete", "configmaps", name="owner").code == 200
    new = create(c, "configmaps", config_map("owner"))
    assert new.metadata.uid != old.metadata.uid
    c.run_for(1 * S)  # the API servers' watch caches see both changes before the relist they hold is served
    c.heal(SHARED_INFORMERS)
    c.run_for(120 * S)  # the relist: owner/ updated to the new uid
    return c


def test_an_owner_recreated_while_the_watch_was_down_leaks_its_dependents_until_a_restart():
    """Upstream's graph keys nodes by uid and a relist delivers a re-created owner as an update of the new uid
    (DeltaFIFO.Replace: same key): the old uid's node stays, no delete event comes for it, and its dependents are
    never queued. A restart rebuilds the graph: the dependent's owner is then unknown, looked up by name, found
    with another uid, and the dependent collected."""
    c = owner_recreated_while_the_watch_was_down()
    assert names(c, "configmaps") == ["child", "owner"]  # the child of the gone owner stays
    c.crash("kube-controller-manager")
    c.restart("kube-controller-manager")
    c.run_for(30 * S)
    assert names(c, "configmaps") == ["owner"]
