"""The control plane's topology, drawn per example by the campaign profile.

A real cluster runs one to three kube-controller-managers, kube-schedulers and API servers, and which of them an
outage, a partition or a pause hits decides what happens (a standby takes a lease over, a lone candidate exits
and restarts, a lagging replica serves stale reads). The campaign profile (`DRAW_PROFILES`) draws each count
of `COUNTS` per example, from 1 to 3, independently; the dev and ci profiles run the fixed topology their
options give, as they always did. A count the user gives (`kmodel check --apiservers 3`) is pinned: it is not
drawn. Without leader election only one kube-controller-manager and one kube-scheduler can run
(cluster.config.check_election), so only the API servers are drawn.

The counts are drawn as the example's first choices, in the machine's setup (KmodelMachine.__init__), before
the session is built; each count's values are drawn from a list that starts with the fixed topology's own
(`drawn_values`), so Hypothesis, which shrinks a choice toward the list's first element, shrinks a failing
example toward the topology a dev run has. The session's configuration holds the counts, and the trace
records its configuration, so `kmodel replay`, the minimizer and the regression seeds rebuild the topology
an example ran on.
"""

from __future__ import annotations

from typing import Iterable

import attrs
from hypothesis import strategies as st
from hypothesis.control import current_build_context, currently_in_test_context

from kmodel.cluster import ClusterConfig

#: the counts a campaign draws, in the order it draws them (ClusterConfig's fields)
COUNTS: tuple[str, ...] = ("controller_managers", "schedulers", "apiservers")
#: the counts that need leader election to run more than one copy
ELECTING_COUNTS: tuple[str, ...] = ("controller_managers", "schedulers")
#: the profiles whose examples draw their topology (kmodel.checker.profiles)
DRAW_PROFILES: tuple[str, ...] = ("campaign",)
#: the least and the most copies of each drawn count
LEAST, MOST = 1, 3
#: what each count is called when a report says which topology an example ran on
NAMES: dict[str, tuple[str, str]] = {
    "controller_managers": ("kube-controller-manager", "kube-controller-managers"),
    "schedulers": ("kube-scheduler", "kube-schedulers"),
    "apiservers": ("API server", "API servers"),
}


def profile_draws(profile: str, leader_elect: bool, pinned: Iterable[str] = ()) -> tuple[str, ...]:
    """The counts a campaign of `profile` draws: every one of COUNTS for a profile of DRAW_PROFILES, except
    those `pinned` (given by the user) and, without leader election, the electing ones (one copy each)."""
    if profile not in DRAW_PROFILES:
        return ()
    pinned = set(pinned)
    return tuple(c for c in COUNTS if c not in pinned and (leader_elect or c not in ELECTING_COUNTS))


def check_draws(draws: Iterable[str], leader_elect: bool) -> tuple[str, ...]:
    """`draws` in COUNTS order; ValueError (one line) for a name that is not a count, or for an electing count
    drawn without leader election."""
    draws = tuple(draws)
    unknown = sorted(set(draws) - set(COUNTS))
    if unknown:
        raise ValueError(f"cannot draw {', '.join(unknown)}: the topology counts are {', '.join(COUNTS)}")
    if not leader_elect and set(draws) & set(ELECTING_COUNTS):
        raise ValueError("--leader-elect=false runs one kube-controller-manager and one kube-scheduler: they "
                         "cannot be drawn; draw only apiservers, or keep leader election on")
    return tuple(c for c in COUNTS if c in draws)


def drawn_values(fixed: int) -> tuple[int, ...]:
    """The values a count is drawn from: the fixed topology's own first (where a failing example shrinks to),
    then the others from LEAST to MOST."""
    return (fixed, *(n for n in range(LEAST, MOST + 1) if n != fixed))


def draw_topology(config: ClusterConfig, draws: Iterable[str]) -> ClusterConfig:
    """`config` with each count of `draws` drawn from `drawn_values` of its own value, as the current Hypothesis
    example's next choices (in COUNTS order). Outside a Hypothesis example (a machine driven by hand) nothing is
    drawn: `config` as it is."""
    draws = tuple(c for c in COUNTS if c in set(draws))
    if not draws or not currently_in_test_context():
        return config
    data = current_build_context().data
    counts = {c: data.draw(st.sampled_from(drawn_values(getattr(config, c)))) for c in draws}
    return attrs.evolve(config, **counts)


def possible_topologies(draws: Iterable[str]) -> int:
    """How many topologies a campaign that draws these counts can meet."""
    return (MOST - LEAST + 1) ** len(tuple(draws))


def topology_text(config: ClusterConfig) -> str:
    """The topology of `config` as a report says it: ``2 kube-controller-managers, 1 kube-scheduler, 3 API
    servers``."""
    parts = []
    for count in COUNTS:
        n = getattr(config, count)
        one, many = NAMES[count]
        parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts)
