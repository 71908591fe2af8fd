"""Store.history: the compact record of the API server's txn reads back exactly as the general path records it."""

from __future__ import annotations

import pytest

from kmodel.store import Compare, DeleteOp, PutOp, RangeOp, Store
from kmodel.store.history import History
from kmodel.store.types import PutResponse, TxnRequest, TxnResponse


def _general_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every txn take the general path (which records plain pairs)."""
    monkeypatch.setattr(Store, "_txn_one", lambda self, compare, success, failure: None)


def _workload(s: Store) -> list:
    """A mix of API-server-shaped txns (create, update, conflicts, prev_kv, a failure read) and other requests;
    returns the stored values, to check identity."""
    values = []
    for i in range(6):
        obj = ("pod", i)
        values.append(obj)
        s.txn((Compare(f"/p/{i % 3}", "CREATE", "EQUAL", 0),), (PutOp(f"/p/{i % 3}", obj),), ())  # 3 fail
    kv = s.range("/p/0").kvs[0]
    s.txn((Compare("/p/0", "MOD", "EQUAL", kv.mod_revision),), (PutOp("/p/0", "u1", prev_kv=True),), ())
    s.txn((Compare("/p/0", "MOD", "EQUAL", kv.mod_revision),), (PutOp("/p/0", "u2"),), ())  # conflict
    s.txn((Compare("/p/1", "VERSION", "GREATER", 0),), (PutOp("/p/1", "u3"),), (RangeOp("/p/1"),))
    s.txn([Compare("/p/1", "MOD", "EQUAL", 1)], [PutOp("/p/1", "u4")], [RangeOp("/p/1")])  # fails, reads
    s.txn((Compare("/p/2", "VALUE", "EQUAL", ("pod", 5)),), (PutOp("/p/3", "u5"),), ())  # compare another key
    s.txn([], [PutOp("/q", "x"), DeleteOp("/p/2")], [])
    s.put("/r", "y")
    return values


def test_compact_entries_read_back_as_the_general_path_records_them(monkeypatch: pytest.MonkeyPatch):
    fast = Store()
    _workload(fast)
    with monkeypatch.context() as m:
        _general_only(m)
        slow = Store()
        _workload(slow)
    assert isinstance(fast.history, History)
    assert any(len(e) != 2 for e in fast.history._entries)  # the fast path did record compact entries
    assert len(fast.history) == len(slow.history)
    for (freq, fres), (sreq, sres) in zip(fast.history, slow.history):
        assert (freq, fres) == (sreq, sres)
        assert type(freq) is type(sreq) and type(fres) is type(sres)
        if type(freq) is TxnRequest:
            assert [type(x) for x in freq.compare + freq.success + freq.failure] == [
                type(x) for x in sreq.compare + sreq.success + sreq.failure]
            assert [type(r) for r in fres.responses] == [type(r) for r in sres.responses]
            assert type(fres.responses) is list
    assert fast.history == slow.history and repr(fast.history) == repr(slow.history)


def test_a_compact_entry_is_built_once_and_shares_the_stored_objects():
    s = Store()
    obj = ("pod", 1)
    s.txn((Compare("/p", "CREATE", "EQUAL", 0),), (PutOp("/p", obj),), ())
    before = s.range("/p").kvs[0]
    s.txn((Compare("/p", "MOD", "EQUAL", before.mod_revision),), (PutOp("/p", "v2", prev_kv=True),), ())
    request, response = s.history[0]
    assert s.history[0] is s.history[0] and s.history[-3] is s.history[0]
    assert request == TxnRequest((Compare("/p", "CREATE", "EQUAL", 0, None),), (PutOp("/p", obj, False),), ())
    assert response == TxnResponse(2, True, [PutResponse(2, None)])
    assert request.success[0].value is obj  # the stored value itself, as the general path keeps it
    update = s.history[2][1]
    assert update.responses[0].prev_kv is before  # the previous KeyValue itself
    assert s.history[1:3] == [s.history[1], s.history[2]]
    assert list(s.history) == [s.history[i] for i in range(len(s.history))]
