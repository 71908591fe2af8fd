"""retry_on_conflict and the ApiClient's deadlines and failover, in a small cluster."""

from __future__ import annotations

import attrs

from kmodel.client import retry_on_conflict
from kmodel.loop import Partition

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
