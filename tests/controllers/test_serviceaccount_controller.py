"""The service account controller: a ServiceAccount "default" in every active namespace, made again when
deleted, none in a namespace being deleted."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete


def accounts(c: Cluster) -> dict:
    return {(s.metadata.namespace, s.metadata.name): s.metadata.uid for s in c.objects("serviceaccounts")}


def test_every_namespace_gets_a_default_service_account_made_again_when_deleted():
    c = Cluster(ClusterConfig(nodes=1))
    c.run_for(5_000)
    assert sorted(accounts(c)) == [("default", "default"), ("kube-node-lease", "default"),
                                   ("kube-public", "default"), ("kube-system", "default")]
    c.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    c.run_for(5_000)
    first = accounts(c)[("team", "default")]
    c.submit(Delete("serviceaccounts", "team", "default"))
    c.run_for(5_000)
    again = accounts(c).get(("team", "default"))
    assert again is not None and again != first


def test_a_namespace_being_deleted_gets_none():
    c = Cluster(ClusterConfig(nodes=1, components=("serviceaccount",)))  # no namespace controller: it stays
    c.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    c.run_for(5_000)
    assert ("team", "default") in accounts(c)
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(1_000)
    c.submit(Delete("serviceaccounts", "team", "default"))
    c.run_for(5_000)
    assert c.get("namespaces", "", "team").status.phase == "Terminating"
    assert ("team", "default") not in accounts(c)
