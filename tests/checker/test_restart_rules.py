"""The restart family: a node removed while kube-controller-manager starts again, anchored on node IPAM's
startup list. Before the informer's first list it reaches upstream's node IPAM leak; after it, it does not."""

from __future__ import annotations

import pytest

from kmodel.checker.actions import ApplyDeployment, RunFair, Settle
from kmodel.checker.restart_actions import NODE_IPAM, RestartManagerRemovingNode
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.cluster import ClusterConfig
from kmodel.fixes import NODEIPAM_RELEASE_BY_OWNER

#: an action of each kind, for tests/checker/test_actions.py's round trips
EXAMPLES = [RestartManagerRemovingNode("node-2", 7)]


def _warmed(fixes: tuple[str, ...] = ()) -> Session:
    session = Session(ClusterConfig(fixes=fixes), all_invariants())
    session.execute(ApplyDeployment("web", 2))
    session.execute(RunFair(15_000))
    return session


def test_a_node_removed_between_node_ipams_two_lists_leaks_its_block():
    session = _warmed()
    ipam = session.cluster.loop.components[NODE_IPAM]
    session.execute(RestartManagerRemovingNode("node-1", 0))
    assert ipam.initial_listed and not ipam.nodes.has_synced  # the delete is on its way inside the window
    with pytest.raises(InvariantViolation, match="no-cidr-leak: node IPAM holds 10.244.0.0/24, which no node has"):
        session.execute(Settle(600_000, max_events=30_000))


def test_the_same_removal_after_the_informers_first_list_leaks_nothing():
    session = _warmed()
    session.execute(RestartManagerRemovingNode("node-1", 31))
    assert session.cluster.loop.components[NODE_IPAM].nodes.has_synced
    session.execute(Settle(600_000, max_events=30_000))
    assert session.violation is None


def test_the_known_fix_takes_the_leak_out():
    session = _warmed((NODEIPAM_RELEASE_BY_OWNER,))
    session.execute(RestartManagerRemovingNode("node-1", 0))
    session.execute(Settle(600_000, max_events=30_000))
    assert session.violation is None
