"""Parallel campaigns: `kmodel check --workers 1` against `--workers 2` as a user runs them, examples per second
with 1 and 2 workers on the same budget, side by side, and the time to first violation of each anti-pattern
variant with 1 and 2 workers.

Run: python benchmarks/bench_parallel.py [--profile campaign] [--examples N] [--seed S] [--seeds N]
                                         [--dev-examples N] [--dev-seeds N] [--variants a,b] [--budget N]
                                         [--command-seed S] [--command-seeds N] [--command-campaign-examples N]
                                         [--repeats N]
                                         [--skip-command] [--skip-throughput] [--skip-model] [--skip-variants]

The command, A/B: `kmodel check --fix all --seed S --database none` at the dev profile's budget, then at the
campaign profile's with `--examples N`, each with `--workers 1` and `--workers 2` in turn (`--repeats` times,
alternating), each in a process of its own as a user runs it. Its examples per second are timed from outside,
from the process' start to its exit (interpreter, imports, cluster start-up and stop included); the cluster's
start-up (report.json's `parallel.startup_seconds`) is printed apart. The ratio is the median examples per
second of `--workers 2` over that of `--workers 1`, and every run of a seed and budget, on either side, must
print the same trace digest (said when they do not).

The two sides explore the same examples: the budget's shards are a function of the budget alone
(kmodel.checker.shards), which `--workers 1` runs in turn in its own process and `--workers 2` two at a time,
so both run the same model events and the A/B compares the same work. Each run also prints its model events
per example, per wall second and per CPU second (the CPU time of the whole process tree, Dask's worker
processes included: the children's rusage), and the A/B prints the speed-up in model events per second beside
that in examples per second. `--command-seeds N` runs the A/B on N seeds from `--command-seed` on and sums each
side over them.

Throughput: the same budget of `--examples` examples (profile, every fix on, no example database) explored on
one worker (in this process), then in the shards `--workers 2` splits it into, on a local Dask cluster of two
processes (its start-up timed apart); then the same shards one after the other on one worker, so that the
speed-up is also measured on the very same examples.

Exploration is what is timed, and a violation does not end it. A campaign that finds a violation would go on
shrinking it, and a shrink is not exploration: so each campaign stops at the end of its first violating
example (that example counts, it was explored), and the rest of its budget is explored by a campaign of the
next seed of a chain (`chain_seed`: the run's or shard's own seed first, then seeds derived from it by
blake2b), and so on until the whole budget is explored. Every run and shard thus explores its whole budget,
whatever the model still gets wrong, and the rates compare the same number of examples. A run's seconds are
the sum of its campaigns' (each campaign's start, building its cluster, included); the number of campaigns
each run took is printed beside it. Hypothesis may run a few examples more than a campaign's budget (its
target-driven optimisation after generation): those count as explored, for every run alike.

Then a dev run on one worker for the model's own figures: model events per second and the share of the
run's time spent in invariant checks; with `--dev-seeds N`, dev runs of N seeds and their medians (the cost
of an event depends on what a seed's examples do: one seed's figure is that seed's).

Time to first violation: for each anti-pattern variant (kmodel.variants, every one but default) and each of
`--seeds` seeds, the seconds from the campaign's start to the end of its first violating example (before
any shrinking), on one worker (in this process) and on two (both shards of a two-worker run at once on a
local cluster started once for all; the first violation of either, the other stopped then). A campaign that
finds nothing within `--budget` examples counts as not found. The medians are printed with the figures.

The machine's load (/proc/loadavg) is printed before and after: on a shared machine the speed-up is noise.
Figures are measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import attrs  # noqa: E402

from kmodel.checker.run import CampaignStopped, CheckOptions, run_campaign  # noqa: E402
from kmodel.checker.shards import Shard, plan_shards  # noqa: E402
from kmodel.variants import NAMES  # noqa: E402


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def chain_seed(seed: int, link: int) -> int:
    """The Hypothesis seed of the `link`-th campaign of a chain that explores a budget from `seed` (0: `seed`
    itself; then 63 bits derived by blake2b, never Python's hash)."""
    if link == 0:
        return seed
    digest = hashlib.blake2b(f"kmodel-bench-chain:{seed}:{link}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def explore_once(options: CheckOptions) -> tuple[int, float, bool]:
    """Examples explored, seconds, and whether a violation stopped the campaign at the end of its first violating
    example (a shrink is not exploration)."""
    started = time.perf_counter()

    def on_example(stats: Any) -> None:
        if stats.first_failure_at is not None:
            raise CampaignStopped

    result = run_campaign(options, on_example=on_example)
    examples = result.stats.examples - (1 if result.stopped else 0)  # the first shrink example never ran
    return examples, time.perf_counter() - started, result.stopped


def explore(options: CheckOptions) -> tuple[int, float, int]:
    """Examples explored, seconds and campaigns run to explore the whole budget of `options`, violations not
    ending it: each campaign stopped by a violation hands the rest of the budget to the chain's next seed."""
    budget = options.settings().max_examples
    explored, seconds, link = 0, 0.0, 0
    while explored < budget:
        examples, spent, stopped = explore_once(
            attrs.evolve(options, seed=chain_seed(options.seed or 0, link), examples=budget - explored))
        explored, seconds, link = explored + examples, seconds + spent, link + 1
        if not stopped:
            break  # Hypothesis ran the whole budget (it may have run a few examples more)
    return explored, seconds, link


def explore_shard(options: CheckOptions, shard: Shard) -> tuple[int, float, int]:
    return explore(attrs.evolve(options, seed=shard.seed, examples=shard.examples))


@attrs.frozen
class CommandRun:
    """One `kmodel check` as a user runs it, timed from outside."""

    examples: int
    events: int  # model events
    seconds: float  # wall, from the process' start to its exit
    cpu_seconds: float  # of the whole process tree (Dask's worker processes included)
    startup: Optional[float]  # the cluster's start-up seconds (None with one worker)
    digest: str


def check_command(workers: int, args: list[str]) -> CommandRun:
    """`kmodel check ... --workers N` in a process of its own (see the module docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "kmodel", "check", "--report", "r", "--database", "none",
                              "--workers", str(workers), *args], cwd=folder, capture_output=True, text=True,
                             timeout=3600)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker processes were reaped by the command
        if run.returncode not in (0, 1):
            raise SystemExit(f"kmodel check failed (exit {run.returncode}): {run.stderr.strip()[-400:]}")
        report = json.loads((Path(folder) / "r" / "report.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures = report["figures"]
    return CommandRun(figures["examples_run"], figures["model_events"], seconds, cpu,
                      report.get("parallel", {}).get("startup_seconds"), report["trace_digest"])


def command_throughput(label: str, args: list[str], seeds: list[int], repeats: int) -> None:
    """`--workers 1` against `--workers 2` of one command on each of `seeds`, A/B (see the module docstring)."""
    rounds: dict[int, list[list[CommandRun]]] = {1: [], 2: []}  # per repeat, one run per seed
    print(f"kmodel check {' '.join(args)} --seed {','.join(map(str, seeds))} ({label}), --workers 1 against 2, "
          f"timed from outside:")
    for _ in range(repeats):
        rounds[1].append([])
        rounds[2].append([])
        for seed in seeds:
            for workers in (1, 2):
                run = check_command(workers, [*args, "--seed", str(seed)])
                rounds[workers][-1].append(run)
                print(f"  seed {seed}, --workers {workers}: {run.examples} examples in {run.seconds:.1f} s = "
                      f"{run.examples / run.seconds:.2f} examples/s"
                      + (f" (cluster start-up {run.startup:.1f} s of it)" if run.startup is not None else "")
                      + f"; {run.events:,} model events, {run.events / run.examples:,.0f} an example, "
                      f"{run.events / run.seconds:,.0f}/s, {run.events / run.cpu_seconds:,.0f} per CPU second "
                      f"({run.cpu_seconds:.1f} CPU s); digest {run.digest}; load {load()}")
    # every run of a seed, on either side, must give the same merged digest
    differ = [seed for i, seed in enumerate(seeds)
              if len({runs[i].digest for side in (1, 2) for runs in rounds[side]}) > 1]

    def median_rate(workers: int, amount: Any) -> float:
        """The median over the repeats of amount(run) per wall second, each repeat summed over the seeds."""
        return statistics.median(sum(map(amount, runs)) / sum(r.seconds for r in runs) for runs in rounds[workers])

    one, two = (median_rate(w, lambda r: r.examples) for w in (1, 2))
    one_events, two_events = (median_rate(w, lambda r: r.events) for w in (1, 2))
    print(f"  speed-up ({label}): {two / one:.2f}x in examples/s (median {two:.2f} against {one:.2f}), "
          f"{two_events / one_events:.2f}x in model events/s ({two_events:,.0f} against {one_events:,.0f}); "
          + (f"DIFFERENT merged digests on runs of seed(s) {differ}" if differ
             else "the same merged digest on every run, --workers 1 and 2"))


def throughput(options: CheckOptions) -> None:
    from distributed import Client, LocalCluster

    examples, seconds, campaigns = explore(options)
    rate_one = examples / seconds
    print(f"throughput, profile {options.profile}, {options.settings().max_examples} examples, seed {options.seed} "
          f"(violations not stopping exploration: see the docstring):")
    print(f"  1 worker, one run of the whole budget: {examples} examples in {seconds:.1f} s = {rate_one:.2f} "
          f"examples/s ({campaigns} campaigns)")
    started = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0) as cluster, Client(cluster) as client:
        up = time.perf_counter() - started
        begun = time.perf_counter()
        shards = client.gather([client.submit(explore_shard, options, shard, pure=False)
                                for shard in plan_shards(options)])
        wall = time.perf_counter() - begun
    total = sum(n for n, _, _ in shards)
    print(f"  2 workers: {total} examples in {wall:.1f} s = {total / wall:.2f} examples/s (per shard: "
          + ", ".join(f"{n} in {s:.1f} s, {c} campaigns" for n, s, c in shards)
          + f"; the local cluster started in {up:.1f} s besides, {total / (wall + up):.2f} examples/s with it)")
    print(f"  speed-up: {total / wall / rate_one:.2f}x")
    # the very same examples on one worker: the shards one after the other, in this process
    sequential = [explore_shard(options, shard) for shard in plan_shards(options)]
    same, same_seconds = sum(n for n, _, _ in sequential), sum(s for _, s, _ in sequential)
    print(f"  1 worker, the shards in turn (the same examples as 2 workers): {same} examples in "
          f"{same_seconds:.1f} s = {same / same_seconds:.2f} examples/s; speed-up on the same examples: "
          f"{(total / wall) / (same / same_seconds):.2f}x")


def model_figures(seed: int, examples: int, seeds: int = 1) -> None:
    """Dev runs on one worker of `seeds` seeds from `seed` on: each one's model events/s and invariants' share,
    then their medians. What an event costs on average depends on the seed's examples (how much of the run
    goes to long settles, which spread a step's fixed costs over many events), so one seed's figure is only
    that seed's."""
    rates, shares = [], []
    for s in range(seed, seed + seeds):
        options = CheckOptions(seed=s, examples=examples, profile="dev", fixes=("all",))
        result = run_campaign(options)
        stats = result.stats
        rates.append(stats.events / result.seconds)
        shares.append(100 * stats.invariant_seconds / result.seconds)
        print(f"dev run on one worker ({stats.examples} examples, seed {s}, --fix all): "
              f"{stats.events:,} model events in {result.seconds:.1f} s = {rates[-1]:,.0f} model events/s; "
              f"invariants {shares[-1]:.0f}% of the time"
              + (f"; found {result.failure.violation.invariant}" if result.failure else ""))
    if seeds > 1:
        print(f"  median over seeds {seed}-{seed + seeds - 1}: {statistics.median(rates):,.0f} model events/s "
              f"(lowest {min(rates):,.0f}, highest {max(rates):,.0f}); invariants {statistics.median(shares):.0f}% "
              f"of the time")


def _until_first_violation(options: CheckOptions, stop: Any = None) -> Optional[float]:
    """Seconds to the end of the first violating example, or None if the budget ran out first (or `stop` said
    so)."""
    started = time.perf_counter()
    seen: list[float] = []

    def on_example(stats: Any) -> None:
        if stats.first_failure_at is not None:
            seen.append(time.perf_counter() - started)
            raise CampaignStopped  # the first violation is what is timed: no shrinking

    run_campaign(options, on_example=on_example, stop=stop)
    return seen[0] if seen else None


def shard_until_first_violation(options: CheckOptions, shard: Shard, run_id: str) -> Optional[float]:
    """One shard of a two-worker run on a Dask worker: its seconds to a first violation; stops when the other
    shard has found one (the run's metadata flag)."""
    from distributed import get_client

    client = get_client()
    key = f"bench-{run_id}-found"
    seconds = _until_first_violation(attrs.evolve(options, seed=shard.seed, examples=shard.examples),
                                     stop=lambda stats: bool(client.get_metadata(key, default=False)))
    if seconds is not None:
        client.set_metadata(key, True)
    return seconds


def first_violations(variants: list[str], seeds: int, budget: int) -> None:
    from distributed import Client, LocalCluster

    one_all: list[float] = []
    two_all: list[float] = []
    print(f"time to first violation (s), budget {budget} examples, dev profile; '-': none found")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0) as cluster, Client(cluster) as client:
        for variant in variants:
            ones, twos = [], []
            for seed in range(1, seeds + 1):
                options = CheckOptions(seed=seed, examples=budget, variant=variant)
                ones.append(_until_first_violation(options))
                run_id = f"{variant}-{seed}-{time.monotonic_ns()}"
                futures = [client.submit(shard_until_first_violation, options, shard, run_id, pure=False)
                           for shard in plan_shards(options)]
                found = [s for s in client.gather(futures) if s is not None]
                twos.append(min(found) if found else None)
            one_all += [s for s in ones if s is not None]
            two_all += [s for s in twos if s is not None]
            show = lambda xs: " ".join(f"{x:6.1f}" if x is not None else "     -" for x in xs)  # noqa: E731
            print(f"  {variant:20s} 1 worker: {show(ones)}   2 workers: {show(twos)}")
    for label, xs in (("1 worker", one_all), ("2 workers", two_all)):
        if xs:
            print(f"  median over the violations found, {label}: {statistics.median(xs):.1f} s ({len(xs)} found)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="campaign")
    parser.add_argument("--examples", type=int, default=40, help="the throughput runs' budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dev-examples", type=int, default=200, help="the dev run's budget (model figures)")
    parser.add_argument("--dev-seeds", type=int, default=1, help="dev runs of this many seeds from --seed on, "
                        "with their medians (model figures)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per variant for the time to first violation")
    parser.add_argument("--variants", default=",".join(n for n in NAMES if n != "default"))
    parser.add_argument("--budget", type=int, default=200, help="examples before a variant's run gives up")
    parser.add_argument("--command-seed", type=int, default=3, help="the seed of the A/B runs of the command")
    parser.add_argument("--command-seeds", type=int, default=1,
                        help="A/B runs of the command on this many seeds from --command-seed on, summed")
    parser.add_argument("--command-campaign-examples", type=int, default=60,
                        help="the budget of the command's A/B runs at the campaign profile")
    parser.add_argument("--repeats", type=int, default=1, help="A/B pairs of the command per budget")
    parser.add_argument("--skip-command", action="store_true", help="no A/B runs of the command")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-model", action="store_true", help="no dev runs (model figures)")
    parser.add_argument("--skip-variants", action="store_true")
    args = parser.parse_args()
    print(f"cores: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}; "
          f"load average before: {load()}")
    if not args.skip_command:
        seeds = list(range(args.command_seed, args.command_seed + args.command_seeds))
        command_throughput("dev profile", ["--fix", "all"], seeds, args.repeats)
        command_throughput("campaign profile", ["--fix", "all", "--profile", "campaign", "--examples",
                                                str(args.command_campaign_examples)], seeds, args.repeats)
        print(f"load average: {load()}")
    if not args.skip_throughput:
        # every known fix on, so that a violation (which hands the budget to the next campaign) stays rare
        throughput(CheckOptions(seed=args.seed, examples=args.examples, profile=args.profile, fixes=("all",)))
        print(f"load average: {load()}")
    if not args.skip_model:
        model_figures(args.seed, args.dev_examples, args.dev_seeds)
        print(f"load average: {load()}")
    if not args.skip_variants:
        first_violations([v for v in args.variants.split(",") if v], args.seeds, args.budget)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
