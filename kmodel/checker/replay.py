"""Replay: apply a trace's actions again, without Hypothesis, and say what happened.

`replay(trace)` builds the trace's cluster, executes its actions one by one through a `Session` (so the same
invariants are checked the same way as during the search) and returns a `ReplayResult`: the steps executed,
the violation (or None), the messages delivered at each step (recorded by a tap on the loop, for the report's
sequence diagram) and the session's digest. `on_step(index, action)` is called before each step, which is how
`kmodel replay` prints as it goes. A trace recorded on a model that booted at another store revision has its
compactions moved to match (trace.fitted). A trace whose moves the model no longer makes raises `TraceDiverged`,
unless `lenient`: then its interleaving and fault steps are replayed as the minimizer replays them (the events
not enabled when their turn comes are skipped), and `skipped` counts the steps that lost events. `fixes` are
turned on besides the trace's own (kmodel.fixes). `invariants` (default: every registered one) and `components`
(a function returning fresh components to run besides the cluster's own) are those of the machine that recorded
the trace, for a machine of the pytest plugin's with its own (KmodelMachine.replay_components).

With `record_changes` (or an `on_changes(changes)` callback, called after each step), a `ChangeRecorder`
(kmodel.checker.changes) looks at the cluster before the first step and after each one, the failing one
included: `changes` holds what each step changed, and `recorder` what it saw (for the report's focus and final
states). Step numbers: `on_step` and `StepChanges.step` count from 0; people read them from 1 (`kmodel replay`
prints "1." for the first step, as the report does).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import attrs

from kmodel.checker.actions import Action
from kmodel.checker.changes import ChangeRecorder
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.checker.trace import Trace, fitted
from kmodel.invariants.registry import Invariant
from kmodel.checker.minimize import execute_leniently


@attrs.frozen
class ReplayResult:
    steps: tuple[str, ...]  # readable names of the actions executed
    violation: Optional[InvariantViolation]
    messages: tuple[tuple[int, str, str, str], ...]
    digest: str
    skipped: int = 0  # lenient replays: steps that lost some or all of their events
    changes: tuple = ()  # StepChanges per step executed, when recorded
    recorder: Optional[ChangeRecorder] = attrs.field(default=None, eq=False, repr=False)

    @property
    def passed(self) -> bool:
        return self.violation is None


def replay(
    trace: Trace,
    *,
    variant: Optional[str] = None,
    invariants: Optional[Iterable[Invariant]] = None,
    record_messages: bool = True,
    on_step: Optional[Callable[[int, Action], None]] = None,
    fixes: Iterable[str] = (),
    lenient: bool = False,
    record_changes: bool = False,
    on_changes: Optional[Callable[[Any], None]] = None,
    components: Optional[Callable[[], Iterable[Any]]] = None,
) -> ReplayResult:
    config = attrs.evolve(trace.config, fixes=(*trace.config.fixes, *fixes))
    session = Session(config, all_invariants() if invariants is None else invariants,
                      variant=variant or trace.variant, record_messages=record_messages,
                      extra_components=components() if components is not None else ())
    trace = fitted(trace, session.boot_revision)
    recorder = ChangeRecorder(session.cluster) if record_changes or on_changes is not None else None
    violation = None
    skipped = 0
    for i, action in enumerate(trace.actions):
        if on_step is not None:
            on_step(i, action)
        try:
            if lenient:
                before = len(session.actions)
                execute_leniently(session, action)
                if len(session.actions) == before or session.actions[-1] != action:
                    skipped += 1
            else:
                session.execute(action)
        except InvariantViolation as exc:
            violation = exc
        if recorder is not None:
            change = recorder.after_step(i)
            if on_changes is not None:
                on_changes(change)
        if violation is not None:
            break
    return ReplayResult(tuple(a.name for a in session.actions), violation, tuple(session.messages),
                        session.digest(), skipped, tuple(recorder.changes) if recorder else (), recorder)
