"""Minimizing a failing trace after Hypothesis has shrunk it: cutting its actions, then simplifying their arguments.

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

Then a second pass simplifies what is left, so the trace reads with the fewest moving parts: each action in
turn, from the first after the prefix to the last, is replaced by its simpler variants (`Action.simpler`,
declared by each action class next to its fields, kmodel.checker.simpler: the first node, the smallest count,
no extras, a fault's defaults), simplest first; the first whose replay still violates the same invariant is
kept and its own variants are tried next, and rounds over every action repeat until one keeps nothing. A
variant the model refuses (an invalid argument, an action no longer possible) does not fail the same way and
is not kept. If anything was simplified, the cuts are tried again (a simpler action may make another
unnecessary). What was simplified is reported (`Minimized.simplified`), one line per action.

What is never cut: the first `keep_prefix` actions (the checker's initial workload and warm-up, which every
trace shares) and the last one (the step that broke the invariant: for a liveness failure, the final settle).
A safety violation may come earlier in a cut trace; the trace then ends there. The prefix is never simplified
either; the last action is (a settle has nothing simpler: its bounds are the checker's).

A machine with components of its own (KmodelMachine.extra_components) is minimized the same way: each replay
builds the trace's cluster with fresh copies of them (`components`, the machine's `replay_components`) and
checks the machine's invariants, so a bug in a controller of your own shrinks as one in the model does.

Cost: one replay per candidate, started from a snapshot of the session after the kept prefix (restored, not
rebuilt). The cuts: at most `max_replays` replays, and in all at most EVENTS_PER_TRACE times the model events
of the trace itself (but MIN_EVENTS at least) and never more than MAX_EVENTS. The second pass (simplifying,
then cutting again) has a budget of its own, so that a long trace whose cuts spent theirs is still simplified:
SIMPLIFY_REPLAYS_PER_ACTION replays per action (SIMPLIFY_REPLAYS at least) and half the cuts' model events.
Counts, so the result is a function of the trace, never of the machine's speed.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

import attrs

from kmodel.checker.actions import Action, Compact, FailContainer, Fault, Fire
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.checker.simpler import describe_change
from kmodel.checker.snapshot import Snapshot, SnapshotError
from kmodel.checker.trace import Trace, Violation
from kmodel.invariants.registry import Invariant

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
#: the second pass (simplifying arguments, then cutting again) has a budget of its own, so a long trace whose
#: cuts spent theirs still gets simplified: at least SIMPLIFY_REPLAYS replays, or SIMPLIFY_REPLAYS_PER_ACTION
#: for each action after the prefix if that is more (an action's variants are a handful, and a kept one is
#: simplified again) ...
SIMPLIFY_REPLAYS = 60
SIMPLIFY_REPLAYS_PER_ACTION = 4
#: ... and model events at most the cuts' event budget divided by this
SIMPLIFY_EVENTS_DIVISOR = 2


class _Runner:
    """Replays candidate action lists after a fixed prefix, from a snapshot of the prefix's session."""

    def __init__(self, trace: Trace, prefix: Sequence[Action], invariants: Optional[Sequence[Invariant]] = None,
                 components: Optional[Callable[[], Iterable[Any]]] = None) -> None:
        self.trace = trace
        self.invariants = list(invariants) if invariants is not None else all_invariants()
        self.components = components
        self.replays = 0
        self.events = 0  # model events all replays applied (after the prefix)
        self.stopped_after = 0  # the actions of the last replay's `rest` that ran, the violating one included
        session = self._fresh()
        for action in prefix:
            session.execute(action)
        try:
            self.snapshot: Optional[Snapshot] = Snapshot(session, shared=tuple(self.invariants))
        except SnapshotError:
            self.snapshot = None
        self.prefix = tuple(prefix)

    def _fresh(self) -> Session:
        extra = self.components() if self.components is not None else ()
        return Session(self.trace.config, self.invariants, variant=self.trace.variant, extra_components=extra)

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
        self.stopped_after = 0
        try:
            for action in rest:
                self.stopped_after += 1
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


