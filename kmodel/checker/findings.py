"""The distinct violations of a `kmodel check --keep-going` run: each known upstream bug and each new finding once.

A keep-going run (KmodelMachine.keep_going) hands every example that ended on a violation to its sink, which
keeps it as a `Seen`: the example's number and its trace (its actions up to the violating one), and explores
on. `minimize_findings` then sorts them out. Two violations are one finding when they violate the same
invariant and the same known fix takes them out: the first fix, in kmodel.fixes' order, whose lenient replay
of the trace violates nothing (kmodel.checker.fix_verdicts, as the report judges each fix), or no known fix
does (a new finding, not one of the upstream bugs the project knows). Of each finding's examples the one
with the fewest actions (the first found, on a tie) is minimized by replay (kmodel.checker.minimize: whole
actions cut, arguments simplified; Hypothesis never shrank it, since it never heard of it). The minimized
trace is reported when it is still the same finding (the same fix takes it out, or still none does); else
the example's own trace is, so that a finding's class always agrees with its trace's fix verdicts.

Findings are listed in the order their first example was found. Everything is a function of the traces,
hence of the seed: the same seed gives the same findings and traces.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

import attrs

from kmodel.checker.fix_verdicts import fix_verdicts
from kmodel.checker.minimize import minimize_trace
from kmodel.checker.trace import ShrinkRecord, Trace


@attrs.frozen
class Seen:
    """One example of a keep-going run that ended on a violation: its number (1-based, as the run counts
    examples) and its trace."""

    example: int
    trace: Trace


@attrs.frozen
class Finding:
    """One distinct violation: its reported `trace` (minimized), how it was cut down (`shrink`), the known fix
    that takes it out (None: a new finding) and the examples that ended on it."""

    trace: Trace
    shrink: ShrinkRecord
    known_fix: Optional[str]
    examples: tuple[int, ...]

    def report_fields(self) -> dict[str, Any]:
        """What report.json's entry of this violation adds (kmodel.checker.results)."""
        return {"known_fix": self.known_fix, "examples": len(self.examples), "first_example": self.examples[0]}

    def to_json(self) -> dict[str, Any]:
        """Plain data, as a parallel run's shard sends it back (kmodel.checker.shards)."""
        return {"trace": self.trace.to_json(), "shrink": self.shrink.to_json(), "known_fix": self.known_fix,
                "examples": list(self.examples)}


def known_fix(trace: Trace, *, invariants: Optional[list] = None,
              components: Optional[Callable[[], Iterable[Any]]] = None) -> Optional[str]:
    """The first known fix (kmodel.fixes' order) that takes the trace's violation out, or None."""
    for verdict in fix_verdicts(trace, "", invariants=invariants, components=components):
        if verdict.takes_out:
            return verdict.name
    return None


def minimize_findings(seen: Sequence[Seen], *, keep_prefix: int, invariants: Optional[list] = None,
                      components: Optional[Callable[[], Iterable[Any]]] = None,
                      on_replay: Optional[Callable[[int, int, int], None]] = None) -> tuple[Finding, ...]:
    """The distinct findings among `seen` (in the order the run found them), each minimized (see the module
    docstring). `keep_prefix`, `invariants`, `components` and `on_replay` are minimize_trace's."""
    groups: dict[tuple[str, Optional[str]], list[Seen]] = {}
    for s in seen:
        assert s.trace.violation is not None
        fix = known_fix(s.trace, invariants=invariants, components=components)
        groups.setdefault((s.trace.violation.invariant, fix), []).append(s)
    findings = []
    for (invariant, fix), members in groups.items():
        first = min(members, key=lambda s: (len(s.trace.actions), s.example))
        minimized = minimize_trace(first.trace, keep_prefix=keep_prefix, invariants=invariants,
                                   on_replay=on_replay, components=components)
        kept = minimized.trace
        if known_fix(kept, invariants=invariants, components=components) != fix:
            kept = first.trace  # cut down, it is another finding: report the example as it ran
        simplified = minimized.simplified if kept is minimized.trace else ()
        # no Hypothesis shrink (an events budget of 0 says so): the example's own actions, then the replays
        shrink = ShrinkRecord(first.example, 0, 0, 0, False, len(first.trace.actions),
                              minimized.replays, minimized.replays_budget, len(kept.actions), simplified)
        findings.append(Finding(kept, shrink, fix, tuple(s.example for s in members)))
    return tuple(findings)


def keep_going_json(examples_violated: int, violations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """report.json's `keep_going` section: how many examples ended on a violation, and the distinct violations
    (report.json's `violations`, by index) as known upstream bugs, each with the fix that takes it out, and
    new findings."""
    known = [{"violation": i, "invariant": v["invariant"], "fix": v["known_fix"], "trace": v["trace"]}
             for i, v in enumerate(violations) if v.get("known_fix")]
    new = [{"violation": i, "invariant": v["invariant"], "trace": v["trace"]}
           for i, v in enumerate(violations) if not v.get("known_fix")]
    return {"examples_violated": examples_violated, "distinct": len(violations), "known_upstream_bugs": known,
            "new_findings": new}
