"""The second etcd client (kmodel/checker/etcd_client_actions.py, etcd_client_rules.py): each request gets etcd's
answer (the store's, which tests/store checks against a real etcd), a refused one its error, none of them writes
a revision, a watch is gone once taken; the actions round-trip through JSON and shrink; and the rule sends them
on a machine, recorded in its trace."""

from __future__ import annotations

import itertools

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.etcd_client_actions import (
    COMPARED, EXPECT, OTHERWISE, OWN_KEY, RANGE_NAMES, RESULTS, REVISIONS, TARGETS, THEN, EtcdCas, EtcdCompact,
    EtcdDelete, EtcdRange, EtcdTxn, EtcdWatch, revision_at,
)
from kmodel.checker.etcd_client_rules import RULE_NAMES
from kmodel.store import errors
from kmodel.store.types import RangeResponse, TxnResponse, WatchCreated

from tests.checker.conftest import SmallMachine
from tests.checker.test_patch_rules import web  # noqa: F401 (a fixture: two nodes, web, its Service, debug-1)

#: one of each action (tests/checker/test_actions.py checks every kind has one and round-trips them)
EXAMPLES = [EtcdRange("registry", "past", 2, True, False), EtcdWatch("own-prefix", "compacted", True, True),
            EtcdTxn("registry-key", "VERSION", "LESS", "other", "read-past", "read", 3), EtcdCompact("future"),
            EtcdCas("value", "delete", "get-at-read", "compacted"), EtcdDelete("own-prefix", True)]


def _answer(cluster, action):
    """Apply `action`; the store's history entries it added: (request, response or StoreError)."""
    before = len(cluster.store.history)
    action.apply(cluster)
    return list(cluster.store.history[before:])


def test_reads_get_etcds_answers_with_a_limit_keys_only_count_only(web):
    store = web.store
    registry = len(store.peek("/registry/", "/registry0"))
    [(_, r)] = _answer(web, EtcdRange("registry", limit=2, keys_only=True))
    assert isinstance(r, RangeResponse) and len(r.kvs) == 2 and r.more and r.count == registry
    assert all(kv.value is None for kv in r.kvs)
    [(_, r)] = _answer(web, EtcdRange("registry", count_only=True))
    assert r.kvs == [] and r.count == registry
    [(_, r)] = _answer(web, EtcdRange("pods-from-key"))
    assert r.kvs and all(kv.key >= "/registry/pods/" for kv in r.kvs)
    [(_, r)] = _answer(web, EtcdRange("empty"))
    assert r.kvs == [] and r.count == 0
    [(_, r)] = _answer(web, EtcdRange("own-prefix", at="past"))
    assert r.kvs == []
    assert _answer(web, EtcdRange("no-key"))[0][1] == errors.empty_key()
    assert _answer(web, EtcdRange("registry", at="future"))[0][1] == errors.future_revision()
    EtcdCompact("past").apply(web)
    assert _answer(web, EtcdRange("registry", at="compacted"))[0][1] == errors.compacted()


def test_compaction_is_etcds_and_refused_at_or_below_the_last_or_past_the_newest(web):
    store = web.store
    [(_, r)] = _answer(web, EtcdCompact("past"))
    assert store.compact_revision == store.revision - 5
    assert _answer(web, EtcdCompact("compacted"))[0][1] == errors.compacted()
    assert _answer(web, EtcdCompact("future"))[0][1] == errors.future_revision()


def test_a_watch_is_answered_then_cancelled_and_forgotten(web):
    store = web.store
    entries = _answer(web, EtcdWatch("registry", "past", prev_kv=True, progress=True))
    created = entries[0][1]
    assert isinstance(created, WatchCreated) and created.watch_id >= 0
    assert store.watcher(created.watch_id) is None  # cancelled and taken: etcd forgot it
    refused = _answer(web, EtcdWatch("empty"))[0][1]
    assert refused.watch_id == -1 and store.take_watch_responses(-1) == []  # its refusal was taken
    EtcdCompact("past").apply(web)
    created = _answer(web, EtcdWatch("own-prefix", "compacted"))[0][1]
    assert store.watcher(created.watch_id) is None


