"""Model events per second of two commits, A/B on one machine in one run: the dev run of each seed with
`--fix all`, A and B alternated, so that both sides see the machine under the same load.

Run: python benchmarks/bench_ab.py [--a COMMIT] [--b COMMIT|DIR] [--seeds 1-10] [--quick] [--check-option=OPTION]…

Each side is checked out into a temporary `git worktree` of this repository (removed at the end); `--b` may
instead name a folder holding a checkout, used as it is (uncommitted changes included: for iterations). Each
run is `kmodel check --fix all --seed S --report TMP` in a subprocess of this Python (its venv provides the
dependencies), with PYTHONPATH set to the side's checkout so that its own `kmodel` is imported, never the
installed one. A checkout whose `invariants/` folder is the package `kmodel.invariants` (pyproject.toml's
package-dir mapping) gets that mapping by putting the checkout on `kmodel.__path__`; an older checkout imports
`invariants` as a top-level package from PYTHONPATH. The bootstrap checks that both came from the side's
checkout (a run that imported another copy fails, and its message is printed).

Prints, per seed and side: model events, the model's seconds (report.json's `figures.seconds`, the campaign
without start-up), the subprocess' wall seconds and CPU seconds (user and system, start-up included), events
per model second and per CPU second, and the trace digest; per seed the ratios B/A of both rates; then the
medians over the seeds of each figure and the ratios of the medians. On a loaded machine the CPU figures move
least: a process waiting for a core adds wall time but not CPU time.
A seed whose two sides executed the same actions has the same digest on both: a pure speed change shows
"same digest" on every seed. Figures are measured here, never asserted in tests; on a shared machine they
move with its load: compare A and B of one invocation, not runs of different ones.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional

REPO = Path(__file__).resolve().parent.parent
DEFAULT_A = "7c1f8c2"  # the baseline the per-event cost targets are measured against
RUN_TIMEOUT = 900  # seconds: one dev run takes well under a minute on a quiet core

# Run inside the subprocess: import the side's own kmodel (PYTHONPATH puts its checkout first), give it
# `kmodel.invariants` when the checkout maps invariants/ there, check where both came from, run the CLI.
BOOT = """
import sys
from pathlib import Path
root = Path(sys.argv[1]).resolve()
sys.argv = ["kmodel"] + sys.argv[2:]
import kmodel
assert Path(kmodel.__file__).resolve().is_relative_to(root), f"kmodel imported from {kmodel.__file__}, not {root}"
if "kmodel.invariants" in (root / "pyproject.toml").read_text():
    kmodel.__path__.append(str(root))  # the package-dir mapping: <root>/invariants is kmodel.invariants
    import kmodel.invariants as inv
else:
    import invariants as inv
assert Path(inv.__file__).resolve().is_relative_to(root), f"invariants imported from {inv.__file__}, not {root}"
print(f"imported {kmodel.__file__} and {inv.__file__}", file=sys.stderr)
from kmodel.cli import console_main
console_main()
"""


class Run(NamedTuple):
    events: int
    model_seconds: float
    wall_seconds: float
    cpu_seconds: float
    digest: str

    @property
    def events_per_second(self) -> float:
        return self.events / self.model_seconds

    @property
    def events_per_cpu_second(self) -> float:
        return self.events / self.cpu_seconds


def children_cpu_seconds() -> float:
    """User and system CPU seconds of this process' finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parse_seeds(text: str) -> list[int]:
    """`1-10` or `1,3,5` (or both, comma-separated) as a list of seeds."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            seeds.extend(range(int(low), int(high or low) + 1))
    except ValueError:
        raise SystemExit(f"--seeds {text}: not a list of seeds; write e.g. 1-10 or 1,3,5") from None
    return seeds


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout.strip()


def checkout(spec: str, under: Path) -> tuple[Path, str, bool]:
    """(folder, label, temporary) for a side: an existing folder is used as it is; anything else is a commit,
    checked out detached into a new temporary worktree."""
    if Path(spec).is_dir():
        folder = Path(spec).resolve()
        return folder, f"{folder} (as it is)", False
    try:
        commit = git("rev-parse", "--verify", f"{spec}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"{spec}: neither a folder nor a commit of {REPO}; name a commit (e.g. HEAD) or a checkout")
    folder = under / commit[:12]
    git("worktree", "add", "--detach", "--quiet", str(folder), commit)
    return folder, f"{commit[:12]} {git('log', '-1', '--format=%s', commit)[:60]}", True


def one_run(folder: Path, seed: int, extra: list[str]) -> Run:
    """Run the dev check of `seed` with --fix all in `folder`'s checkout; read its figures from report.json."""
    with tempfile.TemporaryDirectory(prefix="bench-ab-report-") as report:
        command = [sys.executable, "-c", BOOT, str(folder), "check", "--fix", "all", "--seed", str(seed),
                   "--report", report, *extra]
        env = dict(os.environ, PYTHONPATH=str(folder))
        started, cpu = time.perf_counter(), children_cpu_seconds()
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        wall, cpu = time.perf_counter() - started, children_cpu_seconds() - cpu
        path = Path(report) / "report.json"
        if not path.exists():
            raise SystemExit(f"seed {seed} in {folder}: no report.json (exit {done.returncode}):\n"
                             f"{done.stderr[-2000:]}")
        data = json.loads(path.read_text())
    figures = data["figures"]
    return Run(figures["model_events"], figures["seconds"], wall, cpu, data["trace_digest"])


