"""The custom resource family: its actions read back from a trace, and its rules do what they draw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kmodel.checker.action_json import action_from_json
from kmodel.checker.crd_actions import (
    CRD_NAME, CRD_RELEASES, CRDS, ENGINES, SELECTOR, SHAPES, ApplyCRD, ApplyCRDAndDatabase, ApplyDatabase, DeleteCRD,
    DeleteDatabase, ReleaseDatabase, ScaleDatabase, WriteDatabaseStatus,
)
from kmodel.checker.crd_rules import DRAWN, KEEP
from kmodel.checker.own_crd_actions import ApplyCustomObject
from kmodel.cluster import Scale
from kmodel.cluster.kubectl import Patch
from kmodel.objects.apiextensions import CLEANUP_FINALIZER
from kmodel.objects.frozendict import thaw

from .conftest import SmallMachine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CRD_EXAMPLES = [
    ApplyCRD(), ApplyDatabase("orders", 2), ApplyDatabase("users", 0, "unknown-field"), WriteDatabaseStatus("orders", 3),
    ScaleDatabase("users", 6), DeleteDatabase("orders", "Foreground"), DeleteCRD(), DeleteCRD("Orphan"),
    WriteDatabaseStatus("orders", 1, spec_replicas=4), ScaleDatabase("orders", -1, "merge"),
    ScaleDatabase("orders", 3, "json"), ApplyCRD("tightened"), ApplyDatabase("orders", 5),
    WriteDatabaseStatus("users", 2, selector=True), ApplyCRDAndDatabase("basic", "users", 4, "mysql"),
    ApplyDatabase("users", 1, "held"), ReleaseDatabase("users"),
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


def _with_orders(replicas: int) -> SmallMachine:
    """A machine whose CRD (the example's) and Database `orders` (with `replicas`) are stored."""
    machine = SmallMachine()
    machine.apply_crd()
    machine.advance_time(2)
    machine.apply_database(0, replicas, 0, None)
    machine.advance_time(2)
    return machine


def test_scale_patches_and_a_status_write_with_spec_reach_the_subresources():
    """A merge and a JSON patch of the scale subresource move spec.replicas; a negative one is ValidateScale's
    422; a status patch that carries spec.replicas leaves spec as it was."""
    machine = _with_orders(2)
    cluster = machine.cluster
    machine.scale_database(0, 3, 1)  # merge
    machine.advance_time(2)
    assert cluster.get("databases", "default", "orders").content["spec"]["replicas"] == 3
    machine.scale_database(0, 4, 2)  # json
    machine.scale_database(0, -1, 2)  # negative: 422
    machine.write_database_status(0, 1, 2 * 5 + 1, False)  # status.replicas 1 with spec.replicas 5
    machine.advance_time(2)
    db = cluster.get("databases", "default", "orders")
    assert db.content["spec"]["replicas"] == 4 and db.content["status"]["replicas"] == 1
    codes = [(r.command.subresource, r.response.code) for r in cluster.kubectl.results if hasattr(r.command, "type")]
    assert codes == [("scale", 200), ("scale", 200), ("scale", 422), ("status", 200)]


def test_every_crd_rule_does_what_it_draws():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.session.execute(ApplyDatabase("orders", 1))  # before the CRD: kubectl cannot map the kind
    machine.advance_time(2)
    machine.apply_crd()
    machine.advance_time(2)
    machine.apply_database(0, 2, 0, None)
    machine.apply_database(1, 1, 1, None)  # negative replicas: 422
    machine.advance_time(2)
    machine.write_database_status(0, 2, 0, False)
    machine.scale_database(0, 6, 0)  # past the schema's maximum: 422
    machine.advance_time(2)
    db = cluster.get("databases", "default", "orders")
    assert db.content["spec"]["replicas"] == 2 and db.content["status"]["replicas"] == 2
    machine.delete_database(0, 2)  # Foreground: the GC removes its finalizer
    machine.apply_database(1, 1, 0, None)
    machine.advance_time(10)
    assert [o.metadata.name for o in cluster.objects("databases", "default")] == ["users"]
    machine.delete_crd(0)
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


def test_the_example_release_is_examples_crd_yaml():
    assert CRDS["example"] == yaml.safe_load((EXAMPLES / "crd.yaml").read_text())


def _codes(cluster):
    return [(type(r.command).__name__, r.response.code) for r in cluster.kubectl.results]


def test_keeping_replicas_a_tightened_schema_refuses_is_ratcheted():
    """A Database stored with 5 replicas outlives the tightened CRD (at most 3): the ratcheting sentence (its
    replicas as stored, the other engine) is accepted, a create with 5 and a change to 4 are refused."""
    machine = _with_orders(5)
    cluster = machine.cluster
    machine.apply_database(0, 0, KEEP + CRD_RELEASES.index("tightened"), None)  # 5 replicas kept, engine switched
    machine.advance_time(2)
    (upgrade,) = [a for a in machine.session.actions if isinstance(a, ApplyCRDAndDatabase)]
    assert (upgrade.release, upgrade.replicas, upgrade.engine) == ("tightened", 5, ENGINES[1])
    db = cluster.get("databases", "default", "orders")
    assert db.content["spec"]["replicas"] == 5 and db.content["spec"]["engine"] == ENGINES[1]
    assert db.metadata.generation == 2
    machine.apply_database(1, 5, 0, None)  # users: a create is validated whole
    machine.apply_database(0, 4, 0, None)  # orders: a changed value is validated
    machine.advance_time(2)
    assert _codes(cluster)[-4:] == [("Apply", 200), ("Apply", 200), ("Apply", 422), ("Apply", 422)]
    tightened = cluster.get("customresourcedefinitions", "", CRD_NAME).storage_version().open_api_schema()
    assert tightened["properties"]["spec"]["properties"]["replicas"]["maximum"] == 3
    assert cluster.get("databases", "default", "users") is None
    assert cluster.get("databases", "default", "orders").content["spec"]["replicas"] == 5


def test_a_database_drawn_from_the_stored_crds_schema_is_defaulted_and_loses_its_status():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_crd()
    machine.advance_time(2)

    class Drawn:  # st.data() standing in: a spec without replicas, a status, breakage 0 (valid)
        def draw(self, strategy, label=None):
            return {"Database.spec": {"engine": "mysql", "tags": ["a"], "version": "1.2"}, "breakage": 0,
                    "with status": True, "Database.status": {"replicas": 2}}[label]

    machine.apply_database(1, 0, DRAWN, Drawn())
    machine.advance_time(2)
    (action,) = [a for a in machine.session.actions if isinstance(a, ApplyCustomObject)]
    assert action.api_version == "example.com/v1" and json.loads(action.content)["status"] == {"replicas": 2}
    db = cluster.get("databases", "default", "users")
    assert thaw(db.content) == {"spec": {"engine": "mysql", "tags": ["a"], "version": "1.2", "replicas": 1}}


def test_database_rules_wait_for_an_established_crd_and_apply_crd_for_kubectl():
    machine = SmallMachine()
    assert not machine._established() and not machine._crd_apply_queued()
    machine.apply_crd()
    assert machine._crd_apply_queued() and not machine._established()
    machine.advance_time(2)
    assert machine._established() and not machine._crd_apply_queued()
    assert machine.cluster.get("customresourcedefinitions", "", CRD_NAME).storage_version().scale_subresource()[
        "labelSelectorPath"] == ".status.selector"  # the release of examples/crd.yaml


def test_deleting_the_crd_with_a_held_database_left_is_unstuck_by_hand():
    """The CRD is Terminating while a Database held by a finalizer is left; an apply then is refused (405); a
    second delete with a policy gets the policy's finalizer, which the garbage collector removes (apiextensions'
    registry delegates every delete after the first to the generic one); delete_crd then takes the held
    Database's finalizer off, and the Database and the CRD go."""
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_crd()
    machine.advance_time(2)
    machine.apply_database(0, 1, SHAPES.index("held"), None)
    machine.advance_time(2)
    machine.delete_crd(0)
    machine.advance_time(2)
    crd = cluster.get("customresourcedefinitions", "", CRD_NAME)
    assert crd is not None and crd.status.is_true("Terminating") and crd.status.is_true("Established")
    assert cluster.get("databases", "default", "orders").metadata.deletion_timestamp is not None
    machine.apply_database(1, 1, 0, None)  # users: no new object while the CRD is terminating
    machine.session.execute(DeleteCRD("Foreground"))  # a second delete: the generic one
    machine.advance_time(2)
    assert _codes(cluster)[-2:] == [("Apply", 405), ("Delete", 200)]
    assert cluster.kubectl.results[-1].response.body.metadata.finalizers == (CLEANUP_FINALIZER, "foregroundDeletion")
    assert cluster.get("customresourcedefinitions", "", CRD_NAME).metadata.finalizers == (CLEANUP_FINALIZER,)
    machine.delete_crd(0)  # stuck on orders: its finalizer taken off
    machine.advance_time(2)
    assert isinstance(machine.session.actions[-2], ReleaseDatabase)
    assert cluster.get("customresourcedefinitions", "", CRD_NAME) is None
    assert cluster.objects("databases", "default") == []


def test_a_database_applied_without_the_crd_installs_the_kind_first():
    """apply_database without an Established CRD applies the CRD, then the Database; while an apply of the CRD is
    queued, the Database alone."""
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_database(0, 2, 0, None)
    machine.apply_database(1, 3, 0, None)  # the CRD's apply is queued: the Database alone
    machine.advance_time(2)
    assert [type(a).__name__ for a in machine.session.actions if "Database" in type(a).__name__] == [
        "ApplyCRDAndDatabase", "ApplyDatabase"]
    assert [d.metadata.name for d in cluster.objects("databases", "default")] == ["orders", "users"]
    assert _codes(cluster) == [("Apply", 201), ("Apply", 201), ("Apply", 201)]


def test_status_and_scale_apply_what_they_act_on_first():
    """write_database_status and scale_database without the Database apply it first (and the CRD before it);
    the Scale answered reads status.selector where the example's CRD names labelSelectorPath."""
    machine = SmallMachine()
    cluster = machine.cluster
    machine.write_database_status(1, 2, 0, True)  # users: the CRD, users, then its status with a selector
    machine.scale_database(1, 3, 0)  # users is queued: nothing more to apply first
    machine.scale_database(0, 4, 1)  # orders: applied first, then scaled by a merge patch
    machine.advance_time(5)
    kinds = [type(a).__name__ for a in machine.session.actions if "Database" in type(a).__name__]
    assert kinds == ["ApplyCRDAndDatabase", "WriteDatabaseStatus", "ScaleDatabase", "ApplyDatabase",
                     "ScaleDatabase"]
    assert _codes(cluster) == [("Apply", 201), ("Apply", 201), ("Patch", 200), ("Scale", 200), ("Apply", 201),
                               ("Patch", 200)]
    users = cluster.get("databases", "default", "users")
    assert users.content["status"]["selector"] == SELECTOR and users.content["spec"]["replicas"] == 3
    scale = [r.response.body for r in cluster.kubectl.results if isinstance(r.command, Scale)][0]
    assert scale.kind == "Scale" and scale.content["status"]["selector"] == SELECTOR
    assert cluster.get("databases", "default", "orders").content["spec"]["replicas"] == 4
