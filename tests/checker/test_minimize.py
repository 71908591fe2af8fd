"""Minimization after Hypothesis' shrink: whole actions are cut out while the same invariant still fails."""

from __future__ import annotations

import pytest

from kmodel.checker.actions import ApplyDeployment, ApplyService, RunFair, ScaleDeployment, Settle
from kmodel.checker.minimize import minimize
from kmodel.checker.replay import replay
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.checker.trace import Trace, Violation
from kmodel.cluster import ClusterConfig
from kmodel.variants import HARDCODED_POD_IP

PREFIX = (ApplyDeployment("web", 2), ApplyService("web"), RunFair(15_000))
SETTLE = Settle(600_000, check_at_once=True, release_holds=True, finish_removals=True)


def failing_trace(actions) -> Trace:
    # the traces these tests minimize were written for a cluster whose controllers start at once (no election)
    config = ClusterConfig(nodes=3, apiservers=2, seed=1, variant=HARDCODED_POD_IP, leader_elect=False)
    session = Session(config, all_invariants(), variant=HARDCODED_POD_IP)
    with pytest.raises(InvariantViolation) as caught:
        for action in actions:
            session.execute(action)
    v = caught.value
    return Trace(session.config, tuple(session.actions), HARDCODED_POD_IP, {"fail": v.invariant},
                 Violation(v.invariant, v.message, v.step))


def test_minimize_cuts_the_actions_the_failure_does_not_need():
    noisy = failing_trace(PREFIX + (RunFair(1_000), ApplyService("api"), ScaleDeployment("web", 0), RunFair(2_000),
                                    ApplyDeployment("api", 1), ScaleDeployment("web", 1), SETTLE))
    assert noisy.violation.invariant == "service-reachability"
    told = []
    small = minimize(noisy, keep_prefix=len(PREFIX), on_replay=lambda *progress: told.append(progress))
    assert small.actions[:len(PREFIX)] == PREFIX and small.actions[-1] == SETTLE
    # the progress bar hears of every replay after the first, against the budget, and of what is left
    assert [r for r, _, _ in told] == list(range(2, len(told) + 2))
    assert all(most == told[0][1] >= replays for replays, most, _ in told)
    assert told[-1][2] == len(small.actions) and told[0][2] >= told[-1][2]
    assert len(small.actions) < len(noisy.actions)
    assert any(isinstance(a, ScaleDeployment) and a.app == "web" for a in small.actions[len(PREFIX):])
    assert small.expected_invariant == small.violation.invariant == "service-reachability"
    again = replay(small)
    assert again.violation is not None and again.violation.invariant == "service-reachability"


def test_minimize_returns_a_trace_with_nothing_to_cut_as_it_is():
    tight = failing_trace(PREFIX + (ScaleDeployment("web", 1), SETTLE))
    assert minimize(tight, keep_prefix=len(PREFIX)) == tight
    with pytest.raises(ValueError, match="only a failing trace"):
        minimize(Trace(tight.config, tight.actions, HARDCODED_POD_IP), keep_prefix=3)



def test_a_long_trace_gets_a_budget_to_try_cutting_every_single_action(monkeypatch):
    """A campaign's examples run 100 steps: the replay budget grows with the trace (REPLAYS_PER_ACTION per
    action), so ddmin gets down to single actions instead of stopping at MAX_REPLAYS (a 100-step campaign
    failure left at 44 actions by 120 replays comes down to 8). Here no cut ever fails, so ddmin tries every
    granularity: about two candidates per action."""
    from kmodel.checker import minimize as module

    filler = tuple(RunFair(100 + i) for i in range(100))
    trace = Trace(ClusterConfig(), PREFIX + filler + (SETTLE,), expect={"fail": "x"}, violation=Violation("x", "m", 1))
    tried: list[int] = []

    def init(self, *args, **kwargs):
        self.replays = self.events = 0

    class Whole:  # the first replay, of the whole trace, fails as reported (and costs the most events)
        def dispose(self):
            pass

    def fails(self, rest, invariant):
        self.replays += 1
        if self.replays == 1:
            self.events += 1_000
            return Whole()
        self.events += 1
        tried.append(len(rest))
        return None

    monkeypatch.setattr(module._Runner, "__init__", init)

    monkeypatch.setattr(module._Runner, "fails", fails)
    assert minimize(trace, keep_prefix=len(PREFIX)) == trace  # nothing could be cut
    # a candidate is what is left plus the final settle: cutting one action leaves len(filler) of them
    assert len(tried) > module.MAX_REPLAYS and max(tried) == len(filler)  # down to cutting single actions
    assert len(tried) < module.REPLAYS_PER_ACTION * len(filler)


