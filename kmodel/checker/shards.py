"""A campaign's shards: what each one explores, and what it sends back.

`plan_shards(options)` splits the campaign's example budget into shards of about SHARD_EXAMPLES examples (the
first ones one example more when it does not divide), each with its own Hypothesis seed derived from the
campaign's seed and the shard's index (`shard_seed`). The plan is a function of the seed and the budget alone,
never of the worker count: `--workers 1` runs the same shards in turn in this process
(kmodel.checker.parallel.run_in_turn) that `--workers N` runs N at a time, and merges them the same way, so the
same seed gives the same merged digest with any number of workers, on any machine and under any
PYTHONHASHSEED, whichever worker runs which. A budget too small for two such shards is one shard, the campaign
itself (its seed is the campaign's).

Several shards balance the work between workers: examples differ in cost (a long settle, a large cluster), so
one shard per worker leaves a worker idle while the other finishes a costly share; with small shards a worker
that is done takes the next one waiting (Dask's scheduler hands queued tasks to free workers, and steals from
busy ones), and what is merged stays in shard order. The count is even, so that two workers can share it.

But a shard is a whole Hypothesis run, and Hypothesis schedules its phases by the run's budget: the first tenth
of the examples are kept small, and the targeted phase (hill-climbing toward the examples that reached rare
situations, machine.KmodelMachine._aim) takes the second half, but never starts before the tenth example. A
shard of fewer than 20 examples thus explores a different mix from a larger run (fewer than half its examples
targeted; none at all at 10 or fewer), so a shard never has fewer than MIN_SHARD_EXAMPLES examples. And half
of a Hypothesis run repeats the cost of the one example it climbs from, so a campaign of several shards
averages that draw over several examples where one run of the whole budget bets on one.

`run_shard` is what a worker runs (or the command, in turn, with one worker): `kmodel.checker.run.run_campaign` on its seed and share of the budget, with
the run's example database read-only (kmodel.checker.example_db), and `stop` asked as each example starts.
It returns a `ShardOutcome`: plain data (counts, the shrunk and minimized trace as JSON, a keep-going shard's
distinct violations, what Hypothesis saved)
that pickles on any Dask cluster; the caller merges the outcomes (kmodel.checker.merge) and writes the reports.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Optional

import attrs
from hypothesis import settings as Settings

from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.example_db import found_entries, read_error, shard_database


@attrs.frozen
class Shard:
    index: int  # 0-based
    count: int  # shards in the run
    seed: int  # its Hypothesis seed
    examples: int  # its share of the budget


def shard_seed(seed: int, index: int, count: int) -> int:
    """Shard `index` of `count`'s Hypothesis seed: the campaign's own for a single shard, else a 63-bit number
    derived from the three by blake2b (never Python's hash, which PYTHONHASHSEED changes)."""
    if count == 1:
        return seed
    digest = hashlib.blake2b(f"kmodel-shard:{seed}:{index}:{count}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


#: examples a shard aims at (see the module docstring): the dev profile's 200 are 8 shards of 25, a 1,000-example
#: campaign 40, so that the last shards to finish on a worker are short
SHARD_EXAMPLES = 25
#: but no fewer examples a shard than this: Hypothesis' phases in a shard of at least 20 examples have a whole
#: run's shares of its budget (see the module docstring)
MIN_SHARD_EXAMPLES = 20


def plan_shards(options: CheckOptions) -> list[Shard]:
    """The campaign's budget split into an even number of shards of about SHARD_EXAMPLES examples, at least
    MIN_SHARD_EXAMPLES each; one shard, the campaign itself, when the budget does not allow two. The worker count
    plays no part (see the module docstring)."""
    total = options.settings().max_examples
    count = total // SHARD_EXAMPLES
    count -= count % 2  # two workers share an even count evenly
    if count < 2 or total // count < MIN_SHARD_EXAMPLES:
        count = 1
    share, extra = divmod(total, count)
    return [Shard(i, count, shard_seed(options.seed or 0, i, count), share + (1 if i < extra else 0))
            for i in range(count)]


@attrs.frozen
class ShardOutcome:
    """What a worker sends back (see the module docstring). Times are figures for people only."""

    shard: Shard
    examples: int
    steps: int
    rule_steps: int
    events: int
    digest: str
    checks: dict
    violations: dict
    rules: dict
    reached: dict
    first_reached: dict
    invariant_seconds: float
    seconds: float
    stopped: bool
    #: the shrunk and minimized trace (Trace.to_json) and its ShrinkRecord's JSON, when it found a violation
    failure: Optional[dict] = None
    shrink: Optional[dict] = None
    #: seconds from the shard's start to its first violation (None: none)
    first_violation_seconds: Optional[float] = None
    #: what Hypothesis saved in the example database (example_db.found_entries)
    saved: dict = attrs.field(factory=dict)
    #: the error that set the shared example database aside as the shard read it (None: none)
    database_error: Optional[str] = None
    worker: str = ""  # the Dask worker's address (empty: this process)
    #: with keep_going: the shard's distinct violations (findings.Finding.to_json), and its examples that ended
    #: on a violation
    findings: tuple = ()
    violating_examples: int = 0
    #: examples per topology drawn (Stats.topologies; empty when the campaign does not draw it)
    topologies: dict = attrs.field(factory=dict)


def run_shard(options: CheckOptions, shard: Shard, database: Optional[str] = None,
              stop: Optional[Callable[[Any], bool]] = None,
              on_example: Optional[Callable[[Any], None]] = None, worker: str = "",
              on_replay: Optional[Callable[[int, int, int], None]] = None) -> ShardOutcome:
    """Explore one shard (see the module docstring). `stop(stats)` is asked as each example starts, before any
    violation; `on_example(stats)` is told of each example, `on_replay` of each of minimization's replays."""
    shard_options = attrs.evolve(options, seed=shard.seed, examples=shard.examples)
    db, found = shard_database(database, options)
    overrides: dict[str, Any] = {"max_examples": shard.examples}
    if db is not None:
        overrides.update(database=db, derandomize=False)  # the seed decides; Hypothesis refuses both at once
    settings = Settings(shard_options.settings(), **overrides)
    started = time.perf_counter()
    first_violation: list[float] = []

    def told(stats: Any) -> None:
        if stats.first_failure_at is not None and not first_violation:
            first_violation.append(time.perf_counter() - started)
        if on_example is not None:
            on_example(stats)

    result = run_campaign(shard_options, settings=settings, on_example=told, stop=stop, on_replay=on_replay)
    stats = result.stats
    if result.failure is not None and not first_violation:
        first_violation.append(result.seconds)
    return ShardOutcome(
        shard=shard, examples=stats.examples, steps=stats.steps, rule_steps=stats.rule_steps, events=stats.events,
        digest=stats.trace_digest(), checks=dict(stats.checks), violations=dict(stats.violations),
        rules=dict(stats.rules), reached=dict(stats.reached), first_reached=dict(stats.first_reached),
        topologies=dict(stats.topologies),
        invariant_seconds=stats.invariant_seconds, seconds=result.seconds, stopped=result.stopped,
        failure=result.failure.to_json() if result.failure is not None else None,
        shrink=result.shrink.to_json() if result.shrink is not None else None,
        first_violation_seconds=first_violation[0] if first_violation else None,
        saved=found_entries(found), database_error=read_error(found), worker=worker,
        findings=tuple(f.to_json() for f in result.findings), violating_examples=stats.violating_examples)
