"""The invariants' shortcuts give the plain reference path's answer at every check (invariants._paths).

Each comparison runs the same thing twice, with the shortcuts and with `REFERENCE` set, and records every
check's answer: each safety invariant's messages and each sometimes property's verdict, after every step.
The recorder asks every invariant at every check and lets a session run on past violations, so failing
answers are compared too (variants that break guarantees)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kmodel.invariants import _paths
from kmodel.invariants.registry import REGISTRY, SAFETY, SHARED, Invariant
from kmodel.invariants import readers
from kmodel.invariants.sometimes import Sometimes, registered_sometimes
from kmodel.checker.actions import (
    AddNode, ApplyDeployment, ApplyService, Compact, CrashProcess, DeleteObject, Fault, RestartProcess, RunFair,
    ScaleDeployment,
)
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import Session, all_invariants
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.loop.events import Crash, Restart
from kmodel.store import Compare, PutOp
from kmodel.store.types import WatchResponse


_SESSION_INIT, _SESSION_LOOK_FOR = Session.__init__, Session.look_for


def _recording(log: list, *, tolerate: bool) -> tuple[Any, Any]:
    """A `Session.__init__` and a `Session.look_for` that wrap every safety invariant and sometimes property the
    session asks, so that each answer goes on `log` with the step it follows (and the watch guarantees'
    progress); `tolerate`: the session never sees a violation (every check asks every invariant)."""
    init, look_for = _SESSION_INIT, _SESSION_LOOK_FOR

    def record(session: Session, name: str, answer: Any) -> None:
        log.append((len(session.actions), name, answer, _progress(session)))

    def wrap(session: Session, inv: Invariant) -> Invariant:
        def check(cluster: Any, memo: dict) -> tuple:
            messages = tuple(inv.check(cluster, memo))
            record(session, inv.name, messages)
            return () if tolerate else messages

        return attrs.evolve(inv, check=check)

    def wrap_situation(session: Session, prop: Sometimes) -> Sometimes:
        def reached(cluster: Any, memo: dict) -> bool:
            answer = bool(prop.reached(cluster, memo))
            record(session, prop.name, answer)
            return answer

        return attrs.evolve(prop, reached=reached)

    def recording_init(self: Session, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.safety = [wrap(self, inv) for inv in self.safety]

    def recording_look_for(self: Session, situations: Any) -> None:
        look_for(self, [wrap_situation(self, prop) for prop in situations])

    return recording_init, recording_look_for


def _progress(session: Session) -> tuple:
    """What the shortcuts share between invariants, as it stands: where the watch guarantees' reading is in each
    etcd watch stream (it judges what comes next), the informers the sometimes properties find this check, and
    what restart-no-time-travel knows of each informer identity (the lives it has seen and those still open)."""
    state = session._shared.get("watch-state")
    streams = [] if state is None else sorted(
        (key, s.next_rev, s.last, s.ended, sorted(s.seen), sorted(s.revisions)) for key, s in state.streams.items())
    informers = [(inf.resource, inf.lists, len(inf.exposed), inf.tombstones)
                 for inf in readers.informers(session.cluster, {SHARED: session._shared})]
    restarts = sorted((name, identity, state[0], state[1], [(life[0], life[1], life[2]) for life in state[2]])
                      for name, entry in session.memos["restart-no-time-travel"].get("clients", {}).items()
                      for identity, state in entry[1].items())
    return streams, informers, restarts


def _deliver_old_etcd_response(session: Session) -> None:
    """apiserver-0 receives again a response its etcd watch had received (the watch guarantees must object)."""
    replica = session.cluster.replicas[0]
    old = next(r for s, r in replica.etcd_received if s == replica.etcd_stream and isinstance(r, WatchResponse)
               and r.events)
    session.cluster.network.send("etcd", replica.name, old, replica.etcd_stream)  # delivered by the RunFair that follows


def _both_ways(monkeypatch: pytest.MonkeyPatch, run: Any, *, tolerate: bool = False) -> tuple[list, list]:
    logs = []
    for reference in (False, True):
        log: list = []
        monkeypatch.setattr(_paths, "REFERENCE", reference)
        init, look_for = _recording(log, tolerate=tolerate)
        monkeypatch.setattr(Session, "__init__", init)
        monkeypatch.setattr(Session, "look_for", look_for)
        run()
        logs.append(log)
    return logs[0], logs[1]


def test_a_checker_campaign_gets_the_same_answer_at_every_check_both_ways(monkeypatch):
    results = []

    def run() -> None:
        results.append(run_campaign(CheckOptions(seed=3, examples=4, profile="dev", fixes=("all",))).stats)

    fast, reference = _both_ways(monkeypatch, run)
    assert len({step for step, *_ in fast}) > 20
    assert fast == reference
    assert results[0].trace_digest() == results[1].trace_digest()


ACTIONS = (ApplyDeployment("web", 3), ApplyService("web"), RunFair(8_000), Fault(Crash("apiserver-0")),
           RunFair(4_000), Fault(Restart("apiserver-0")), ScaleDeployment("web", 1), RunFair(6_000), "compact",
           "old etcd response",
           CrashProcess(), RunFair(3_000), RestartProcess(), AddNode(), DeleteObject("deployments", "web"),
           RunFair(10_000))


@pytest.mark.parametrize("variant", ["default", "blind-writes", "bypass-apiserver", "edge-triggered"])
def test_a_session_with_faults_gets_the_same_answers_both_ways_failing_ones_too(monkeypatch, variant):
    def run() -> None:
        session = Session(ClusterConfig(nodes=2, apiservers=2, seed=5), all_invariants(), variant=variant)
        session.look_for(registered_sometimes())
        for action in ACTIONS:
            if action == "compact":  # the store's revision then, less a few: watches from before get 410 Gone
                action = Compact(session.cluster.store.revision - 5)
            elif action == "old etcd response":
                _deliver_old_etcd_response(session)
                action = RunFair(1_000)
            session.execute(action)

    fast, reference = _both_ways(monkeypatch, run, tolerate=True)
    assert {step for step, *_ in fast} == set(range(len(ACTIONS) + 1))  # look_for's first reading, every step
    streams, informers, restarts = fast[-1][3]
    assert streams and informers  # the watch guarantees followed streams; informers were found
    assert any(opened for *_, opened in restarts)  # a restarted process's informer lives are judged
    assert fast == reference
    failed = {name for _, name, answer, _ in fast if type(answer) is tuple and answer}
    assert {"watch-ordered", "watch-unique"} <= failed
    if variant != "default":
        assert len(failed) > 2


def _writes_straight_into_etcd(cluster: Cluster) -> None:
    """Writes no API server made, kept compact by the store's history (a txn of one compare and one put) and
    not: one guarded by the key's mod_revision, one guarded by its version (a lost update), a blind put."""
    key = "/registry/namespaces/default"
    kv = cluster.store.range(key).kvs[0]
    assert cluster.store.txn([Compare(key, "MOD", "EQUAL", kv.mod_revision)], [PutOp(key, kv.value)], []).succeeded
    kv = cluster.store.range(key).kvs[0]
    assert cluster.store.txn([Compare(key, "VERSION", "EQUAL", kv.version)], [PutOp(key, kv.value)], []).succeeded
    cluster.store.put(key, kv.value)


def test_every_safety_invariant_answers_the_same_both_ways_after_writes_straight_into_etcd(monkeypatch):
    answers = []
    for reference in (False, True):
        monkeypatch.setattr(_paths, "REFERENCE", reference)
        cluster = Cluster(ClusterConfig(nodes=1))
        cluster.run_for(5_000)
        shared: dict = {}
        memos = {inv.name: {SHARED: shared} for inv in all_invariants() if inv.kind == SAFETY}
        asked = [{name: list(REGISTRY[name].check(cluster, memo)) for name, memo in memos.items()}]
        _writes_straight_into_etcd(cluster)
        cluster.run_for(1_000)
        asked.append({name: list(REGISTRY[name].check(cluster, memo)) for name, memo in memos.items()})
        answers.append(asked)
    assert answers[0] == answers[1]
    found = answers[0][1]
    assert any("a txn that did not compare its mod_revision" in m for m in found["occ-no-lost-update"])
    assert any("blind put" in m for m in found["occ-no-lost-update"])
    assert found["api-single-contract"]
