"""The client-side rate limiter (rest.Config QPS and Burst): the token bucket itself, and the ApiClient's
requests waiting for their tokens in the order they were made."""

from __future__ import annotations

import pytest

from kmodel.client.rate_limiter import RateLimit, TokenBucket
from kmodel.loop import Crash, Restart

from .harness import Cluster, pod
from .test_retry_and_client import Timed


def test_a_full_bucket_lets_a_burst_through_then_one_request_per_interval():
    bucket = RateLimit(qps=20, burst=3).bucket()
    assert [bucket.reserve(0) for _ in range(6)] == [0, 0, 0, 50, 100, 150]


def test_the_bucket_refills_while_idle_but_never_beyond_its_burst():
    bucket = RateLimit(qps=20, burst=3).bucket()
    assert [bucket.reserve(0) for _ in range(3)] == [0, 0, 0]
    assert bucket.reserve(75) == 75  # one token back at 50 ms
    assert bucket.reserve(75) == 100  # the next at 100
    # an hour idle refills it to 3, no more
    assert [bucket.reserve(3_600_000) for _ in range(4)] == [3_600_000] * 3 + [3_600_050]


def test_try_take_takes_a_token_only_when_there_is_one():
    # flowcontrol's TryAccept: a refusal takes nothing, so the next token comes on time
    bucket = TokenBucket(300_000, 2)
    assert [bucket.try_take(0) for _ in range(3)] == [True, True, False]
    assert bucket.try_take(299_999) is False
    assert bucket.try_take(300_000) is True and bucket.try_take(300_000) is False
    with pytest.raises(ValueError, match="interval_ms must be at least 1"):
        TokenBucket(0, 1)


def test_a_bucket_needs_a_whole_number_of_ms_per_token():
    with pytest.raises(ValueError, match="qps must divide 1000"):
        RateLimit(qps=3, burst=1).bucket()
    with pytest.raises(ValueError, match="burst must be at least 1"):
        RateLimit(qps=20, burst=0).bucket()


def limited(limit: RateLimit, **options) -> tuple[Timed, Cluster]:
    p = Timed("probe", ["apiserver-0", "apiserver-1"], rate_limit=limit, **options)
    c = Cluster(2, probes=[p])
    c.run()
    return p, c


def test_requests_beyond_the_burst_wait_for_their_tokens_and_keep_their_order():
    p, c = limited(RateLimit(qps=20, burst=2))
    start = c.loop.now
    for i in range(5):
        c.act(p, lambda now, out, i=i: p.client.create(now, out, "pods", pod(f"w{i}"), on_done=p.record))
    assert len(c.network.in_flight("probe", "apiserver-0")) == 2  # the burst; three wait, nothing sent yet
    c.run(until_ms=start + 150)
    assert [a.code for a in p.answers] == [201] * 5
    assert [a.body.metadata.name for a in p.answers] == ["w0", "w1", "w2", "w3", "w4"]
    assert p.times == [start, start, start + 50, start + 100, start + 150]


def test_a_crash_forgets_the_requests_waiting_for_a_token_and_starts_a_full_bucket():
    p, c = limited(RateLimit(qps=20, burst=1))
    start = c.loop.now
    for i in range(3):
        c.act(p, lambda now, out, i=i: p.client.create(now, out, "pods", pod(f"w{i}"), on_done=p.record))
    c.loop.step(Crash("probe"))
    c.run(until_ms=start + 1_000)
    assert not c.store.range("/registry/pods/default/w1").kvs and not c.store.range("/registry/pods/default/w2").kvs
    c.loop.step(Restart("probe"))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("x"), on_done=p.record))
    assert c.network.in_flight("probe", "apiserver-0")  # a new process: a full bucket, sent at once


def test_every_component_of_a_cluster_gets_its_upstream_default_limit_and_a_bucket_of_its_own():
    from kmodel.cluster import Cluster as ModelCluster, ClusterConfig
    from kmodel.controllers.shared_informers import SHARED_INFORMERS

    cluster = ModelCluster(ClusterConfig(nodes=1, apiservers=1))
    limits = {name: c.client.rate_limit for name, c in cluster.loop.components.items() if hasattr(c, "client")}
    controllers = {n: l for n, l in limits.items() if n.startswith("controller/") and n != SHARED_INFORMERS}
    assert len(controllers) == 14  # with the job, serviceaccount and ttlafterfinished controllers
    # the shared informers' "shared-informers" client: kube-controller-manager's limit, a bucket of its own
    assert limits[SHARED_INFORMERS] == RateLimit(qps=20, burst=30)
    assert set(controllers.values()) == {RateLimit(qps=20, burst=30)}  # --kube-api-qps, --kube-api-burst
    assert limits["kubelet/node-1"] == RateLimit(qps=50, burst=100)  # kubeAPIQPS, kubeAPIBurst
    assert limits["scheduler"] == RateLimit(qps=50, burst=100)  # clientConnection.qps, .burst
    assert limits["proxy/node-1"] == RateLimit(qps=5, burst=10)
    assert limits["kubectl"] == RateLimit(qps=50, burst=300)
    buckets = [cluster.loop.components[n].client._bucket for n in [*controllers, SHARED_INFORMERS]]  # noqa: SLF001
    assert len({id(b) for b in buckets}) == len(buckets)  # one per client, as each controller has a client of its own
    own = {n for n, c in cluster.loop.components.items() if hasattr(c, "client") and c.client.informers_own_client}
    assert own == set(controllers)  # the others' informers share the component's client, so its bucket


def test_an_informers_list_takes_no_token_when_the_informers_have_a_client_of_their_own():
    # kube-controller-manager's informers list through the shared informer factory's client, not the controller's
    p, c = limited(RateLimit(qps=20, burst=1), informer_token="admin-token")
    start = c.loop.now
    c.act(p, lambda now, out: p.client.list(now, out, "pods", on_done=p.record, informer=True))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=start)
    assert [a.code for a in p.answers] == [200, 201] and p.times == [start, start]


def test_an_informers_list_takes_a_token_when_the_informers_share_the_components_client():
    # the kubelet's, the scheduler's and kube-proxy's informer factories are given the component's own clientset
    p, c = limited(RateLimit(qps=20, burst=1))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.list(now, out, "pods", on_done=p.record, informer=True))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=start + 50)
    assert [a.code for a in p.answers] == [200, 201] and p.times == [start, start + 50]


def test_a_watch_takes_no_token():
    # rest.Request.Watch: "we specifically don't want to rate limit watches"
    p, c = limited(RateLimit(qps=20, burst=1))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.watch(now, out, "pods", resource_version="0", on_event=lambda *a: None,
                                             on_closed=lambda *a: None))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=start)
    assert [a.code for a in p.answers] == [201] and p.times == [start]


def test_an_unthrottled_request_takes_no_token():
    # the kubelet's heartbeat client (QPS -1): its Lease renewal never waits behind the kubelet's other writes
    p, c = limited(RateLimit(qps=20, burst=1))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("hb"), on_done=p.record, throttled=False))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("b"), on_done=p.record))
    c.run(until_ms=start + 50)
    assert [a.body.metadata.name for a in p.answers] == ["a", "hb", "b"] and p.times == [start, start, start + 50]
