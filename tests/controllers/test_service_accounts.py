"""kube-controller-manager with --use-service-account-credentials: each controller's requests authenticate as its
own kube-system service account and pass RBAC by its system:controller:<account> role; the informers list and
watch as system:kube-controller-manager, whose role allows nothing else that the model's controllers do."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kmodel.apiserver.authentication import service_account_name, service_account_token
from kmodel.apiserver.wire import Request
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.objects import load_yaml

S = 1000
KCM = "system:kube-controller-manager"
KCM_TOKEN = "controller-manager-token"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def manifest(name: str) -> list:
    return load_yaml((EXAMPLES / name).read_text())


def _requests_by_user(cluster: Cluster) -> dict[str, set[tuple[str, str]]]:
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for r in cluster.audit.records:
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        seen[r.user].add((r.verb, resource))
    return seen


def test_each_controller_acts_as_its_own_service_account_and_the_shared_informers_as_the_controller_manager():
    cluster = Cluster(ClusterConfig(nodes=3))
    sent: dict[str, set[tuple[str, str]]] = defaultdict(set)  # controller -> {(verb, token)} of its requests

    def tap(msg) -> None:
        if msg.src.startswith("controller/") and type(msg.payload).__name__ == "Request":
            sent[msg.src].add((msg.payload.verb, msg.payload.token))

    cluster.loop.set_delivery_tap(tap)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    cluster.partition("node-2")  # Unknown after 40 s, NoExecute-tainted, its pods evicted after 300 s
    cluster.run(cluster.now + 400 * S)
    cluster.remove_node("node-2")  # kubectl delete node: PodGC force-deletes what is left bound to it
    cluster.run(cluster.now + 120 * S)
    cluster.submit(Delete("deployments", "default", "storefront"))  # the garbage collector removes the rest
    cluster.run(cluster.now + 60 * S)

    assert [r for r in cluster.audit.records if r.code in (401, 403)] == []
    seen = _requests_by_user(cluster)
    sa = service_account_name
    assert {("create", "replicasets"), ("update", "deployments/status")} <= seen[sa("deployment-controller")]
    assert {("create", "pods"), ("update", "replicasets/status")} <= seen[sa("replicaset-controller")]
    assert ("create", "endpoints") in seen[sa("endpoint-controller")]
    # node IPAM, node lifecycle and taint eviction share node-controller, as upstream
    assert {("patch", "nodes"), ("update", "nodes/status"), ("delete", "pods")} <= seen[sa("node-controller")]
    assert ("delete", "pods") in seen[sa("pod-garbage-collector")]
    assert ("delete", "replicasets") in seen[sa("generic-garbage-collector")]
    # the controller manager's own identity is the shared informers' (watches and lists from the watch cache are
    # off the audit trail: what the controllers sent shows them) and its leader election's: its Lease, and the
    # LeaderElection Events it records
    assert {(verb, resource) for verb, resource in seen.get(KCM, set()) if resource != "leases"} <= {
        ("list", resource) for _, resource in seen[KCM]} | {("create", "events")}
    assert ("update", "leases") in seen[KCM]
    # the process's shared informers list and watch as the controller manager, for every controller; a controller
    # sends only its own requests, as its service account, and watches nothing itself
    assert set(sent) <= set(cluster.controller_manager) and SHARED_INFORMERS in sent
    assert sent.pop(SHARED_INFORMERS) == {("list", KCM_TOKEN), ("watch", KCM_TOKEN)}
    assert len(sent) >= 6
    for controller, requests in sorted(sent.items()):
        own = service_account_token(type(cluster.loop.components[controller]).service_account)
        assert {token for verb, token in requests} == {own}, controller
        assert "watch" not in {verb for verb, token in requests}, controller


def _as(cluster: Cluster, token: str, verb: str, resource: str, namespace: str = "", name: str = "",
        subresource: str = "", body=None):
    replica = cluster.replicas[0]
    request = Request(-7000 - len(cluster.audit.records), verb, resource, namespace, name, subresource, body, token)
    return replica.pipeline.handle(request, now=cluster.now, replica=replica.name)


def test_a_controller_is_refused_what_its_role_does_not_grant():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(20 * S)
    node = cluster.get("nodes", "", "node-1")
    refused = _as(cluster, service_account_token("deployment-controller"), "delete", "nodes", name="node-1")
    assert refused.code == 403
    assert ('User "system:serviceaccount:kube-system:deployment-controller" cannot delete resource "nodes"'
            in refused.body.message)
    assert _as(cluster, service_account_token("pod-garbage-collector"), "get", "pods", "default", "x").code == 403
    # the controller manager's own identity is the shared informers': it may list nodes, not write their status
    assert _as(cluster, "controller-manager-token", "list", "nodes").code == 200
    assert _as(cluster, "controller-manager-token", "update", "nodes", name="node-1", subresource="status",
               body=node).code == 403
    assert _as(cluster, service_account_token("node-controller"), "update", "nodes", name="node-1",
               subresource="status", body=node).code == 200
