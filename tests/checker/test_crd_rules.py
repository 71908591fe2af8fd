"""The custom resource family: its actions read back from a trace, and its rules do what they draw."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.crd_actions import (
    ApplyCRD, ApplyDatabase, DeleteCRD, DeleteDatabase, ScaleDatabase, WriteDatabaseStatus,
)

from .conftest import SmallMachine

CRD_EXAMPLES = [
    ApplyCRD(), ApplyDatabase("orders", 2), ApplyDatabase("users", 0, "unknown-field"), WriteDatabaseStatus("orders", 3),
    ScaleDatabase("users", 6), DeleteDatabase("orders", "Foreground"), DeleteCRD(),
    WriteDatabaseStatus("orders", 1, spec_replicas=4), ScaleDatabase("orders", -1, "merge"),
    ScaleDatabase("orders", 3, "json"),
]


@pytest.mark.parametrize("action", CRD_EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    again = action_from_json(json.loads(json.dumps(action.to_json())))
    assert again == action and again.stable_json() == action.stable_json()


def test_a_bad_database_action_reads_back_as_a_one_line_error():
    with pytest.raises(ValueError, match="shape must be one of"):
        action_from_json({"name": "apply-database", "database": "orders", "replicas": 1, "shape": "huge"})


def test_kubectl_scale_takes_no_negative_count():
    with pytest.raises(ValueError, match="kubectl scale takes no negative count"):
        action_from_json({"name": "scale-database", "database": "orders", "replicas": -1, "way": "scale"})


def test_scale_patches_and_a_status_write_with_spec_reach_the_subresources():
    """A merge and a JSON patch of the scale subresource move spec.replicas; a negative one is ValidateScale's
    422; a status patch that carries spec.replicas leaves spec as it was."""
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_crd()
    machine.advance_time(2)
    machine.apply_database(0, 2, 0)
    machine.advance_time(2)
    machine.scale_database(0, 3, 1)  # merge
    machine.advance_time(2)
    assert cluster.get("databases", "default", "orders").content["spec"]["replicas"] == 3
    machine.scale_database(0, 4, 2)  # json
    machine.scale_database(0, -1, 2)  # negative: 422
    machine.write_database_status(0, 1, 2 * 5 + 1)  # status.replicas 1 with spec.replicas 5
    machine.advance_time(2)
    db = cluster.get("databases", "default", "orders")
    assert db.content["spec"]["replicas"] == 4 and db.content["status"]["replicas"] == 1
    codes = [(r.command.subresource, r.response.code) for r in cluster.kubectl.results if hasattr(r.command, "type")]
    assert codes == [("scale", 200), ("scale", 200), ("scale", 422), ("status", 200)]


def test_every_crd_rule_does_what_it_draws():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_database(0, 1, 0)  # before the CRD: kubectl cannot map the kind
    machine.advance_time(2)
    machine.apply_crd()
    machine.advance_time(2)
    machine.apply_database(0, 2, 0)
    machine.apply_database(1, 1, 1)  # negative replicas: 422
    machine.advance_time(2)
    machine.write_database_status(0, 2, 0)
    machine.scale_database(0, 6, 0)  # past the schema's maximum: 422
    machine.advance_time(2)
    db = cluster.get("databases", "default", "orders")
    assert db.content["spec"]["replicas"] == 2 and db.content["status"]["replicas"] == 2
    machine.delete_database(0, 2)  # Foreground: the GC removes its finalizer
    machine.apply_database(1, 1, 0)
    machine.advance_time(10)
    assert [o.metadata.name for o in cluster.objects("databases", "default")] == ["users"]
    machine.delete_crd()
    machine.advance_time(10)
    assert cluster.get("customresourcedefinitions", "", "databases.example.com") is None
    assert cluster.objects("databases", "default") == []
    codes = [(type(r.command).__name__, r.response.code, getattr(r.response.body, "reason", ""))
             for r in cluster.kubectl.results]
    assert ("Apply", 0, "KubectlError") in codes and ("Apply", 422, "Invalid") in codes
    assert ("Scale", 422, "Invalid") in codes
    for rule in ("apply_crd", "apply_database", "write_database_status", "scale_database", "delete_database",
                 "delete_crd"):
        assert machine.stats.rules[rule] >= 1, rule
