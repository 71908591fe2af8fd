"""The leader-election family's rules: a mixin of the checker's state machine, added when the cluster runs
several kube-controller-managers or kube-schedulers (kmodel.checker.run: `profile_bases`), so that the rule set,
and with it what each seed explores, stays as it was for a cluster that elects no leader.

    pause_process   stop a process's world for 1 to 60 s (leader_actions.PauseProcess): a current leader for
                    half the draws of its index (those below LEADER_DRAWS, where it shrinks to), any process for
                    the others (the leaders first among them): among every process alike, with a score of
                    kubelets, proxies and controllers, a leader would seldom be the one paused
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st

from kmodel.checker.draws import INDEX, pick
from kmodel.checker.leader_actions import MAX_PAUSE_SECONDS, PauseProcess, leaders, pausable
from kmodel.checker.rulebook import RuleFamily, rule

#: a drawn INDEX below this pauses a current leader (half the draws)
LEADER_DRAWS = 32


class LeaderRules(RuleFamily):
    """The pause rule (see the module docstring)."""

    in_every_machine: ClassVar[bool] = False  # kmodel.checker.run adds it when the cluster calls for it

    @rule(i=INDEX, seconds=st.integers(1, MAX_PAUSE_SECONDS))
    def pause_process(self, i: int, seconds: int) -> None:
        candidates = leaders(self.cluster) if i < LEADER_DRAWS else []
        candidates = candidates or pausable(self.cluster)
        if candidates:
            self._do(PauseProcess(pick(i, candidates), seconds))
