"""The second etcd client's deeper requests (kmodel/checker/etcd_client_actions.py): compare-and-swaps that lose,
deletes of nothing, compares and branches etcd refuses, value compares on a /registry object, and watches kept
open across the API servers' writes. Each gets etcd's answer (the store's, which tests/store checks against a
real etcd), and none writes a revision."""

from __future__ import annotations

import itertools

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment
from kmodel.checker.etcd_client_actions import (
    CAS_ELSE, CAS_READ, DELETES, GUARDS, KEPT_WATCHES, NODES, OWN_KEY, OWN_PREFIX, PAST, RANGE_NAMES, ROLES, SWAPS,
    WATCH_STARTS,
    EtcdCas, EtcdCompact, EtcdDelete, EtcdRange, EtcdTxn, EtcdWatch, kept_watches, revision_at,
)
from kmodel.store import errors
from kmodel.store.types import DeleteRangeResponse, RangeResponse, TxnResponse

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply


@pytest.fixture()
def web() -> Cluster:
    """Two nodes running Deployment web (2 replicas), a cluster of each test's own (the client's kept watches are
    the store's)."""
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 2).apply(cluster)
    cluster.run(20_000)
    return cluster


def _answer(cluster, action):
    """Apply `action`; the store's history entries it added: (request, response or StoreError)."""
    before = len(cluster.store.history)
    action.apply(cluster)
    return list(cluster.store.history[before:])


def _write(cluster):
    """An API server's write: kubectl apply of a ConfigMap, through the whole cluster."""
    node = cluster.nodes[0]
    cluster.submit(Apply({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"cm-{cluster.store.revision}", "namespace": "default"},
                          "data": {"node": node}}))
    cluster.loop.run_fair(cluster.now + 2_000)


def test_a_compare_and_swap_of_a_block_that_is_gone_loses_and_reads_it(web):
    store = web.store
    [(_, r)] = _answer(web, EtcdCas("mod", "put", "get"))
    assert isinstance(r, TxnResponse) and not r.succeeded and r.responses[0].kvs == []
    [(_, r)] = _answer(web, EtcdCas("value", "delete", "get-at-read"))
    assert not r.succeeded and isinstance(r.responses[0], RangeResponse)
    EtcdCompact("past").apply(web)
    [(_, r)] = _answer(web, EtcdCas("mod", "put", "get-at-read"))  # read 5 back: the compaction's revision
    assert not r.succeeded
    assert _answer(web, EtcdCas("mod", "put", "get-at-read", "compacted"))[0][1] == errors.compacted()


def test_a_delete_of_nothing_deletes_nothing_and_one_of_no_key_is_refused(web):
    [(_, r)] = _answer(web, EtcdDelete("own-prefix", prev_kv=True))
    assert isinstance(r, DeleteRangeResponse) and r.deleted == 0 and r.header_revision == web.store.revision
    assert _answer(web, EtcdDelete("no-key"))[0][1] == errors.empty_key()


def test_refused_compares_and_branches_and_a_value_compare_on_an_object(web):
    assert _answer(web, EtcdTxn("no-key"))[0][1] == errors.empty_key()
    assert _answer(web, EtcdTxn("own-key", "VERSION", "LESS", then="read", otherwise="no-key"))[0][1] == \
        errors.empty_key()
    assert _answer(web, EtcdTxn("own-key", then="put-deleted-key"))[0][1] == errors.duplicate_key()
    # a failed compare runs the else-branch, whose read of a future revision etcd refuses (it checks only the
    # revisions of the branch it runs: the same read in the then-branch not taken is no error)
    assert _answer(web, EtcdTxn("own-key", "MOD", "EQUAL", "other", "read-future", "read-future"))[0][1] == \
        errors.future_revision()
    [(_, r)] = _answer(web, EtcdTxn("own-key", "MOD", "EQUAL", "current", "read", "read-future"))
    assert isinstance(r, TxnResponse) and r.succeeded
    # a value compare on a /registry object: equal to what is there, and not equal to other bytes
    [(_, r)] = _answer(web, EtcdTxn("registry-key", "VALUE", "EQUAL", "current", "read", key=2))
    assert r.succeeded
    [(_, r)] = _answer(web, EtcdTxn("registry-key", "VALUE", "NOT_EQUAL", "other", "read", key=2))
    assert r.succeeded
    [(_, r)] = _answer(web, EtcdTxn("registry-key", "VALUE", "EQUAL", "other", "read", key=2))
    assert not r.succeeded


def test_a_kept_watch_gets_the_writes_that_come_and_the_oldest_goes_when_a_third_is_kept(web):
    store = web.store
    EtcdWatch("registry", keep=True).apply(web)
    EtcdWatch("nodes", "ahead", keep=True).apply(web)
    first, second = kept = list(kept_watches(store))
    assert len(kept) == KEPT_WATCHES and store.watcher(second).min_revision == store.revision + PAST
    _write(web)
    assert store.watcher(first).pending  # the ConfigMap's write reached the registry watch
    EtcdRange("own-key").apply(web)  # every request first reads what the kept watches were sent
    assert store.watcher(first).pending == []
    EtcdWatch("own-prefix", keep=True).apply(web)
    assert kept_watches(store) == [second, first + 2] and store.watcher(first) is None  # cancelled, taken, forgotten


