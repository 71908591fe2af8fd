"""What a checking campaign counts: rules fired, invariant checks and violations, examples, events, time.

One `Stats` value lives for a whole campaign (every example Hypothesis runs, shrinking included) and is
filled by the sessions and the machine; `run.py` turns it into report.json. The campaign's trace digest is
a blake2b over each finished example's own digest, in order, so two campaigns that executed the same
actions in the same order have the same digest. Times (`perf_counter`) are figures for people, never
inputs to a decision.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Optional


class Stats:
    def __init__(self) -> None:
        self.rules: dict[str, int] = {}
        self.checks: dict[str, int] = {}
        self.violations: dict[str, int] = {}
        #: sometimes properties: examples that reached each, and the first example that did (1-based)
        self.reached: dict[str, int] = {}
        self.first_reached: dict[str, int] = {}
        self.examples = 0
        self.steps = 0  # actions executed
        self.rule_steps = 0  # Hypothesis steps (rules run, including those that found nothing to do)
        self.events = 0  # model events applied by the loop
        self.invariant_seconds = 0.0  # safety and liveness checks (the safety checks of a settle included)
        self.action_seconds = 0.0  # applying actions (settles' liveness checks included) and restoring examples
        self.restore_seconds = 0.0  # of action_seconds: starting examples from the warm-up snapshot
        self.liveness_seconds = 0.0  # of both: a settle's checks (the safety checks it asks first included)
        #: the settle every example ends with (the machine's teardown), all included: its events, its checks
        self.closing_settle_seconds = 0.0
        self.closing_settle_events = 0
        self._hash = hashlib.blake2b(digest_size=16)
        #: examples run when the first violation was seen (None: none yet); shrinking budgets count from it
        self.first_failure_at: Optional[int] = None
        #: set by run.shrink_limits: the model events run when Hypothesis' shrink began (None: it has not), and
        #: whether the shrink stopped because its budget of events ran out
        self.shrink_started_at_events: Optional[int] = None
        self.shrink_budget_reached = False
        #: with --keep-going: examples that ended on a violation (Hypothesis never hears of them, nor shrinks)
        self.violating_examples = 0
        #: examples per topology drawn (kmodel.checker.topology.topology_text), when the campaign draws it
        self.topologies: dict[str, int] = {}
        #: called with this Stats after each example starts (the progress bar)
        self.on_example: Optional[Callable[["Stats"], None]] = None

    def fired(self, rule: str) -> None:
        self.rules[rule] = self.rules.get(rule, 0) + 1

    def example_started(self) -> None:
        self.examples += 1
        if self.on_example is not None:
            self.on_example(self)

    def topology_drawn(self, topology: str) -> None:
        """The example running now drew this topology (kmodel.checker.topology)."""
        self.topologies[topology] = self.topologies.get(topology, 0) + 1

    def situation_reached(self, name: str) -> None:
        """An example (the one running now) reached the sometimes property `name` (once per example)."""
        self.reached[name] = self.reached.get(name, 0) + 1
        self.first_reached.setdefault(name, self.examples)

    def failed(self) -> None:
        if self.first_failure_at is None:
            self.first_failure_at = self.examples

    def example_violated(self) -> None:
        """With --keep-going: the example running now ended on a violation, and the campaign goes on."""
        self.violating_examples += 1

    def shrinking_examples(self) -> int:
        """Examples started since the first violation (0 before one)."""
        return 0 if self.first_failure_at is None else self.examples - self.first_failure_at

    def shrinking_events(self) -> int:
        """Model events Hypothesis' shrink has run since it began (0 before it has: run.shrink_limits marks it)."""
        began = self.shrink_started_at_events
        return 0 if began is None else self.events - began

    def example_finished(self, digest: str, events: int) -> None:
        self._hash.update(digest.encode() + b"\n")
        self.events += events

    def trace_digest(self) -> str:
        return self._hash.hexdigest()
