"""The kmodel pytest plugin: `--kmodel-seed`, `--kmodel-profile`, and a ready machine to subclass.

Installed through the ``pytest11`` entry point (``kmodel = "kmodel.pytest_plugin"``). In a test module:

    from kmodel.pytest_plugin import KmodelMachine, kmodel_test
    from invariants.registry import Invariant, SAFETY

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

`kmodel_test(machine)` returns a test function that runs the machine under the profile chosen with
``--kmodel-profile`` (dev, ci or campaign; default dev) seeded with ``--kmodel-seed`` (default: the profile's
own randomness, derandomized under ci). A failure fails the test with the invariant's name and message.
Hypothesis shrinks it with its own count of successful shrinks (500), but within a count of model events
(kmodel.checker.run.MAX_SHRINK_EVENTS) instead of its five minutes, so what a seed reports does not depend on
the machine's speed.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from kmodel.checker.machine import KmodelMachine
from kmodel.checker.profiles import PROFILES, profile

__all__ = ["KmodelMachine", "kmodel_test", "pytest_addoption", "pytest_configure"]

_options: dict[str, Any] = {"seed": None, "profile": "dev"}
#: how Hypothesis' warning begins when it stops shrinking at its time limit (which shrink_limits turns into a count)
SLOW_SHRINK_WARNING = "WARNING: Hypothesis has spent more than five minutes"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("kmodel", "kmodel model checking")
    group.addoption("--kmodel-seed", type=int, default=None, help="seed every kmodel machine test with this")
    group.addoption("--kmodel-profile", default="dev", choices=PROFILES,
                    help="Hypothesis profile for kmodel machine tests (default dev)")


def pytest_configure(config: Any) -> None:
    _options["seed"] = config.getoption("--kmodel-seed", default=None)
    _options["profile"] = config.getoption("--kmodel-profile", default="dev") or "dev"


def kmodel_test(machine: type[KmodelMachine], **overrides: Any) -> Callable[[], None]:
    """A pytest test running `machine` under the chosen profile and seed (`overrides`: Hypothesis settings)."""
    from hypothesis import seed as hypothesis_seed
    from hypothesis import settings as Settings
    from hypothesis.stateful import run_state_machine_as_test

    def test() -> None:
        from hypothesis.reporting import current_reporter, with_reporter

        from kmodel.checker.run import no_source_constants, profile_bases, shrink_limits
        from kmodel.checker.stats import Stats

        stats = Stats()
        # the campaign profile's rules come with it, as in `kmodel check --profile campaign`
        bound = type(machine.__name__, profile_bases(machine, _options["profile"]), {"stats": stats})
        chosen: Optional[int] = _options["seed"]
        if chosen is not None:
            bound = hypothesis_seed(chosen)(bound)
        reporter = current_reporter()

        def report(text: Any) -> None:
            # Hypothesis says "more than five minutes" when it stops shrinking early; here a count stopped it
            if not str(text).startswith(SLOW_SHRINK_WARNING):
                reporter(text)

        # a seed explores the same examples however kmodel was installed, and shrinks them alike on any machine
        with with_reporter(report), no_source_constants(), shrink_limits(stats, own_shrinks=True):
            run_state_machine_as_test(bound, settings=Settings(profile(_options["profile"]), **overrides))

    test.__name__ = f"test_{machine.__name__}"
    return test