def test_a_kept_watch_cancelled_by_compaction_is_not_kept(web):
    store = web.store
    EtcdCompact("past").apply(web)
    EtcdWatch("registry", "compacted", keep=True).apply(web)
    assert kept_watches(store) == []


def test_no_deeper_request_writes_a_revision(web):
    store = web.store
    revision, digest = store.revision, store.digest()
    actions = [EtcdCas(*fields) for fields in itertools.product(GUARDS, SWAPS, CAS_ELSE, CAS_READ)]
    actions += [EtcdDelete(over, prev_kv) for over in DELETES for prev_kv in (False, True)]
    actions += [EtcdTxn(compared, target, result, expect, "read", key=k)
                for compared, target, result, expect, k in itertools.product(
                    ("registry-key", "no-key"), ("VALUE",), ("EQUAL", "NOT_EQUAL", "LESS", "GREATER"),
                    ("current", "other"), range(4))]
    actions += [EtcdTxn("own-key", then=then, otherwise=otherwise)
                for then, otherwise in (("put-deleted-key", "read"), ("read", "no-key"))]
    actions += [EtcdWatch(over, start, prev_kv, False, keep)
                for over, start, prev_kv, keep in itertools.product(RANGE_NAMES[:-1], WATCH_STARTS, (False, True),
                                                                   (False, True))]
    for action in actions:
        action.apply(web)
    assert (store.revision, store.digest()) == (revision, digest)
    assert store.peek(OWN_KEY) == [] and store.peek(OWN_PREFIX, "/calico/ipam/v20") == []


def test_the_own_prefix_and_the_roles_prefix_share_a_length():
    """The watch index groups prefixes by length: a watch of each at once is two prefixes of one length."""
    assert len(OWN_PREFIX) == len(ROLES) and OWN_PREFIX != ROLES


def test_a_limited_read_of_the_nodes_finds_more_than_its_limit(web):
    """The Nodes are stored under /registry/minions/ (the node registry's prefix): a read of them finds both
    nodes, so a limit of 1 says there is more."""
    assert NODES == "/registry/minions/"
    [(_, r)] = _answer(web, EtcdRange("nodes", limit=1))
    assert isinstance(r, RangeResponse) and len(r.kvs) == 1 and r.more and r.count == 2


def test_a_read_of_every_key_is_the_whole_keyspace(web):
    """`etcdctl get "" --prefix`: clientv3 sends key "\\0" with range_end "\\0", every key; a watch of it
    gets every write."""
    [(request, r)] = _answer(web, EtcdRange("every-key", count_only=True))
    assert (request.key, request.range_end) == ("\0", "\0")
    assert r.count == len(web.store.peek("\0", "\0")) > len(web.store.peek("/registry/", "/registry0")) - 1 > 0
    EtcdWatch("every-key", keep=True).apply(web)
    [watch_id] = kept_watches(web.store)
    _write(web)
    assert web.store.watcher(watch_id).pending


def test_a_compare_over_every_node_fails_on_the_first_node_that_differs(web):
    """A compare with a range_end holds only when every key in it passes: the first Node's mod revision is not
    the second's, so EQUAL to the first's fails, as GREATER than the first's create revision does; no Node is
    attached to a lease, so LEASE EQUAL 0 holds for each."""
    [(_, r)] = _answer(web, EtcdTxn("nodes", "MOD", "EQUAL", "current", "read"))
    assert isinstance(r, TxnResponse) and not r.succeeded
    [(_, r)] = _answer(web, EtcdTxn("nodes", "CREATE", "GREATER", "current", "read"))
    assert not r.succeeded  # the first Node is not created after itself
    [(_, r)] = _answer(web, EtcdTxn("nodes", "LEASE", "EQUAL", "current", "read"))
    assert r.succeeded  # no Node is attached to a lease
    [(request, r)] = _answer(web, EtcdTxn("nodes", "VALUE", "LESS", "current", "read"))
    assert request.compare[0].key == OWN_KEY and not r.succeeded  # a value is not ordered: the client's own key


def test_the_new_actions_round_trip_and_shrink():
    for action in (EtcdCas("value", "delete", "get-at-read", "compacted"), EtcdDelete("own-prefix", True),
                   EtcdWatch("nodes", "ahead", True, False, True), EtcdTxn("no-key", otherwise="no-key")):
        assert action_from_json(action.to_json()) == action
        assert list(action.simpler())
    assert EtcdWatch("nodes", "ahead", keep=True).name == "etcdctl watch nodes --rev ahead (kept open)"

    class Store:
        revision, compact_revision = 50, 20

    assert [revision_at(Store(), k) for k in WATCH_STARTS] == [0, 45, 19, 20, 55]
