"""The node IPAM controller in a cluster: upstream's allocation order, release, exhaustion, restarts."""

from __future__ import annotations

from kmodel.cluster import ClusterConfig
from kmodel.cluster.cluster import Cluster
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.nodeipam import NAME
from kmodel.objects import Node, ObjectMeta


def node(name: str) -> Node:
    return Node(metadata=ObjectMeta(name=name))


def cidrs(c: Cluster) -> dict[str, str]:
    return {n.metadata.name: n.spec.pod_cidr for n in c.objects("nodes")}


def make_cluster(**kw) -> Cluster:
    return Cluster(ClusterConfig(components=("nodeipam",), **kw))


def test_nodes_get_blocks_in_order_and_both_fields():
    c = make_cluster()
    c.apply([node(f"n{i}") for i in range(4)])
    c.run(2_000)
    assert cidrs(c) == {"n0": "10.244.0.0/24", "n1": "10.244.1.0/24", "n2": "10.244.2.0/24", "n3": "10.244.3.0/24"}
    assert all(n.spec.pod_cidrs == (n.spec.pod_cidr,) for n in c.objects("nodes"))


def test_release_on_delete_and_reuse_only_after_wrap():
    # 10.0.0.0/22 with /24 blocks: the cidrset vector, through the controller
    c = make_cluster(cluster_cidr="10.0.0.0/22")
    c.apply([node("a"), node("b"), node("c")])
    c.run(2_000)
    assert cidrs(c) == {"a": "10.0.0.0/24", "b": "10.0.1.0/24", "c": "10.0.2.0/24"}
    c.submit(Delete("nodes", "", "a"))
    c.run(3_000)
    c.apply([node("d")])
    c.run(4_000)
    assert cidrs(c)["d"] == "10.0.3.0/24"  # the freed block waits for the wrap
    c.apply([node("e")])
    c.run(5_000)
    assert cidrs(c)["e"] == "10.0.0.0/24"  # released on delete, reused after the wrap


def test_exhaustion_records_cidr_not_available_and_recovers_after_a_release():
    c = make_cluster(cluster_cidr="10.0.0.0/23")
    c.apply([node("a"), node("b"), node("c")])
    c.run(2_000)
    assert cidrs(c) == {"a": "10.0.0.0/24", "b": "10.0.1.0/24", "c": ""}
    events = [e for e in c.objects("events") if e.reason == "CIDRNotAvailable"]
    assert events and events[0].message == "Node c status is now: CIDRNotAvailable"
    assert events[0].involved_object.kind == "Node" and events[0].source.component == "cidrAllocator"
    ctrl = c.loop.components[NAME]
    assert ctrl.errors[0] == ("failed to allocate cidr from cluster cidr at idx:0: CIDR allocation failed; "
                              "there are no remaining CIDRs left to allocate in the accepted range")
    c.submit(Delete("nodes", "", "a"))
    c.run(30_000)  # the rate-limited retries of c find the freed block
    assert cidrs(c)["c"] == "10.0.0.0/24"


def test_no_duplicate_cidr_after_a_restart():
    c = make_cluster()
    c.apply([node("a"), node("b")])
    c.run(2_000)
    c.crash(NAME)
    c.apply([node("c")])
    c.run(3_000)
    c.restart(NAME)
    c.apply([node("d")])
    c.run(6_000)
    got = cidrs(c)
    assert sorted(got.values()) == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"]
    assert got["a"] == "10.244.0.0/24" and got["b"] == "10.244.1.0/24"


def test_restart_occupies_before_allocating_even_with_a_lagging_informer():
    """The startup LIST is consistent; until it is answered, no allocation happens."""
    c = make_cluster()
    c.apply([node("a")])
    c.run(1_000)
    c.crash(NAME)
    c.restart(NAME)
    ctrl = c.loop.components[NAME]
    assert not ctrl.initial_listed and not ctrl.has_work()
    c.apply([node("b")])
    c.run(3_000)
    assert ctrl.cidrs.allocated == 2 and cidrs(c) == {"a": "10.244.0.0/24", "b": "10.244.1.0/24"}
