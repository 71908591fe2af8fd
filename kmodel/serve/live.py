"""Invariants checked live while the model is served: every safety invariant of the registry (invariants/), run on
the model's thread against the cluster as it is, each with its own memo (and the run's shared one) kept between
checks, as the checker keeps them. A violation is reported once (by invariant and message), with the logical time
it was first seen; the session prints it and writes it to the report."""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.invariants.registry import SAFETY, SHARED, registered
import kmodel.invariants


@attrs.frozen
class Violation:
    invariant: str
    message: str
    at_ms: int

    def line(self) -> str:
        return f"kmodel serve: invariant {self.invariant} violated at logical time {self.at_ms / 1000:g} s: " \
               f"{self.message}"


class LiveChecker:
    """See the module docstring."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.invariants = registered(SAFETY)
        shared: dict = {}
        self._memos = {inv.name: {SHARED: shared} for inv in self.invariants}
        self._seen: dict[tuple[str, str], None] = {}
        self.violations: list[Violation] = []
        self.checks = 0

    def check(self) -> list[Violation]:
        """Check every safety invariant now; the violations not seen before."""
        self.checks += 1
        new = []
        for inv in self.invariants:
            for message in inv.check(self.cluster, self._memos[inv.name]):
                key = (inv.name, message)
                if key not in self._seen:
                    self._seen[key] = None
                    violation = Violation(inv.name, message, self.cluster.now)
                    self.violations.append(violation)
                    new.append(violation)
        return new
