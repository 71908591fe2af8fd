"""The campaign's topology drawn per example (kmodel.checker.topology): deterministic per seed, more than one met,
recorded in the trace and rebuilt by a replay, pinned by an explicit option, shrunk toward the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.checker.actions import ApplyDeployment, RunFair, Settle
from kmodel.checker.command import options_from_args
from kmodel.checker.replay import replay
from kmodel.checker.results import write_results
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import Session
from kmodel.checker.topology import COUNTS, drawn_values, topology_text
from kmodel.checker.trace import Trace, read_trace, write_trace
from kmodel.cli import main
from kmodel.cluster import ClusterConfig

from tests.checker.conftest import GROWS, IDLE, NO_WEB, PlantedMachine, SmallMachine
from tests.checker.test_machine import digest_in_subprocess

DEFAULT = "1 kube-controller-manager, 1 kube-scheduler, 2 API servers"


def _campaign(**options):
    return run_campaign(CheckOptions(nodes=2, profile="campaign", **options), machine=SmallMachine)


def test_each_count_is_drawn_from_its_default_first_so_a_failure_shrinks_to_it():
    assert drawn_values(1) == (1, 2, 3)
    assert drawn_values(2) == (2, 1, 3)
    assert topology_text(CheckOptions().config()) == DEFAULT  # the checker's fixed topology


def test_only_the_campaign_profile_draws_and_a_count_given_is_pinned():
    assert CheckOptions().draws() == () and CheckOptions(profile="ci").draws() == ()
    assert CheckOptions(profile="campaign").draws() == COUNTS
    assert CheckOptions(profile="campaign", apiservers=3).draws() == ("controller_managers", "schedulers")
    assert CheckOptions(profile="campaign", drawn=()).draws() == ()
    assert options_from_args(["--profile", "campaign"]).draws() == COUNTS
    assert options_from_args(["--profile", "campaign", "--apiservers", "2"]).draws() == \
        ("controller_managers", "schedulers")  # given, even at its default value: pinned
    assert options_from_args(["--profile", "campaign", "--schedulers", "1", "--controller-managers", "2"]).draws() \
        == ("apiservers",)
    assert options_from_args(["--profile", "campaign", "--leader-elect=false"]).draws() == ("apiservers",)
    assert options_from_args(["--apiservers", "3"]).draws() == ()
    with pytest.raises(ValueError, match="cannot draw nodes"):
        CheckOptions(drawn=("nodes",))
    with pytest.raises(ValueError, match="leader-elect=false"):
        CheckOptions(leader_elect=False, drawn=("schedulers",))


def test_a_campaign_meets_more_than_one_topology_and_an_explicit_count_pins_it():
    drawn = _campaign(examples=8, steps=3, seed=2)
    assert sum(drawn.stats.topologies.values()) == drawn.stats.examples
    assert len(drawn.stats.topologies) > 1, drawn.stats.topologies
    pinned = _campaign(examples=8, steps=3, seed=2, apiservers=3, drawn=("controller_managers", "schedulers"))
    assert len(pinned.stats.topologies) > 1
    assert all(t.endswith(", 3 API servers") for t in pinned.stats.topologies), pinned.stats.topologies
    fixed = _campaign(examples=3, steps=3, seed=2, drawn=())
    assert fixed.stats.topologies == {}  # one fixed topology: nothing drawn, nothing counted


def test_the_draw_is_the_same_for_a_seed_under_any_hash_seed():
    options = "examples=5, steps=4, seed=7, nodes=2, profile='campaign'"
    runs = [digest_in_subprocess(h, options) for h in ("0", "1", "0")]
    assert len(set(runs)) == 1, runs
    assert runs[0].count("API server") > 1  # it met more than one topology: the draw was exercised


def test_a_trace_of_three_copies_of_each_replays_to_its_digest(tmp_path):
    config = ClusterConfig(nodes=2, controller_managers=3, schedulers=3, apiservers=3)
    session = Session(config, [GROWS])
    for action in (RunFair(15_000), ApplyDeployment("web", 2), RunFair(20_000), Settle(600_000)):
        session.execute(action)
    assert "kube-controller-manager-3" in session.cluster.loop.components
    trace = Trace(session.config, tuple(session.actions), boot_revision=session.boot_revision)
    read = read_trace(write_trace(trace, tmp_path / "t.json"))
    assert (read.config.controller_managers, read.config.schedulers, read.config.apiservers) == (3, 3, 3)
    assert read.config.leader_elect
    assert replay(read, invariants=[GROWS]).digest == session.digest()


def test_a_failure_shrinks_toward_the_default_topology_and_the_report_names_it(tmp_path):
    """The planted violation (a Deployment web exists) holds on every topology: Hypothesis' shrink takes the
    topology back to the fixed one, as far as its budget lets it; the report says where it ran."""
    options = CheckOptions(examples=30, steps=6, seed=5, nodes=2, profile="campaign")
    result = run_campaign(options, machine=PlantedMachine)
    trace = result.failure
    assert trace is not None and trace.violation.invariant == "no-web-deployment"
    assert len(result.stats.topologies) > 1  # other topologies were met on the way
    assert topology_text(trace.config) == DEFAULT
    report = write_results(result, tmp_path)
    assert report["violations"][0]["topology"] == DEFAULT
    assert f"Ran on: {DEFAULT}." in (tmp_path / "report.md").read_text()
    assert f"Ran on: {DEFAULT}." in (tmp_path / "report.html").read_text()
    assert replay(read_trace(Path(report["violations"][0]["trace"])), invariants=[GROWS, NO_WEB, IDLE]).violation


def test_kmodel_check_says_which_topologies_a_campaign_met(tmp_path, capsys):
    code = main(["check", "--profile", "campaign", "--examples", "3", "--steps", "2", "--nodes", "1", "--seed", "2",
                 "--controller-managers", "1", "--schedulers", "1", "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "topologies drawn: " in out and " of 3 (" in out
    dev = main(["check", "--examples", "1", "--steps", "1", "--nodes", "1", "--report", str(tmp_path / "dev")])
    assert dev == 0 and "topologies drawn" not in capsys.readouterr().out
