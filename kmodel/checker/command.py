"""The `kmodel check`, `kmodel replay` and `kmodel invariants` subcommands: options, exit codes, output.

    kmodel check [--examples N] [--steps N] [--seed S] [--nodes N] [--apiservers N] [--variant NAME]
                 [--fix NAME]… [--profile dev|ci|campaign] [--report DIR]
        explore; exit 0 nothing violated, 1 a violation (its shrunk trace and the reports in DIR), 2 bad usage
    kmodel replay TRACE [--variant NAME] [--fix NAME]… [--lenient] [--quiet]
        re-execute a trace step by step without Hypothesis; exit 1 a violation reproduced, 0 the trace passes,
        2 an unreadable, truncated or wrong-version file (or one this model cannot apply; with --lenient,
        interleaving and fault steps whose events are not enabled are skipped instead)
    kmodel invariants
        the table of invariants: name, kind, principle, guarantee

The progress bar is drawn on stderr only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kmodel.checker.profiles import PROFILES
from kmodel.fixes.command import add_fix_option, fixes_from

CHECK_HELP = "explore interleavings and faults with Hypothesis, checking every invariant"
REPLAY_HELP = "re-execute a trace step by step, without Hypothesis"
INVARIANTS_HELP = "print the table of invariants"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("check", help=CHECK_HELP, description=CHECK_HELP,
                              epilog="exit codes: 0 nothing violated; 1 a violation; 2 bad usage")
    p.add_argument("--examples", type=int, default=None, metavar="N", help="examples to run (default: the profile's; dev: 200)")
    p.add_argument("--steps", type=int, default=None, metavar="N", help="rules per example (default: the profile's, 30)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="Hypothesis seed (default 0)")
    p.add_argument("--nodes", type=int, default=3, metavar="N", help="nodes (default 3)")
    p.add_argument("--apiservers", type=int, default=2, metavar="N", help="API server replicas (default 2)")
    p.add_argument("--variant", default="default", metavar="NAME", help="model variant (default: default)")
    add_fix_option(p, "explore the model")
    p.add_argument("--profile", default="dev", choices=PROFILES, help="Hypothesis profile (default dev)")
    p.add_argument("--report", default="reports/latest", metavar="DIR", help="report folder (default reports/latest)")
    p.set_defaults(handler=check)

    r = subparsers.add_parser("replay", help=REPLAY_HELP, description=REPLAY_HELP,
                              epilog="exit codes: 1 a violation reproduced; 0 the trace passes; 2 a file that "
                                     "cannot be used")
    r.add_argument("trace", metavar="TRACE", help="a trace file (kmodel-trace/2, or /1)")
    r.add_argument("--variant", default=None, metavar="NAME", help="replay under this variant (default: the trace's)")
    add_fix_option(r, "replay (besides the trace's own fixes)")
    r.add_argument("--lenient", action="store_true",
                   help="skip the events of interleaving and fault steps that are not enabled when their turn comes "
                        "(as the minimizer replays), instead of refusing a trace this model no longer fits: for a "
                        "trace recorded on another model, e.g. a bug's trace replayed with its --fix")
    r.add_argument("--quiet", action="store_true", help="print only the outcome")
    r.set_defaults(handler=replay_command)

    i = subparsers.add_parser("invariants", help=INVARIANTS_HELP, description=INVARIANTS_HELP)
    i.set_defaults(handler=invariants_command)


class _Progress:
    """A one-line progress bar on stderr (only on a terminal): exploring, then shrinking and minimizing a
    violation, each against its own budget."""

    width = 30

    def __init__(self, total: int) -> None:
        self.total = total

    def _draw(self, done: int, total: int, text: str) -> None:
        filled = self.width * min(done, total) // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {text}" + " " * 4)
        sys.stderr.flush()

    def __call__(self, stats: Any) -> None:
        from kmodel.checker.run import MAX_SHRINK_EVENTS

        if stats.first_failure_at is None:
            self._draw(stats.examples, self.total,
                       f"{stats.examples}/{self.total} examples, {stats.steps} steps, 0 failing")
        else:
            events = stats.shrinking_events()
            self._draw(events, MAX_SHRINK_EVENTS,
                       f"shrinking a violation: {stats.shrinking_examples()} examples, {events:,} of at most "
                       f"{MAX_SHRINK_EVENTS:,} events")

    def replayed(self, replays: int, most: int, actions: int) -> None:
        self._draw(replays, most, f"minimizing it: {replays} of at most {most} replays, {actions} actions left")


def _prepare_report_folder(folder: Path) -> None:
    """Create the report folder before exploring, so a run's failure trace is never lost to an unusable path."""
    from kmodel.cli import KmodelUsageError

    if folder.exists() and not folder.is_dir():
        raise KmodelUsageError(f"--report {folder}: is a file, not a folder; name a folder (it is created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KmodelUsageError(f"--report {folder}: cannot create the folder ({exc.strerror}); name a writable "
                               f"folder") from None


