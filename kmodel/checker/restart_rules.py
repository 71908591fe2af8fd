"""The restart family's rules: an operator's change while kube-controller-manager starts again
(kmodel.checker.restart_actions).

    restart_removing_node   kube-controller-manager restarts and a node is removed 0 to 31 events after the node
                            IPAM controller's startup list was answered: about half the draws land before its
                            informer's first list on the dev cluster, the window of upstream's node IPAM leak
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.actions import CONTROLLER_MANAGER
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.restart_actions import NODE_IPAM, RestartManagerRemovingNode
from kmodel.checker.rulebook import RuleFamily, rule


def _can_restart_removing(machine: "RestartRules") -> bool:
    cluster = machine.cluster
    members = cluster.processes.get(CONTROLLER_MANAGER, ())
    return (machine.node_removal and len(cluster.nodes) > 1 and NODE_IPAM in members
            and all(cluster.loop.is_up(m) for m in members))


class RestartRules(RuleFamily):
    """The restart rule (see the module docstring)."""

    node_removal: bool

    @precondition(_can_restart_removing)
    @rule(i=INDEX, after=st.integers(0, 31))
    def restart_removing_node(self, i: int, after: int) -> None:
        self._do(RestartManagerRemovingNode(pick(i, self.cluster.nodes), after))
