"""Checker throughput: rule steps per second with every invariant on, beside an empty RuleBasedStateMachine
(Hypothesis' own floor), model events applied per second during exploration, and the share of time spent
in invariant checks.

Run: python benchmarks/bench_checker.py [--examples N] [--steps N] [--seed S] [--nodes N] [--repeat N]

Only Hypothesis' generation phase runs (no shrinking): a violation ends that measurement early and is
printed. Both machines run as `kmodel check` runs the checker (its garbage-collector thresholds,
`kmodel.checker.run.campaign_gc`). The checker is the real one, every invariant on, examples started from the
campaign's warmed-up snapshot as in `kmodel check`. Every checker rule does something when it runs (none is
a no-op), so steps/s and actions/s are close. Figures are measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import Phase, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.reporting import with_reporter  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test  # noqa: E402

from kmodel.checker.machine import KmodelMachine  # noqa: E402
from kmodel.checker.profiles import profile  # noqa: E402
from kmodel.checker.run import campaign_gc, no_source_constants  # noqa: E402
from kmodel.checker.session import InvariantViolation, Session  # noqa: E402
from kmodel.checker.stats import Stats  # noqa: E402
from kmodel.cluster import ClusterConfig  # noqa: E402


class Empty(RuleBasedStateMachine):
    """As many rules as cheap as possible, drawing what the checker's rules draw."""

    steps = 0

    @rule(i=st.integers(0, 63))
    def one(self, i: int) -> None:
        Empty.steps += 1

    @rule(picks=st.lists(st.integers(0, 63), min_size=1, max_size=8))
    def two(self, picks: list) -> None:
        Empty.steps += 1


class FreeModel(KmodelMachine):
    """The checker's own machine (its rules, their strategies, preconditions and candidate lists) over one
    warmed-up session that no rule changes: every action is dropped instead of applied, and no example
    restores a snapshot or settles. Its steps/s is the most the checker could reach with a model that cost
    nothing."""

    _shared: "Session | None" = None
    steps = 0

    def _start(self) -> Session:
        cls = FreeModel
        if cls._shared is None:
            cls._shared = super()._start()
        return cls._shared

    def _guard(self, run, rule_name: str) -> None:
        FreeModel.steps += 1

    def teardown(self) -> None:
        pass


def run(machine, examples: int, steps: int, s: int) -> float:
    """Run `machine` under the dev profile's settings; return the wall seconds (the process's CPU seconds of the
    last run are left in `CPU_SECONDS`)."""
    started, cpu = time.perf_counter(), time.process_time()
    cfg = settings(profile("dev"), max_examples=examples, stateful_step_count=steps, phases=[Phase.generate])
    try:
        with with_reporter(lambda text: None), campaign_gc(), no_source_constants():  # as `kmodel check` runs
            run_state_machine_as_test(seed(s)(machine), settings=cfg)
    except InvariantViolation as exc:
        print(f"  (stopped by a violation: {exc})")
    CPU_SECONDS[0] = time.process_time() - cpu
    return time.perf_counter() - started


