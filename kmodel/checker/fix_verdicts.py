"""Which known fix takes a violation out: the trace replayed once with each fix of its invariant turned on.

`kmodel fixes` knows which fixes answer which invariant (`Fix.invariants`), but an invariant can be violated by
several bugs (converges-replicas answers to four fixes). So each fix that names the violated invariant, and is
not already on in the trace, is tried: the trace is replayed with it on, leniently (a fixed model makes other
moves, and the trace's interleaving and fault steps whose events are no longer enabled are skipped, as
`kmodel replay --fix NAME --lenient` does). The fix takes the violation out when that replay violates nothing.
A replay that violates another invariant, or the same one, says so.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from kmodel.checker.replay import replay
from kmodel.checker.session import TraceDiverged
from kmodel.checker.trace import Trace
from kmodel.fixes import FIXES
from kmodel.report.story import FixVerdict


#: what a replay command is given to replay with a fix on, leniently (`kmodel replay`'s options)
REPLAY_FIX_OPTIONS = "--fix {fix} --lenient"


def fix_verdicts(trace: Trace, replay_command: str, *, invariants: Optional[Iterable[Any]] = None,
                 components: Optional[Callable[[], Iterable[Any]]] = None,
                 fix_options: str = REPLAY_FIX_OPTIONS) -> tuple[FixVerdict, ...]:
    """One verdict per known fix of the trace's violated invariant not already on; those that take it out first.
    `replay_command` is the command that replays the trace, to which `fix_options` (``--fix NAME --lenient``)
    is added. `invariants` and `components` are those of the machine that recorded the trace (see `replay`)."""
    violation = trace.violation
    if violation is None:
        return ()
    invariants = list(invariants) if invariants is not None else None
    verdicts = []
    for fix in FIXES:
        if violation.invariant not in fix.invariants or fix.name in trace.config.fixes:
            continue
        command = f"{replay_command} {fix_options.format(fix=fix.name)}"
        verdicts.append(_verdict(trace, fix, command, invariants, components))
    return tuple(sorted(verdicts, key=lambda v: not v.takes_out))


def _verdict(trace: Trace, fix: Any, command: str, invariants: Optional[list],
             components: Optional[Callable[[], Iterable[Any]]]) -> FixVerdict:
    try:
        result = replay(trace, fixes=(fix.name,), lenient=True, record_messages=False, invariants=invariants,
                        components=components)
    except TraceDiverged as exc:  # lenient replays skip what is not enabled; kept for a trace that still cannot
        return FixVerdict(fix.name, False, f"the trace does not fit the fixed model ({exc})", command,
                          fix.bug, fix.upstream)
    lost = f" ({result.skipped} of {len(trace.actions)} steps lost events on the fixed model)" if result.skipped else ""
    if result.violation is None:
        return FixVerdict(fix.name, True, f"with it on, the trace violates no invariant{lost}", command,
                          fix.bug, fix.upstream)
    v = result.violation
    same = "still violates" if v.invariant == trace.violation.invariant else "violates"
    return FixVerdict(fix.name, False, f"with it on, the trace {same} {v.invariant} after step {v.step + 1}{lost}",
                      command, fix.bug, fix.upstream)
