"""Checker throughput: rule steps per second with every invariant on, beside an empty RuleBasedStateMachine
(Hypothesis' own floor), model events applied per second during exploration, and the share of time spent
in invariant checks.

Run: python benchmarks/bench_checker.py [--examples N] [--steps N] [--seed S] [--nodes N]

Only Hypothesis' generation phase runs (no shrinking): a violation ends that measurement early and is
printed. Figures are measured here, never asserted in tests.
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
from kmodel.checker.session import InvariantViolation  # noqa: E402
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


def run(machine, examples: int, steps: int, s: int) -> float:
    started = time.perf_counter()
    cfg = settings(profile("dev"), max_examples=examples, stateful_step_count=steps, phases=[Phase.generate])
    try:
        with with_reporter(lambda text: None):
            run_state_machine_as_test(seed(s)(machine), settings=cfg)
    except InvariantViolation as exc:
        print(f"  (stopped by a violation: {exc})")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nodes", type=int, default=3)
    args = parser.parse_args()

    Empty.steps = 0
    empty_seconds = run(Empty, args.examples, args.steps, args.seed)
    empty_rate = Empty.steps / empty_seconds
    print(f"empty RuleBasedStateMachine: {Empty.steps} steps in {empty_seconds:.2f} s = {empty_rate:,.0f} steps/s")

    stats = Stats()
    checker = type("BenchMachine", (KmodelMachine,), {
        "config": ClusterConfig(nodes=args.nodes, apiservers=2, seed=args.seed), "stats": stats})
    seconds = run(checker, args.examples, args.steps, args.seed)
    rate = stats.rule_steps / seconds
    print(f"checker, all invariants on:  {stats.rule_steps} steps ({stats.steps} actions) in {seconds:.2f} s = "
          f"{rate:,.0f} steps/s ({rate / empty_rate:.0%} of the empty machine's) over {stats.examples} examples")
    print(f"model events during exploration: {stats.events:,} in {seconds:.2f} s = {stats.events / seconds:,.0f} "
          f"events/s")
    print(f"time in invariant checks: {stats.invariant_seconds:.2f} s = {stats.invariant_seconds / seconds:.0%} "
          f"of the run; in actions (model, incl. liveness inside settle): {stats.action_seconds:.2f} s")
    print("rules fired: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.rules.items())))


if __name__ == "__main__":
    main()
