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


# -- the nodeipam-release-by-owner fix (kmodel.fixes): off by default, as upstream --------------------------

def _fixed_cluster(fixed: bool) -> Cluster:
    from kmodel.fixes import NODEIPAM_RELEASE_BY_OWNER

    return make_cluster(fixes=(NODEIPAM_RELEASE_BY_OWNER,) if fixed else ())


def _without_cidr(n: Node) -> Node:
    import attrs

    return attrs.evolve(n, spec=attrs.evolve(n.spec, pod_cidr="", pod_cidrs=()))


def test_a_tombstone_older_than_the_patch_releases_the_block_only_with_the_fix():
    from kmodel.client.indexer import DeletedFinalStateUnknown

    for fixed, left in ((False, 2), (True, 1)):
        c = _fixed_cluster(fixed)
        c.apply([node("a"), node("b")])
        c.run(2_000)
        ctrl = c.loop.components[NAME]
        stale = _without_cidr(c.get("nodes", "", "a"))  # the state from before nodeipam's patch
        ctrl._on_node_delete(c.now, DeletedFinalStateUnknown("a", stale), None)
        assert ctrl.cidrs.allocated == left, fixed


def test_with_the_fix_a_block_is_released_once_however_often_its_node_is_seen_gone():
    """Two blocks: a's block, released, goes to c; a seen gone again must not free it under c."""
    from kmodel.fixes import NODEIPAM_RELEASE_BY_OWNER

    c = make_cluster(cluster_cidr="10.0.0.0/23", fixes=(NODEIPAM_RELEASE_BY_OWNER,))
    c.apply([node("a"), node("b")])
    c.run(2_000)
    ctrl = c.loop.components[NAME]
    a = c.get("nodes", "", "a")
    ctrl._on_node_delete(c.now, a, None)
    assert ctrl.cidrs.allocated == 1
    c.apply([node("c")])
    c.run(30_000)
    assert cidrs(c)["c"] == a.spec.pod_cidr and ctrl.cidrs.allocated == 2
    ctrl._on_node_delete(c.now, a, None)  # seen gone again (a second tombstone): nothing more is released
    ctrl._release(a)  # nor by syncNode's release of a node being deleted
    assert ctrl.cidrs.allocated == 2 and ctrl.errors == []


def test_with_the_fix_a_new_node_of_the_same_name_first_releases_the_old_ones_block():
    """Names are unique at any one time: a record of the same name with another uid is a node that is gone."""
    c = _fixed_cluster(True)
    c.apply([node("a")])
    c.run(2_000)
    ctrl = c.loop.components[NAME]
    old = c.get("nodes", "", "a")
    ctrl._own("a", "another-uid", ("10.244.7.0/24",))
    assert ctrl.owners["a"] == ("another-uid", ("10.244.7.0/24",))
    assert ctrl.cidrs.allocated == 0  # old's 10.244.0.0/24 released (the test did not occupy .7)
    assert old.spec.pod_cidr == "10.244.0.0/24"


def test_with_the_fix_the_startup_list_nodes_gone_by_the_informer_sync_are_released():
    """The route upstream leaks on: a node in nodeipam's startup list, deleted before its informer's first list
    (so no delete ever reaches it). With the fix, the list after the informer's sync no longer has it, and its
    block is released."""
    import attrs

    from kmodel.apiserver.wire import ListResult, Response
    from kmodel.component import Out

    for fixed, left in ((False, 2), (True, 1)):
        c = _fixed_cluster(fixed)
        c.apply([node("a")])
        c.run(2_000)
        ctrl = c.loop.components[NAME]
        a = c.get("nodes", "", "a")
        ghost = attrs.evolve(a, metadata=attrs.evolve(a.metadata, name="ghost", uid="ghost-uid"),
                             spec=attrs.evolve(a.spec, pod_cidr="10.244.5.0/24", pod_cidrs=("10.244.5.0/24",)))
        out = Out()  # a startup list that still had `ghost`, handled as the loop would
        ctrl._on_listed(c.now, Response(0, 200, ListResult((a, ghost), "1")), out)
        c.loop._apply(NAME, out.effects)  # noqa: SLF001
        c.run(20_000)
        assert ctrl.cidrs.allocated == left, fixed
        assert ctrl.start_nodes == {} if fixed else True


# -- a Node a finalizer keeps after its delete: released by syncNode (1.31), or only once gone (the fix) ----------

def test_a_node_kept_by_a_finalizer_has_its_block_given_away_unless_the_fix_keeps_it_until_it_is_gone():
    """Two blocks. a is deleted while a finalizer keeps it: 1.31's syncNode releases its block at once, and the
    next node gets the block a still has; with nodeipam-release-only-on-delete (#128305) a keeps it, the new
    node waits (CIDRNotAvailable) and gets it once a is really gone."""
    from kmodel.cluster.kubectl import EditFinalizers
    from kmodel.fixes import NODEIPAM_RELEASE_ONLY_ON_DELETE

    for fixed in (False, True):
        c = make_cluster(cluster_cidr="10.0.0.0/23", fixes=(NODEIPAM_RELEASE_ONLY_ON_DELETE,) if fixed else ())
        c.apply([node("a"), node("b")])
        c.run(2_000)
        c.submit(EditFinalizers("nodes", "", "a", "example.com/hold"))
        c.run(3_000)
        c.submit(Delete("nodes", "", "a"))
        c.run(4_000)
        assert c.get("nodes", "", "a").metadata.deletion_timestamp is not None
        c.apply([node("c")])
        c.run(30_000)
        got = cidrs(c)
        assert got["a"] == "10.0.0.0/24", fixed
        assert got["c"] == ("" if fixed else "10.0.0.0/24"), fixed
        c.submit(EditFinalizers("nodes", "", "a", "example.com/hold", add=False))
        c.run(60_000)  # a goes; with the fix its block is released now and c's retries find it
        assert "a" not in cidrs(c) and cidrs(c)["c"] == "10.0.0.0/24", fixed
