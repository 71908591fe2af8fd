"""The invariants' shortcuts give the plain reference path's answer at every check (invariants._paths).

Each comparison runs the same thing twice, with the shortcuts and with `REFERENCE` set, and records every
check's answer: each safety invariant's messages and each sometimes property's verdict, after every step.
The recorder asks every invariant at every check and lets a session run on past violations, so failing
answers are compared too (variants that break guarantees)."""

from __future__ import annotations

from typing import Any

import pytest

from invariants import _paths
from invariants.sometimes import registered_sometimes
from kmodel.checker import session as session_module
from kmodel.checker.actions import (
    ApplyDeployment, ApplyService, Compact, CrashProcess, DeleteObject, Fault, RestartProcess, RunFair,
    ScaleDeployment,
)
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import Session, all_invariants
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import Crash, Restart
from kmodel.store.types import WatchResponse


def _recorder(log: list, *, tolerate: bool) -> Any:
    """A `Session.check_safety` that records every answer (and, `tolerate`, never fails)."""

    def check_safety(self: Session, step: int) -> None:
        cluster, answers = self.cluster, []
        for inv in self.safety:
            answers.append((inv.name, tuple(inv.check(cluster, self.memos[inv.name]))))
        still = []
        for prop, memo in self.unreached:
            reached = bool(prop.reached(cluster, memo))
            answers.append((prop.name, reached))
            if reached:
                self.reached[prop.name] = step
                self.stats.situation_reached(prop.name)
            else:
                still.append((prop, memo))
        self.unreached = still
        log.append((step, answers, _watch_progress(self)))
        if not tolerate:
            for name, messages in answers:
                if type(messages) is tuple and messages:
                    self._fail(session_module.InvariantViolation(name, messages[0], step))

    return check_safety


def _watch_progress(session: Session) -> list:
    """Where the watch guarantees' shared reading stands in each etcd watch stream (it judges what comes next)."""
    state = session.memos["watch-atomic"]["shared"].get("watch-state")
    if state is None:
        return []
    return sorted((key, s.next_rev, s.last, s.ended, sorted(s.seen), sorted(s.revisions))
                  for key, s in state.streams.items())


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
        monkeypatch.setattr(Session, "check_safety", _recorder(log, tolerate=tolerate))
        run()
        logs.append(log)
    return logs[0], logs[1]


def test_a_checker_campaign_gets_the_same_answer_at_every_check_both_ways(monkeypatch):
    results = []

    def run() -> None:
        results.append(run_campaign(CheckOptions(seed=3, examples=4, profile="dev", fixes=("all",))).stats)

    fast, reference = _both_ways(monkeypatch, run)
    assert len(fast) > 100
    assert fast == reference
    assert results[0].trace_digest() == results[1].trace_digest()


ACTIONS = (ApplyDeployment("web", 3), ApplyService("web"), RunFair(8_000), Fault(Crash("apiserver-0")),
           RunFair(4_000), Fault(Restart("apiserver-0")), ScaleDeployment("web", 1), RunFair(6_000), "compact",
           "old etcd response",
           CrashProcess(), RunFair(3_000), RestartProcess(), DeleteObject("deployments", "web"), RunFair(10_000))


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
    assert len(fast) == len(ACTIONS)
    assert fast[-1][2]  # the watch guarantees followed streams
    assert fast == reference
    failed = {name for _, answers, _ in fast for name, m in answers if type(m) is tuple and m}
    assert {"watch-ordered", "watch-unique"} <= failed
    if variant != "default":
        assert len(failed) > 2
