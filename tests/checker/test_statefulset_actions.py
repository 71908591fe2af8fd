"""StatefulSet actions (kmodel/checker/statefulset_actions.py) and their rules: each action round-trips through
JSON, does on a small cluster what its kubectl command does, and its rule fires on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.statefulset_actions import IMAGES, ApplyStatefulSet, ScaleStatefulSet
from kmodel.cluster import Cluster, ClusterConfig

from tests.checker.conftest import SmallMachine

EXAMPLES = [ApplyStatefulSet(0), ApplyStatefulSet(3, parallel=True, image=1), ScaleStatefulSet(2)]


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()


def test_bad_statefulset_actions_are_refused():
    with pytest.raises(ValueError, match="replicas must be at least 0"):
        action_from_json({"name": "scale-statefulset", "replicas": -1})


def names(cluster: Cluster) -> list[tuple[str, str, str]]:
    return sorted((p.metadata.name, p.status.phase, p.spec.containers[0].image)
                  for p in cluster.objects("pods", "default"))


def test_apply_scale_and_a_new_image_run_the_set_as_kubectl_would():
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyStatefulSet(2).apply(cluster)
    cluster.run(40_000)
    assert names(cluster) == [("db-0", "Running", IMAGES[0]), ("db-1", "Running", IMAGES[0])]
    ScaleStatefulSet(3).apply(cluster)
    cluster.run_for(30_000)
    assert [n for n, _, _ in names(cluster)] == ["db-0", "db-1", "db-2"]
    ApplyStatefulSet(3, image=1).apply(cluster)  # a new revision, rolled out from db-2 down
    cluster.run_for(90_000)
    assert names(cluster) == [(f"db-{i}", "Running", IMAGES[1]) for i in range(3)]
    ApplyStatefulSet(3, parallel=True, image=1).apply(cluster)  # podManagementPolicy is immutable
    cluster.run_for(5_000)
    assert cluster.kubectl.results[-1].response.code == 422


def test_every_statefulset_rule_fires_on_a_machine():
    machine = SmallMachine()
    for name, fire in {"apply_statefulset": lambda: machine.apply_statefulset(2, False, 0),
                       "scale_statefulset": lambda: machine.scale_statefulset(1),
                       "delete_statefulset": lambda: machine.delete_statefulset("Orphan")}.items():
        before = machine.stats.rules.get(name, 0)
        fire()
        assert machine.stats.rules[name] == before + 1, name
    kinds = [a.kind for a in machine.session.actions]
    assert "apply-statefulset" in kinds and "scale-statefulset" in kinds
    assert machine.session.actions[-1].name == "kubectl delete statefulset db --cascade=orphan"
    machine.teardown()


def test_a_deleted_pod_of_the_set_is_made_again_at_the_update_revision_under_on_delete():
    machine = SmallMachine()
    machine.apply_statefulset_strategy(2, False, 0, 0)  # OnDelete
    machine.advance_time(60)
    machine.apply_statefulset_strategy(2, False, 1, 0)  # a new image: nothing moves until a pod is deleted
    machine.advance_time(30)
    assert [image for _, _, image in names(machine.cluster)] == [IMAGES[0], IMAGES[0]]
    machine.delete_pod("db-1")
    assert machine.session.actions[-1].name == "kubectl delete pods db-1"
    machine.advance_time(90)
    assert names(machine.cluster) == [("db-0", "Running", IMAGES[0]), ("db-1", "Running", IMAGES[1])]
    machine.teardown()
