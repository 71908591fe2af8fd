"""The `blind-writes` variant: clients send updates without their resourceVersion, and the last writer wins.

`occ-no-lost-update` must hold on a default run that has conflicts, and catch a lost update made by hand.
"""

from __future__ import annotations

import attrs

from kmodel.invariants.storage import occ_no_lost_update
from kmodel.checker.actions import ApplyDeployment, RunFair, ScaleDeployment
from kmodel.checker.session import Session
from kmodel.client.api_client import UpdateRecord
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.component import Out
from kmodel.objects import frozen_map
from kmodel.variants import BLIND_WRITES, DEFAULT, variant
from tests.client.harness import Probe, pod
from tests.controllers.cluster_helpers import admin


class Writers:
    """Two clients of one API server, each able to read and update a pod by hand."""

    def __init__(self, name: str) -> None:
        self.a = Probe("probe/a", ["apiserver-0"])
        self.b = Probe("probe/b", ["apiserver-0"])
        for p in (self.a, self.b):
            p.client.variant = name
        self.cluster = Cluster(ClusterConfig(nodes=1, components=(), variant=name), extra=[self.a, self.b])
        assert admin(self.cluster, "create", "pods", body=pod("p")).code == 201

    def act(self, probe: Probe, fn) -> None:
        out = Out()
        fn(self.cluster.now, out)
        self.cluster.loop._apply(probe.name, out.effects)  # noqa: SLF001 (a test's input from outside)
        self.cluster.run_for(1_000)

    def read(self, probe: Probe):
        self.act(probe, lambda now, out: probe.client.get(now, out, "pods", "p", namespace="default",
                                                           on_done=probe.record))
        return probe.answers[-1].body

    def label(self, probe: Probe, read, key: str):
        labels = frozen_map({**read.metadata.labels, key: "yes"})
        body = attrs.evolve(read, metadata=attrs.evolve(read.metadata, labels=labels))
        self.act(probe, lambda now, out: probe.client.update(now, out, "pods", body, on_done=probe.record))
        return probe.answers[-1]

    def stale_race(self):
        """a reads the pod; b labels it; a labels its stale copy. Returns a's answer."""
        stale = self.read(self.a)
        assert self.label(self.b, self.read(self.b), "b").code == 200
        return self.label(self.a, stale, "a")


def violations(cluster: Cluster) -> list[str]:
    return list(occ_no_lost_update(cluster, {}))


def test_the_variant_is_registered_where_it_switches():
    v = variant(BLIND_WRITES)
    assert v.where == "kmodel/client/api_client.py" and v.expect == ("occ-no-lost-update",)


def test_the_client_strips_the_precondition_and_still_records_what_it_read():
    sent = {}
    for name in (DEFAULT, BLIND_WRITES):
        w = Writers(name)
        read = w.read(w.a)
        w.act(w.a, lambda now, out: w.a.client.update(now, out, "pods", read, on_done=w.a.record))
        (msg,) = [m for m in w.cluster.audit.records if m.verb == "update"]
        assert msg.code == 200
        sent[name] = w.a.client.updates
    rv = sent[DEFAULT][0].read_rv
    for name in (DEFAULT, BLIND_WRITES):
        (record,) = sent[name]
        assert isinstance(record, UpdateRecord) and record.read_rv == rv and record.name == "p"


def test_default_refuses_the_stale_update_and_the_invariant_holds():
    w = Writers(DEFAULT)
    answer = w.stale_race()
    assert answer.code == 409 and answer.body.reason == "Conflict"
    assert w.cluster.get("pods", "default", "p").metadata.labels == frozen_map({"b": "yes"})
    assert violations(w.cluster) == []


def test_a_blind_write_loses_the_other_writers_label_and_the_invariant_says_so():
    w = Writers(BLIND_WRITES)
    answer = w.stale_race()
    assert answer.code == 200
    assert w.cluster.get("pods", "default", "p").metadata.labels == frozen_map({"a": "yes"})  # b's label lost
    (found,) = violations(w.cluster)
    assert "probe/a (admin) updated pods/default/p from a body read at resourceVersion" in found
    assert "metadata.labels changed at revision" in found and "(update by admin)" in found


def test_an_update_without_resource_version_is_not_judged_in_the_default():
    """Kubernetes allows an unconditional update (no resourceVersion in the body) for these resources: a
    writer choosing it takes last-writer-wins on purpose, which the invariant does not flag."""
    w = Writers(DEFAULT)
    stale = w.read(w.a)
    assert w.label(w.b, w.read(w.b), "b").code == 200
    unconditional = attrs.evolve(stale, metadata=attrs.evolve(stale.metadata, resource_version=""))
    assert w.label(w.a, unconditional, "a").code == 200
    assert w.a.client.updates == [] and violations(w.cluster) == []


def test_a_status_write_after_a_spec_change_loses_nothing():
    """A stale status update keeps the stored spec and metadata: nothing anybody changed is overwritten."""
    w = Writers(BLIND_WRITES)
    stale = w.read(w.a)
    assert w.label(w.b, w.read(w.b), "b").code == 200
    status = attrs.evolve(stale, status=attrs.evolve(stale.status, phase="Running"))
    w.act(w.a, lambda now, out: w.a.client.update_status(now, out, "pods", status, on_done=w.a.record))
    assert w.a.answers[-1].code == 200 and w.a.client.updates[-1].read_rv < int(
        w.cluster.get("pods", "default", "p").metadata.resource_version)
    assert violations(w.cluster) == []


def test_the_invariant_holds_on_a_default_run_with_conflicts():
    s = Session(ClusterConfig(apiservers=2), [], variant=DEFAULT)
    for action in (RunFair(15_000), ApplyDeployment("web", 3), RunFair(30_000), ScaleDeployment("web", 5),
                   RunFair(30_000)):
        s.execute(action)
    c = s.cluster
    conflicts = [r for r in c.audit.records if r.verb == "update" and r.code == 409]
    assert conflicts  # controllers wrote from stale caches and were refused
    assert sum(len(comp.client.updates) for comp in c.components if hasattr(comp, "client")) > 10
    assert violations(c) == []