def check(args: argparse.Namespace) -> int:
    from kmodel.checker.results import write_results
    from kmodel.checker.run import CheckOptions, run_campaign
    from kmodel.cli import KmodelUsageError

    try:
        options = CheckOptions(examples=args.examples, steps=args.steps, seed=args.seed, nodes=args.nodes,
                               apiservers=args.apiservers, variant=args.variant, profile=args.profile,
                               fixes=fixes_from(args.fix))
    except ValueError as exc:
        raise KmodelUsageError(str(exc)) from None
    _prepare_report_folder(Path(args.report))
    progress = _Progress(options.settings().max_examples) if sys.stderr.isatty() else None
    result = run_campaign(options, on_example=progress, on_replay=progress.replayed if progress else None)
    if progress is not None:
        sys.stderr.write("\n")
    report = write_results(result, Path(args.report))
    checked = sum(1 for inv in report["invariants"] if inv["checks"])
    if options.fixes:
        print(f"fixes on: {', '.join(options.fixes)}")
    print(f"kmodel check: seed {options.seed}, {result.stats.examples} examples, {result.stats.steps} steps, "
          f"{result.stats.events} model events in {result.seconds:.1f} s; {checked}/{len(report['invariants'])} "
          f"invariants checked; trace digest {report['trace_digest']}")
    situations = report["sometimes"]
    if situations:
        missed = [entry["name"] for entry in situations if not entry["examples"]]
        print(f"situations reached: {len(situations) - len(missed)}/{len(situations)} sometimes properties"
              + (f" (never: {', '.join(missed)})" if missed else ""))
    for v in report["violations"]:
        print(f"VIOLATION {v['invariant']}: {v['message']}")
        print(f"  shrunk to {v['steps']} steps: {v['trace']}")
        print(f"  replay: kmodel replay {v['trace']}")
    print(f"report: {Path(args.report) / 'report.json'}")
    return 1 if report["violations"] else 0


def replay_command(args: argparse.Namespace) -> int:
    from kmodel.checker.replay import replay
    from kmodel.checker.session import VARIANTS, TraceDiverged
    from kmodel.checker.trace import TraceError, read_trace
    from kmodel.cli import KmodelUsageError

    if args.variant is not None and args.variant not in VARIANTS:
        raise KmodelUsageError(f"unknown variant {args.variant!r}; variants: {', '.join(VARIANTS)}")
    try:
        trace = read_trace(Path(args.trace))
    except TraceError as exc:
        raise KmodelUsageError(str(exc)) from None
    if trace.variant not in VARIANTS and args.variant is None:
        raise KmodelUsageError(f"{args.trace}: unknown variant {trace.variant!r}; variants: {', '.join(VARIANTS)}")
    fixes = fixes_from(args.fix)

    def show(i: int, action: Any) -> None:
        if not args.quiet:
            print(f"{i:4d}. {action.name}")

    try:
        result = replay(trace, variant=args.variant, record_messages=False, on_step=show, fixes=fixes,
                        lenient=args.lenient)
    except TraceDiverged as exc:
        raise KmodelUsageError(f"{args.trace} does not fit this model: {exc} (--lenient skips the events that are "
                               f"not enabled)") from None
    if args.lenient:
        print(f"lenient: {result.skipped} of {len(trace.actions)} steps lost some or all of their events")
    expected = trace.expected_invariant
    if result.violation is not None:
        v = result.violation
        print(f"VIOLATION {v.invariant} after step {v.step}: {v.message}")
        if expected is not None and expected != v.invariant:
            print(f"(the trace expected {expected})")
        return 1
    print(f"passed: {len(result.steps)} steps, no invariant violated (digest {result.digest})")
    if expected is not None:
        print(f"(the trace expected {expected} to fail)")
    return 0


def invariants_command(args: argparse.Namespace) -> int:
    from kmodel.checker.session import all_invariants

    from invariants.sometimes import registered_sometimes

    rows = [(inv.name, inv.kind, inv.principle, inv.guarantee) for inv in all_invariants()]
    # the sometimes properties, after them: situations an exploration should reach (report: "Situations reached")
    rows += [(p.name, "sometimes", p.principle, p.situation) for p in registered_sometimes()]
    head = ("NAME", "KIND", "PRINCIPLE", "GUARANTEE")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    for row in [head, *rows]:
        print("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3])
    return 0
