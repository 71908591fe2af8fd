"""The liveness invariants leave out what a pod stranded on a lost machine holds (liveness._stranded: being deleted
on a machine gone for good whose Node stays), as upstream waits on it for good; the same state with the machine
still in the cluster is judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.invariants.registry import REGISTRY
from kmodel.checker.replay import replay
from kmodel.checker.trace import read_trace

REGRESSIONS = Path(__file__).resolve().parents[1] / "regressions"


@pytest.mark.parametrize("trace, invariant, judged", [
    ("statefulset-pod-evicted-from-a-lost-node-stays-terminating.json", "converges-statefulsets",
     "StatefulSet default/db: pod db-1 is Pending, not ready"),
    ("statefulset-scaled-down-past-a-pod-stranded-on-a-lost-node.json", "converges-statefulsets",
     "StatefulSet default/db wants 1 pods but also has db-1"),
    ("deployment-recreate-waits-on-an-old-pod-stranded-on-a-lost-node.json", "converges-replicas",
     "deployment default/api wants 2 replicas but its status says replicas=0 updated=0 ready=0"),
])
def test_a_pod_stranded_on_a_lost_machine_is_waited_on_and_judged_while_its_machine_is_there(trace, invariant, judged):
    result = replay(read_trace(REGRESSIONS / trace), record_messages=False, record_changes=True)
    assert result.violation is None
    cluster = result.recorder.cluster
    assert list(REGISTRY[invariant].check(cluster, {})) == []
    cluster.nodes.extend(cluster.lost_nodes)  # the same state, the machines counted as still in the cluster
    assert judged in list(REGISTRY[invariant].check(cluster, {}))
