"""A hot loop paced as client-go paces it. The deployment controller's Deployment informer lags 30 s behind
(its API server's link to it is slow) while its ReplicaSet informer, on the other replica, is current, and
the Deployment is deleted: for 30 s the controller recreates the ReplicaSet the garbage collector deletes, as
upstream does. A real controller does that at most as fast as its client's rate limiter lets it (20 requests a
second, 30 at once: kube-controller-manager's --kube-api-qps and --kube-api-burst). Without the limiter the
model's controllers made thousands of requests in those 30 s, and the watch events they caused queued up
behind the hot loop faster than the API servers' links drained them (`kmodel check --profile campaign --seed
2` then failed settles 600 s later with 16,557 watch events still queued)."""

from __future__ import annotations

from kmodel.apiserver.wire import Request
from kmodel.checker.actions import run_fairly
from kmodel.client.rate_limiter import CONTROLLER_MANAGER_LIMIT
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.loop import BreakStream, SlowLink

from .test_seed_scenarios import S, manifest

LAG_MS = 30 * S


def watch_endpoints(cluster: Cluster, component: str) -> dict[str, tuple[str, str]]:
    client = cluster.loop.components[component].client
    return {stream: (w.request.resource, w.endpoint) for stream, w in client._watches.items()}  # noqa: SLF001


def test_a_controller_recreating_what_the_garbage_collector_deletes_goes_no_faster_than_its_rate_limit():
    cluster = Cluster(ClusterConfig(nodes=3, apiservers=2))
    cluster.run(15 * S)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    # the ReplicaSet watch moves to the other replica; the Deployment watch stays, behind a slow link
    [rs_stream] = [s for s, (res, _) in watch_endpoints(cluster, "controller/deployment").items()
                   if res == "replicasets"]
    cluster.loop.step(BreakStream(rs_stream))
    cluster.run(cluster.now + 5 * S)
    endpoints = {res: ep for res, ep in watch_endpoints(cluster, "controller/deployment").values()}
    assert endpoints["replicasets"] != endpoints["deployments"]
    sent: list[int] = []
    cluster.loop.set_delivery_tap(lambda msg: sent.append(cluster.now) if (
        msg.src == "controller/deployment" and type(msg.payload) is Request) else None)
    cluster.loop.step(SlowLink(endpoints["deployments"], "controller/deployment", LAG_MS))
    start, first = cluster.now, len(cluster.audit.records)
    cluster.submit(Delete("deployments", "default", "storefront"))
    run_fairly(cluster, start + LAG_MS + 60 * S)

    records = cluster.audit.records[first:]
    recreated = [r for r in records if r.verb == "create" and r.resource == "replicasets"]
    assert len(recreated) >= 20  # the hot loop did happen, for the whole lag
    assert max(r.time for r in recreated) >= start + LAG_MS - 1 * S
    # ... and at no time faster than the bucket allows: burst + qps × the window, for every window
    interval_ms = 1000 // CONTROLLER_MANAGER_LIMIT.qps
    for i in range(len(sent)):
        for j in range(i, len(sent)):
            assert j - i + 1 <= CONTROLLER_MANAGER_LIMIT.burst + (sent[j] - sent[i]) // interval_ms, (i, j)
    # once the informer catches up the loop ends: nothing of storefront is left
    assert not cluster.objects("deployments") and not cluster.objects("replicasets")
    assert not [p for p in cluster.objects("pods") if p.metadata.name.startswith("storefront")]
