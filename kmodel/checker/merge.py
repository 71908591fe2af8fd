"""A parallel campaign's report: the workers' outcomes merged into one `CampaignResult`.

`merge_outcomes(options, outcomes, seconds)` sums what the shards counted (examples, steps, rule steps, model
events, every invariant's checks and violations, rules fired, the examples that reached each sometimes
property, so that `--require-sometimes` is judged on the whole run) into a `MergedStats`, whose trace digest is
a blake2b over the shards' own digests in shard order (a lone shard's own digest): the same shards exploring
the same examples give the same merged digest. A sometimes property's `first_example` is the earliest among the
workers', counted in that worker's own examples.

Violations are deduplicated (`distinct_violations`): two shards whose shrunk and minimized traces violate the
same invariant through the same sequence of action kinds (the trace's shape: `trace_shape`) found one bug,
reported once, from the lowest shard that found it, with the number of workers that did (`workers`) and
which (`found_by`). A keep-going run's shards each report their distinct violations (kmodel.checker.findings),
and the merge unions them by the same key, the invariant and the known fix that takes it out
(`distinct_findings`): the trace of the lowest shard that found it, the examples of every shard that ended
on it (`examples`; `first_example` counts in that lowest shard's own examples) and the workers that did.
`workers_json` is report.json's `workers` section: each shard's seed, budget and figures.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kmodel.checker.machine import KmodelMachine
from kmodel.checker.run import CampaignResult, CheckOptions
from kmodel.checker.trace import ShrinkRecord
from kmodel.checker.shards import ShardOutcome
from kmodel.checker.stats import Stats
from kmodel.checker.trace import Trace, trace_from_json


class MergedStats(Stats):
    """The sum of the shards' counts; its trace digest is the digest of the shards' digests, or a lone shard's
    own (a budget of one shard is the campaign itself: its digest is that of the run)."""

    def __init__(self, digests: Sequence[str]) -> None:
        super().__init__()
        self._lone = digests[0] if len(digests) == 1 else None
        for digest in digests:
            self._hash.update(digest.encode() + b"\n")

    def trace_digest(self) -> str:
        return self._lone if self._lone is not None else super().trace_digest()


def _add(into: dict, counts: dict) -> None:
    for name, n in counts.items():
        into[name] = into.get(name, 0) + n


def merged_stats(outcomes: Sequence[ShardOutcome]) -> MergedStats:
    ordered = sorted(outcomes, key=lambda o: o.shard.index)
    stats = MergedStats([o.digest for o in ordered])
    for o in ordered:
        stats.examples += o.examples
        stats.steps += o.steps
        stats.rule_steps += o.rule_steps
        stats.events += o.events
        stats.invariant_seconds += o.invariant_seconds
        stats.violating_examples += o.violating_examples
        _add(stats.checks, o.checks)
        _add(stats.violations, o.violations)
        _add(stats.rules, o.rules)
        _add(stats.reached, o.reached)
        _add(stats.topologies, o.topologies)
        for name, first in o.first_reached.items():
            stats.first_reached[name] = min(first, stats.first_reached.get(name, first))
    return stats


def trace_shape(trace: Trace) -> tuple[str, ...]:
    """What makes two shrunk traces the same bug: the invariant they violate and their actions' kinds, in order."""
    assert trace.violation is not None
    return (trace.violation.invariant, *(action.kind for action in trace.actions))


def _shrink_record(shrink: Optional[dict]) -> Optional[ShrinkRecord]:
    return ShrinkRecord(**{**shrink, "simplified": tuple(shrink["simplified"])}) if shrink else None


def distinct_findings(outcomes: Sequence[ShardOutcome]) -> list[tuple[Trace, ShrinkRecord, dict[str, Any]]]:
    """A keep-going run's distinct violations, the union of its shards' (see the module docstring)."""
    found: dict[tuple[str, Optional[str]], list] = {}
    for o in sorted(outcomes, key=lambda o: o.shard.index):
        for f in o.findings:
            trace = trace_from_json(f["trace"])
            assert trace.violation is not None
            entry = found.setdefault((trace.violation.invariant, f["known_fix"]),
                                     [trace, f["shrink"], f["known_fix"], 0, f["examples"][0], []])
            entry[3] += len(f["examples"])
            entry[5].append(o.shard.index)
    return [(trace, _shrink_record(shrink), {"known_fix": fix, "examples": examples, "first_example": first,
                                             "workers": len(by), "found_by": by})
            for trace, shrink, fix, examples, first, by in found.values()]


def distinct_violations(outcomes: Sequence[ShardOutcome]) -> list[tuple[Trace, ShrinkRecord, dict[str, Any]]]:
    """One (trace, shrink record, extra report fields) per distinct violation, in shard order (see the module
    docstring)."""
    if any(o.findings for o in outcomes):
        return distinct_findings(outcomes)
    found: dict[tuple[str, ...], list] = {}
    for o in sorted(outcomes, key=lambda o: o.shard.index):
        if o.failure is None:
            continue
        trace = trace_from_json(o.failure)
        entry = found.setdefault(trace_shape(trace), [trace, o.shrink, []])
        entry[2].append(o.shard.index)
    return [(trace, _shrink_record(shrink), {"workers": len(by), "found_by": by})
            for trace, shrink, by in found.values()]


def workers_json(outcomes: Sequence[ShardOutcome]) -> list[dict[str, Any]]:
    """report.json's `workers`: each shard's seed, budget, what it ran and whether it was stopped."""
    return [{"shard": o.shard.index, "seed": o.shard.seed, "budget": o.shard.examples, "examples": o.examples,
             "steps": o.steps, "model_events": o.events, "seconds": round(o.seconds, 3),
             "invariant_seconds": round(o.invariant_seconds, 3), "stopped": o.stopped,
             "violation": o.failure["violation"]["invariant"] if o.failure else None,
             "first_violation_seconds": (round(o.first_violation_seconds, 3)
                                         if o.first_violation_seconds is not None else None),
             "database_error": o.database_error, "worker": o.worker}
            for o in sorted(outcomes, key=lambda o: o.shard.index)]


def merge_outcomes(options: CheckOptions, outcomes: Sequence[ShardOutcome], seconds: float) -> CampaignResult:
    """The merged campaign (its `failure`: the first distinct violation; `distinct_violations` lists them all)."""
    bound = type("CheckMachine", (KmodelMachine,), {"config": options.config(), "variant": options.variant})
    result = CampaignResult(options, merged_stats(outcomes), seconds, sometimes=tuple(bound.sometimes_list()),
                            stopped=any(o.stopped for o in outcomes))
    distinct = distinct_violations(outcomes)
    if distinct:
        result.failure, result.shrink = distinct[0][0], distinct[0][1]
    return result

