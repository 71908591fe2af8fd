"""The `kmodel check`, `kmodel replay` and `kmodel invariants` subcommands: options, exit codes, output.

    kmodel check [--examples N] [--steps N] [--seed S] [--nodes N] [--apiservers N] [--controller-managers N]
                 [--schedulers N] [--leader-elect=true|false] [--variant NAME]
                 [--fix NAME]… [--component SPEC]… [--profile dev|ci|campaign] [--report DIR] [--junit-xml PATH]
                 [--workers N|auto] [--scheduler ADDRESS] [--[no-]stop-on-first] [--keep-going]
                 [--database WHERE] [--reach] [--guided]
                 [--operator CMD --operator-manifests PATH… [--operator-user NAME] [--operator-ready SPEC]
                  [--invariants MODULE:NAME]… [--reproduce N] [--speed X] [--operator-settle S]
                  [--operator-actions FILE]]
        explore; with --operator, a real operator process over a served cluster (kmodel.operator); exit 0 nothing violated, 1 a violation (its shrunk trace and the reports in DIR), 2 bad usage;
        --keep-going explores the whole budget and reports every distinct violation (kmodel.checker.findings);
        --junit-xml also writes the verdict as JUnit XML (kmodel.checker.junit); the budget runs as shards
        whose reports are merged (kmodel.checker.shards): in turn here with one worker, on Dask with several or
        a scheduler (kmodel.checker.parallel), the same digest either way;
        --reach measures the branch outcomes the run takes (kmodel.checker.reach) for the reports' reach section;
        --guided steers toward outcomes never taken, from a corpus of the examples that took new ones
        (kmodel.checker.guided)
    kmodel replay TRACE [--variant NAME] [--fix NAME]… [--lenient] [--quiet | --state]
        re-execute a trace step by step without Hypothesis, its steps numbered from 1 as in the report (--state:
        with what each step changed); exit 1 a violation reproduced, 0 the trace passes,
        2 an unreadable, truncated or wrong-version file (or one this model cannot apply; with --lenient,
        interleaving and fault steps whose events are not enabled are skipped instead); TRACE may also be the
        trace.json of a `kmodel serve` run (told apart by its format), run again without its clients as
        `kmodel serve --replay` does: exit 0 the recorded digest reached, 1 not, 2 a file that cannot be used
    kmodel invariants [--markdown]
        the table of invariants and sometimes properties: name, kind, principle, guarantee (--markdown: the
        reference page docs/invariants.md, generated from the registry)

The progress bar is drawn on stderr only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import textwrap
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

from kmodel.checker.example_db import DEFAULT_DIRECTORY as DEFAULT_DATABASE
from kmodel.checker.example_db import check_database_spec, saved_failures, shown as shown_database
from kmodel.checker.profiles import PROFILES
from kmodel.checker.topology import possible_topologies
from kmodel.cluster.leader_elect_option import add_leader_elect_option
from kmodel.component.command import add_component_option, components_from
from kmodel.errors import KmodelUsageError
from kmodel.fixes.command import add_fix_option, fixes_from
from kmodel.operator.command import OPERATOR_ONLY, add_operator_options, run_operator

CHECK_HELP = "explore interleavings and faults with Hypothesis, checking every invariant"
REPLAY_HELP = "re-execute a trace step by step, without Hypothesis"
INVARIANTS_HELP = "print the table of invariants"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("check", help=CHECK_HELP, description=CHECK_HELP,
                              epilog="exit codes: 0 nothing violated (and every --require-sometimes situation "
                                     "reached); 1 a violation, or a required situation never reached; 2 bad usage")
    p.add_argument("--examples", type=int, default=None, metavar="N",
                   help="examples to run (default: the profile's; dev: 200). A run may report more: an example "
                        "that draws more choices than Hypothesis allows one is abandoned, uncounted, and another "
                        "runs in its place; saved failures replayed first and a violation's shrink add theirs")
    p.add_argument("--steps", type=int, default=None, metavar="N", help="rules per example (default: the profile's, 30)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="Hypothesis seed (default 0)")
    p.add_argument("--nodes", type=int, default=3, metavar="N", help="nodes (default 3)")
    # the topology: each count's default is the dev and ci profiles'; the campaign profile draws the counts not
    # given per example (kmodel.checker.topology), the electing ones only with leader election
    electing = " or --leader-elect=false"
    for option, copies, default, unless in (("apiservers", "API server replicas", 2, ""),
                                            ("controller-managers", "kube-controller-managers", 1, electing),
                                            ("schedulers", "kube-schedulers", 1, electing)):
        p.add_argument(f"--{option}", type=int, default=None, metavar="N",
                       help=f"{copies} (default {default}; the campaign profile draws 1 to 3 per example unless "
                            f"given{unless}: a value given pins it)")
    add_leader_elect_option(p)
    p.add_argument("--variant", default="default", metavar="NAME", help="model variant (default: default)")
    add_fix_option(p, "explore the model")
    add_component_option(p, "explore the cluster")
    p.add_argument("--profile", default="dev", choices=PROFILES, help="Hypothesis profile (default dev)")
    p.add_argument("--report", default="reports/latest", metavar="DIR", help="report folder (default reports/latest)")
    p.add_argument("--require-sometimes", action="append", default=[], metavar="NAMES",
                   help="fail (exit 1) unless these sometimes properties are each reached by some example "
                        "(comma-separated or repeatable; `kmodel invariants` lists them): pins in CI that a seed "
                        "keeps reaching the situations it is kept for, so a fault that stops biting is noticed")
    p.add_argument("--junit-xml", default=None, metavar="PATH",
                   help="also write the verdict as JUnit XML for a CI system: one test case per invariant, the "
                        "violated one failing with its message and trace")
    p.add_argument("--workers", default=None, metavar="N",
                   help="explore in N worker processes at once, on a local Dask cluster started and stopped by the "
                        "command (N=auto: one per core; default 1; with --scheduler: one per worker thread of that "
                        "cluster); the budget is split into shards of about 25 examples (at least 20), each with its own "
                        "seed, whatever N, and the reports merged: one worker runs the same shards in turn, so any "
                        "N gives the same trace digest")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the shards on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786) instead "
                        "of a local one; its workers need kmodel installed, the traces and reports come back here")
    p.add_argument("--stop-on-first", action=argparse.BooleanOptionalAction, default=None,
                   help="stop the other shards when one finds a violation (default: on in the dev profile, off in ci "
                        "and campaign and with --keep-going, where every shard runs its whole share)")
    p.add_argument("--keep-going", action="store_true",
                   help="a violation ends its example, not the run: explore the whole budget, minimize each distinct "
                        "violation (its invariant and the known fix that takes it out, if any) and report them all, "
                        "known upstream bugs apart from new findings (with --workers, each worker keeps going and "
                        "the report unions their findings; not with --stop-on-first)")
    p.add_argument("--database", default=None, metavar="WHERE",
                   help="keep failures in this Hypothesis example database, so the next run replays them first: a "
                        "folder, redis://HOST:PORT/DB (needs kmodel[redis]) or none "
                        f"(default: none; {DEFAULT_DATABASE} is the usual folder)")
    p.add_argument("--reach", action="store_true",
                   help="measure which lines and branch outcomes of the model packages and of each --component "
                        "module the run takes (coverage.py, branch mode; slower): the reports gain a reach section "
                        "listing the outcomes never taken; one process only, not with --workers or --scheduler")
    p.add_argument("--guided", action="store_true",
                   help="steer toward branch outcomes of the model never taken: examples that took a new one are "
                        "kept in a corpus, and the examples of each later round start from their actions (the "
                        "corpus is kept in --database, so the next run starts from it); slower per example, as "
                        "coverage.py traces the first round's examples and some after it; one process only, not "
                        "with --reach")
    add_operator_options(p)
    p.set_defaults(handler=check)

    r = subparsers.add_parser("replay", help=REPLAY_HELP, description=REPLAY_HELP,
                              epilog="exit codes: 1 a violation reproduced; 0 the trace passes; 2 a file that "
                                     "cannot be used. A kmodel serve run's trace.json is run again without its "
                                     "clients, as kmodel serve --replay runs it: 0 when it ends on the run's "
                                     "digest, 1 when it does not (--variant, --fix, --lenient and --state are for "
                                     "the checker's traces)")
    r.add_argument("trace", metavar="TRACE",
                   help="a trace file (kmodel-trace/2, or /1), or the trace.json a kmodel serve run wrote")
    r.add_argument("--variant", default=None, metavar="NAME", help="replay under this variant (default: the trace's)")
    add_fix_option(r, "replay (besides the trace's own fixes)")
    r.add_argument("--lenient", action="store_true",
                   help="skip the events of interleaving and fault steps that are not enabled when their turn comes "
                        "(as the minimizer replays), instead of refusing a trace this model no longer fits: for a "
                        "trace recorded on another model, e.g. a bug's trace replayed with its --fix")
    r.add_argument("--quiet", action="store_true", help="print only the outcome")
    r.add_argument("--state", action="store_true",
                   help="after each step, print what it changed in the cluster: objects created, updated and "
                        "deleted, components down, partitions (the report's table of changes, same step numbers)")
    r.set_defaults(handler=replay_command)

    i = subparsers.add_parser("invariants", help=INVARIANTS_HELP, description=INVARIANTS_HELP)
    i.add_argument("--markdown", action="store_true",
                   help="print the reference page docs/invariants.md (Markdown tables) instead of plain text")
    i.set_defaults(handler=invariants_command)


def clock_text(seconds: float) -> str:
    """Seconds as m:ss, or h:mm:ss from an hour on."""
    whole = max(int(round(seconds)), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _Progress:
    """A one-line progress bar on stderr (only on a terminal): exploring, then shrinking and minimizing a
    violation, each against its own budget. Every count is shown at most at its total (Hypothesis may run more
    examples than its budget, counting the invalid ones, and a shrink stops only after the example that spent
    its events); each line ends with the time since the check started and an estimate of what is left of the
    phase, from its own pace so far (for a shrink or a minimization, a bound: either may end before its budget)."""

    width = 30

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic, workers: int = 1) -> None:
        self.total = total
        self.workers = workers
        self.clock = clock
        self.started = clock()
        self.phase_started: dict[str, float] = {}

    def _times(self, phase: str, done: int, total: int, bound: bool) -> str:
        now = self.clock()
        since = self.phase_started.setdefault(phase, now)
        text = f" · {clock_text(now - self.started)} elapsed"
        if 0 < done < total and now > since:
            left = (now - since) * (total - done) / done
            text += f", {'at most ' if bound else ''}~{clock_text(left)} left"
        return text

    def _draw(self, done: int, total: int, text: str, phase: str, bound: bool = False) -> None:
        done = min(done, total)
        filled = self.width * done // max(total, 1)
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {text}{self._times(phase, done, total, bound)}"
        sys.stderr.write(f"\r{line}" + " " * 4)
        sys.stderr.flush()

    def __call__(self, stats: Any) -> None:
        from kmodel.checker.run import MAX_SHRINK_EVENTS

        if stats.first_failure_at is None:
            self.explored(stats.examples, stats.steps, stats.violating_examples)
        else:
            events = min(stats.shrinking_events(), MAX_SHRINK_EVENTS)
            self._draw(events, MAX_SHRINK_EVENTS,
                       f"shrinking a violation: {stats.shrinking_examples()} examples, {events:,} of at most "
                       f"{MAX_SHRINK_EVENTS:,} events", "shrink", bound=True)

    def explored(self, examples: int, steps: int, failing: int, workers: str = "") -> None:
        """Exploring: `examples` of the budget run (`workers`: a parallel run's, e.g. " on 4 workers")."""
        done = min(examples, self.total)
        self._draw(done, self.total, f"{done}/{self.total} examples{workers}, {steps} steps, {failing} failing",
                   "explore")

    def parallel(self, progress: Any) -> None:
        """A parallel run's progress (kmodel.checker.parallel.Progress), summed over its workers."""
        self.explored(progress.examples, progress.steps, progress.failing,
                      f" on {self.workers} workers" if self.workers else " across workers")

    def replayed(self, replays: int, most: int, actions: int) -> None:
        replays = min(replays, most)
        self._draw(replays, most, f"minimizing it: {replays} of at most {most} replays, {actions} actions left",
                   "minimize", bound=True)


def invocation() -> str:
    """The command that runs kmodel the way this process was started, to print in a command to copy: `kmodel`
    when that name on PATH is the script that ran, the script's path as typed when it is not on PATH, else
    this interpreter with `-m kmodel` (`python` when that name on PATH is this interpreter)."""
    script = sys.argv[0] if sys.argv else ""
    if Path(script).name == "kmodel" and Path(script).is_file():
        found = shutil.which("kmodel")
        if found and os.path.realpath(found) == os.path.realpath(script):
            return "kmodel"
        return shlex.quote(script)
    return f"{python_command()} -m kmodel"


def python_command() -> str:
    """This interpreter, as a command to copy: `python` when that name on PATH is this very interpreter (the
    same path: a virtual environment's python links to the base one, which lacks the environment's packages),
    else its path."""
    python = shutil.which("python")
    if python and os.path.abspath(python) == os.path.abspath(sys.executable):
        return "python"
    return shlex.quote(sys.executable)


def _prepare_report_folder(folder: Path) -> None:
    """Create the report folder before exploring, so a run's failure trace is never lost to an unusable path."""
    if folder.exists() and not folder.is_dir():
        raise KmodelUsageError(f"--report {folder}: is a file, not a folder; name a folder (it is created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KmodelUsageError(f"--report {folder}: cannot create the folder ({exc.strerror}); name a writable "
                               f"folder") from None


def _check_junit_path(value: str) -> Path:
    """Where --junit-xml goes, checked before exploring (its folder is created if missing)."""
    path = Path(value)
    if path.is_dir() or value.endswith(("/", os.sep)):
        raise KmodelUsageError(f"--junit-xml {value}: is a folder; name a file (e.g. {path / 'kmodel.xml'})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KmodelUsageError(f"--junit-xml {value}: cannot create its folder ({exc.strerror}); name a file in a "
                               f"writable folder") from None
    if not os.access(path.parent, os.W_OK):
        raise KmodelUsageError(f"--junit-xml {value}: its folder is not writable; name a file in a writable folder")
    return path


def check_options(args: argparse.Namespace) -> Any:
    """The campaign's CheckOptions of `kmodel check`'s parsed arguments; a usage error for a bad value. A
    topology count given on the command line is pinned; the profile draws the others per example
    (kmodel.checker.topology), and runs its default where it draws nothing."""
    from kmodel.checker.run import CheckOptions
    from kmodel.checker.topology import COUNTS, profile_draws

    given = {count: getattr(args, count) for count in COUNTS if getattr(args, count) is not None}
    try:
        return CheckOptions(examples=args.examples, steps=args.steps, seed=args.seed, nodes=args.nodes,
                            variant=args.variant, profile=args.profile, fixes=fixes_from(args.fix),
                            leader_elect=args.leader_elect, **given,
                            drawn=profile_draws(args.profile, args.leader_elect, pinned=given),
                            components=components_from(args.components, ()),
                            keep_going=args.keep_going, guided=args.guided)
    except ValueError as exc:
        raise KmodelUsageError(str(exc)) from None


def options_from_args(argv: list[str]) -> Any:
    """The CheckOptions `kmodel check ARGV` would run (benchmarks give their campaigns as check arguments)."""
    parser = argparse.ArgumentParser(prog="kmodel")
    register(parser.add_subparsers())
    return check_options(parser.parse_args(["check", *argv]))


def check(args: argparse.Namespace) -> int:
    from kmodel.checker.results import violation_lines, write_results
    from kmodel.checker.run import run_campaign

    if args.operator is not None:
        return run_operator(args, f"{invocation()} replay")
    given = [name for name in OPERATOR_ONLY if getattr(args, name) not in (None, [])]
    if given:
        raise KmodelUsageError(f"--{given[0].replace('_', '-')} is for --operator runs: add --operator CMD")
    options = check_options(args)
    required = required_sometimes(args.require_sometimes)
    junit = _check_junit_path(args.junit_xml) if args.junit_xml is not None else None
    workers = workers_from(args.workers, args.scheduler)
    parallel = workers != 1 or args.scheduler is not None
    if args.keep_going and args.stop_on_first:
        raise KmodelUsageError("--keep-going explores the whole budget and --stop-on-first stops at the first "
                               "violation: choose one")
    # no database unless one is named, whatever the worker count: Hypothesis draws differently with any
    # database, even an empty one, and the same seed must give the same run with any number of workers
    database = check_database_spec(args.database if args.database is not None else NO_DATABASE)
    if args.reach and parallel:
        raise KmodelUsageError("--reach measures one process: run it without --workers and --scheduler")
    if args.guided and parallel:
        raise KmodelUsageError("--guided steers one process: run it without --workers and --scheduler")
    if args.guided and args.reach:
        raise KmodelUsageError("--guided and --reach each trace the run with coverage.py, which measures one at a "
                               "time: choose one (benchmarks/reach.py --compare-guided counts a guided run's reach)")
    _prepare_report_folder(Path(args.report))
    replaying = saved_failures(None if database == NO_DATABASE else database, options)
    if replaying:  # said first: what such a run explores is not its seed's alone
        print(f"replaying {replaying} saved failing example{'s' if replaying > 1 else ''} from the example "
              f"database {shown_database(database)} first (--database none explores the seed alone)")
    found, extra, parallel_run, reach = None, None, None, None
    database_error, unsaved = None, 0  # a database set aside during the run (example_db.ForgivingDatabase)
    if parallel or not args.guided:  # (a guided run explores in rounds of its own: kmodel.checker.guided)
        from kmodel.checker.merge import workers_json
        from kmodel.checker.parallel import run_in_turn, run_parallel

        # (a keep-going run's workers each explore their whole share)
        stop_on_first = (args.stop_on_first if args.stop_on_first is not None
                         else options.profile == "dev" and not options.keep_going)
        shared = None if database == NO_DATABASE else database
        if parallel:
            progress = (_Progress(options.settings().max_examples, workers=workers or 0) if sys.stderr.isatty()
                        else None)
            parallel_run = run_parallel(options, workers, scheduler=args.scheduler, stop_on_first=stop_on_first,
                                        database=shared, on_progress=progress.parallel if progress else None)
        else:  # one worker: the same shards in turn, here
            progress = _Progress(options.settings().max_examples) if sys.stderr.isatty() else None
            reach = _reach(options.components) if args.reach else None
            with reach or nullcontext():
                parallel_run = run_in_turn(
                    options, stop_on_first=stop_on_first, database=shared,
                    on_progress=(lambda p: progress.explored(p.examples, p.steps, p.failing)) if progress else None,
                    on_shrink=progress, on_replay=progress.replayed if progress else None)
        result, found = parallel_run.result, parallel_run.found
        saved = parallel_run.saved
        read_errors = [o.database_error for o in parallel_run.outcomes if o.database_error is not None]
        database_error, unsaved = saved.error or (read_errors[0] if read_errors else None), saved.unsaved
        extra = {"parallel": {"workers": parallel_run.workers, "shards": len(parallel_run.outcomes),
                              "in_turn": parallel_run.in_turn,
                              "startup_seconds": round(parallel_run.startup_seconds, 3),
                              "stop_on_first": stop_on_first,
                              "scheduler": args.scheduler, "database": shown_database(database),
                              "database_entries_saved": saved.written, "database_entries_unsaved": unsaved,
                              "database_error": database_error},
                 "workers": workers_json(parallel_run.outcomes)}
    else:
        progress = _Progress(options.settings().max_examples) if sys.stderr.isatty() else None
        settings, forgiving = _settings_with_database(options, database)
        result = run_campaign(options, on_example=progress, on_replay=progress.replayed if progress else None,
                              settings=settings)
        if forgiving is not None:
            database_error, unsaved = forgiving.error, forgiving.unsaved
            extra = {"database": {"where": shown_database(database), "error": database_error,
                                  "entries_unsaved": unsaved}}
    if progress is not None:
        sys.stderr.write("\n")
    if reach is not None:
        extra = {**(extra or {}), "reach": reach.section()}
    if result.guided is not None:
        extra = {**(extra or {}), "guided": result.guided.to_json()}
    replay_with = f"{invocation()} replay"
    report = write_results(result, Path(args.report), trace_command=replay_with, required_sometimes=required,
                           found=found, extra=extra)
    if junit is not None:
        from kmodel.checker.junit import write_junit_xml

        write_junit_xml(junit, report, seconds=result.seconds, replay_command=replay_with)
    checked = sum(1 for inv in report["invariants"] if inv["checks"])
    if options.fixes:
        print("\n".join(wrapped(f"fixes on: {', '.join(options.fixes)}", indent=" " * len("fixes on: "))))
    print(f"kmodel check: seed {options.seed}, {result.stats.examples} examples, {result.stats.steps} steps, "
          f"{result.stats.events} model events in {result.seconds:.1f} s; {checked}/{len(report['invariants'])} "
          f"invariants checked; trace digest {report['trace_digest']}")
    if parallel_run is not None:
        if parallel_run.in_turn:
            print(f"  1 worker, {len(parallel_run.outcomes)} shard{'s' if len(parallel_run.outcomes) > 1 else ''} "
                  f"in turn in this process")
        else:
            print(f"  {parallel_run.workers} workers, {len(parallel_run.outcomes)} shards; the cluster answered "
                  f"after {parallel_run.startup_seconds:.1f} s (start-up, included in the run's time)")
        for worker in report["workers"]:
            stopped = ", stopped" if worker["stopped"] else ""
            found_one = f", found {worker['violation']}" if worker["violation"] else ""
            print(f"  shard {worker['shard']}: seed {worker['seed']}, {worker['examples']}/{worker['budget']} "
                  f"examples, {worker['steps']} steps, {worker['model_events']} model events in "
                  f"{worker['seconds']:.1f} s{found_one}{stopped}")
    situations = report["sometimes"]
    if situations:
        missed = [entry["name"] for entry in situations if not entry["examples"]]
        print(f"situations reached: {len(situations) - len(missed)}/{len(situations)} sometimes properties"
              + (f" (never: {', '.join(missed)})" if missed else ""))
    if report.get("topologies"):
        met = report["topologies"]
        print(f"topologies drawn: {len(met)} of {possible_topologies(report['drawn'])} (report.json's topologies "
              f"gives the examples of each)")
    if report.get("reach"):
        print(reach_line(report["reach"]))
    if report.get("guided"):
        print(guided_line(report["guided"]))
    if options.keep_going:
        print_findings(report, replay_with)
    for v in report["violations"]:
        print("\n".join(violation_lines(v, replay_with)))
    unreached = report["required_sometimes"]["unreached"]
    for name in unreached:
        print(f"UNREACHED {name}: no example reached it (required by --require-sometimes)")
    print(f"report: {', '.join(str(Path(args.report) / name) for name in REPORT_FILES)}")
    if database_error is not None:
        from kmodel.checker.example_db import set_aside_warning

        print(set_aside_warning(database, database_error, unsaved), file=sys.stderr)
    return 1 if report["violations"] or unreached else 0


NO_DATABASE = "none"
#: the report files a check writes, as the last line of its output names them (the page to open, first)
REPORT_FILES = ("report.html", "report.md", "report.json")


def wrapped(text: str, indent: str = "") -> list[str]:
    """`text` as lines within the terminal's width (100 columns when stdout is not a terminal), broken only
    between words (a name with hyphens or a path stays whole), the lines after the first indented by `indent`."""
    width = max(shutil.get_terminal_size((100, 24)).columns, 40)
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [""]


def print_findings(report: dict, replay_with: str) -> None:
    """A keep-going run's summary, before its violations: how many examples ended on a violation, and which
    distinct violations are known upstream bugs (with the fix that takes each out) and which are new."""
    found = report["keep_going"]
    print(f"keep going: {found['examples_violated']} of {report['figures']['examples_run']} examples ended on a "
          f"violation; {found['distinct']} distinct: {len(found['known_upstream_bugs'])} known upstream "
          f"{'bug' if len(found['known_upstream_bugs']) == 1 else 'bugs'}, {len(found['new_findings'])} new "
          f"{'finding' if len(found['new_findings']) == 1 else 'findings'}")
    for bug in found["known_upstream_bugs"]:
        print(f"  KNOWN UPSTREAM BUG {bug['invariant']}: taken out by --fix {bug['fix']}")
    for new in found["new_findings"]:
        print(f"  NEW FINDING {new['invariant']}: no known fix takes it out")


def _reach(components: tuple[str, ...]) -> Any:
    """--reach: the campaign's measurement (kmodel.checker.reach), imported only then (coverage.py with it)."""
    from kmodel.checker.reach import Measurement

    return Measurement(components)


def workers_from(value: str | None, scheduler: str | None = None) -> int | None:
    """--workers: a count of at least 1; `auto`: one per core here, or None with --scheduler (one per worker
    thread of that cluster, which only it knows); when not given: 1, or None with --scheduler."""
    if value is None or value == "auto":
        if scheduler is not None:
            return None
        if value is None:
            return 1
        from kmodel.checker.parallel import available_cores

        return available_cores()
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise KmodelUsageError(f"--workers {value}: give a number of at least 1, or auto (one per core)")
    return count


def _settings_with_database(options: Any, database: str) -> tuple[Any, Any]:
    """A single run's settings: the options' own, with the example database of --database if one is given
    (None, None without one); and that database's ForgivingDatabase (what failed, what was not saved)."""
    from hypothesis import settings as Settings

    from kmodel.checker.example_db import campaign_database

    db, forgiving = campaign_database(database, options)
    return (None, None) if db is None else (Settings(options.settings(), database=db, derandomize=False), forgiving)


def required_sometimes(values: list[str]) -> tuple[str, ...]:
    """The --require-sometimes names (comma-separated or repeated), each once, in the order given; a usage error
    for a name no sometimes property has."""
    from kmodel.invariants.sometimes import registered_sometimes

    known = [p.name for p in registered_sometimes()]
    names = list(dict.fromkeys(part.strip() for value in values for part in value.split(",") if part.strip()))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KmodelUsageError(f"--require-sometimes: no sometimes property is called {', '.join(unknown)}; "
                               f"`kmodel invariants` lists them")
    return tuple(names)


def replay_command(args: argparse.Namespace) -> int:
    from kmodel.checker.replay import replay
    from kmodel.checker.session import VARIANTS, TraceDiverged
    from kmodel.checker.trace import TraceError, read_trace
    from kmodel.component.registry import ComponentError
    from kmodel.serve.recording import is_recording

    if is_recording(Path(args.trace)):
        return replay_serve_run(args)
    if args.variant is not None and args.variant not in VARIANTS:
        raise KmodelUsageError(f"unknown variant {args.variant!r}; variants: {', '.join(VARIANTS)}")
    try:
        trace = read_trace(Path(args.trace))
    except TraceError as exc:
        raise KmodelUsageError(str(exc)) from None
    if trace.variant not in VARIANTS and args.variant is None:
        raise KmodelUsageError(f"{args.trace}: unknown variant {trace.variant!r}; variants: {', '.join(VARIANTS)}")
    fixes = fixes_from(args.fix)

    if args.quiet and args.state:
        raise KmodelUsageError("--quiet prints only the outcome and --state prints each step's changes: choose one")
    names: list[str] = []

    def show(i: int, action: Any) -> None:
        # numbered from 1, as the report numbers its steps
        names.append(action.name)
        if not args.quiet:
            print(f"{i + 1:4d}. {action.name}")

    def show_changes(change: Any) -> None:
        print_changes(change, names[change.step])

    try:
        result = replay(trace, variant=args.variant, record_messages=False, on_step=show, fixes=fixes,
                        lenient=args.lenient, on_changes=show_changes if args.state else None)
    except ComponentError as exc:  # a component of one's own the trace names, not importable here
        raise KmodelUsageError(f"{args.trace}: its configuration names the component {exc}") from None
    except TraceDiverged as exc:
        raise KmodelUsageError(f"{args.trace} does not fit this model: {exc} (--lenient skips the events that are "
                               f"not enabled)") from None
    if args.lenient:
        print(f"lenient: {result.skipped} of {len(trace.actions)} steps lost some or all of their events")
    expected = trace.expected_invariant
    if result.violation is not None:
        v = result.violation
        print(f"VIOLATION {v.invariant} after step {v.step + 1}: {v.message}")
        if expected is not None and expected != v.invariant:
            print(f"(the trace expected {expected})")
        return 1
    print(f"passed: {len(result.steps)} steps, no invariant violated (digest {result.digest})")
    if expected is not None:
        print(f"(the trace expected {expected} to fail)")
    return 0


def replay_serve_run(args: argparse.Namespace) -> int:
    """`kmodel replay` given the trace of a `kmodel serve` run: the serve command's own replay (its calls to
    the model, run again without the clients); the options that steer a checker's trace do not apply to it."""
    from kmodel.serve.command import replay_command as replay_run

    given = [flag for flag, value in (("--variant", args.variant), ("--fix", args.fix), ("--lenient", args.lenient),
                                      ("--state", args.state)) if value]
    if given:
        raise KmodelUsageError(f"{args.trace} is the trace of a kmodel serve run, which {', '.join(given)} "
                               f"cannot steer (only the checker's traces): replay it without "
                               f"{'them' if len(given) > 1 else 'it'}")
    return replay_run(Path(args.trace))


def reach_line(section: dict) -> str:
    """The terminal's one line of a --reach run: branch outcomes taken in all, then the package that took the
    fewest (the reports list every outcome never taken)."""
    total = section["total"]["outcomes"]
    shown = [p for p in section["packages"] if p["outcomes"]["total"]]

    def share(counts: dict) -> str:
        return f"{counts['taken']:,} of {counts['total']:,} ({100 * counts['taken'] / max(counts['total'], 1):.0f} %)"

    low = min(shown, key=lambda p: (p["outcomes"]["taken"] / p["outcomes"]["total"], p["name"]), default=None)
    fewest = f"; fewest in {low['name']}: {share(low['outcomes'])}" if low is not None else ""
    return f"reach: {share(total)} branch outcomes taken{fewest} (the report lists the ones never taken)"


def guided_line(section: dict) -> str:
    """The terminal's one line of a --guided run: its rounds, the examples traced and kept, the corpus."""
    loaded = f" (besides {section['corpus_loaded']:,} loaded from the database)" if section["corpus_loaded"] else ""
    rounds = section["rounds"]
    return (f"guided: {rounds} round{'s' if rounds != 1 else ''}; {section['examples_measured']:,} examples traced, "
            f"{section['corpus_kept']:,} kept in the corpus{loaded}; {section['examples_from_corpus']:,} started "
            f"from a corpus example; {section['outcomes_seen']:,} branch outcomes seen")


def print_changes(change: Any, action: str) -> None:
    """What one step changed, under its line: the rows of the report's table of changes that are not empty."""
    from kmodel.report.render import change_row

    row = change_row(change, action, 0, set(), most=None)
    indent = " " * 6
    lines = [("time", row.time)]
    for label, cell in (("created", row.created), ("updated", row.updated), ("deleted", row.deleted),
                        ("down", row.down), ("cut off", row.partitions)):
        if not cell.empty:
            lines.append((label, cell.text()))
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    for label, text in lines:
        head = f"{indent}{label:<8}  "
        wrapped = textwrap.wrap(text, width - len(head), break_on_hyphens=False) or [""]
        print(head + wrapped[0])
        for line in wrapped[1:]:
            print(" " * len(head) + line)


def invariants_command(args: argparse.Namespace) -> int:
    from kmodel.checker.session import all_invariants

    from kmodel.invariants.sometimes import registered_sometimes

    if getattr(args, "markdown", False):
        sys.stdout.write(invariants_markdown())
        return 0
    rows = [(inv.name, inv.kind, inv.principle, inv.guarantee) for inv in all_invariants()]
    # the sometimes properties, after them: situations an exploration should reach (report: "Situations reached")
    rows += [(p.name, "sometimes", p.principle, p.situation) for p in registered_sometimes()]
    head = ("NAME", "KIND", "PRINCIPLE", "GUARANTEE")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    # the guarantee wraps within the terminal's width (100 columns when not a terminal, as `kmodel fixes`),
    # its continuation lines under its column, broken only between words (a label or a name stays whole)
    indent = sum(widths) + 2 * 3
    room = max(shutil.get_terminal_size((100, 24)).columns - indent, 24)
    for row in [head, *rows]:
        lines = textwrap.wrap(row[3], room, break_on_hyphens=False, break_long_words=False) or [""]
        print("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + lines[0])
        for line in lines[1:]:
            print(" " * indent + line)
    return 0


INVARIANTS_PAGE_HEAD = """# Invariants and sometimes properties

<!-- Generated by `kmodel invariants --markdown > docs/invariants.md`; edit the registry, not this page
(tests/docs/test_generated.py fails when the two differ). -->

Each invariant is one function in `invariants/`, registered with its name, kind and the principle it protects;
its guarantee is its docstring's first sentence. Safety invariants are checked after every step and are
incremental (they read only what is new in the store's history, the audit trail and what the watches
received); liveness invariants are checked once the faults have healed and the cluster has run fairly to
quiescence (the checker's `settle`). See [Checking](checking.md) for how they are checked and reported, and
[Extending](extending.md) for how to add one.

"""

SOMETIMES_PAGE_HEAD = """
## Sometimes properties

Situations the examples should reach at least once (stateright's `sometimes`). A run reports, for each, the
examples that reached it; one that no example reached is flagged NEVER REACHED, which is never a failure:
it says where the exploration is thin. See [Checking](checking.md#sometimes-properties).

"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def invariants_markdown() -> str:
    """The reference page of the invariants and sometimes properties, as Markdown, generated from the
    registries: what `kmodel invariants --markdown` prints and docs/invariants.md holds."""
    from kmodel.checker.session import all_invariants

    from kmodel.invariants.sometimes import registered_sometimes

    lines = [INVARIANTS_PAGE_HEAD.strip(), "", "## Invariants", "",
             "| invariant | kind | principle | guarantee |", "|---|---|---|---|"]
    lines += [f"| `{inv.name}` | {inv.kind} | {inv.principle} | {_cell(inv.guarantee)} |" for inv in all_invariants()]
    lines += ["", SOMETIMES_PAGE_HEAD.strip(), "", "| sometimes property | principle | situation |", "|---|---|---|"]
    lines += [f"| `{p.name}` | {p.principle} | {_cell(p.situation)} |" for p in registered_sometimes()]
    return "\n".join(lines) + "\n"
