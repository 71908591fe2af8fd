"""The namespace controller: a namespace being deleted is emptied, then finalized and removed."""

from __future__ import annotations

from kmodel.checker.actions import deployment_manifest, service_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch
from kmodel.controllers.namespace import pods_estimate

COMPONENTS = ("namespace", "deployment", "replicaset", "garbagecollector", "scheduler", "kubelet")


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
    finalize = [r for r in c.audit.records if r.subresource == "finalize"]
    assert [(r.user, r.code) for r in finalize] == [("system:serviceaccount:kube-system:namespace-controller", 200)]


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
