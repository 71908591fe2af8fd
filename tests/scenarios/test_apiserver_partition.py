"""One API server of two is cut off from everything and stays up. client-go's HTTP/2 health check gives up on
every connection to it within 45 s (kmodel.loop.health), so every informer watches again through the other
replica and the cluster keeps reconciling while the partition lasts. (Without the check, each watch on the cut-off
replica hung until the heal: a scale made meanwhile reached no controller watching there.)"""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig, Scale
from kmodel.loop import Partition
from kmodel.controllers.shared_informers import SHARED_INFORMERS

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
    assert SHARED_INFORMERS in watching_there and "scheduler" in watching_there

    cut_at = cluster.now
    cluster.loop.step(Partition((CUT,)))
    # each client gives up 15 s after its first PING since the cut, which comes at most 30 s after it
    pings = {client: ping for (client, peer), ping in cluster.loop.health.armed.items() if peer == CUT}
    assert set(watching_there) <= set(pings)
    assert all(cut_at <= ping <= cut_at + 30 * S for ping in pings.values())
    # the cut-off replica checks its connection to etcd only (its etcd client's keepalive), not its clients'
    assert [peer for (client, peer) in cluster.loop.health.armed if client == CUT] == ["etcd"]
    # kube-controller-manager and kube-scheduler elect (the default, a lone one too): their renewals through the
    # cut-off replica time out at the 10 s renew deadline, they lose their Leases and exit (their watches with
    # them) and start again; every other client is still watching there until its health check gives up
    cluster.run(cut_at + 11 * S)
    electing = [SHARED_INFORMERS, "scheduler"]
    assert not set(electing) & set(clients_on(cluster, CUT))
    cluster.run(cut_at + 14 * S)
    assert clients_on(cluster, CUT) == [c for c in watching_there if c not in electing]
    cluster.run(cut_at + 46 * S)  # (+ 800 ms for an informer relisting after the lost connection's error)
    assert clients_on(cluster, CUT) == []
    assert not [key for key in cluster.loop.health.dialing if key[0] == CUT]  # its answers to clients dial nothing

    cluster.submit(Scale("deployments", "default", "storefront", 5))
    # the restarted kube-controller-manager leads again once the old Lease expired; each of its controllers'
    # fresh clients dials the cut-off replica first and fails over after the 30 s dial timeout (about 93 s)
    cluster.run(cluster.now + 120 * S)
    assert cluster.network.partitioned  # still cut off
    running = [p for p in pods_of(cluster, "storefront") if p.status.phase == "Running"]
    assert len(running) == 5


def test_a_kubelet_renewing_through_a_cut_off_replica_renews_through_the_other_within_its_heartbeat_timeout():
    # the kubelet's heartbeat client times out after min(nodeStatusUpdateFrequency, lease duration) = 10 s, so the
    # renewal goes through apiserver-1 well within node lifecycle's 40 s grace period
    from .test_apiserver_failover import lease_renewal_in_flight
    from .test_seed_scenarios import condition

    cluster = Cluster(ClusterConfig(nodes=3, apiservers=2))
    cluster.run(15 * S)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    while lease_renewal_in_flight(cluster, CUT) is None:
        cluster.loop.run_fair(cluster.now + 60 * S, max_events=1)
    node = lease_renewal_in_flight(cluster, CUT).split("/")[1]
    cut_at, start = cluster.now, len(cluster.audit.records)
    cluster.loop.step(Partition((CUT,)))
    cluster.run(cut_at + 120 * S)
    records = cluster.audit.records[start:]
    renewals = [r for r in records if r.user == f"system:node:{node}" and r.resource == "leases"
                and r.verb == "update" and r.code == 200]
    assert renewals[0].replica == "apiserver-1"
    assert 10 * S <= renewals[0].time - cut_at <= 11 * S  # the timeout, then the retry 200 ms later
    assert max(b.time - a.time for a, b in zip(renewals, renewals[1:])) <= 10 * S
    # no node written by the node controllers (kube-controller-manager, which lost its Lease through the cut-off
    # replica and started again, lists the nodes again: a read)
    assert not [r for r in records
                if r.resource == "nodes" and r.user == "system:serviceaccount:kube-system:node-controller"
                and r.verb not in ("get", "list", "watch")]
    for n in cluster.objects("nodes"):
        assert condition(n, "Ready").status == "True" and not n.spec.taints, n.metadata.name


def test_a_kubelet_cut_off_from_every_replica_closes_all_its_connections_on_its_second_failed_renewal():
    # onRepeatedHeartbeatFailure (closeAllConns): its watches end long before the health check would end them
    cluster = Cluster(ClusterConfig(nodes=2, apiservers=2))
    cluster.run(30 * S)
    kubelet = "kubelet/node-1"
    net = cluster.network
    watches = [s for s in net.open_streams() if net.stream_ends(s)[0] == kubelet]
    assert watches
    cut_at = cluster.now
    cluster.loop.step(Partition((kubelet,)))
    cluster.run(cut_at + 31 * S)  # two renewals timed out (10 s each, the second 200 ms after the first)
    assert all(net.stream_ends(s) is None for s in watches)
    gives_up = min(ping for (client, _), ping in cluster.loop.health.armed.items() if client == kubelet) + 15 * S
    assert gives_up > cluster.now  # before the health check gave up on either connection


def test_a_replica_checks_only_its_connection_to_etcd_not_its_clients():
    cluster = Cluster(ClusterConfig(nodes=1, apiservers=2))
    cluster.run(15 * S)
    kubelet = "kubelet/node-1"
    cluster.loop.step(Partition((kubelet,)))
    armed = cluster.loop.health.armed
    assert {client for (client, peer) in armed if peer != "etcd"} == {kubelet}  # the kubelet's own checks
    cluster.loop.step(Partition(("etcd",)))
    assert {(client, peer) for (client, peer) in cluster.loop.health.armed if peer == "etcd"} == {
        ("apiserver-0", "etcd"), ("apiserver-1", "etcd")}
