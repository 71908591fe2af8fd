"""A lagging Deployment watch and the garbage collector. kube-controller-manager's shared Deployment informer lags
30 s behind (its API server's link to it is slow) while its ReplicaSet informer, on the other replica, is
current, and the Deployment is deleted. The garbage collector and the deployment controller read the same
Deployment cache, so the collector learns of the deletion when the deployment controller does: no controller
recreates a ReplicaSet the collector deleted (with an informer per controller, the model's controllers once did,
for the whole lag, as fast as their rate limiter let them), and the Deployment's objects go once the informer
catches up. What a controller sends stays within its client's rate limit (20 a second, 30 at once:
kube-controller-manager's --kube-api-qps and --kube-api-burst)."""

from __future__ import annotations

from kmodel.apiserver.wire import Request
from kmodel.checker.actions import run_fairly
from kmodel.client.rate_limiter import CONTROLLER_MANAGER_LIMIT
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.loop import BreakStream, SlowLink

from .test_seed_scenarios import S, manifest

LAG_MS = 30 * S


def watch_endpoints(cluster: Cluster, component: str) -> dict[str, tuple[str, str]]:
    client = cluster.loop.components[component].client
    return {stream: (w.request.resource, w.endpoint) for stream, w in client._watches.items()}  # noqa: SLF001


def test_a_lagging_shared_deployment_informer_delays_the_collector_too_so_nothing_is_recreated():
    cluster = Cluster(ClusterConfig(nodes=3, apiservers=2))
    cluster.run(15 * S)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    # the ReplicaSet watch moves to the other replica; the Deployment watch stays, behind a slow link
    [rs_stream] = [s for s, (res, _) in watch_endpoints(cluster, SHARED_INFORMERS).items() if res == "replicasets"]
    cluster.loop.step(BreakStream(rs_stream))
    cluster.run(cluster.now + 5 * S)
    endpoints = {res: ep for res, ep in watch_endpoints(cluster, SHARED_INFORMERS).values()}
    assert endpoints["replicasets"] != endpoints["deployments"]
    sent: list[int] = []
    cluster.loop.set_delivery_tap(lambda msg: sent.append(cluster.now) if (
        msg.src == "controller/deployment" and type(msg.payload) is Request) else None)
    cluster.loop.step(SlowLink(endpoints["deployments"], SHARED_INFORMERS, LAG_MS))
    start, first = cluster.now, len(cluster.audit.records)
    cluster.submit(Delete("deployments", "default", "storefront"))
    run_fairly(cluster, start + LAG_MS + 60 * S)

    records = cluster.audit.records[first:]
    assert not [r for r in records if r.verb == "create" and r.resource == "replicasets"]
    deleted = [r for r in records if r.verb == "delete" and r.resource == "replicasets" and r.code < 300]
    assert deleted and min(r.time for r in deleted) >= start + LAG_MS - 1 * S  # once the informer caught up
    interval_ms = 1000 // CONTROLLER_MANAGER_LIMIT.qps
    for i in range(len(sent)):
        for j in range(i, len(sent)):
            assert j - i + 1 <= CONTROLLER_MANAGER_LIMIT.burst + (sent[j] - sent[i]) // interval_ms, (i, j)
    assert not cluster.objects("deployments") and not cluster.objects("replicasets")
    assert not [p for p in cluster.objects("pods") if p.metadata.name.startswith("storefront")]
