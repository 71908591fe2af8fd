"""Hypothesis profiles for the checker: dev, ci and campaign.

    dev       the default: 200 examples of up to 30 steps (seconds when nothing is violated; shrinking a
              violation takes longer, capped by a count of shrinks): enough for every anti-pattern variant
              to be caught on most seeds (kmodel principles).
    ci        30 examples of up to 30 steps, derandomized (the seed comes from the test itself), so CI is
              reproducible
    campaign  long runs: 1,000 examples of up to 100 steps, with two more rules (machine.LongWaits:
              wait_long, minutes pass with no one acting, long enough for an eviction; lose_node, a machine
              fails for good and its Node is left), and each example draws its topology: one to three
              kube-controller-managers, kube-schedulers and API servers (kmodel.checker.topology.DRAW_PROFILES)

Every profile turns off the example database (a run depends only on its seed and options, never on what an
earlier run left on disk), the deadline (an example's time depends on the cluster's size, not a bug) and the
health checks about slow generation (a whole cluster per example is slow by Hypothesis' standards) and the
explain phase (once an example has failed, Hypothesis traces every later run, shrinking included, with
sys.settrace to explain the failure: five to ten times slower, for text the checker never prints), and
reports one bug per run (the shrunk one). They are registered with Hypothesis as kmodel-dev, kmodel-ci and
kmodel-campaign, so a pytest run can also pick them with --hypothesis-profile.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

PROFILES: tuple[str, ...] = ("dev", "ci", "campaign")
#: the profiles whose runs add machine.LongWaits' rules to the machine
LONG_WAIT_PROFILES: tuple[str, ...] = ("campaign",)

_COMMON = dict(
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=tuple(p for p in Phase if p is not Phase.explain),
    report_multiple_bugs=False,
    print_blob=False,
)

_SETTINGS: dict[str, settings] = {
    "dev": settings(max_examples=200, stateful_step_count=30, derandomize=False, **_COMMON),
    "ci": settings(max_examples=30, stateful_step_count=30, derandomize=True, **_COMMON),
    "campaign": settings(max_examples=1000, stateful_step_count=100, derandomize=False, **_COMMON),
}

for _name, _settings in _SETTINGS.items():
    settings.register_profile(f"kmodel-{_name}", _settings)


def profile(name: str) -> settings:
    """The settings of a profile; ValueError naming the profiles if there is no such one."""
    try:
        return _SETTINGS[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; profiles: {', '.join(PROFILES)}") from None