#: the CPU time (process time) of the last `run`: on a machine shared with other work it changes less than
#: the wall time, so two versions measured side by side compare best by it
CPU_SECONDS = [0.0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run both machines this many times, alternating, and keep each one's fastest run (the "
                             "runs are deterministic: the same work each time, so the fastest is the least disturbed "
                             "by other load on the machine)")
    args = parser.parse_args()

    best_empty = best_checker = best_free = None
    for _ in range(max(1, args.repeat)):
        Empty.steps = 0
        empty_seconds = run(Empty, args.examples, args.steps, args.seed)
        if best_empty is None or empty_seconds < best_empty[0]:
            best_empty = (empty_seconds, Empty.steps)
        FreeModel.steps = 0
        free = type("FreeBench", (FreeModel,), {
            "config": ClusterConfig(nodes=args.nodes, apiservers=2, seed=args.seed), "stats": Stats()})
        FreeModel._shared = None
        free_seconds = run(free, args.examples, args.steps, args.seed)
        if best_free is None or free_seconds < best_free[0]:
            best_free = (free_seconds, FreeModel.steps)
        stats = Stats()
        checker = type("BenchMachine", (KmodelMachine,), {
            "config": ClusterConfig(nodes=args.nodes, apiservers=2, seed=args.seed), "stats": stats})
        seconds = run(checker, args.examples, args.steps, args.seed)
        if best_checker is None or seconds < best_checker[0]:
            best_checker = (seconds, stats, CPU_SECONDS[0])

    empty_seconds, empty_steps = best_empty
    empty_rate = empty_steps / empty_seconds
    print(f"empty RuleBasedStateMachine: {empty_steps} steps in {empty_seconds:.2f} s = {empty_rate:,.0f} steps/s")
    free_seconds, free_steps = best_free
    free_rate = free_steps / free_seconds
    print(f"the checker's machine over a model that costs nothing (rules, draws, preconditions and candidate "
          f"lists only): {free_steps} steps in {free_seconds:.2f} s = {free_rate:,.0f} steps/s "
          f"({free_rate / empty_rate:.0%} of the empty machine's): the most any speed-up of the model can give")
    seconds, stats, cpu_seconds = best_checker
    rate = stats.rule_steps / seconds
    print(f"checker, all invariants on:  {stats.rule_steps} steps ({stats.steps} actions) in {seconds:.2f} s = "
          f"{rate:,.0f} steps/s ({rate / empty_rate:.0%} of the empty machine's) over {stats.examples} examples")
    print(f"actions executed: {stats.steps} = {stats.steps / seconds:,.0f} actions/s (warmups and teardown settles "
          f"included)")
    print(f"model events during exploration: {stats.events:,} in {seconds:.2f} s = {stats.events / seconds:,.0f} "
          f"events/s (the snapshot's warmup events counted once); {cpu_seconds:.2f} s of CPU = "
          f"{stats.events / max(cpu_seconds, 1e-9):,.0f} events per CPU second")
    print(f"time in invariant checks: {stats.invariant_seconds:.2f} s = {stats.invariant_seconds / seconds:.0%} "
          f"of the run; in actions (model, incl. liveness inside settle): {stats.action_seconds:.2f} s")
    print("rules fired: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.rules.items())))
    print_breakdown(seconds, stats, empty_seconds / empty_steps)


def print_breakdown(seconds: float, stats: Stats, empty_step: float) -> None:
    """Where a rule step's time goes, in microseconds, and what the target (half the empty machine's steps/s)
    would leave for everything but Hypothesis."""
    steps = max(stats.rule_steps, 1)
    model = stats.action_seconds - stats.restore_seconds - stats.liveness_seconds
    safety = stats.invariant_seconds - stats.liveness_seconds
    hypothesis = seconds - stats.action_seconds - safety
    parts = [("Hypothesis and the machine (draws, rule dispatch)", hypothesis),
             ("model events (applying the actions)", model),
             ("safety invariants after each action", safety),
             ("settles' checks (safety, then liveness)", stats.liveness_seconds),
             ("starting examples from the warm-up snapshot", stats.restore_seconds)]
    print(f"where a rule step's time goes (µs per step, over {steps} steps; the empty machine's whole step: "
          f"{empty_step * 1e6:.0f} µs):")
    for label, value in parts:
        print(f"  {label:<52} {value / steps * 1e6:7.0f}  ({value / seconds:.0%})")
    print(f"  {'total':<52} {seconds / steps * 1e6:7.0f}")
    budget = 2 * empty_step - hypothesis / steps
    rest = (seconds - hypothesis) / steps
    print(f"at half the empty machine's rate a step may take {2 * empty_step * 1e6:.0f} µs; Hypothesis and the "
          f"machine leave {budget * 1e6:.0f} µs of it for the rest, which takes {rest * 1e6:.0f} µs now"
          + (f" ({rest / budget:.1f}x the budget)" if budget > 0 else ""))
    closing = stats.closing_settle_seconds / steps
    examples = max(stats.examples, 1)
    print(f"of which the settle every example ends with (heal, run fairly to quiescence, ask every liveness "
          f"invariant): {closing * 1e6:.0f} µs per step ({stats.closing_settle_seconds / seconds:.0%} of the run; "
          f"{stats.closing_settle_seconds / examples * 1e3:.1f} ms and {stats.closing_settle_events / examples:,.0f} "
          f"events an example, {steps / examples:.1f} steps an example), "
          f"{closing / (2 * empty_step):.1f}x what a whole step may take at half the empty machine's rate")


if __name__ == "__main__":
    main()
