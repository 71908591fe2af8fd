"""Request faults (the loop's FailRequest): the API server answers 429, 500, 503 or 504 as upstream does, and the
client honours Retry-After as client-go's rest.Request does."""

from __future__ import annotations

import pytest

from kmodel.apiserver.request_faults import REQUEST_TIMEOUT, TOO_MANY_REQUESTS, fault_status
from kmodel.client.api_client import MAX_RETRIES, retry_after_ms
from kmodel.apiserver.wire import Response
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import FailRequest, event_from_json
from kmodel.objects import Lease, ObjectMeta
from kmodel.client.rate_limiter import RateLimit

from .harness import pod
from .test_retry_and_client import two_replicas


def pods_named(cluster, name):
    return cluster.store.range(f"/registry/pods/default/{name}").kvs


def test_a_429_with_retry_after_is_sent_again_after_that_many_seconds_and_the_caller_sees_only_the_answer():
    p, c = two_replicas()
    c.loop.step(FailRequest("probe", "apiserver-0", 429, retry_after_seconds=5))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run(until_ms=start + 4_999)
    assert p.answers == [] and not pods_named(c, "a")  # refused before anything ran, the retry not due yet
    c.run(until_ms=start + 5_000)
    [answer] = p.answers
    assert answer.code == 201 and p.times == [start + 5_000] and pods_named(c, "a")
    assert p.client.retried_after == 1
    assert c.replicas[0].faults_answered == [(start, "probe", "create", 429, False)]


def test_the_answer_after_ten_retries_goes_to_the_caller():
    p, c = two_replicas()
    start = c.loop.now
    fault = FailRequest("probe", "apiserver-0", 429, retry_after_seconds=1)
    c.loop.step(fault)
    c.act(p, lambda now, out: p.client.get(now, out, "namespaces", "default", on_done=p.record))
    for k in range(MAX_RETRIES):  # each retry meets a new fault, armed once the last one has answered
        c.run(until_ms=start + k * 1_000 + 500)  # try k answered 429, its retry due a second after it
        assert not c.replicas[0].request_faults and not p.answers
        c.loop.step(fault)
    c.run(until_ms=start + 20_000)
    [answer] = p.answers
    assert (answer.code, answer.body.reason, answer.body.message) == (429, "TooManyRequests", TOO_MANY_REQUESTS)
    assert p.client.retried_after == MAX_RETRIES and len(c.replicas[0].faults_answered) == MAX_RETRIES + 1
    assert p.times == [start + MAX_RETRIES * 1_000]


def test_a_retry_takes_a_token_from_the_rate_limit_again():
    p, c = two_replicas(rate_limit=RateLimit(qps=1, burst=1))
    c.loop.step(FailRequest("probe", "apiserver-0", 429, retry_after_seconds=1))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("b"), on_done=p.record))  # waits 1 s
    c.run(until_ms=start + 10_000)
    # b took the token due at 1 s; a's retry, due at 1 s too, waits for the next one, at 2 s
    assert [a.body.metadata.name for a in p.answers] == ["b", "a"] and p.times == [start + 1_000, start + 2_000]


@pytest.mark.parametrize("code,reason", [(500, "InternalError"), (503, "ServiceUnavailable"), (504, "Timeout")])
def test_a_5xx_without_retry_after_goes_to_the_caller_and_nothing_was_written(code, reason):
    p, c = two_replicas()
    c.loop.step(FailRequest("probe", "apiserver-0", code))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    [answer] = p.answers
    assert (answer.code, answer.body.reason) == (code, reason) and p.client.retried_after == 0
    assert not pods_named(c, "a")


def test_a_504_whose_write_was_applied_is_an_unknown_outcome_the_object_exists():
    p, c = two_replicas()
    c.loop.step(FailRequest("probe", "apiserver-0", 504, applied=True))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    [answer] = p.answers
    assert (answer.code, answer.body.message) == (504, REQUEST_TIMEOUT)
    assert pods_named(c, "a")  # it happened, though the client was told it failed
    assert c.replicas[0].faults_answered[-1][3:] == (504, True)


def test_a_fault_waits_for_the_next_request_of_that_client_and_spares_watches_and_other_clients():
    p, c = two_replicas()
    c.loop.step(FailRequest("probe", "apiserver-0", 503))
    c.act(p, lambda now, out: p.client.watch(now, out, "pods", on_event=lambda *a: None,
                                             on_closed=lambda *a: None))
    c.run()
    assert c.replicas[0].request_faults  # a watch is not the request it waits for
    c.act(p, lambda now, out: p.client.create(now, out, "leases", Lease(metadata=ObjectMeta(
        name="l", namespace="default")), on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    assert [a.code for a in p.answers] == [503, 201] and not c.replicas[0].request_faults


def test_a_crash_forgets_the_armed_fault():
    p, c = two_replicas()
    from kmodel.loop import Crash, Restart

    c.loop.step(FailRequest("probe", "apiserver-0", 500))
    c.loop.step(Crash("apiserver-0"))
    c.loop.step(Restart("apiserver-0"))
    c.run()
    assert c.replicas[0].request_faults == {}


def test_fail_request_is_enabled_only_toward_a_running_api_server():
    p, c = two_replicas()
    from kmodel.loop import Crash

    with pytest.raises(EventNotEnabled, match="answers no requests"):
        c.loop.step(FailRequest("apiserver-0", "probe", 500))
    with pytest.raises(EventNotEnabled, match="one of"):
        c.loop.step(FailRequest("probe", "apiserver-0", 404))
    c.loop.step(Crash("apiserver-1"))
    with pytest.raises(EventNotEnabled, match="is down"):
        c.loop.step(FailRequest("probe", "apiserver-1", 500))


def test_fail_request_round_trips_through_json():
    event = FailRequest("probe", "apiserver-0", 429, retry_after_seconds=5)
    assert event_from_json(event.to_json()) == event
    assert "Retry-After 5 s" in event.name
    with pytest.raises(ValueError, match="code must be at least"):
        event_from_json({**event.to_json(), "code": 0})


def test_retry_after_is_read_from_429_and_5xx_only():
    assert retry_after_ms(Response(1, 429, fault_status(429, 2))) == 2_000
    assert retry_after_ms(Response(1, 503, fault_status(503, 1))) == 1_000
    assert retry_after_ms(Response(1, 503, fault_status(503))) == 0
    assert retry_after_ms(Response(1, 409, fault_status(429, 2))) == 0
