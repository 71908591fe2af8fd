"""The ApiClient's record of its accepted updates (read by occ-no-lost-update) and its incarnations."""

from __future__ import annotations

import attrs

from kmodel.client.api_client import UpdateRecord, without_resource_version

from .harness import Cluster, Probe, pod


def label(obj, value):
    return attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, labels={"v": value}))


def created(c: Cluster, p: Probe):
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("a"), on_done=p.record))
    c.run()
    return p.answers[-1].body


def test_an_accepted_update_is_recorded_with_the_version_it_read_and_the_one_it_made():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    first = created(c, p)
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(first, "x"), on_done=p.record))
    c.run()
    (record,) = p.client.updates
    assert record == UpdateRecord("pods", "default", "a", "", int(first.metadata.resource_version),
                                  int(p.answers[-1].body.metadata.resource_version), record.sent, record.answered)
    assert record.sent <= record.answered


def test_refused_and_unconditional_updates_leave_no_record():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    stale = created(c, p)
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(stale, "x"), on_done=p.record))
    c.run()
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(stale, "y"), on_done=p.record))
    c.run()
    assert p.answers[-1].code == 409
    blind = without_resource_version(label(stale, "z"))
    c.act(p, lambda now, out: p.client.update(now, out, "pods", blind, on_done=p.record))
    c.run()
    assert p.answers[-1].code == 200  # Kubernetes allows an unconditional pod update
    assert len(p.client.updates) == 1


def test_the_record_outlives_a_crash_and_each_process_is_a_new_incarnation():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    first = created(c, p)
    c.act(p, lambda now, out: p.client.update(now, out, "pods", label(first, "x"), on_done=p.record))
    c.run()
    before = p.client.incarnation
    p.crash()
    assert len(p.client.updates) == 1 and p.client.incarnation == before + 1
