"""Which known fix takes a violation out: the trace replayed once with each fix of its invariant turned on.

`kmodel fixes` knows which fixes answer which invariant (`Fix.invariants`), but an invariant can be violated by
several bugs (converges-replicas answers to four fixes). So each fix that names the violated invariant, and is
not already on in the trace, is tried: the trace is replayed with it on, leniently (a fixed model makes other
moves, and the trace's interleaving and fault steps whose events are no longer enabled are skipped, as
`kmodel replay --fix NAME --lenient` does). The fix takes the violation out when that replay violates nothing.
A replay that violates another invariant, or the same one, says so.
"""

from __future__ import annotations

from typing import Any

from kmodel.checker.replay import replay
from kmodel.checker.session import TraceDiverged
from kmodel.checker.trace import Trace
from kmodel.fixes import FIXES
from kmodel.report.story import FixVerdict


def fix_verdicts(trace: Trace, replay_command: str) -> tuple[FixVerdict, ...]:
    """One verdict per known fix of the trace's violated invariant not already on; those that take it out first.
    `replay_command` is the command that replays the trace, to which ``--fix NAME --lenient`` is added."""
    violation = trace.violation
    if violation is None:
        return ()
    verdicts = []
    for fix in FIXES:
        if violation.invariant not in fix.invariants or fix.name in trace.config.fixes:
            continue
        command = f"{replay_command} --fix {fix.name} --lenient"
        verdicts.append(_verdict(trace, fix, command))
    return tuple(sorted(verdicts, key=lambda v: not v.takes_out))


def _verdict(trace: Trace, fix: Any, command: str) -> FixVerdict:
    try:
        result = replay(trace, fixes=(fix.name,), lenient=True, record_messages=False)
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
