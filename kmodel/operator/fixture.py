"""The pytest side of `kmodel check --operator`: the `kmodel_operator` fixture (registered by kmodel's pytest
plugin), which explores an operator, run unchanged as its own process, over served clusters, with the plugin's
options: ``--kmodel-seed`` seeds the draws (default 0) and the reports go to ``--kmodel-report-dir``/<test name>
(default reports/pytest), as `kmodel check --operator --report` writes them. A violation fails the test with the
lines the command prints (the invariant, the recurrence, the steps with the operator's requests, the served trace
and the command that replays it).

    def test_my_operator(kmodel_operator):
        kmodel_operator("kopf run --standalone op.py", manifests=["op.yaml"], invariants=["mypkg.checks:ALL"],
                        examples=5)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import pytest

from kmodel.checker.command import invocation
from kmodel.operator.actions import Action
from kmodel.operator.campaign import Campaign, CampaignOptions, explore, reproduce_and_minimize
from kmodel.operator.episode import EpisodeOptions, run_episode
from kmodel.operator.report import verdict_lines, write_report
from kmodel.operator.spec import operator_spec

#: where the reports go without --kmodel-report-dir, under pytest's rootdir (the plugin's own default)
REPORT_DIR = Path("reports") / "pytest"


@pytest.fixture
def kmodel_operator(request: Any) -> Callable[..., Any]:
    """A function that explores an operator (see the module docstring); it returns the run (a Campaign)."""
    config = request.config
    report_dir = config.getoption("--kmodel-report-dir", default=None)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_")
    folder = (Path(report_dir) if report_dir else Path(config.rootpath) / REPORT_DIR) / name
    given_seed = config.getoption("--kmodel-seed", default=None)

    def explore_operator(command: str, *, manifests: Sequence[str], invariants: Sequence[str] = (),
                         examples: int = 5, steps: int = 6, ready: str = "watch", reproduce: int = 1,
                         speed: float = 10.0, settle_s: float = 10.0, nodes: int = 1, minimize: bool = True,
                         actions: Optional[Sequence[Action]] = None) -> Any:
        spec = operator_spec(command, manifests, None, ready, invariants)
        seed = given_seed if given_seed is not None else 0
        campaign = CampaignOptions(examples=examples, steps=steps, seed=seed, reproduce=reproduce, minimize=minimize,
                                   episode=EpisodeOptions(nodes=nodes, seed=seed, speed=speed, settle_s=settle_s))
        folder.mkdir(parents=True, exist_ok=True)
        if actions is None:
            found = explore(spec, campaign, folder)
        else:  # the given actions, as one episode
            result = run_episode(spec, actions, campaign.episode, folder / "episodes" / "001")
            found = Campaign(episodes=[result])
            if result.violated is not None:
                found.failing, found.actions = result, list(actions)
        if found.failing is not None:
            reproduce_and_minimize(spec, found, campaign, folder)
        report = write_report(spec, found, campaign, folder)
        if report["violation"] is not None:
            pytest.fail("\n".join(verdict_lines(report, found, folder, f"{invocation()} replay")), pytrace=False)
        return found

    return explore_operator
