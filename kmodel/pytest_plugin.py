"""The kmodel pytest plugin: a machine of your own explored as `kmodel check` explores the checker's.

Installed through the ``pytest11`` entry point (``kmodel = "kmodel.pytest_plugin"``). In a test module:

    from kmodel.pytest_plugin import KmodelMachine, kmodel_test
    from kmodel.invariants.registry import Invariant, SAFETY

    def at_most_five_pods(cluster, memo):
        n = len(cluster.objects("pods"))
        if n > 5:
            yield f"{n} pods"

    class MyMachine(KmodelMachine):
        config = ClusterConfig(nodes=2)
        extra_invariants = (Invariant("at-most-five-pods", SAFETY, "mine", "At most five pods.", at_most_five_pods),)
        def extra_components(self):
            return [MyController(...)]      # any sans-IO Component

    test_my_machine = kmodel_test(MyMachine)

Theory of operation
-------------------
`kmodel_test(machine)` returns a test function that runs the machine through `kmodel.checker.run.run_campaign`,
the function behind `kmodel check`, with the machine's own cluster configuration (plus the fixes of
``--kmodel-fix``) and the settings chosen for this test (`settings_for_test`). So a failure is shrunk and minimized
as `kmodel check` does it, and `kmodel.checker.results.write_results` writes the test's reports (and a failure's
trace) to ``--kmodel-report-dir``/<test name> (default reports/pytest under pytest's rootdir), whether it passes
or fails: each test its own folder, so tests spread over pytest-xdist's workers (``pytest -n auto``) each
write their own, and nothing else is shared between them (the plugin's state is per process). A failing test
then fails with the lines `kmodel check` prints of a violation (`results.violation_lines`): the invariant and
message, the trace's steps, each known fix that takes it out and how to turn it on, and last the command that
replays it.

The replay command: a trace records the cluster's configuration and every action, but not the machine's own
invariants and components. A machine that has neither (`KmodelMachine.replays_alone`) is replayed by
``kmodel replay TRACE``. Any other is replayed by pytest itself: ``python -m pytest FILE::TEST --kmodel-replay
TRACE`` collects the same test, which then replays the trace (`replay_trace`) with its machine's invariants and
components instead of exploring, and fails when the violation is reproduced.

Settings, in order of precedence: the keyword arguments of `kmodel_test`, then the profile named by
``--hypothesis-profile`` when one is given on the command line (its settings replace kmodel's whole profile:
examples, steps, deadline, database, phases), then the kmodel profile of ``--kmodel-profile`` (dev, ci or
campaign; default dev). ``--kmodel-profile campaign`` also brings the campaign's two rules, whatever the
settings. ``--kmodel-seed`` seeds the run (default: the settings' own randomness, derandomized under ci).

The test function carries Hypothesis' ``is_hypothesis_test`` mark, so Hypothesis' own pytest plugin treats it
as any Hypothesis test: ``--hypothesis-show-statistics`` prints its statistics (the engine's run, shrinking
included). Hypothesis' own report of the failure (its falsifying example, before kmodel's minimization) is
not printed: the trace and the replay command say it.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Callable, Optional

from kmodel.checker.machine import KmodelMachine
from kmodel.checker.profiles import PROFILES, profile
from kmodel.checker.command import invocation, python_command
from kmodel.checker.fix_verdicts import REPLAY_FIX_OPTIONS
from kmodel.checker.replay import replay
from kmodel.checker.results import violation_lines, write_results
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import TraceDiverged
from kmodel.checker.trace import TraceError, read_trace
from kmodel.fixes import check_fixes
from kmodel.operator.fixture import kmodel_operator  # noqa: F401  (the fixture of kmodel check --operator)

__all__ = ["KmodelMachine", "kmodel_operator", "kmodel_test", "pytest_addoption", "pytest_configure"]

#: the command-line options, read once pytest has parsed them (pytest_configure)
_options: dict[str, Any] = {"seed": None, "profile": "dev", "fixes": (), "report_dir": None,
                            "hypothesis_profile": None, "replay": None, "lenient": False}
#: the pytest item running now (its name names the report folder and the replay command)
_running: dict[str, Any] = {"item": None}
#: the default report folder, under pytest's rootdir; a failing test's reports go to <folder>/<test name>
DEFAULT_REPORT_DIR = Path("reports") / "pytest"
#: how a known fix is turned on, in a pytest run's hint
TURN_ON = '--kmodel-fix {fix} (or ClusterConfig(fixes="{fix}"))'
#: what the pytest replay command is given to replay with a fix on, leniently (fix_verdicts' commands)
PYTEST_FIX_OPTIONS = "--kmodel-fix {fix} --kmodel-lenient"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("kmodel", "kmodel model checking")
    group.addoption("--kmodel-seed", type=int, default=None, help="seed every kmodel machine test with this")
    group.addoption("--kmodel-profile", default="dev", choices=PROFILES,
                    help="kmodel profile for kmodel machine tests (default dev); --hypothesis-profile, when "
                         "given, replaces its settings")
    group.addoption("--kmodel-fix", action="append", default=[], metavar="NAME",
                    help="turn this fix of an upstream bug on in every kmodel machine test (repeatable or "
                         "comma-separated; 'all' for every one; `kmodel fixes` lists them)")
    group.addoption("--kmodel-report-dir", default=None, metavar="DIR",
                    help="write a failing kmodel test's trace and reports to DIR/<test name> (default: "
                         "reports/pytest under the rootdir)")
    group.addoption("--kmodel-replay", default=None, metavar="TRACE",
                    help="instead of exploring, replay this trace in the kmodel machine test selected (the "
                         "command a failure prints); the test fails if the violation is reproduced")
    group.addoption("--kmodel-lenient", action="store_true",
                    help="with --kmodel-replay: skip the trace's interleaving and fault steps whose events are not "
                         "enabled (a trace replayed with a fix on), as kmodel replay --lenient")


def pytest_configure(config: Any) -> None:
    import pytest

    try:
        fixes = check_fixes(config.getoption("--kmodel-fix", default=[]) or [])
    except ValueError as exc:
        raise pytest.UsageError(f"--kmodel-fix: {exc}") from None
    report_dir = config.getoption("--kmodel-report-dir", default=None)
    if report_dir is not None and Path(report_dir).exists() and not Path(report_dir).is_dir():
        raise pytest.UsageError(f"--kmodel-report-dir {report_dir}: is a file, not a folder; name a folder (it is "
                                f"created if missing)")
    replay_path = config.getoption("--kmodel-replay", default=None)
    trace = None
    if replay_path is not None:
        try:
            trace = read_trace(Path(replay_path))
        except TraceError as exc:
            raise pytest.UsageError(f"--kmodel-replay: {exc}") from None
    elif config.getoption("--kmodel-lenient", default=False):
        raise pytest.UsageError("--kmodel-lenient applies to a replay: give --kmodel-replay TRACE too")
    _options.update(
        seed=config.getoption("--kmodel-seed", default=None),
        profile=config.getoption("--kmodel-profile", default="dev") or "dev",
        fixes=fixes,
        report_dir=Path(report_dir) if report_dir is not None else Path(config.rootpath) / DEFAULT_REPORT_DIR,
        hypothesis_profile=config.getoption("--hypothesis-profile", default=None),
        replay=(replay_path, trace) if trace is not None else None,
        lenient=bool(config.getoption("--kmodel-lenient", default=False)),
    )


def pytest_runtest_setup(item: Any) -> None:
    _running["item"] = item


def pytest_runtest_teardown(item: Any) -> None:
    _running["item"] = None


def settings_for_test(overrides: dict[str, Any]) -> Any:
    """The Hypothesis settings of a kmodel test: `overrides` (kmodel_test's keyword arguments) over the profile
    named by --hypothesis-profile if one was given, else over the kmodel profile of --kmodel-profile."""
    from hypothesis import settings as Settings

    name = _options["hypothesis_profile"]
    base = Settings.get_profile(name) if name else profile(_options["profile"])
    return Settings(base, **overrides)


def kmodel_test(machine: type[KmodelMachine], **overrides: Any) -> Callable[[], None]:
    """A pytest test exploring `machine` as `kmodel check` does (`overrides`: Hypothesis settings). See the
    module docstring."""

    def test() -> None:
        if _options["replay"] is not None:
            replay_trace(machine)
        else:
            explore(machine, settings_for_test(overrides))

    test.__name__ = f"test_{machine.__name__}"
    # Hypothesis' pytest plugin then treats it as a Hypothesis test (statistics, the hypothesis marker)
    test.is_hypothesis_test = True  # type: ignore[attr-defined]
    return test


def explore(machine: type[KmodelMachine], settings: Any) -> None:
    """Run `machine` under `settings` through run_campaign and write the test's report folder; on a violation,
    fail the test with what `kmodel check` prints of it."""
    import attrs
    import pytest

    config = machine.config
    config = attrs.evolve(config, fixes=(*config.fixes, *_options["fixes"]), variant=machine.variant)
    options = CheckOptions(seed=_options["seed"], nodes=config.nodes, apiservers=config.apiservers,
                           variant=machine.variant, profile=_options["profile"], fixes=config.fixes,
                           controller_managers=config.controller_managers, schedulers=config.schedulers,
                           leader_elect=config.leader_elect, drawn=())  # the machine's own topology
    result = run_campaign(options, machine=machine, config=config, settings=settings)
    folder = _report_folder(machine)
    replay_with, fix_options = _replay_command(machine)
    report = write_results(result, folder, trace_command=replay_with, fix_options=fix_options)
    if result.failure is None:
        return
    seed = f"seed {options.seed}" if options.seed is not None else "unseeded"
    lines = [f"kmodel: an invariant was violated ({seed}, {result.stats.examples} examples, "
             f"{result.stats.steps} steps; report {folder / 'report.md'})"]
    for violation in report["violations"]:
        found = violation_lines(violation, replay_with, TURN_ON)
        steps = [f"  {i:4d}. {action.name}" for i, action in enumerate(result.failure.actions, 1)]
        lines += [*found[:2], "  steps:", *steps, *found[2:]]
    pytest.fail("\n".join(lines), pytrace=False)


def replay_trace(machine: type[KmodelMachine]) -> None:
    """Replay the trace of --kmodel-replay with `machine`'s invariants and components (and the fixes of
    --kmodel-fix), printing its steps as `kmodel replay` does; fail the test if it violates an invariant."""
    import pytest

    path, trace = _options["replay"]

    def show(i: int, action: Any) -> None:
        print(f"{i + 1:4d}. {action.name}")

    components = machine.replay_components if machine.has_own_components() else None
    try:
        result = replay(trace, invariants=machine.invariant_list(), components=components, fixes=_options["fixes"],
                        lenient=_options["lenient"], record_messages=False, on_step=show)
    except TraceDiverged as exc:
        pytest.fail(f"{path} does not fit this machine: {exc} (--kmodel-lenient skips the events that are not "
                    f"enabled)", pytrace=False)
    lenient = (f" (lenient: {result.skipped} of {len(trace.actions)} steps lost some or all of their events)"
               if _options["lenient"] else "")
    if result.violation is not None:
        v = result.violation
        pytest.fail(f"VIOLATION {v.invariant} after step {v.step + 1}: {v.message}{lenient}", pytrace=False)
    print(f"passed: {len(result.steps)} steps, no invariant violated (digest {result.digest}){lenient}")


def _test_name(machine: type[KmodelMachine]) -> str:
    item = _running["item"]
    return item.name if item is not None else f"test_{machine.__name__}"


def _report_folder(machine: type[KmodelMachine]) -> Path:
    """<--kmodel-report-dir>/<test name>, the name made safe for a file name (a parametrized test's id); relative
    to the working folder when under it, so the paths printed stay short."""
    folder = _options["report_dir"] / re.sub(r"[^A-Za-z0-9_.-]+", "_", _test_name(machine)).strip("_")
    try:
        return folder.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return folder


def _replay_command(machine: type[KmodelMachine]) -> tuple[str, str]:
    """The command a trace's path is appended to, to replay it, and what it is given to turn a fix on (see the
    module docstring): `kmodel replay` for a machine whose traces replay alone, else pytest on this test."""
    item = _running["item"]
    if machine.replays_alone() or item is None:
        return f"{invocation()} replay", REPLAY_FIX_OPTIONS
    test_id = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    path = os.path.relpath(item.path, Path.cwd())
    return f"{python_command()} -m pytest {shlex.quote(f'{path}::{test_id}')} --kmodel-replay", PYTEST_FIX_OPTIONS