def _replays_within_the_event_budget(monkeypatch, actions: int, events_per_replay: int) -> int:
    """How many replays minimize makes of a trace of `actions` actions where nothing can be cut and every
    replay costs `events_per_replay` model events."""
    from kmodel.checker import minimize as module

    filler = tuple(RunFair(100 + i) for i in range(actions))
    trace = Trace(ClusterConfig(), PREFIX + filler + (SETTLE,), expect={"fail": "x"}, violation=Violation("x", "m", 1))
    calls = []

    def init(self, *args, **kwargs):
        self.replays = self.events = 0

    class Whole:
        def dispose(self):
            pass

    def fails(self, rest, invariant):
        self.replays += 1
        self.events += events_per_replay  # every replay as dear as the whole trace
        calls.append(len(rest))
        return Whole() if self.replays == 1 else None

    monkeypatch.setattr(module._Runner, "__init__", init)
    monkeypatch.setattr(module._Runner, "fails", fails)
    assert minimize(trace, keep_prefix=len(PREFIX)) == trace
    return len(calls)


def test_the_replays_together_cost_at_most_a_multiple_of_the_trace_itself(monkeypatch):
    """Where each replay is dear (a campaign's failing example, its settle run to the bound), the event budget
    ends minimization before the replay count does: EVENTS_PER_TRACE times the trace's own events."""
    from kmodel.checker import minimize as module

    # the whole trace once, then replays until the budget is spent
    assert _replays_within_the_event_budget(monkeypatch, 100, 20_000) == module.EVENTS_PER_TRACE
    # ... and never more than MAX_EVENTS in all
    assert _replays_within_the_event_budget(monkeypatch, 100, 200_000) == module.MAX_EVENTS // 200_000


def test_a_cheap_trace_gets_at_least_the_least_event_budget(monkeypatch):
    """A trace that replays in a few thousand events still gets MIN_EVENTS for its replays (60 times its own
    would end minimization within seconds, a long campaign trace half cut)."""
    from kmodel.checker import minimize as module

    assert _replays_within_the_event_budget(monkeypatch, 300, 2_000) == module.MIN_EVENTS // 2_000


def test_a_cut_replays_interleaving_and_fault_steps_leniently_and_records_what_ran():
    """After a cut, a Fire runs only its events still enabled (recorded as just those), and a fault whose event is
    no longer enabled is skipped: cutting an action a later interleaving step depended on no longer makes the
    whole candidate impossible. What the session records replays exactly."""
    from kmodel.checker.actions import Compact, Fault, Fire
    from kmodel.checker.minimize import execute_leniently
    from kmodel.loop.events import Deliver, DropHead, Work

    config = ClusterConfig(nodes=2, apiservers=2, seed=1)
    session = Session(config, all_invariants())
    for action in PREFIX:
        session.execute(action)
    done = len(session.actions)
    execute_leniently(session, Fire((Work("kubectl"),)))  # nothing queued: skipped whole
    execute_leniently(session, Fault(DropHead("kubectl", "apiserver-0")))  # an empty link: skipped
    execute_leniently(session, Compact(session.cluster.store.revision + 5))  # writes that were cut: skipped
    assert len(session.actions) == done
    execute_leniently(session, ApplyService("api"))
    execute_leniently(session, Fire((Deliver("scheduler", "etcd"), Work("kubectl"))))
    assert session.actions[done:] == [ApplyService("api"), Fire((Work("kubectl"),))]
    again = replay(Trace(config, tuple(session.actions)))
    assert again.violation is None and again.digest == session.digest()


# -- the second pass: simpler arguments ---------------------------------------------------------------------------

#: scaling web to 0 and back up leaves the Service without reachable pods in this variant; so does a single
#: scale, and the scale-up's 3 replicas are more than the failure needs
SCALED_BACK = PREFIX + (ScaleDeployment("web", 0), RunFair(20_000), ScaleDeployment("web", 3), SETTLE)


def test_minimize_simplifies_the_arguments_of_the_actions_it_keeps():
    """After the cuts, each action's arguments go toward their simplest values while the same invariant fails:
    the scale needs 1 replica, not 3. Without the pass, 3 stays."""
    from kmodel.checker.minimize import minimize_trace

    trace = failing_trace(SCALED_BACK)
    assert trace.violation.invariant == "service-reachability"
    result = minimize_trace(trace, keep_prefix=len(PREFIX))
    assert result.trace.actions == PREFIX + (ScaleDeployment("web", 1), SETTLE)
    assert result.simplified == ("scale-deployment: replicas 3 -> 1",)
    assert result.cut_actions == len(PREFIX) + 3  # the cuts took the run out; simplifying took nothing more
    again = replay(result.trace)
    assert again.violation is not None and again.violation.invariant == "service-reachability"
    cut_only = minimize_trace(trace, keep_prefix=len(PREFIX), simplify=False)
    assert ScaleDeployment("web", 3) in cut_only.trace.actions and cut_only.simplified == ()
    # the same trace minimizes to the same trace: orders are fixed, budgets are counts
    assert minimize_trace(trace, keep_prefix=len(PREFIX)) == result


