"""The pytest plugin at the level of `kmodel check`: a failing kmodel_test writes its trace and report, ends its
message with a replay command that reproduces, takes --kmodel-fix, honours --hypothesis-profile and prints
Hypothesis' statistics. Each runs pytest in a subprocess on a small test file of its own (a machine with its
own invariants, an empty cluster, a few short examples), so the plugin's options are parsed as a user's are."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmodel.checker.results import violation_lines, write_results
from kmodel.checker.run import CampaignResult, CheckOptions, run_campaign
from kmodel.checker.stats import Stats
from kmodel.checker.trace import read_trace
from kmodel.pytest_plugin import KmodelMachine, TURN_ON

EXPLAINED = Path(__file__).parents[1] / "report" / "traces" / "seed-14-no-cidr-leak.json"

#: a machine of its own: an empty two-node cluster checking only its own invariants, and a short settle
MACHINE = textwrap.dedent('''
    from kmodel.invariants.registry import LIVENESS, SAFETY, Invariant
    from kmodel.cluster import ClusterConfig
    from kmodel.pytest_plugin import KmodelMachine, kmodel_test

    def no_api_deployment(cluster, memo):
        if cluster.get("deployments", "default", "api") is not None:
            yield "a Deployment named api exists"

    def kubectl_idle(cluster, memo):
        if not cluster.kubectl.idle:
            yield "kubectl still has commands"

    def every_fix_on(cluster, memo):
        if not cluster.config.fixes:
            yield "no fix is on"

    IDLE = Invariant("kubectl-idle", LIVENESS, "test", "kubectl ends idle.", kubectl_idle)

    class Small(KmodelMachine):
        config = ClusterConfig(nodes=2)
        initial_actions = ()
        registered_invariants = False
        settle_bound_ms = 60_000
        extra_invariants = (IDLE,)
''')


def _pytest(folder: Path, *args: str, source: str) -> subprocess.CompletedProcess:
    (folder / "test_mine.py").write_text(MACHINE + textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_mine.py", *args],
                          cwd=folder, capture_output=True, text=True, timeout=300)


FAILING = '''
class NoApi(Small):
    extra_invariants = (Invariant("no-api-deployment", SAFETY, "test", "No Deployment api.", no_api_deployment), IDLE)

test_no_api = kmodel_test(NoApi, max_examples=30, stateful_step_count=6)
'''


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    """A failing run of the FAILING test file, seeded: its folder and the finished pytest process."""
    folder = tmp_path_factory.mktemp("failing")
    run = _pytest(folder, "--kmodel-seed", "7", "--kmodel-profile", "ci", "--kmodel-report-dir", "out",
                  source=FAILING)
    assert run.returncode == 1, run.stdout + run.stderr
    return folder, run


def test_a_failing_test_writes_its_shrunk_and_minimized_trace_and_its_report(failed):
    folder, run = failed
    reports = folder / "out" / "test_no_api"
    assert (reports / "traces" / "no-api-deployment.json").is_file()
    assert (reports / "report.md").is_file() and (reports / "report.html").is_file()
    report = json.loads((reports / "report.json").read_text())
    (violation,) = report["violations"]
    assert violation["invariant"] == "no-api-deployment" and violation["reproduced"]
    assert violation["shrink"]["replays"] > 0  # the replay-based minimization ran
    assert "no-api-deployment" in [inv["name"] for inv in report["invariants"]]
    assert "VIOLATION no-api-deployment: a Deployment named api exists" in run.stdout


def test_the_message_ends_with_a_replay_command_that_reproduces(failed):
    folder, run = failed
    message = run.stdout.split("VIOLATION no-api-deployment", 1)[1].split("\n===", 1)[0].rstrip().splitlines()
    last = message[-1].strip()
    # pytest on this very test: the machine has its own invariants, which `kmodel replay` would not check
    assert last.startswith("replay: ") and "test_mine.py::test_no_api --kmodel-replay" in last, message
    replayed = subprocess.run(shlex.split(last.removeprefix("replay: ")), cwd=folder, capture_output=True,
                              text=True, timeout=300)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "VIOLATION no-api-deployment after step" in replayed.stdout


def test_a_replay_that_violates_nothing_passes(failed):
    folder, _ = failed
    trace = folder / "out" / "test_no_api" / "traces" / "no-api-deployment.json"
    # the same trace in a test whose machine lacks that invariant: nothing is violated
    (folder / "test_other.py").write_text(MACHINE + "test_small = kmodel_test(Small)\n")
    replayed = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s",
                               "test_other.py::test_small", "--kmodel-replay", str(trace)],
                              cwd=folder, capture_output=True, text=True, timeout=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "passed:" in replayed.stdout and "no invariant violated" in replayed.stdout


def test_kmodel_fix_turns_fixes_on_in_the_machines_cluster(tmp_path):
    source = '''
class NeedsAFix(Small):
    extra_invariants = (Invariant("a-fix-is-on", SAFETY, "test", "Some fix is on.", every_fix_on),)

test_needs_a_fix = kmodel_test(NeedsAFix, max_examples=2, stateful_step_count=2)
'''
    without = _pytest(tmp_path, "--kmodel-seed", "1", "--kmodel-report-dir", "out", source=source)
    assert without.returncode == 1 and "VIOLATION a-fix-is-on: no fix is on" in without.stdout
    with_fixes = _pytest(tmp_path, "--kmodel-seed", "1", "--kmodel-fix", "all", source=source)
    assert with_fixes.returncode == 0, with_fixes.stdout + with_fixes.stderr


def test_an_unknown_fix_is_a_usage_error_of_one_line(tmp_path):
    run = _pytest(tmp_path, "--kmodel-fix", "no-such-fix", source="test_small = kmodel_test(Small)\n")
    assert run.returncode == 4  # pytest's usage error
    assert "--kmodel-fix: unknown fix 'no-such-fix'" in run.stderr and "Traceback" not in run.stderr


def test_hypothesis_profile_replaces_kmodels_profile_and_statistics_are_printed(tmp_path):
    (tmp_path / "conftest.py").write_text(textwrap.dedent('''
        from hypothesis import settings
        import kmodel.checker.profiles  # registers kmodel-dev, kmodel-ci, kmodel-campaign

        settings.register_profile("tiny", settings.get_profile("kmodel-ci"), max_examples=2, stateful_step_count=2)
    '''))
    source = "test_small = kmodel_test(Small)\n"
    run = _pytest(tmp_path, "--hypothesis-profile", "tiny", "--hypothesis-show-statistics", source=source)
    assert run.returncode == 0, run.stdout + run.stderr
    statistics = run.stdout.split("Hypothesis Statistics", 1)[1]
    assert "test_mine.py::test_small" in statistics
    assert "2 passing" in statistics, statistics  # the tiny profile's examples, not the ci profile's 30


def test_a_fix_that_takes_the_violation_out_is_named_with_how_to_turn_it_on(tmp_path):
    trace = read_trace(EXPLAINED)  # kmodel check --seed 14: the nodeipam leak
    result = CampaignResult(CheckOptions(seed=14), Stats(), 0.0, failure=trace)
    report = write_results(result, tmp_path, trace_command="python -m pytest t.py::test_x --kmodel-replay")
    (violation,) = report["violations"]
    taken = [fix["name"] for fix in violation["fixes"] if fix["takes_out"]]
    assert taken == ["nodeipam-release-by-owner"]
    lines = violation_lines(violation, "python -m pytest t.py::test_x --kmodel-replay", TURN_ON)
    hint = [line for line in lines if "takes it out" in line]
    assert hint == ["  the known fix nodeipam-release-by-owner takes it out (an upstream bug, `kmodel fixes` tells "
                    "it); turn it on with --kmodel-fix nodeipam-release-by-owner (or "
                    "ClusterConfig(fixes=\"nodeipam-release-by-owner\"))"]
    assert lines[-1].startswith("  replay: python -m pytest t.py::test_x --kmodel-replay ")


def test_which_machines_replay_alone_with_kmodel_replay():
    from kmodel.invariants.registry import SAFETY, Invariant

    class Sized(KmodelMachine):
        settle_bound_ms = 60_000

    class Own(KmodelMachine):
        extra_invariants = (Invariant("x", SAFETY, "test", "x", lambda cluster, memo: iter(())),)

    class Only(KmodelMachine):
        registered_invariants = False

    class Component(KmodelMachine):
        def extra_components(self):
            return []

    assert KmodelMachine.replays_alone() and Sized.replays_alone()
    assert not any(m.replays_alone() for m in (Own, Only, Component))
    assert Component.has_own_components() and not Sized.has_own_components()


def _labeled_pod(cluster, memo):
    for pod in cluster.objects("pods", "default"):
        if pod.metadata.labels.get("seen") == "yes":
            yield f"pod {pod.metadata.name} was labeled"


def test_a_machine_with_its_own_components_is_minimized_and_reported_from_replays_that_run_them(tmp_path):
    """Its violation needs its own controller (a labeler): the minimizer's replays and the report's replay
    reproduce it only with it, and they run it."""
    from kmodel.invariants.registry import SAFETY, Invariant
    from tests.checker.conftest import SmallMachine
    from tests.controllers.test_own_controller import PodLabeler

    class Labeled(SmallMachine):
        extra_invariants = (Invariant("no-pod-labeled", SAFETY, "test", "No pod is labeled.", _labeled_pod),)

        def extra_components(self):
            return [PodLabeler(self.config.apiserver_names())]

    result = run_campaign(CheckOptions(examples=20, steps=6, seed=2, nodes=2), machine=Labeled)
    assert result.failure is not None and result.shrink.replays > 0
    assert result.shrink.actions <= result.shrink.shrunk_actions
    report = write_results(result, tmp_path)
    (violation,) = report["violations"]
    assert violation["invariant"] == "no-pod-labeled" and violation["reproduced"]


TWO_PASSING = '''
class Quiet(Small):
    pass

class AlsoQuiet(Small):
    config = ClusterConfig(nodes=1)

test_quiet = kmodel_test(Quiet, max_examples=3, stateful_step_count=4)
test_also_quiet = kmodel_test(AlsoQuiet, max_examples=3, stateful_step_count=4)
'''


def test_under_xdist_each_test_runs_in_a_worker_and_writes_its_own_report_folder(tmp_path):
    run = _pytest(tmp_path, "-n", "2", "-vv", "--kmodel-seed", "1", "--kmodel-report-dir", "out", source=TWO_PASSING)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[gw" in run.stdout  # ran by xdist's workers
    for test, nodes in (("test_quiet", 2), ("test_also_quiet", 1)):
        report = json.loads((tmp_path / "out" / test / "report.json").read_text())
        assert report["config"]["nodes"] == nodes and report["figures"]["examples_run"] >= 1
        assert report["violations"] == [] and (tmp_path / "out" / test / "report.md").is_file()
