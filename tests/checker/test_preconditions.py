"""Preconditions asked at most once per step give the plain predicate's answers, worked out again after a rule or an
action; the API clients CrashMidReconcile looks up once are those `writes_outstanding` reads."""

from __future__ import annotations

from hypothesis.stateful import RULE_MARKER

from kmodel.checker.actions import ApplyDeployment, RunEvents, _clients, _outstanding, reconcilers, writes_outstanding
from kmodel.checker.crd_actions import ApplyCRD
from kmodel.checker.preconditions import once_per_step

from tests.checker.conftest import SmallMachine


def test_a_precondition_is_worked_out_once_per_step_and_again_after_a_rule_or_an_action():
    calls = []

    @once_per_step
    def counted(machine):
        calls.append(machine._rules_run)
        return bool(machine.cluster.objects("deployments"))

    machine = SmallMachine()
    machine.check_invariants()  # Hypothesis' check before the first rule
    assert counted(machine) is False and counted(machine) is False and len(calls) == 1
    machine.session.execute(ApplyDeployment("web", 1))  # an action: asked again
    machine.session.execute(RunEvents(40))
    assert counted(machine) is True and len(calls) == 2
    machine.check_invariants()  # the next step
    assert counted(machine) is True and len(calls) == 3
    machine.teardown()


def _precondition(rule_name: str):
    """The one precondition the machine's rule `rule_name` carries (as Hypothesis asks it)."""
    (asked,) = getattr(getattr(SmallMachine, rule_name), RULE_MARKER).preconditions
    return asked


def test_the_rules_preconditions_answer_as_their_plain_predicates():
    creatable, any_deletable = _precondition("apply_crd"), _precondition("delete_with_options")
    established = _precondition("delete_database")
    machine = SmallMachine()
    machine.check_invariants()
    assert creatable(machine) is (not machine._crd_apply_queued()) is True
    assert established(machine) is machine._established() is False
    assert any_deletable(machine) is bool(machine._deletable())
    machine.session.execute(ApplyCRD())
    assert creatable(machine) is (not machine._crd_apply_queued()) is False  # queued, not yet stored
    machine.session.execute(RunEvents(60))
    assert creatable(machine) is (not machine._crd_stored()) is False
    assert established(machine) is machine._established() is True
    machine.teardown()


def test_the_clients_looked_up_once_report_the_writes_outstanding():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.session.execute(ApplyDeployment("web", 2))
    seen = 0
    for _ in range(200):
        cluster.loop.run_fair(cluster.now + 60_000, max_events=1)
        for name in [*reconcilers(cluster), "kube-controller-manager"]:
            out = writes_outstanding(cluster, name)
            assert _outstanding(_clients(cluster, name)) == out
            seen += bool(out)
    assert seen  # some writes were out on the way
    machine.teardown()
