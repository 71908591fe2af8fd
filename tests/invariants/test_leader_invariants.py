"""leader-acts-within-lease as an independent oracle: it judges the writes from the observers' records, so a
mistake planted in the elector's own lease check (which the fence of the leaderelection-fence-writes fix asks
before each write) is caught, and the fenced election holds it."""

from __future__ import annotations

import pytest

from kmodel.invariants.leader import leader_acts_within_lease
from kmodel.checker.leader_actions import PauseProcess
from kmodel.client.leaderelection import LeaderElector
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Scale
from kmodel.fixes import LEADERELECTION_FENCE_WRITES

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


def _woken_leader_run() -> list[str]:
    """A fenced HA cluster whose leading kube-controller-manager is paused past its lease (40 s), then given work
    to do as it wakes: the violations of leader-acts-within-lease, checked every second."""
    cluster = Cluster(ClusterConfig(controller_managers=2, schedulers=2, seed=1,
                                    fixes=(LEADERELECTION_FENCE_WRITES,)))
    cluster.apply([WEB])
    cluster.run(20_000)
    leader = next(p for p in ("kube-controller-manager", "kube-controller-manager-2")
                  if cluster.loop.components[p].elector.leading)
    PauseProcess(leader, 40).apply(cluster)
    cluster.run(cluster.now + 30_000)
    cluster.submit(Scale("deployments", "default", "web", 4))
    memo: dict = {}
    found: list[str] = []
    for _ in range(40):
        cluster.run(cluster.now + 1_000)
        found += leader_acts_within_lease(cluster, memo)
    assert cluster.get("deployments", "default", "web").status.replicas == 4  # the new leader did the work
    return found


def test_the_fenced_election_holds_leader_acts_within_lease():
    assert _woken_leader_run() == []


def _trusts_its_state(self: LeaderElector, now: int) -> bool:
    return self.leading  # forgets the Lease it observed and when


def _forgets_the_holder(self: LeaderElector, now: int) -> bool:
    return self.leading and self.lease_valid(now)  # a fresh observation of a Lease someone else holds passes


@pytest.mark.parametrize("mistake", [_trusts_its_state, _forgets_the_holder])
def test_leader_acts_within_lease_catches_a_mistake_in_the_electors_lease_check(monkeypatch, mistake):
    monkeypatch.setattr(LeaderElector, "holds_valid_lease", mistake)
    found = _woken_leader_run()
    assert found and "without an unexpired lease kube-system/kube-controller-manager by its own clock" in found[0]
