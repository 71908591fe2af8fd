"""A replica's etcd_received log reads back exactly what it received, compact entries included."""

from __future__ import annotations

from kmodel.apiserver.etcd_log import EtcdLog
from kmodel.store import KeyEvent, PutOp, Store, WatchResponse, prefix_end


def _received() -> list[tuple]:
    """(stream, item) pairs as a replica receives them: a watch opened, single-event responses with prev_kv,
    a two-event revision, a delete, a progress notification and a cancel."""
    s = Store()
    wid = s.watch("/registry/", prefix_end("/registry/"), prev_kv=True)
    s.put("/registry/pods/a", "1")
    s.put("/registry/pods/a", "2")
    s.txn([], [PutOp("/registry/pods/b", "x"), PutOp("/registry/pods/c", "y")], [])
    s.delete_range("/registry/pods/a")
    s.request_progress(wid)
    s.cancel_watch(wid)
    responses = s.take_watch_responses(wid)
    assert [len(r.events) for r in responses] == [1, 1, 2, 1, 0, 0]
    return [("etcd-watch/a/1", 2)] + [("etcd-watch/a/1", r) for r in responses]


def test_the_log_reads_back_what_was_received():
    received = _received()
    log = EtcdLog()
    for stream, item in received:
        if isinstance(item, int):
            log.append((stream, item))
        else:
            log.record(stream, item)
    assert sum(len(e) != 2 for e in log._entries) == 3  # the single-event responses are kept compact
    assert len(log) == len(received)
    assert list(log) == received and log == received and repr(log) == repr(received)
    assert log[1:4] == received[1:4] and log[-1] == received[-1]
    for (_, got), (_, sent) in zip(log, received):
        assert type(got) is type(sent)
        if isinstance(sent, WatchResponse):
            assert type(got.events) is list and all(type(e) is KeyEvent for e in got.events)
            # the KeyValues are the store's own objects, as in the response received
            assert all(g.kv is e.kv and g.prev_kv is e.prev_kv for g, e in zip(got.events, sent.events))
    assert log[2] is log[2]  # built once
