"""What leader election on by default costs: the dev run of a seed with `--fix all`, with `--leader-elect=false`
(A) and with the default (B, one electing kube-controller-manager and kube-scheduler), alternated in one process
so that both see the same machine under the same load.

Run: python benchmarks/bench_leader.py [--seed S] [--pairs N] [--examples N]

Prints, for each run, its wall time, CPU time, model events and events per second (of wall time), then the median
of each side and the ratio of the medians: wall time B / A is what a user feels (the performance issue's target is
at most 1.25), CPU time B / A the same with less of the machine's load in it, events B / A what election adds to
the work, and events/s B / A how cheap that added work is. Each run is
`kmodel check --fix all --seed S` in the process (kmodel.checker.run.run_campaign); its trace digest is printed
too, so a change that should only make election cheaper can be seen to leave both digests alone. Figures are
measured here, never asserted in tests; on a shared machine they move with its load: compare A and B of one
invocation, not runs of different ones.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kmodel.checker.run import CheckOptions, run_campaign  # noqa: E402
from kmodel.fixes import check_fixes  # noqa: E402

SIDES = (("A --leader-elect=false", False), ("B default (elects)", True))


def one_run(seed: int, leader_elect: bool, examples: int | None) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, model events, trace digest) of one dev run."""
    options = CheckOptions(seed=seed, fixes=check_fixes(["all"]), leader_elect=leader_elect, examples=examples)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_campaign(options)
    return (time.perf_counter() - started, time.process_time() - cpu, result.stats.events,
            result.stats.trace_digest())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=3, help="A/B pairs to run (default 3)")
    parser.add_argument("--examples", type=int, default=None, help="examples per run (default: the dev profile's)")
    args = parser.parse_args()
    walls: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    events: dict[bool, int] = {}
    print(f"dev run of seed {args.seed} with --fix all, {args.pairs} A/B pairs")
    for pair in range(1, args.pairs + 1):
        order = SIDES if pair % 2 else SIDES[::-1]  # alternate which side runs first
        for label, leader_elect in order:
            wall, cpu, n, digest = one_run(args.seed, leader_elect, args.examples)
            walls[leader_elect].append(wall)
            cpus[leader_elect].append(cpu)
            events[leader_elect] = n
            print(f"  pair {pair} {label:24} {wall:7.2f} s wall {cpu:7.2f} s CPU {n:9,} events "
                  f"{n / wall:9,.0f} events/s  digest {digest}", flush=True)
    a, b = statistics.median(walls[False]), statistics.median(walls[True])
    for label, leader_elect in SIDES:
        wall, cpu = statistics.median(walls[leader_elect]), statistics.median(cpus[leader_elect])
        print(f"median {label:24} {wall:7.2f} s wall {cpu:7.2f} s CPU {events[leader_elect]:9,} events "
              f"{events[leader_elect] / wall:9,.0f} events/s")
    cpu_ratio = statistics.median(cpus[True]) / statistics.median(cpus[False])
    print(f"B / A: wall time {b / a:.2f}x, CPU time {cpu_ratio:.2f}x, events {events[True] / events[False]:.2f}x, "
          f"events/s {(events[True] / b) / (events[False] / a):.2f}x")


if __name__ == "__main__":
    main()
