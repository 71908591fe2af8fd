"""The namespace controller: a namespace being deleted is emptied, then finalized and removed."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch
from kmodel.checker.crd_actions import DATABASE_CRD, database_manifest
from kmodel.controllers.namespace import pods_estimate
from kmodel.loop.events import FailRequest

COMPONENTS = ("namespace", "deployment", "replicaset", "garbagecollector", "scheduler", "kubelet")
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller"


def in_team(manifest: dict) -> dict:
    return {**manifest, "metadata": {**manifest["metadata"], "namespace": "team"}}


def team_cluster() -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=COMPONENTS))
    c.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    c.submit(Apply(in_team(deployment_manifest("web", 2, 0, False))))
    c.submit(Apply(in_team(service_manifest("web"))))
    c.run(20_000)
    assert len(c.objects("pods", "team")) == 2 and c.objects("services", "team")
    return c


def content(c: Cluster) -> list:
    return [o for r in ("pods", "replicasets", "deployments", "services") for o in c.objects(r, "team")]


def test_a_deleted_namespace_is_emptied_then_removed():
    c = team_cluster()
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(1_000)
    assert c.get("namespaces", "", "team").status.phase == "Terminating"
    c.submit(Apply(in_team(service_manifest("api"))))  # refused: the namespace is being terminated
    c.run_for(60_000)
    assert content(c) == [] and c.get("namespaces", "", "team") is None
    refused = c.kubectl.results[-1]
    assert refused.response.code == 403
    assert refused.response.body.message == ('services "api" is forbidden: unable to create new content in '
                                             'namespace team because it is being terminated')
    # the finalize is built from the namespace as read before its conditions were written (as upstream's is):
    # it meets a conflict, and goes through on a fresh GET (retryOnConflictError)
    controller = [(r.verb, r.subresource, r.code) for r in c.audit.records
                  if r.user == NAMESPACE_CONTROLLER and r.resource == "namespaces"]
    assert controller == [("get", "", 200), ("update", "status", 200), ("update", "finalize", 409),
                          ("get", "", 200), ("update", "finalize", 200), ("get", "", 404)]


def test_content_kept_by_a_finalizer_keeps_the_namespace_until_it_is_released():
    c = team_cluster()
    c.submit(Patch("services", "team", "web", {"metadata": {"finalizers": ["example.com/hold"]}}))
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(60_000)
    held = c.get("services", "team", "web")
    assert held is not None and held.metadata.deletion_timestamp is not None
    assert c.get("namespaces", "", "team") is not None
    assert [o.metadata.name for o in content(c)] == ["web"]
    c.submit(Patch("services", "team", "web", {"metadata": {"finalizers": []}}))
    c.run_for(60_000)
    assert c.get("services", "team", "web") is None and c.get("namespaces", "", "team") is None


def test_the_pods_estimate_is_their_longest_grace_period_not_yet_done():
    from kmodel.objects import Pod, PodSpec, PodStatus

    pods = [Pod(spec=PodSpec(termination_grace_period_seconds=30)),
            Pod(spec=PodSpec(termination_grace_period_seconds=90), status=PodStatus(phase="Succeeded")),
            Pod(spec=PodSpec(termination_grace_period_seconds=45))]
    assert pods_estimate(pods) == 45


def conditions(c: Cluster, name: str = "team") -> dict:
    return {x.type: (x.status, x.reason, x.message) for x in c.get("namespaces", "", name).status.conditions}


def test_a_held_namespace_says_what_remains_in_its_conditions():
    c = team_cluster()
    c.submit(Patch("services", "team", "web", {"metadata": {"finalizers": ["example.com/hold"]}}))
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(30_000)
    # upstream's conditions, messages and all (status_condition_utils.go)
    assert conditions(c) == {
        "NamespaceDeletionDiscoveryFailure": ("False", "ResourcesDiscovered", "All resources successfully discovered"),
        "NamespaceDeletionGroupVersionParsingFailure": (
            "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
        "NamespaceDeletionContentFailure": (
            "False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
        "NamespaceContentRemaining": ("True", "SomeResourcesRemain",
                                      "Some resources are remaining: services. has 1 resource instances"),
        "NamespaceFinalizersRemaining": ("True", "SomeFinalizerRemain",
                                         "Some finalizers are remaining: example.com/hold in 1 resource instances"),
    }


def team_with_a_database(components: tuple = ("namespace",)) -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=components))
    c.apply([DATABASE_CRD, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}])
    c.run(2_000)
    c.apply([in_team(database_manifest("orders", 1))])
    c.run(4_000)
    assert [o.metadata.name for o in c.objects("databases", "team")] == ["orders"]
    return c


def test_custom_objects_are_deleted_before_their_namespace_and_do_not_come_back():
    """Upstream's deleter empties every namespaced resource discovery lists, custom ones included, before it
    removes its finalizer: `kubectl delete namespace team`, then `kubectl create namespace team`, finds it empty."""
    c = team_with_a_database()
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(60_000)
    assert c.get("namespaces", "", "team") is None and c.objects("databases", "team") == []
    controller = [(r.verb, r.resource, r.name, r.subresource) for r in c.audit.records if r.user == NAMESPACE_CONTROLLER
                  and r.verb in ("delete", "update")]
    assert controller == [("delete", "databases", "orders", ""), ("update", "namespaces", "team", "status"),
                          ("update", "namespaces", "team", "finalize"), ("update", "namespaces", "team", "finalize")]
    c.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    c.run_for(2_000)
    assert c.get("namespaces", "", "team") is not None and c.objects("databases", "team") == []


def test_a_failed_discovery_empties_the_built_in_resources_and_keeps_the_namespace():
    c = team_with_a_database()
    c.submit(Delete("namespaces", "", "team"))
    sweeps = lambda: [r for r in c.audit.records if r.user == NAMESPACE_CONTROLLER and r.resource == "namespaces"]
    while not sweeps():
        c.run_for(1_000, max_events=1)
    controller = next(x for x in c.components if x.name == "controller/namespace")
    replica = c.replicas[0]
    replica.fail_next_request(controller.client.owner, FailRequest(controller.client.owner, replica.name, 503))
    # the first sweep, without custom resources: 34 requests, the last four waiting 50 ms each for a token
    # (the controller manager's 20 qps, burst 30)
    c.run_for(300)
    status, reason, message = conditions(c)["NamespaceDeletionDiscoveryFailure"]
    assert (status, reason, message) == ("True", "DiscoveryFailed",
                                         "the server is currently unable to handle the request")
    assert c.get("namespaces", "", "team") is not None and c.objects("databases", "team")
    c.run_for(60_000)  # retried with the rate limiter: discovery works, the database goes, then the namespace
    assert c.get("namespaces", "", "team") is None and c.objects("databases", "team") == []