class _Failing:
    """A stand-in for a replay's session: only the whole trace's first replay fails."""

    def dispose(self):
        pass


def _replays_of_both_passes(monkeypatch, filler, events_per_replay: int, simplify: bool) -> int:
    from kmodel.checker import minimize as module

    trace = Trace(ClusterConfig(), PREFIX + filler + (SETTLE,), expect={"fail": "x"}, violation=Violation("x", "m", 1))
    calls = []

    def init(self, *args, **kwargs):
        self.replays = self.events = self.stopped_after = 0

    def fails(self, rest, invariant):
        self.replays += 1
        self.events += events_per_replay
        calls.append(tuple(rest))
        return _Failing() if self.replays == 1 else None

    monkeypatch.setattr(module._Runner, "__init__", init)
    monkeypatch.setattr(module._Runner, "fails", fails)
    assert module.minimize(trace, keep_prefix=len(PREFIX), simplify=simplify) == trace
    return len(calls)


def test_the_simplifying_pass_has_a_replay_budget_of_its_own(monkeypatch):
    """Every action here has six simpler variants and none fails: the second pass stops at its own budget,
    SIMPLIFY_REPLAYS_PER_ACTION replays per action (the cuts spent theirs first, as without it)."""
    from kmodel.checker import minimize as module

    filler = tuple(ApplyDeployment("api", 4, 500, True) for _ in range(100))
    cuts = _replays_of_both_passes(monkeypatch, filler, 1, simplify=False)
    both = _replays_of_both_passes(monkeypatch, filler, 1, simplify=True)
    assert both - cuts == module.SIMPLIFY_REPLAYS_PER_ACTION * (len(filler) + 1) < 6 * len(filler)


def test_the_simplifying_pass_spends_at_most_half_the_cuts_event_budget(monkeypatch):
    """Where replays are dear, the second pass stops at its share of model events: half the cuts' budget."""
    from kmodel.checker import minimize as module

    filler = tuple(ApplyDeployment("api", 4, 500, True) for _ in range(100))
    cuts = _replays_of_both_passes(monkeypatch, filler, 20_000, simplify=False)
    both = _replays_of_both_passes(monkeypatch, filler, 20_000, simplify=True)
    assert cuts == module.EVENTS_PER_TRACE
    assert both - cuts == module.EVENTS_PER_TRACE // module.SIMPLIFY_EVENTS_DIVISOR


def test_a_simplification_that_ends_the_trace_earlier_drops_what_no_longer_runs(monkeypatch):
    """A simpler action may make a safety invariant fail at once: the trace then ends there, and the actions
    after it, which no replay runs any more, are neither simplified nor reported as simplified."""
    from kmodel.checker import minimize as module

    class Session:
        def __init__(self, actions, at):
            self.actions, self.config, self.boot_revision = list(actions), ClusterConfig(), 0
            self.violation = Violation("x", "m", at)

        def dispose(self):
            pass

    filler = (ScaleDeployment("web", 3), ScaleDeployment("api", 4), RunFair(30_000))
    trace = Trace(ClusterConfig(), PREFIX + filler + (SETTLE,), expect={"fail": "x"}, violation=Violation("x", "m", 6))

    def init(self, *args, **kwargs):
        self.replays = self.events = self.stopped_after = 0

    def fails(self, rest, invariant):
        # fails at the settle while web scales to 3; scaled to 2 or fewer, it fails at once (a safety invariant)
        self.replays += 1
        self.events += 1
        web = next((a for a in rest if isinstance(a, ScaleDeployment) and a.app == "web"), None)
        if web is None:
            return None
        if web.replicas <= 2:
            self.stopped_after = rest.index(web) + 1
            return Session(PREFIX + tuple(rest[:self.stopped_after]), len(PREFIX) + rest.index(web))
        self.stopped_after = len(rest)
        return Session(PREFIX + tuple(rest), len(PREFIX) + len(rest) - 1)

    monkeypatch.setattr(module._Runner, "__init__", init)
    monkeypatch.setattr(module._Runner, "fails", fails)
    result = module.minimize_trace(trace, keep_prefix=len(PREFIX))
    assert result.trace.actions == PREFIX + (ScaleDeployment("web", 0),)
    assert result.simplified == ("scale-deployment: replicas 3 -> 0",)
