"""The `--operator*` options of `kmodel check`, and the run they ask for (kmodel.operator.campaign): options
checked first (a one-line error, exit 2), one line per episode, then the verdict, the figures and, for a
violation, its recurrence rate, the minimized steps with the operator's requests beside them, and the files
written (kmodel.operator.report). Exit 0 when no episode violated an invariant, 1 when one did."""

from __future__ import annotations

import argparse
import json
import signal
from pathlib import Path
from typing import Any

from kmodel.errors import KmodelUsageError

#: options that mean something with --operator only
OPERATOR_ONLY = ("operator_manifests", "operator_user", "operator_ready", "invariants", "reproduce", "speed",
                 "operator_settle", "operator_actions")
DEFAULT_EXAMPLES = 20
#: the exit code of a run ended by Ctrl-C or SIGTERM (a shell's for SIGINT)
INTERRUPTED = 130
DEFAULT_STEPS = 8


def add_operator_options(p: Any) -> None:
    p.add_argument("--operator", default=None, metavar="CMD",
                   help="explore this operator, run unchanged as a process of its own (e.g. \"kopf run --standalone "
                        "op.py\"): each example is an episode on a fresh served cluster (docs/operators.md)")
    p.add_argument("--operator-manifests", action="append", default=[], metavar="PATH",
                   help="with --operator: its CRDs, RBAC and config, applied before it starts (YAML files or "
                        "folders; repeatable); it runs as the one User their bindings name")
    p.add_argument("--operator-user", default=None, metavar="NAME",
                   help="with --operator: the User it runs as, when the manifests bind more than one")
    p.add_argument("--operator-ready", default=None, metavar="SPEC",
                   help="with --operator: when it is ready after a start: watch (default: it watches each of its "
                        "custom resources), log:REGEX, lease:NAMESPACE/NAME or cmd:COMMAND")
    p.add_argument("--invariants", action="append", default=[], metavar="MODULE:NAME",
                   help="with --operator: its own invariants (an Invariant, a list of them, or a function over the "
                        "cluster; repeatable)")
    p.add_argument("--reproduce", type=int, default=None, metavar="N",
                   help="with --operator: re-run a failing episode's actions N times to say how often it recurs, and "
                        "keep an action out while minimizing when it recurs in one of N runs (default 3)")
    p.add_argument("--speed", type=float, default=None, metavar="X",
                   help="with --operator: the served cluster's logical time runs X times as fast as the wall clock "
                        "(default 10)")
    p.add_argument("--operator-settle", type=float, default=None, metavar="SECONDS",
                   help="with --operator: wall seconds the liveness invariants have to hold by after the actions "
                        "(default 10)")
    p.add_argument("--operator-actions", default=None, metavar="FILE",
                   help="with --operator: run the actions of FILE (a report's actions.json: its minimized ones) "
                        "--reproduce times instead of exploring, and say how often a violation recurs")


def _positive(value: Any, option: str, default: Any) -> Any:
    if value is None:
        return default
    if not value > 0 or value != value or value == float("inf"):
        raise KmodelUsageError(f"{option} must be a positive number (got {value})")
    return value


def run_operator(args: argparse.Namespace, replay_command: str) -> int:
    """`replay_command`, followed by a trace's path, replays it (what the verdict prints)."""
    from kmodel.operator.campaign import CampaignOptions, explore, reproduce_and_minimize
    from kmodel.operator.episode import EpisodeOptions
    from kmodel.operator.process import OperatorStartError
    from kmodel.operator.report import verdict_lines, write_report
    from kmodel.operator.spec import operator_spec

    if args.components or args.fix or args.variant != "default" or args.workers or args.scheduler or args.reach:
        raise KmodelUsageError("--operator explores a served cluster: --component, --fix, --variant, --workers, "
                               "--scheduler and --reach are for the in-model checker")
    spec = operator_spec(args.operator, args.operator_manifests, args.operator_user, args.operator_ready or "watch",
                         args.invariants)
    reproduce = args.reproduce if args.reproduce is not None else 3
    if reproduce < 0:
        raise KmodelUsageError(f"--reproduce must be 0 or more (got {reproduce})")
    episode = EpisodeOptions(nodes=args.nodes, seed=args.seed, speed=_positive(args.speed, "--speed", 10.0),
                             settle_s=_positive(args.operator_settle, "--operator-settle", 10.0))
    options = CampaignOptions(examples=_positive(args.examples, "--examples", DEFAULT_EXAMPLES),
                              steps=_positive(args.steps, "--steps", DEFAULT_STEPS), seed=args.seed,
                              reproduce=reproduce, episode=episode)
    # SIGTERM ends the run as Ctrl-C does, through each episode's cleanup: the operator's process group is stopped
    signal.signal(signal.SIGTERM, _terminated)
    folder = Path(args.report)
    if folder.exists() and not folder.is_dir():
        raise KmodelUsageError(f"--report {folder}: is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if args.operator_actions:
            return _rerun(spec, args.operator_actions, options, folder)
        found = explore(spec, options, folder, on_episode=lambda n, r: print(_episode_line(n, options.examples, r),
                                                                             flush=True))
        if found.failing is not None:
            reproduce_and_minimize(spec, found, options, folder, on_run=lambda line: print(line, flush=True))
    except OperatorStartError as exc:
        raise KmodelUsageError(f"--operator: {exc}") from None
    except KeyboardInterrupt:
        print("kmodel check --operator: interrupted; the operator and the served cluster were stopped", flush=True)
        return INTERRUPTED
    report = write_report(spec, found, options, folder)
    print("\n".join(verdict_lines(report, found, folder, replay_command)))
    return 1 if report["violation"] else 0


def _terminated(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # as Ctrl-C: Hypothesis lets it through, each episode's cleanup runs


def _episode_line(number: int, total: int, result: Any) -> str:
    verdict = f"VIOLATED {result.violated.invariant}" if result.violated else "passed"
    return (f"episode {number}/{total}: {verdict} (start-up {result.startup_s:.2f} s: serve {result.serve_s:.2f} s "
            f"+ operator ready {result.ready_s:.2f} s; {len(result.requests)} requests, {result.restarts} restarts)")


def _rerun(spec: Any, path: str, options: Any, folder: Path) -> int:
    from kmodel.operator.actions import actions_from_json
    from kmodel.operator.episode import run_episode

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        actions = actions_from_json(data.get("minimized") or data.get("actions") if isinstance(data, dict) else data)
    except (OSError, ValueError) as exc:
        raise KmodelUsageError(f"--operator-actions {path}: cannot use it ({exc}); give a report's actions.json") \
            from None
    runs = max(options.reproduce, 1)
    violated: dict[str, int] = {}
    for run in range(runs):
        result = run_episode(spec, actions, options.episode, folder / "rerun" / f"run-{run + 1}")
        print(_episode_line(run + 1, runs, result), flush=True)
        if result.violated:
            violated[result.violated.invariant] = violated.get(result.violated.invariant, 0) + 1
    for invariant, count in sorted(violated.items()):
        print(f"invariant {invariant} violated in {count} of {runs} runs")
    if not violated:
        print(f"no invariant violated in {runs} runs")
    return 1 if violated else 0