@attrs.frozen
class Minimized:
    """What `minimize_trace` made of a failing trace: the `trace` left, the actions left by the cuts alone
    (`cut_actions`), the replays run (`replays`, of at most `replays_budget`, both passes together), and each
    simplification kept (`simplified`, one line each: ``scale-deployment: replicas 3 -> 0``)."""

    trace: Trace
    cut_actions: int
    replays: int
    replays_budget: int
    simplified: tuple[str, ...] = ()


@attrs.frozen
class _Slot:
    """One action of the trace being minimized: as the trace had it, and as it is now (simplified or not)."""

    original: Action
    current: Action


class _Search:
    """The state both passes share: the actions after the prefix (`body`, then `last`), the shortest failing
    session so far, and where its replay stopped."""

    def __init__(self, runner: _Runner, invariant: str, body: list[_Slot], last: _Slot,
                 on_replay: Optional[Callable[[int, int, int], None]], most: int, keep_prefix: int) -> None:
        self.runner, self.invariant = runner, invariant
        self.body, self.last = body, last
        self.best: Optional[Session] = None
        self.stopped_after = len(body) + 1  # the actions of body + last the best replay ran
        self.on_replay, self.most, self.keep_prefix = on_replay, most, keep_prefix

    def fails(self, body: list[_Slot], last: _Slot) -> bool:
        """Replay `body` + `last`; if that violates the invariant, keep it as the best so far."""
        session = self.runner.fails([s.current for s in body] + [last.current], self.invariant)
        if session is not None:
            if self.best is not None:
                self.best.dispose()  # superseded
            self.body, self.last, self.best = body, last, session
            self.stopped_after = self.runner.stopped_after
        if self.on_replay is not None:
            self.on_replay(self.runner.replays, self.most, self.keep_prefix + len(self.body) + 1)
        return session is not None

    def end_at_the_violation(self) -> None:
        """Drop what the best replay never ran: a safety violation can come before the last action, and the
        trace then ends there (the violating action becomes the last)."""
        slots = self.body + [self.last]
        if self.best is not None and self.stopped_after < len(slots):
            self.body, self.last = slots[:self.stopped_after - 1], slots[self.stopped_after - 1]


