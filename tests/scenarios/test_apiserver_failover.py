"""One API server of two crashes: a real cluster's clients see their connections reset and carry on through the
other replica at once, so nothing a user or operator looks at changes. (With clients waiting out a 60 s timeout
instead, a kubelet whose Lease renewal was in flight to the crashed replica went 60 s without a heartbeat, past
the 40 s grace period: its node was marked Unknown and tainted unreachable.)"""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.loop import Crash

from .test_seed_scenarios import S, condition, manifest, pods_of


def lease_renewal_in_flight(cluster: Cluster, replica: str):
    """The kubelet whose Lease update is on its way to `replica`, or None."""
    net = cluster.network
    for src, dst in net.nonempty_links():
        if src.startswith("kubelet/") and dst == replica:
            if any(getattr(m.payload, "resource", "") == "leases" for m in net.in_flight(src, dst)):
                return src
    return None


def test_a_replica_crashing_with_a_lease_renewal_in_flight_costs_the_node_nothing():
    cluster = Cluster(ClusterConfig(nodes=3, apiservers=2))
    cluster.run(15 * S)
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(cluster.now + 30 * S)
    while lease_renewal_in_flight(cluster, "apiserver-0") is None:
        cluster.loop.run_fair(cluster.now + 60 * S, max_events=1)
    kubelet = lease_renewal_in_flight(cluster, "apiserver-0")
    node = kubelet.split("/")[1]
    crashed_at, start = cluster.now, len(cluster.audit.records)
    cluster.loop.step(Crash("apiserver-0"))
    cluster.run(crashed_at + 120 * S)
    records = cluster.audit.records[start:]

    renewals = [r for r in records if r.user == f"system:node:{node}" and r.resource == "leases"
                and r.verb == "update" and r.code == 200]
    assert renewals[0].replica == "apiserver-1"
    assert renewals[0].time - crashed_at < 1 * S  # the lease controller's retry, through the other replica
    assert max(b.time - a.time for a, b in zip(renewals, renewals[1:])) <= 10 * S
    # so node lifecycle never marks it, and nothing is tainted or evicted
    assert not [r for r in records
                if r.resource == "nodes" and r.user == "system:serviceaccount:kube-system:node-controller"]
    for n in cluster.objects("nodes"):
        assert condition(n, "Ready").status == "True" and not n.spec.taints, n.metadata.name
    assert not [r for r in records if r.resource == "pods" and r.verb == "delete"]
    assert sorted(p.status.phase for p in pods_of(cluster, "storefront")) == ["Running"] * 3
