"""`kmodel principles`: each of Kubernetes' design principles shown by contrast, measured, in reports/principles.md.

Theory of operation
-------------------
For every variant (kmodel.variants) and every seed in `seeds` (1..5 by default), the real `kmodel check
--variant NAME --seed S --fix all` runs in a process of its own (so each run is timed alone, with the command's
own GC settings, and one run's heap never slows the next), writing its report folder under `work/`. Every fix
of an upstream bug is on: the default model keeps upstream's bugs, and the page contrasts the design with the
anti-patterns, not with those. A run *catches*
its variant when it ends with a violation of one of the variant's expected invariants, shrunk, and reproduced by
the replayer (report.json's `reproduced`). The default model runs the same seeds and must pass them all.

The page then has one row per anti-pattern: the principle, what the design says, the variant, the invariant it
broke, how many seeds caught it, the median wall time of a run that caught it (search, shrink and replay
included), the shortest shrunk trace and the command that replays it (the trace is copied beside the page, in
reports/principles/). `polling` is expected to break nothing; what it breaks anyway is listed under the table
(each such trace replayed under watch too), not counted as a problem, and the page ends with the watch-versus-polling
cost table and plot (kmodel.principles.costs).

Everything the page shows comes from these runs: rerun `kmodel principles` to regenerate it.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import attrs

from kmodel.variants import DEFAULT, POLLING, VARIANTS, Variant
from kmodel.checker.replay import replay
from kmodel.checker.results import atomic_write_text
from kmodel.checker.session import TraceDiverged
from kmodel.checker.trace import read_trace

#: a run slower than this counts as not caught (the issue's bound)
TIME_LIMIT_S = 60.0
#: every run takes out the upstream bugs the default model keeps (kmodel.fixes), so that the default's runs show
#: the design, not one of upstream's known bugs (some seeds of the default model end on one, such as the host
#: port the scheduler forgets), and each variant is judged against that
CHECK_FIXES: tuple[str, ...] = ("--fix", "all")
#: a run is stopped after this long (a campaign that cannot end is reported, not waited for)
HARD_TIMEOUT_S = 600.0


@attrs.frozen
class Run:
    variant: str
    seed: int
    seconds: float
    exit_code: int
    invariant: Optional[str] = None  # the violated invariant, if any
    message: str = ""
    trace: Optional[str] = None  # the shrunk trace's path
    actions: int = 0  # its length
    reproduced: bool = False
    error: str = ""  # stderr's last line when the command failed to run (exit 2/3, timeout)

    def caught(self, variant: Variant) -> bool:
        return (self.invariant in variant.expect and self.reproduced and self.seconds <= TIME_LIMIT_S)


def run_check(variant: str, seed: int, folder: Path, *, extra: Sequence[str] = ()) -> Run:
    """Run `kmodel check --variant VARIANT --seed SEED --report FOLDER` in a fresh process and read its report."""
    command = [sys.executable, "-m", "kmodel", "check", "--variant", variant, "--seed", str(seed),
               "--report", str(folder), *extra]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=HARD_TIMEOUT_S,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        return Run(variant, seed, HARD_TIMEOUT_S, -1, error=f"stopped after {HARD_TIMEOUT_S:.0f} s")
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Run(variant, seed, seconds, done.returncode, error=last)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    if not report["violations"]:
        return Run(variant, seed, seconds, done.returncode)
    v = report["violations"][0]
    return Run(variant, seed, seconds, done.returncode, v["invariant"], v["message"], v["trace"], int(v["steps"]),
               bool(v.get("reproduced")))


def run_all(variants: Sequence[Variant], seeds: Sequence[int], work: Path, *, jobs: int = 1,
            on_run: Optional[Callable[[Run], None]] = None) -> list[Run]:
    """Every (variant, seed) run, in a stable order whatever the number of parallel jobs."""
    plan = [(v.name, s) for v in variants for s in seeds]

    def one(item: tuple[str, int]) -> Run:
        name, seed = item
        folder = work / f"{name}-seed{seed}"
        shutil.rmtree(folder, ignore_errors=True)
        run = run_check(name, seed, folder, extra=CHECK_FIXES)
        if on_run is not None:
            on_run(run)
        return run

    if jobs <= 1:
        return [one(item) for item in plan]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, plan))


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s" if values else "-"


def principles_table(runs: list[Run], out_dir: Path, page_dir: Path) -> tuple[str, list[str]]:
    """The Markdown table of principles and the list of problems (a variant not caught, the default failing).
    polling's violations are not problems: `polling_findings` reports them."""
    by_variant: dict[str, list[Run]] = {}
    for r in runs:
        by_variant.setdefault(r.variant, []).append(r)
    problems: list[str] = []
    lines = [
        "| Principle | What the design says | Variant | Invariant | Caught | Median time to catch | Shrunk trace "
        "| Replay |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v in VARIANTS:
        vruns = by_variant.get(v.name)
        if not vruns:
            continue
        seeds = len(vruns)
        if v.name == DEFAULT or v.name == POLLING:
            passed = [r for r in vruns if r.exit_code == 0]
            broke = sorted({r.invariant for r in vruns if r.exit_code == 1 and r.invariant})
            what = "passes"
            if v.name == POLLING:
                what = "passes (it costs more: see below)" if not broke else \
                    f"breaks {', '.join(broke)} on {seeds - len(passed)} (see below); passes"
            lines.append(f"| {v.principle} | {v.design_says} | `{v.name}` | none violated | {what}: "
                         f"{len(passed)}/{seeds} seeds | {_median([r.seconds for r in passed])} per run | - | - |")
            for r in vruns:
                if r.exit_code != 0 and not (v.name == POLLING and r.exit_code == 1 and r.reproduced):
                    problems.append(f"{v.name} seed {r.seed}: {r.invariant or r.error or 'exit ' + str(r.exit_code)}"
                                    f" {r.message}".rstrip())
            continue
        caught = [r for r in vruns if r.caught(v)]
        found = sorted({r.invariant for r in caught if r.invariant})
        if len(caught) < 4:
            problems.append(f"{v.name}: caught on {len(caught)}/{seeds} seeds (" + "; ".join(
                f"seed {r.seed}: {r.invariant or r.error or 'no violation'} in {r.seconds:.0f} s" for r in vruns) + ")")
        shortest = min(caught, key=lambda r: (r.actions, r.seed), default=None)
        replay = "-"
        length = "-"
        if shortest is not None and shortest.trace:
            page_dir.mkdir(parents=True, exist_ok=True)
            target = page_dir / f"{v.name}.json"
            shutil.copyfile(shortest.trace, target)
            replay = f"`kmodel replay {target}`"
            length = f"{shortest.actions} actions (seed {shortest.seed})"
        lines.append(f"| {v.principle} | {v.design_says} | `{v.name}` | {', '.join(found) or ', '.join(v.expect)} "
                     f"| {'yes' if len(caught) >= 4 else 'NO'}: {len(caught)}/{seeds} seeds "
                     f"| {_median([r.seconds for r in caught])} | {length} | {replay} |")
    return "\n".join(lines) + "\n", problems


def under_watch(trace_path: Path) -> str:
    """What the default model (watching) makes of a polling run's shrunk trace: 'passes', 'fails <invariant>',
    or 'diverges' (one of its moves, a loop event or a process to restart, exists only in polling's run)."""
    try:
        result = replay(read_trace(trace_path), variant=DEFAULT, record_messages=False)
    except TraceDiverged:
        return "diverges (one of its moves exists only in polling's run)"
    return "passes" if result.violation is None else f"fails {result.violation.invariant}"


def polling_findings(runs: list[Run], page_dir: Path) -> list[str]:
    """The page's lines on what `polling` broke (none when it broke nothing): each run's violation, its shrunk
    trace (copied beside the page) and what the same trace does under watch."""
    for stale in sorted(page_dir.glob(f"{POLLING}-seed*.json")):  # a previous page's, not this one's
        stale.unlink()
    found = [r for r in runs if r.variant == POLLING and r.exit_code == 1 and r.reproduced and r.trace]
    if not found:
        return []
    lines = [
        "What `polling` broke. It was expected to break nothing; the checker found what acting on a view up to "
        "one poll old costs. Each shrunk trace is replayed under watch too (`--variant default`):",
        "",
    ]
    page_dir.mkdir(parents=True, exist_ok=True)
    for r in found:
        target = page_dir / f"{POLLING}-seed{r.seed}.json"
        shutil.copyfile(r.trace, target)  # type: ignore[arg-type]
        lines.append(f"- seed {r.seed}: {r.invariant}: {r.message} ({r.actions} actions: `kmodel replay {target}`; "
                     f"under watch it {under_watch(target)})")
    return lines + [""]


def runs_table(runs: list[Run]) -> str:
    lines = ["| Variant | Seed | Exit | Invariant | Seconds | Shrunk actions | Reproduced |", "|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| `{r.variant}` | {r.seed} | {r.exit_code} | {r.invariant or r.error or '-'} | "
                     f"{r.seconds:.1f} | {r.actions or '-'} | {'yes' if r.reproduced else '-'} |")
    return "\n".join(lines) + "\n"


def write_page(path: Path, runs: list[Run], costs_md: str, plot_line: str, seeds: Sequence[int]) -> list[str]:
    """Write reports/principles.md (atomically); returns the problems found."""
    page_dir = path.parent / "principles"
    table, problems = principles_table(runs, path, page_dir)
    seeds_text = ", ".join(str(s) for s in seeds)
    text = [
        "# Kubernetes' design principles, shown by contrast",
        "",
        "Generated by `kmodel principles`; do not edit by hand. Each anti-pattern is a variant of the model "
        "(`kmodel variants`) that changes one behaviour at one place. For each variant and each seed "
        f"({seeds_text}), `kmodel check --variant NAME --seed S {' '.join(CHECK_FIXES)}` ran in a process of its "
        f"own on this machine "
        f"({os.cpu_count()} cores). A variant is caught on a seed when the run ends with one of its expected "
        "invariants violated, shrunk and reproduced by `kmodel replay`, within "
        f"{TIME_LIMIT_S:.0f} s. Times are wall seconds of the whole command (search, shrinking, replay, reports).",
        "",
        table,
        *polling_findings(runs, page_dir),
        "Problems: " + ("none." if not problems else ""),
    ]
    text += [f"- {p}" for p in problems]
    text += ["", "## Every run", "", runs_table(runs), "## Watch versus polling", "", costs_md, plot_line, ""]
    atomic_write_text(path, "\n".join(text))
    return problems