def row(label: str, run: Run) -> str:
    return (f"{label:10} {run.events:9,} events {run.model_seconds:7.2f} s model {run.wall_seconds:7.2f} s wall "
            f"{run.cpu_seconds:7.2f} s CPU {run.events_per_second:9,.0f} events/s "
            f"{run.events_per_cpu_second:9,.0f} events/CPU-s  digest {run.digest}")


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default=DEFAULT_A, help=f"side A: a commit or a checkout folder (default {DEFAULT_A})")
    parser.add_argument("--b", default="HEAD", help="side B: a commit or a checkout folder (default HEAD)")
    parser.add_argument("--seeds", default="1-10", help="seeds to run (default 1-10)")
    parser.add_argument("--quick", action="store_true", help="seeds 1-3 only, for iterations")
    parser.add_argument("--check-option", action="append", default=[], metavar="OPTION",
                        help="one more option for both sides' `kmodel check` (repeatable), "
                             "e.g. --check-option=--leader-elect=false")
    args = parser.parse_args(argv)
    # a SIGTERM (timeout, kill) unwinds like Ctrl-C, so the temporary worktrees are removed
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(f"stopped by signal {signum}"))
    seeds = [1, 2, 3] if args.quick else parse_seeds(args.seeds)
    under = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    made: list[Path] = []
    try:
        sides = []
        for name, spec in (("A", args.a), ("B", args.b)):
            folder, label, temporary = checkout(spec, under)
            if temporary:
                made.append(folder)
            sides.append((name, folder))
            print(f"{name}: {label}")
        print(f"dev run with --fix all {' '.join(args.check_option)}, seeds {seeds[0]}..{seeds[-1]}, A and B "
              f"alternated (the first side of each seed alternates too)", flush=True)
        runs: dict[str, list[Run]] = {"A": [], "B": []}
        for i, seed in enumerate(seeds):
            order = sides if i % 2 == 0 else sides[::-1]
            for name, folder in order:
                runs[name].append(one_run(folder, seed, args.check_option))
            a, b = runs["A"][-1], runs["B"][-1]
            same = "same digest" if a.digest == b.digest else "digests differ"
            print(f"seed {seed:3}  " + row("A", a) + f"\n          " + row("B", b)
                  + f"\n          B/A events/s {b.events_per_second / a.events_per_second:.2f}x, events/CPU-s "
                  f"{b.events_per_cpu_second / a.events_per_cpu_second:.2f}x  {same}", flush=True)
        rate, cpu_rate = {}, {}
        for name in ("A", "B"):
            side = runs[name]
            rate[name] = statistics.median(r.events_per_second for r in side)
            cpu_rate[name] = statistics.median(r.events_per_cpu_second for r in side)
            print(f"median {name}: {statistics.median(r.events for r in side):11,.0f} events "
                  f"{statistics.median(r.model_seconds for r in side):7.2f} s model "
                  f"{statistics.median(r.wall_seconds for r in side):7.2f} s wall "
                  f"{statistics.median(r.cpu_seconds for r in side):7.2f} s CPU {rate[name]:9,.0f} events/s "
                  f"{cpu_rate[name]:9,.0f} events/CPU-s")
        same = sum(a.digest == b.digest for a, b in zip(runs["A"], runs["B"]))
        print(f"B/A median events/s {rate['B'] / rate['A']:.2f}x, median events/CPU-s "
              f"{cpu_rate['B'] / cpu_rate['A']:.2f}x; same digest on {same} of {len(seeds)} seeds")
    finally:
        for folder in made:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)],
                           capture_output=True)
        shutil.rmtree(under, ignore_errors=True)


if __name__ == "__main__":
    main()
