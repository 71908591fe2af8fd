"""What a guided campaign learns from the examples it measured, and how it steers the next round with it.

Two levers, both decided at a round's start from what the rounds before it measured (kmodel.checker.guided):

Rule energy (AFL's power schedules, aimed at branch outcomes). Each measured step is read on its own, so the
campaign knows which rule's steps took which outcomes, grouped by the function they sit in (a *region*:
``file:function``). A region whose outcomes were partly taken holds the ones never taken: its `missing` count.
A rule's energy is its share of the work toward those: for each region, the missing outcomes times the
fraction of the region's taken outcomes that the rule's steps took. A rule that drives code whose rare sides
are still open has much energy; one whose code is all taken has none.

A steered swarm (Groce et al.'s swarm testing, steered by energy). Hypothesis already enables a random subset
of the rules in each example (its feature flags for rules); a guided round further keeps each rule with a
probability that grows with its energy (`KEEP_FLOOR` for none, 1 for the most), drawn from a generator seeded
by the round's seed. A rule no measured step fired yet is kept: nothing says it does not pay. `next_event`
is always kept, so some rule is always enabled.

Rarity of corpus entries (libFuzzer's rare-feature focus). A corpus entry is drawn with a weight of one plus
the number of the outcomes it took that at most `RARE_HITS` measured examples took: an entry that reached
what little else did is where to start from.

Everything is keyed by strings and iterated sorted, so the same measurements give the same choices under any
PYTHONHASHSEED.
"""

from __future__ import annotations

import random
from typing import Callable, Iterable, Mapping, Optional, Sequence

#: the least chance a rule of no energy keeps in a steered round (it may still pay: energy is learnt from a
#: sample of the examples)
KEEP_FLOOR = 0.35
#: an outcome at most this many measured examples took is rare
RARE_HITS = 2
#: the rule a steered round never leaves out (argument-free, never preconditioned: some rule can always run)
ALWAYS_KEPT = "next_event"


class RuleEnergy:
    """Which outcomes each rule's measured steps took, by region; `energies` turns that into energy per rule."""

    def __init__(self) -> None:
        #: rule -> region -> the outcome keys of that region its steps took
        self.took: dict[str, dict[str, set[str]]] = {}

    def record(self, rule: str, keys: Iterable[str], region_of: Callable[[str], Optional[str]]) -> None:
        regions = self.took.setdefault(rule, {})
        for key in keys:
            region = region_of(key)
            if region is not None:
                regions.setdefault(region, set()).add(key)

    def energies(self, missing: Mapping[str, int]) -> dict[str, float]:
        """Energy per rule that fired in a measured step: Σ over regions of missing(region) × (the outcomes of
        the region its steps took / the outcomes of the region all rules' steps took, each rule counted)."""
        takers: dict[str, int] = {}
        for rule in sorted(self.took):
            for region, keys in sorted(self.took[rule].items()):
                takers[region] = takers.get(region, 0) + len(keys)
        energy: dict[str, float] = {}
        for rule in sorted(self.took):
            energy[rule] = sum(missing.get(region, 0) * len(keys) / takers[region]
                               for region, keys in sorted(self.took[rule].items()))
        return energy


def kept_rules(rules: Sequence[str], energy: Mapping[str, float], rng: random.Random) -> list[str]:
    """The rules a steered round keeps, in `rules`' order: each with probability KEEP_FLOOR + (1 - KEEP_FLOOR)
    × its energy over the most any rule has; one without a measured step, and ALWAYS_KEPT, always."""
    most = max(energy.values(), default=0.0)
    kept = []
    for name in rules:
        draw = rng.random()  # one draw per rule, whatever the outcome, so a rule's draw does not depend on others'
        if name == ALWAYS_KEPT or name not in energy or most <= 0:
            kept.append(name)
        elif draw < KEEP_FLOOR + (1 - KEEP_FLOOR) * energy[name] / most:
            kept.append(name)
    return kept


def rarity_weights(entries: Sequence[Iterable[str]], hits: Mapping[str, int]) -> list[int]:
    """The draw weight of each corpus entry (given the outcomes each took): one plus its outcomes that at most
    RARE_HITS measured examples took."""
    return [1 + sum(1 for key in took if hits.get(key, 0) <= RARE_HITS) for took in entries]


def weighted_pick(draw: int, weights: Sequence[int]) -> int:
    """The index `draw` (any whole number, taken modulo the weights' sum) falls on, each index owning as many
    consecutive values as its weight: a deterministic weighted choice from one drawn number."""
    point = draw % sum(weights)
    for index, weight in enumerate(weights):
        if point < weight:
            return index
        point -= weight
    raise AssertionError("unreachable: point < sum(weights)")
