"""Declared inputs (kmodel.invariants.inputs): a session that skips an invariant while its inputs did not change
gets, at every check, the verdicts of the reference path that asks every invariant at every check, and the same
first violation.

Each comparison runs the same thing twice, with `inputs.EVERY_STEP` set (the reference) and not, and records
every safety invariant's verdict at every check: the answer of an invariant asked, and for one skipped the answer
it gave when it was last asked (what skipping it stands for). A recorder that lets a session run on past
violations compares failing answers too (variants that break guarantees)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from kmodel.checker.actions import (
    AddNode, ApplyDeployment, ApplyService, Compact, CrashProcess, DeleteObject, Fault, FailContainer,
    RestartProcess, RunFair, ScaleDeployment,
)
from kmodel.checker.machine import KmodelMachine
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.cluster import ClusterConfig
from kmodel.invariants import inputs
from kmodel.invariants.inputs import Changes, Input, writes
from kmodel.invariants.registry import SAFETY, Invariant, invariant, REGISTRY
from kmodel.loop.events import Crash, Restart
from test_paths import _deliver_old_etcd_response

#: the safety invariants that declare no inputs, so are asked at every check, each with why
UNDECLARED = {
    "leader-acts-within-lease": "reads each elector's state and the clock; not declared yet",
    "leader-elected-after-loss": "remembers the time it first saw a leaderless stretch (memo.setdefault of "
                                 "the clock), so when it is asked is part of its verdict",
}


def test_the_undeclared_safety_invariants_are_the_ones_listed():
    undeclared = {inv.name for inv in all_invariants() if inv.kind == SAFETY and inv.reads is None}
    assert undeclared == set(UNDECLARED)


def test_a_declaration_names_inputs():
    with pytest.raises(ValueError, match="reads must name at least one"):
        invariant("no-inputs", kind=SAFETY, principle="p", reads=())
    with pytest.raises(ValueError, match="reads must name at least one"):
        invariant("not-an-input", kind=SAFETY, principle="p", reads=("pods",))  # type: ignore[arg-type]
    assert "no-inputs" not in REGISTRY and "not-an-input" not in REGISTRY


_INIT, _CHECK, _LOOK_FOR = Session.__init__, Session.check_safety, Session.look_for


def _recording(log: list, *, tolerate: bool) -> tuple[Any, Any]:
    """A `Session.__init__` that wraps every safety invariant so that each answer is kept, and a
    `Session.check_safety` that puts on `log`, per check, every safety invariant's verdict: its answer if it was
    asked, else the one it gave when last asked; `tolerate`: the session never sees a violation."""

    def wrap(session: Session, inv: Invariant) -> Invariant:
        def check(cluster: Any, memo: dict) -> tuple:
            messages = tuple(inv.check(cluster, memo))
            session._answers[inv.name] = messages  # type: ignore[attr-defined]
            session._asked.add(inv.name)  # type: ignore[attr-defined]
            return () if tolerate else messages

        return attrs.evolve(inv, check=check)

    def recording_init(self: Session, *args: Any, **kwargs: Any) -> None:
        _INIT(self, *args, **kwargs)
        self.safety = [wrap(self, inv) for inv in self.safety]
        self._answers = {}  # type: ignore[attr-defined]
        self._asked = set()  # type: ignore[attr-defined]

    def recording_check(self: Session, step: int) -> None:
        self._asked = set()  # type: ignore[attr-defined]
        try:
            _CHECK(self, step)
        finally:
            answers, asked = self._answers, self._asked  # type: ignore[attr-defined]
            log.append((len(self.actions), {inv.name: answers.get(inv.name) for inv in self.safety}, len(asked)))

    return recording_init, recording_check


def _record_one_way(monkeypatch: pytest.MonkeyPatch, run: Any, every_step: bool, tolerate: bool) -> list:
    """`run()` with `inputs.EVERY_STEP` set to `every_step`, recorded (see `_recording`)."""
    log: list = []
    init, check = _recording(log, tolerate=tolerate)
    for owner, name, value in ((inputs, "EVERY_STEP", every_step), (Session, "__init__", init),
                               (Session, "check_safety", check)):
        monkeypatch.setattr(owner, name, value)
    run()
    return log


def _both_ways(monkeypatch: pytest.MonkeyPatch, run: Any, *, tolerate: bool) -> tuple[list, list]:
    """The records of `run()` skipping and on the reference path."""
    return (_record_one_way(monkeypatch, run, False, tolerate), _record_one_way(monkeypatch, run, True, tolerate))


def _verdicts(log: list) -> list:
    return [(step, answers) for step, answers, _ in log]


def _asked(log: list) -> int:
    return sum(asked for *_, asked in log)


def test_a_checker_campaign_gets_the_same_verdict_at_every_check_both_ways(monkeypatch):
    results = []

    def run() -> None:
        results.append(run_campaign(CheckOptions(seed=3, examples=4, profile="dev", fixes=("all",))).stats)

    skipping, reference = _both_ways(monkeypatch, run, tolerate=False)
    assert len(skipping) > 50
    assert _verdicts(skipping) == _verdicts(reference)
    assert _asked(skipping) < _asked(reference) * 0.8  # the skips are real
    assert results[0].trace_digest() == results[1].trace_digest()


ACTIONS = (ApplyDeployment("web", 3), ApplyService("web"), RunFair(8_000), Fault(Crash("apiserver-0")),
           RunFair(4_000), Fault(Restart("apiserver-0")), ScaleDeployment("web", 1), RunFair(6_000), "compact",
           "fail a container", RunFair(2_000), "old etcd response",
           CrashProcess(), RunFair(3_000), RestartProcess(), AddNode(), DeleteObject("deployments", "web"),
           RunFair(10_000))


def _execute_all(session: Session) -> None:
    for action in ACTIONS:
        if action == "compact":  # the store's revision then, less a few: watches from before get 410 Gone
            action = Compact(session.cluster.store.revision - 5)
        elif action == "fail a container":  # the checker's change that is no loop event (kubelet runtimes)
            running = KmodelMachine.failable(SimpleNamespace(cluster=session.cluster))  # type: ignore[arg-type]
            assert running
            action = FailContainer(*running[0])
        elif action == "old etcd response":  # the watch guarantees must object
            _deliver_old_etcd_response(session)
            action = RunFair(1_000)
        session.execute(action)


@pytest.mark.parametrize("variant", ["default", "blind-writes", "bypass-apiserver"])
def test_a_session_with_faults_gets_the_same_verdicts_both_ways_failing_ones_too(monkeypatch, variant):
    def run() -> None:
        _execute_all(Session(ClusterConfig(nodes=2, apiservers=2, seed=5), all_invariants(), variant=variant))

    skipping, reference = _both_ways(monkeypatch, run, tolerate=True)
    assert _verdicts(skipping) == _verdicts(reference)
    assert _asked(skipping) < _asked(reference)
    failed = {name for _, answers, _ in reference for name, answer in answers.items() if answer}
    assert {"watch-ordered", "watch-unique"} <= failed
    if variant != "default":
        assert len(failed) > 2


@pytest.mark.parametrize("variant", ["default", "blind-writes", "bypass-apiserver"])
def test_a_planted_failure_is_the_same_first_violation_both_ways(monkeypatch, variant):
    found = []
    for every_step in (False, True):
        monkeypatch.setattr(inputs, "EVERY_STEP", every_step)
        session = Session(ClusterConfig(nodes=2, apiservers=2, seed=5), all_invariants(), variant=variant)
        with pytest.raises(InvariantViolation) as failed:
            _execute_all(session)
        found.append((failed.value.invariant, failed.value.message, failed.value.step, session.digest()))
    assert found[0] == found[1]


def test_an_invariant_is_skipped_only_while_its_inputs_stand_still(monkeypatch):
    asked: list[int] = []
    ticks = {"n": 0}
    moving = Input("a counter the test moves", lambda cluster, memo: ticks["n"])

    def counts(cluster: Any, memo: dict) -> tuple:
        asked.append(ticks["n"])
        return ()

    monkeypatch.setattr(inputs, "EVERY_STEP", False)
    declared = Invariant("counts", SAFETY, "p", "Counts.", counts, (moving,))
    session = Session(ClusterConfig(nodes=1), [declared])
    for n in (0, 0, 1, 1, 1, 2):
        ticks["n"] = n
        session.check_safety(0)
    assert asked == [0, 1, 2]
    monkeypatch.setattr(inputs, "EVERY_STEP", True)
    session.check_safety(0)
    assert asked == [0, 1, 2, 2]


def test_each_input_is_read_once_per_check_and_writes_follow_their_prefixes():
    cluster = Session(ClusterConfig(nodes=1), []).cluster
    reads = {"n": 0}

    def mark(c: Any, memo: dict) -> int:
        reads["n"] += 1
        memo["seen"] = memo.get("seen", 0) + 1  # its own dict, kept between checks
        return memo["seen"] // 2

    counted, pods, leases, every = Input("counted", mark), writes("/registry/pods/"), writes("/registry/leases/"), \
        writes("/registry/")
    assert writes("/registry/pods/") is pods
    changes = Changes(cluster, [counted, pods, leases, every])
    assert changes.mask((leases, counted)) == 0b0101 and changes.mask(None) == 0
    assert changes.changed() == 0b1111  # the first check: everything
    assert reads["n"] == 1
    assert changes.changed() == 0b0001  # 1 // 2 -> 2 // 2
    cluster.store.put("/registry/leases/x", "v")
    assert changes.changed() == 0b1100
    cluster.store.put("/registry/pods/default/x", "v")
    assert changes.changed() == 0b1011
    assert changes.changed() == 0
    changes.forget()
    assert changes.changed() == 0b1111
    assert reads["n"] == 6
