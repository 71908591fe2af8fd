"""The search: episodes drawn by Hypothesis (kmodel.operator.draws) from the seed, run until one violates an
invariant or the budget is spent; then that episode's actions re-run `reproduce` times (how often the violation
recurs), and minimized: an action is removed for good when, without it, the violation (the same invariant)
recurs in at least one of `reproduce` runs.

Hypothesis only draws here: an episode is real, so it never raises into Hypothesis (which would replay it and
call a run that passes the second time flaky); the first failing episode is kept and the budget's rest is
skipped, and an episode drawn again is not run twice. The draws are the seed's: the same seed draws the same
episodes, whatever the operator does.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import attrs
from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings, strategies as st

from kmodel.operator.actions import Action
from kmodel.operator.draws import episode
from kmodel.operator.episode import EpisodeOptions, EpisodeResult, run_episode
from kmodel.operator.spec import OperatorSpec

#: at most this many episodes are spent minimizing
MINIMIZE_EPISODES = 40
#: Hypothesis may draw an episode it drew before (it mutates what it drew): such a repeat is not run, so it is
#: given this many draws per episode of the budget
DRAWS_PER_EPISODE = 5


@attrs.frozen
class CampaignOptions:
    examples: int = 20
    steps: int = 8
    seed: int = 0
    reproduce: int = 3
    minimize: bool = True
    episode: EpisodeOptions = EpisodeOptions()


@attrs.define
class Campaign:
    """What a run found: every episode's result, the failing one (None: none failed), its actions, how many of
    the reproduce runs recurred, and the minimized actions with the run that showed them."""

    episodes: list[EpisodeResult] = attrs.field(factory=list)
    failing: Optional[EpisodeResult] = None
    actions: list[Action] = attrs.field(factory=list)
    recurred: int = 0
    reproduced: int = 0
    minimized: list[Action] = attrs.field(factory=list)
    minimized_run: Optional[EpisodeResult] = None
    minimize_episodes: int = 0
    seconds: float = 0.0


def explore(spec: OperatorSpec, options: CampaignOptions, folder: Path,
            on_episode: Callable[[int, EpisodeResult], None] = lambda n, r: None) -> Campaign:
    """Draw and run episodes until one fails or `options.examples` ran (see the module docstring)."""
    began = time.monotonic()
    found = Campaign()

    seen: set[str] = set()

    @hypothesis_seed(options.seed)
    @settings(max_examples=options.examples * DRAWS_PER_EPISODE, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck), derandomize=False)
    @given(st.data())
    def one(data: Any) -> None:
        actions = data.draw(episode(spec.resources, options.steps))  # drawn always: Hypothesis asks the same
        key = json.dumps([x.to_json() for x in actions], sort_keys=True)
        if found.failing is not None or len(found.episodes) >= options.examples or key in seen:
            return
        seen.add(key)
        number = len(found.episodes) + 1
        result = run_episode(spec, actions, attrs.evolve(options.episode, seed=options.seed + number),
                             folder / "episodes" / f"{number:03d}")
        found.episodes.append(result)
        on_episode(number, result)
        if result.violated is not None:
            found.failing, found.actions = result, list(actions)

    one()
    found.seconds = time.monotonic() - began
    return found


def recurrences(spec: OperatorSpec, actions: Sequence[Action], invariant: str, runs: int, options: CampaignOptions,
                folder: Path, stop_at_first: bool = False) -> tuple[int, int, Optional[EpisodeResult]]:
    """Run `actions` up to `runs` times: (runs done, runs in which `invariant` was violated, the first such run)."""
    recurred, first, done = 0, None, 0
    for run in range(runs):
        result = run_episode(spec, actions, options.episode, folder / f"run-{run + 1}")
        done += 1
        if any(f.invariant == invariant for f in result.findings):
            recurred += 1
            first = first or result
            if stop_at_first:
                break
    return done, recurred, first


def reproduce_and_minimize(spec: OperatorSpec, found: Campaign, options: CampaignOptions, folder: Path,
                           on_run: Callable[[str], None] = lambda line: None) -> None:
    """Fill in the failing episode's recurrence rate and its minimized actions (see the module docstring)."""
    assert found.failing is not None and found.failing.violated is not None
    invariant = found.failing.violated.invariant
    began = time.monotonic()
    if options.reproduce:
        found.reproduced, found.recurred, _ = recurrences(spec, found.actions, invariant, options.reproduce, options,
                                                          folder / "reproduce")
        on_run(f"reproduced {found.recurred} of {found.reproduced} runs")
    current, best = list(found.actions), found.failing
    if options.minimize:
        spent = 0
        index = len(current) - 1
        while index >= 0 and spent < MINIMIZE_EPISODES and len(current) > 1:
            candidate = current[:index] + current[index + 1:]
            done, recurred, run = recurrences(spec, candidate, invariant, max(options.reproduce, 1), options,
                                              folder / "minimize" / f"{spent:03d}", stop_at_first=True)
            spent += done
            if recurred:
                current, best = candidate, run
                on_run(f"minimizing: {len(current)} actions left")
            index -= 1
        found.minimize_episodes = spent
    found.minimized, found.minimized_run = current, best
    found.seconds += time.monotonic() - began
