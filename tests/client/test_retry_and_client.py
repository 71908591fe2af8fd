"""retry_on_conflict and the ApiClient's deadlines and failover, in a small cluster."""

from __future__ import annotations

import attrs

from kmodel.client import retry_on_conflict
from kmodel.loop import Crash, Deliver, Partition

from .harness import Cluster, Probe, pod


def label(obj, value):
    return attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, labels={"v": value}))


def test_retry_on_conflict_rereads_after_a_conflict_and_succeeds():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    stale = p.answers[-1].body
    # Someone else updates the pod: `stale` now conflicts.
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(stale, "other"), on_done=p.record))
    c.run()
    reads = []

    def mutate(obj):
        reads.append(obj.metadata.resource_version)
        return label(obj, "mine")

    c.act(p, lambda now, out: retry_on_conflict(p.client, now, out, resource="pods", namespace="default", name="a",
                                               mutate=mutate, on_done=p.record, current=stale))
    c.run()
    assert p.answers[-1].code == 200 and p.answers[-1].body.metadata.labels == {"v": "mine"}
    assert reads == [stale.metadata.resource_version, str(c.store.revision - 1)]


def test_retry_on_conflict_gives_up_after_five_attempts():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    stale = p.answers[-1].body
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(stale, "other"), on_done=p.record))
    c.run()
    attempts = []

    def always_stale(obj):
        attempts.append(obj.metadata.resource_version)
        return label(stale, f"try-{len(attempts)}")  # keeps sending the old resourceVersion

    loop = []
    c.act(p, lambda now, out: loop.append(retry_on_conflict(
        p.client, now, out, resource="pods", namespace="default", name="a", mutate=always_stale,
        on_done=p.record)))
    c.run()
    assert len(attempts) == 5 and loop[0].attempts == 5
    assert (p.answers[-1].code, p.answers[-1].body.reason) == (409, "Conflict")


def test_reads_fail_over_after_a_timeout_and_writes_report_it():
    p = Probe("probe", ["apiserver-0", "apiserver-1"], timeout_ms=5_000)
    c = Cluster(2, probes=[p])
    c.loop.step(Partition(["apiserver-0"]))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.list(now, out, "pods", resource_version="0", on_done=p.record))
    c.run(until_ms=start + 60_000)
    [answer] = p.answers
    assert answer.code == 200 and p.client.endpoint == "apiserver-1"
    assert c.loop.now >= start + 5_000

    p.client.failover()  # back to the partitioned replica for the write
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=c.loop.now + 60_000)
    timeout = p.answers[-1]
    assert (timeout.code, timeout.body.reason) == (504, "Timeout")
    assert p.client.endpoint == "apiserver-1" and c.store.revision == c.replicas[1].cache.resource_version


