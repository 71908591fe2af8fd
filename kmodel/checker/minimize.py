"""Minimizing a failing trace after Hypothesis has shrunk it: delta debugging over its actions.

Theory of operation
-------------------
Hypothesis shrinks the choices an example drew, within a budget of successful shrinks (run.MAX_SHRINKS); it
often spends them making steps simpler rather than removing them, and leaves traces of 30-odd actions of which
a handful matter. Actions are data and a replay is exact, so the trace itself can be cut further: `minimize`
removes chunks of actions (halves, then quarters, ... then single actions, Zeller's ddmin) and keeps a cut
whenever the shorter trace, replayed from the start, still violates the same invariant. A cut may make later
loop events impossible (a `Fire` delivering a message that is no longer sent, a fault on a link now empty):
those events are skipped in the replay (`execute_leniently`), and the trace kept is what the replay did run,
which replays exactly. A cut that makes any other action impossible simply does not fail, and is not kept.

What is never cut: the first `keep_prefix` actions (the checker's initial workload and warm-up, which every
trace shares) and the last one (the step that broke the invariant: for a liveness failure, the final settle).
A safety violation may come earlier in a cut trace; the trace then ends there.

Cost: one replay per candidate, started from a snapshot of the session after the kept prefix (restored, not
rebuilt), at most `max_replays` of them, and in all at most EVENTS_PER_TRACE times the model events of the
trace itself (but MIN_EVENTS at least) and never more than MAX_EVENTS: counts, so the result is a function
of the trace, never of the machine's speed.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from kmodel.checker.actions import Action, Compact, FailContainer, Fault, Fire
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.checker.snapshot import Snapshot, SnapshotError
from kmodel.checker.trace import Trace, Violation
from invariants.registry import Invariant

#: replays one minimization may spend: at least MAX_REPLAYS, and REPLAYS_PER_ACTION for each action it may cut
#: (ddmin needs about that many to reach single actions; a campaign's 100-step example left at 44 actions by
#: 120 replays comes down to 8 with 300) ...
MAX_REPLAYS = 120
REPLAYS_PER_ACTION = 6
#: ... and at most this many times the model events of the trace itself, all replays together: a campaign's
#: failing example can cost a second or more per replay (a settle run to its 600 s bound in a grown cluster),
#: so 6 replays per action alone could take minimization past ten minutes. Counts, never time: the result stays a
#: function of the trace.
EVENTS_PER_TRACE = 60
#: ... and never more than this many in all (minutes of replaying) ...
MAX_EVENTS = 3_000_000
#: ... but at least this many: a cheap trace (a long campaign trace replayed in a few thousand events) would
#: spend its 60 times in seconds, and be left long where a few of its actions were the cause
MIN_EVENTS = 1_000_000


class _Runner:
    """Replays candidate action lists after a fixed prefix, from a snapshot of the prefix's session."""

    def __init__(self, trace: Trace, prefix: Sequence[Action], invariants: Optional[Sequence[Invariant]] = None) -> None:
        self.trace = trace
        self.invariants = list(invariants) if invariants is not None else all_invariants()
        self.replays = 0
        self.events = 0  # model events all replays applied (after the prefix)
        session = self._fresh()
        for action in prefix:
            session.execute(action)
        try:
            self.snapshot: Optional[Snapshot] = Snapshot(session, shared=tuple(self.invariants))
        except SnapshotError:
            self.snapshot = None
        self.prefix = tuple(prefix)

    def _fresh(self) -> Session:
        return Session(self.trace.config, self.invariants, variant=self.trace.variant)

    def _start(self) -> Session:
        if self.snapshot is not None:
            return self.snapshot.restore()
        session = self._fresh()
        for action in self.prefix:
            session.execute(action)
        return session

    def fails(self, rest: Sequence[Action], invariant: str) -> Optional[Session]:
        """The session if `prefix + rest` violates `invariant` (it stops at the violation), else None. The
        interleaving and fault steps are replayed leniently (`execute_leniently`); the session records what
        did run, so its actions replay exactly."""
        self.replays += 1
        session = self._start()
        started = session.events_applied
        try:
            for action in rest:
                execute_leniently(session, action)
        except InvariantViolation as violation:
            if violation.invariant == invariant:
                self.events += session.events_applied - started
                return session
        except Exception:  # noqa: BLE001 — a cut the model cannot replay (an action no longer possible) does not fail
            pass
        self.events += session.events_applied - started
        session.dispose()  # not kept: free it now (Session.dispose)
        return None


