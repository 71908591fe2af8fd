"""The episode's oracles: every built-in safety invariant (the served session's live checks,
kmodel.serve.live), the operator's own safety invariants checked alongside them on the model's thread, and once
the actions are done and the operator has had a settle's time, the liveness invariants (the operator's own and
the built-in ones that apply to a served cluster), each of which must hold by the settle's end. Every invariant
only reads the cluster; none calls the operator."""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import attrs

from kmodel.invariants.registry import LIVENESS, SAFETY, SHARED, Invariant, registered
import kmodel.invariants  # noqa: F401  (registers the built-in invariants)

#: built-in liveness invariants a served cluster cannot be judged by: `settles` asks for a loop with nothing left
#: to do, which a cluster run against the wall clock never is (its timers always run)
NOT_SERVED = ("settles",)
#: how often the liveness invariants are asked during the settle
SETTLE_POLL_S = 0.2


@attrs.frozen
class Finding:
    """A violation seen in an episode: `step` is the action being done (0 during start-up; len(actions) + 1
    during the settle)."""

    invariant: str
    message: str
    at_ms: int
    step: int

    def to_json(self) -> dict:
        return attrs.asdict(self)


class Judge:
    def __init__(self, served: Any, own: Sequence[Invariant]) -> None:
        self.served = served
        self.safety = [inv for inv in own if inv.kind == SAFETY]
        self.liveness = [inv for inv in own if inv.kind == LIVENESS] + [
            inv for inv in registered(LIVENESS) if inv.name not in NOT_SERVED]
        self._liveness_names = {inv.name for inv in self.liveness}
        shared: dict = {}
        self._memos = {inv.name: {SHARED: shared} for inv in self.safety + self.liveness}
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str]] = set()
        self._live_seen = 0
        self.step = 0
        session = served.session
        live_check = session.model.on_progress
        self._builtin = session.live

        def check() -> None:  # on the model's thread
            if live_check is not None:
                live_check()
            self._check(self.safety)

        session.model.on_progress = check

    def _note(self, inv: str, message: str, at_ms: int) -> None:
        if (inv, message) not in self._seen:
            self._seen.add((inv, message))
            self.findings.append(Finding(inv, message, at_ms, self.step))

    def _check(self, invariants: Sequence[Invariant]) -> list[tuple[str, str]]:
        """On the model's thread: ask `invariants` now; what they say."""
        cluster = self.served.cluster
        said = [(inv.name, m) for inv in invariants for m in inv.check(cluster, self._memos[inv.name])]
        for name, message in said:
            if name not in self._liveness_names:
                self._note(name, message, cluster.now)
        return said

    def _collect_builtin(self) -> None:
        if self._builtin is None:
            return
        for v in self._builtin.violations[self._live_seen:]:
            self._note(v.invariant, v.message, v.at_ms)
        self._live_seen = len(self._builtin.violations)

    def check_now(self) -> list[Finding]:
        """Ask every safety invariant now (from the checker's thread); the findings so far."""
        def run() -> None:
            if self._builtin is not None:
                self._builtin.check()
            self._check(self.safety)

        self.served.call(run)
        self._collect_builtin()
        return self.findings

    def settle(self, seconds: float) -> list[Finding]:
        """Ask the liveness invariants until they all hold or `seconds` of wall time passed; the findings."""
        deadline = time.monotonic() + seconds
        said: list[tuple[str, str]] = []
        while True:
            said = self.served.call(lambda: self._check(self.liveness))
            if not said or time.monotonic() >= deadline:
                break
            time.sleep(SETTLE_POLL_S)
        at = self.served.now()
        for name, message in said:
            self._note(name, message, at)
        return self.check_now()

    def note(self, invariant: str, message: str) -> None:
        """A finding of the episode itself (the operator exited, or did not come back after a restart)."""
        self._note(invariant, message, self.served.now())

    def first(self) -> Optional[Finding]:
        return self.findings[0] if self.findings else None