class Timed(Probe):
    """A probe that also notes when each answer came."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.times: list[int] = []

    def record(self, now, response, out) -> None:
        super().record(now, response, out)
        self.times.append(now)


def two_replicas(**client_options) -> tuple[Timed, Cluster]:
    p = Timed("probe", ["apiserver-0", "apiserver-1"], **client_options)
    c = Cluster(2, probes=[p])
    c.run()
    return p, c


def two_requests_in_flight(p: Probe, c: Cluster) -> None:
    c.act(p, lambda now, out: p.client.list(now, out, "pods", resource_version="0", on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    assert c.network.in_flight("probe", "apiserver-0")


def test_a_crashed_api_server_resets_its_connections_a_read_is_resent_a_write_fails_at_once():
    p, c = two_replicas()
    start = c.loop.now
    two_requests_in_flight(p, c)
    c.loop.step(Crash("apiserver-0"))
    # the write failed within the crash itself; the read goes to the other replica a second later, as client-go
    # retries a GET whose connection was reset (no timeout waited out)
    [lost] = p.answers
    assert (lost.code, lost.body.reason) == (503, "ServiceUnavailable") and "connection" in lost.body.message
    assert p.client.endpoint == "apiserver-1"
    c.run(until_ms=start + 999)
    assert len(p.answers) == 1
    c.run(until_ms=start + 1_000)
    assert [a.code for a in p.answers] == [503, 200] and p.times == [start, start + 1_000]
    assert not c.store.range("/registry/pods/default/w").kvs  # it was lost with the crash, never applied


def test_a_request_to_a_down_api_server_is_refused_and_goes_to_the_other_replica():
    p, c = two_replicas()
    c.loop.step(Crash("apiserver-0"))  # the probe had nothing out: it still points at apiserver-0
    assert p.client.endpoint == "apiserver-0"
    start = c.loop.now
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    c.run(until_ms=start)
    [created] = p.answers
    assert created.code == 201 and p.times == [start] and p.client.endpoint == "apiserver-1"


def test_refused_by_every_replica_a_request_fails_at_once():
    p, c = two_replicas()
    c.loop.step(Crash("apiserver-0"))
    c.loop.step(Crash("apiserver-1"))
    start = c.loop.now
    c.act(p, lambda now, out: p.client.get(now, out, "pods", "w", namespace="default", on_done=p.record))
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("w"), on_done=p.record))
    assert [(a.code, a.body.reason) for a in p.answers] == [(503, "ServiceUnavailable")] * 2
    assert p.times == [start, start]


def test_across_a_partition_a_crash_is_not_seen_the_client_waits_out_its_timeout():
    p, c = two_replicas(timeout_ms=5_000)
    c.loop.step(Partition(["probe"]))
    start = c.loop.now
    two_requests_in_flight(p, c)
    c.loop.step(Crash("apiserver-0"))
    assert p.answers == [] and p.client.endpoint == "apiserver-0"
    c.loop.step(Crash("apiserver-1"))
    c.act(p, lambda now, out: p.client.get(now, out, "pods", "x", namespace="default", on_done=p.record))
    assert p.answers == []  # a request to a machine it cannot reach is lost, not refused
    c.loop.step(Partition(["probe"]))  # still cut off
    c.run(until_ms=start + 5_000)
    assert [a.code for a in p.answers] == [504] and p.times == [start + 5_000]  # the write's timeout


def test_an_answer_sent_before_the_crash_still_arrives_and_its_request_is_not_failed():
    p, c = two_replicas()
    start = c.loop.now
    two_requests_in_flight(p, c)
    c.loop.step(Deliver("probe", "apiserver-0"))  # the list is answered; the answer is on its way back
    assert c.network.in_flight("apiserver-0", "probe")
    c.loop.step(Crash("apiserver-0"))
    [lost] = p.answers  # only the create, which never reached the server
    assert lost.code == 503
    c.loop.step(Deliver("apiserver-0", "probe"))
    assert [a.code for a in p.answers] == [503, 200] and p.times == [start, start]
    assert not c.network.in_flight("apiserver-1", "probe")  # the list was not resent


def test_a_request_is_built_as_its_class_builds_it():
    """The client fills a Request's slots directly (one per request sent): the same value as Request(...)."""
    from kmodel.apiserver.wire import Request
    from kmodel.client.api_client import _request

    built = _request(7, "update", "pods", "default", "web", "status", {"a": 1}, "t", "12", "app=web", "", False,
                     "Strict", 30, None, "Background", "m", True, False)
    assert built == Request(7, "update", "pods", "default", "web", "status", {"a": 1}, "t", "12", "app=web",
                            grace_period_seconds=30, propagation_policy="Background", field_manager="m", force=True)
    assert type(built) is Request


def test_apply_sends_a_server_side_apply_as_its_field_manager():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
              "data": {"a": "1"}}
    c.act(p, lambda now, out: p.client.apply(now, out, "configmaps", "cm", config, namespace="default",
                                             field_manager="probe", on_done=p.record))
    c.run()
    created = p.answers[-1]
    assert created.code == 201 and created.body.data == {"a": "1"}
    [entry] = created.body.metadata.managed_fields
    assert (entry["manager"], entry["operation"]) == ("probe", "Apply")
    changed = dict(config, data={"a": "2"})
    c.act(p, lambda now, out: p.client.apply(now, out, "configmaps", "cm", changed, namespace="default",
                                             field_manager="other", on_done=p.record))
    c.run()
    assert (p.answers[-1].code, p.answers[-1].body.message) == (
        409, 'Apply failed with 1 conflict: conflict with "probe": .data.a')
    c.act(p, lambda now, out: p.client.apply(now, out, "configmaps", "cm", changed, namespace="default",
                                             field_manager="other", force=True, on_done=p.record))
    c.run()
    assert p.answers[-1].code == 200 and p.answers[-1].body.data == {"a": "2"}