def execute_leniently(session: Session, action: Action) -> None:
    """Execute `action`, except that a cut may have made some of its loop events impossible: a `Fire` runs the
    events enabled when their turn comes and skips the others (skipped whole if none is enabled at its
    start), and a `Fault` whose event is not enabled is skipped, as is a `Compact` the store cannot take now (fewer
    writes before it) or a `FailContainer` of a container not running now. Without this, cutting one action that an
    interleaving step depended on (the message it delivered, the timer it fired) made every later such step
    impossible, and traces heavy with them kept dozens of actions."""
    loop = session.cluster.loop
    if isinstance(action, Fault):
        if loop.is_enabled(action.event):
            session.execute(action)
        return
    if isinstance(action, (Compact, FailContainer)):
        if action.fits(session.cluster):
            session.execute(action)
        return
    if not isinstance(action, Fire):
        session.execute(action)
        return
    if not any(loop.is_enabled(e) for e in action.events):
        return
    ran: list = []

    def run() -> None:
        for event in action.events:
            if loop.is_enabled(event):
                loop.step(event)
                ran.append(event)

    session._execute(None, run, lambda: Fire(tuple(ran)))  # noqa: SLF001 (records what ran, as a burst does)


def minimize(trace: Trace, *, keep_prefix: int, max_replays: Optional[int] = None,
             invariants: Optional[Sequence[Invariant]] = None,
             on_replay: Optional[Callable[[int, int, int], None]] = None) -> Trace:
    """A trace with as few actions as ddmin finds within `max_replays` replays (default: MAX_REPLAYS, or
    REPLAYS_PER_ACTION for each action that may be cut if that is more) that still violates the same
    invariant as `trace` (which must carry its violation); `trace` itself if nothing could be cut. Replays
    check `invariants` (default: every registered one; a campaign passes its machine's, so that a
    subclass's own invariants are minimized too). `on_replay` is told, after each replay, the replays run, the
    most there may be, and the actions the shortest failing trace so far has (the progress bar)."""
    if trace.violation is None:
        raise ValueError("only a failing trace can be minimized")
    invariant = trace.violation.invariant
    actions = list(trace.actions)
    if len(actions) <= keep_prefix + 2:
        return trace
    if max_replays is None:
        max_replays = max(MAX_REPLAYS, REPLAYS_PER_ACTION * (len(actions) - keep_prefix - 1))
    runner = _Runner(trace, actions[:keep_prefix], invariants)
    body, last = actions[keep_prefix:-1], actions[-1]
    # the trace itself, replayed once: what it costs sets the event budget (and it must fail as reported)
    whole = runner.fails(body + [last], invariant)
    if whole is None:
        return trace
    max_events = min(max(EVENTS_PER_TRACE * runner.events, MIN_EVENTS), MAX_EVENTS)
    whole.dispose()

    def spent() -> bool:
        return runner.replays >= max_replays or runner.events >= max_events

    best: Optional[Session] = None
    chunks = 2
    while len(body) >= 1 and not spent():
        size = max(1, -(-len(body) // chunks))  # ceil
        cut = False
        for start in range(0, len(body), size):
            if spent():
                break
            candidate = body[:start] + body[start + size:]
            session = runner.fails(candidate + [last], invariant)
            if session is not None:
                if best is not None:
                    best.dispose()  # superseded by a shorter one
                body, best, cut = candidate, session, True
            if on_replay is not None:
                on_replay(runner.replays, max_replays, keep_prefix + len(body) + 1)
            if cut:
                chunks = max(chunks - 1, 2)
                break
        if not cut:
            if size == 1:
                break
            chunks = min(chunks * 2, len(body))
    if best is None:
        return trace
    violation = best.violation
    assert violation is not None
    return Trace(best.config, tuple(best.actions), trace.variant, {"fail": invariant},
                 Violation(violation.invariant, violation.message, violation.step),
                 boot_revision=best.boot_revision)