def test_txns_compare_every_target_by_every_result_and_run_either_branch(web):
    [(_, r)] = _answer(web, EtcdTxn("registry-key", "MOD", "EQUAL", "current", "read", "read"))
    assert isinstance(r, TxnResponse) and r.succeeded
    [(_, r)] = _answer(web, EtcdTxn("registry-key", "MOD", "EQUAL", "other", "read", "read-past"))
    assert not r.succeeded and len(r.responses) == 2
    [(_, r)] = _answer(web, EtcdTxn("own-key", "CREATE", "EQUAL", "current", "delete-own"))
    assert r.succeeded and r.responses[0].deleted == 0  # the absent key's create revision is 0
    [(_, r)] = _answer(web, EtcdTxn("own-key", "VALUE", "EQUAL", "current"))
    assert not r.succeeded  # etcd fails a value compare on a missing key
    for then, error in (("duplicate-put", errors.duplicate_key()), ("put-in-delete", errors.duplicate_key()),
                        ("too-many", errors.too_many_ops()), ("no-key", errors.empty_key()),
                        ("read-future", errors.future_revision())):
        assert _answer(web, EtcdTxn("own-key", then=then))[0][1] == error, then


def test_no_request_of_the_second_client_writes_a_revision(web):
    """Every txn shape, read and watch leaves the store's revision and writes as they were (the API server owns
    /registry; the invariants take every revision for its write)."""
    store = web.store
    revision, digest = store.revision, store.digest()
    actions = [EtcdTxn(*fields) for fields in itertools.product(COMPARED, TARGETS, RESULTS, EXPECT, THEN[:3],
                                                                OTHERWISE)]
    actions += [EtcdTxn("own-key", then=then) for then in THEN]
    actions += [EtcdRange(*fields) for fields in itertools.product(RANGE_NAMES, REVISIONS, (0, 2), (False, True))]
    actions += [EtcdWatch(*fields) for fields in itertools.product(RANGE_NAMES[:-1], REVISIONS[:3], (False, True),
                                                                   (False, True))]
    for action in actions:
        action.apply(web)
    assert (store.revision, store.digest()) == (revision, digest)
    assert store.peek(OWN_KEY) == []


def test_the_actions_round_trip_shrink_toward_a_read_of_the_own_key_and_refuse_unknown_values():
    txn = EtcdTxn("own-prefix", "LEASE", "GREATER", "other", "too-many", "read-past", 7)
    assert txn.name == "etcdctl txn: if own-prefix LEASE GREATER other then too-many else read-past"
    assert EtcdRange("registry", "past", 2, True).name == "etcdctl get registry --rev past --limit 2 --keys-only"
    for action in (txn, EtcdRange("registry", "past", 2, True, True), EtcdWatch("pods-from-key", "past", True, True),
                   EtcdCompact("future")):
        assert action_from_json(action.to_json()) == action
        assert list(action.simpler())
    assert EtcdRange("own-key") in list(EtcdRange("registry").simpler())
    with pytest.raises(ValueError, match="over 'no-key' is not one of"):
        EtcdWatch("no-key")
    with pytest.raises(ValueError, match="then 'write' is not one of"):
        action_from_json({"name": "etcd-txn", "compared": "own-key", "then": "write"})

    class Store:
        revision, compact_revision = 50, 20

    assert [revision_at(Store(), k) for k in REVISIONS] == [0, 45, 19, 51]


def test_the_rule_sends_the_second_clients_requests_and_the_trace_records_them():
    machine = SmallMachine()
    before = dict(machine.stats.rules)  # the counts are the class's, shared by the machines other tests made
    requests = [EtcdRange("registry", "past", 1, True), EtcdWatch("own-prefix", "past", True, True),
                EtcdTxn("registry-key", "VERSION", "GREATER"), EtcdCompact("past"), EtcdCas("value"),
                EtcdDelete("own-prefix")]
    for request in requests:
        machine.etcd_client(request)
    assert [a for a in machine.session.actions if type(a) in RULE_NAMES] == requests
    assert all(machine.stats.rules.get(name, 0) - before.get(name, 0) == 1 for name in RULE_NAMES.values())