def _cut(search: _Search, spent: Callable[[], bool]) -> None:
    """Zeller's ddmin over `search.body`: cut chunks (halves, quarters, ... single actions), keeping a cut while the
    invariant still fails, until single actions cannot be cut or `spent()`."""
    chunks = 2
    while len(search.body) >= 1 and not spent():
        body = search.body
        size = max(1, -(-len(body) // chunks))  # ceil
        cut = False
        for start in range(0, len(body), size):
            if spent():
                break
            if search.fails(body[:start] + body[start + size:], search.last):
                cut = True
                chunks = max(chunks - 1, 2)
                break
        if not cut:
            if size == 1:
                break
            chunks = min(chunks * 2, len(search.body))


def _simplify(search: _Search, spent: Callable[[], bool]) -> bool:
    """Simplify each action's arguments in turn (`Action.simpler`: its variants, simplest first), keeping the first
    variant whose replay still fails and then trying that one's variants, until a round over every action keeps
    none or `spent()`. True if any was kept."""
    kept_any = True
    kept = False
    while kept_any and not spent():
        kept_any = False
        search.end_at_the_violation()
        i = 0
        while i < len(search.body) + 1 and not spent():
            slots = search.body + [search.last]
            slot = slots[i]
            kept_one = False
            for variant in slot.current.simpler():
                if spent():
                    break
                candidate = slots[:i] + [_Slot(slot.original, variant)] + slots[i + 1:]
                if search.fails(candidate[:-1], candidate[-1]):
                    kept_one = kept_any = kept = True
                    search.end_at_the_violation()
                    break
            if not kept_one:
                i += 1  # no variant of this one fails: on to the next (a kept one is tried again, simplified)
    return kept


def minimize_trace(trace: Trace, *, keep_prefix: int, max_replays: Optional[int] = None,
                   invariants: Optional[Sequence[Invariant]] = None,
                   on_replay: Optional[Callable[[int, int, int], None]] = None, simplify: bool = True,
                   components: Optional[Callable[[], Iterable[Any]]] = None) -> Minimized:
    """Cut `trace`'s actions (ddmin within `max_replays` replays, default: MAX_REPLAYS, or REPLAYS_PER_ACTION for
    each action that may be cut if that is more), then, with `simplify`, simplify the arguments of those left and
    cut again, within the second pass's own budget (SIMPLIFY_REPLAYS, or SIMPLIFY_REPLAYS_PER_ACTION per action
    if that is more), keeping every change whose replay violates the same invariant as `trace` (which must
    carry its violation). Replays check `invariants` (default: every registered one; a campaign passes its
    machine's, so that a subclass's own invariants are minimized too) and run, besides the cluster's own
    components, those `components()` returns, fresh for each replay (a machine's own: its
    `replay_components`; the components the trace's configuration names are rebuilt from it anyway). `on_replay` is told, after each replay,
    the replays run, the most there may be (both passes), and the actions the shortest failing trace so far has
    (the progress bar)."""
    if trace.violation is None:
        raise ValueError("only a failing trace can be minimized")
    invariant = trace.violation.invariant
    actions = list(trace.actions)
    may_change = len(actions) - keep_prefix - 1  # the actions after the prefix, the last one aside
    if max_replays is None:
        max_replays = max(MAX_REPLAYS, REPLAYS_PER_ACTION * may_change)
    simplify_replays = max(SIMPLIFY_REPLAYS, SIMPLIFY_REPLAYS_PER_ACTION * (may_change + 1)) if simplify else 0
    as_it_is = Minimized(trace, len(actions), 0, max_replays + simplify_replays)
    if len(actions) <= keep_prefix + (1 if simplify else 2):
        return as_it_is
    runner = _Runner(trace, actions[:keep_prefix], invariants, components)
    search = _Search(runner, invariant, [_Slot(a, a) for a in actions[keep_prefix:-1]],
                     _Slot(actions[-1], actions[-1]), on_replay, max_replays + simplify_replays, keep_prefix)
    # the trace itself, replayed once: what it costs sets the event budget (and it must fail as reported)
    whole = runner.fails(actions[keep_prefix:], invariant)
    if whole is None:
        return as_it_is
    max_events = min(max(EVENTS_PER_TRACE * runner.events, MIN_EVENTS), MAX_EVENTS)
    whole.dispose()

    if len(actions) > keep_prefix + 2:  # two actions or more to cut from
        _cut(search, lambda: runner.replays >= max_replays or runner.events >= max_events)
    cut_actions = keep_prefix + len(search.body) + 1
    if simplify:
        replays, events = runner.replays, runner.events
        simplify_events = max_events // SIMPLIFY_EVENTS_DIVISOR

        def spent() -> bool:
            return runner.replays - replays >= simplify_replays or runner.events - events >= simplify_events

        if _simplify(search, spent):
            _cut(search, spent)  # a simpler action may have made another unnecessary
        search.end_at_the_violation()
    best = search.best
    if best is None:
        return as_it_is
    violation = best.violation
    assert violation is not None
    changed = tuple(describe_change(s.original, s.current) for s in search.body + [search.last]
                    if s.current != s.original)
    return Minimized(Trace(best.config, tuple(best.actions), trace.variant, {"fail": invariant},
                           Violation(violation.invariant, violation.message, violation.step),
                           boot_revision=best.boot_revision),
                     cut_actions, runner.replays, max_replays + simplify_replays, changed)


def minimize(trace: Trace, *, keep_prefix: int, max_replays: Optional[int] = None,
             invariants: Optional[Sequence[Invariant]] = None,
             on_replay: Optional[Callable[[int, int, int], None]] = None, simplify: bool = True,
             components: Optional[Callable[[], Iterable[Any]]] = None) -> Trace:
    """The trace `minimize_trace` leaves (`trace` itself if nothing could be cut or simplified)."""
    return minimize_trace(trace, keep_prefix=keep_prefix, max_replays=max_replays, invariants=invariants,
                          on_replay=on_replay, simplify=simplify, components=components).trace
