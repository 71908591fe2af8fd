"""One API server of two is cut off from everything and stays up. client-go's HTTP/2 health check gives up on
every connection to it within 45 s (kmodel.loop.health), so every informer watches again through the other
replica and the cluster keeps reconciling while the partition lasts. (Without the check, each watch on the cut-off
replica hung until the heal: a scale made meanwhile reached no controller watching there.)"""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig, Scale
from kmodel.loop import Partition

from .test_seed_scenarios import S, manifest, pods_of

CUT = "apiserver-0"


def clients_on(cluster: Cluster, replica: str) -> list[str]:
    """The components with a watch stream open to `replica` (etcd's streams to it aside)."""
    net = cluster.network
    found = set()
    for stream in net.open_streams():
        opener, peer = net.stream_ends(stream)
        if peer == replica and opener != "etcd":
            found.add(opener)
    return sorted(found)


def test_every_watch_leaves_a_cut_off_replica_and_a_scale_converges_before_the_heal():
    cluster = Cluster(ClusterConfig(nodes=3, apiservers=2))
    cluster.run(15 * S)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    watching_there = clients_on(cluster, CUT)
    assert "controller/replicaset" in watching_there and "scheduler" in watching_there

    cut_at = cluster.now
    cluster.loop.step(Partition((CUT,)))
    # each client gives up 15 s after its first PING since the cut, which comes at most 30 s after it
    pings = {client: ping for (client, peer), ping in cluster.loop.health.armed.items() if peer == CUT}
    assert set(watching_there) <= set(pings)
    assert all(cut_at <= ping <= cut_at + 30 * S for ping in pings.values())
    cluster.run(cut_at + 14 * S)
    assert clients_on(cluster, CUT) == watching_there
    cluster.run(cut_at + 46 * S)  # (+ 800 ms for an informer whose quiet watch broke: its first backoff)
    assert clients_on(cluster, CUT) == []

    cluster.submit(Scale("deployments", "default", "storefront", 5))
    cluster.run(cluster.now + 30 * S)
    assert cluster.network.partitioned  # still cut off
    running = [p for p in pods_of(cluster, "storefront") if p.status.phase == "Running"]
    assert len(running) == 5
