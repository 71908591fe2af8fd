"""The rules of a component's own custom kinds (own_crd_rules.py): drawn from the CRD its registration brings,
added to the campaign only when a component brings one, and read back from a trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.checker.action_json import action_from_json
from kmodel.checker.machine import KmodelMachine
from kmodel.checker.own_crd_actions import (
    ApplyCustomObject, DeleteCustomObject, DeleteOwnCRD, ScaleCustomObject, WriteCustomStatus, own_kinds,
)
from kmodel.checker.own_crd_rules import DELETE_CRD_ODDS, OwnCrdRules
from kmodel.checker.run import profile_bases
from kmodel.checker.schema_draws import REMOVE, UNKNOWN_FIELD, breakages, broken, valid
from kmodel.cluster import DEFAULT_COMPONENTS, ClusterConfig
from kmodel.component.registry import component

from .conftest import SmallMachine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TENANT = "examples.operators.tenant:TenantOperator"
#: the Database CRD's spec schema (examples/crd.yaml), every keyword the strategy reads
DATABASE_SPEC = {"type": "object", "required": ["engine"], "properties": {
    "engine": {"type": "string", "enum": ["postgres", "mysql"]},
    "replicas": {"type": "integer", "minimum": 0, "maximum": 5, "default": 1},
    "version": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)*$", "maxLength": 10},
    "storage": {"x-kubernetes-int-or-string": True},
    "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 1}},
    "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "phase": {"type": "string", "nullable": True},
}}


@settings(max_examples=60, database=None, derandomize=True)
@given(valid(DATABASE_SPEC))
def test_drawn_values_are_what_the_schema_accepts(spec):
    assert spec["engine"] in ("postgres", "mysql")
    assert 0 <= spec.get("replicas", 0) <= 5
    assert len(spec.get("version", "")) <= 10 and all(p.isdigit() for p in spec.get("version", "0").split("."))
    assert isinstance(spec.get("storage", 0), (int, str))
    assert len(spec.get("tags", [])) <= 3 and all(spec.get("tags", []))
    assert spec.get("phase", None) is None or isinstance(spec["phase"], str)


def test_each_constraint_has_a_way_to_break_it():
    found = breakages(DATABASE_SPEC, ("spec",))
    assert (("spec", "engine"), REMOVE) in found  # required
    assert (("spec", "engine"), "kmodel-not-in-enum") in found
    assert (("spec", "replicas"), -1) in found and (("spec", "replicas"), 6) in found
    assert (("spec", "version"), "x" * 11) in found
    assert (("spec", "tags"), ["a"] * 4) in found
    assert (("spec", UNKNOWN_FIELD), "x") in found
    assert broken({"spec": {"engine": "mysql"}}, (("spec", "replicas"), -1)) == {"spec": {"engine": "mysql",
                                                                                         "replicas": -1}}


def test_the_kinds_of_a_components_crd_come_from_its_registration():
    [tenant] = own_kinds((*DEFAULT_COMPONENTS, TENANT))
    assert (tenant.api_version, tenant.kind, tenant.plural, tenant.namespaced) == ("ops.example.com/v1", "Tenant",
                                                                                   "tenants", False)
    assert tenant.status and not tenant.scale
    assert tenant.names == ("payments", "alpha", "beta")  # its boot object's name first
    assert own_kinds(DEFAULT_COMPONENTS) == []


def test_the_rules_join_the_campaign_only_when_a_component_brings_a_crd():
    assert OwnCrdRules not in profile_bases(KmodelMachine, "dev")
    assert OwnCrdRules in profile_bases(KmodelMachine, "dev", own_crds=True)


class TenantRules(SmallMachine, OwnCrdRules):
    config = ClusterConfig(nodes=1, components=(*DEFAULT_COMPONENTS, TENANT))


def test_every_rule_does_what_it_draws():
    machine = TenantRules()
    cluster = machine.cluster
    machine.advance_time(5)

    class Fixed:  # st.data() standing in: the least valid value
        def draw(self, strategy, label=None):
            return {"owner": "bob"} if "spec" in label else {"namespace": "tenant-alpha"}

    machine.apply_custom_object(1, 0, Fixed())  # alpha, valid
    machine.apply_custom_object(2, 1, Fixed())  # beta, its owner removed: 422 Required
    machine.advance_time(5)
    machine.write_custom_status(1, 0, Fixed())
    machine.delete_custom_object(0, 2)  # payments, Foreground
    machine.advance_time(20)
    assert [t.metadata.name for t in cluster.objects("tenants")] == ["alpha"]
    assert cluster.get("tenants", "", "alpha").content["spec"] == {"owner": "bob"}
    codes = [(type(r.command).__name__, r.response.code) for r in cluster.kubectl.results]
    assert ("Apply", 201) in codes and ("Apply", 422) in codes and ("Patch", 200) in codes
    assert ("Delete", 200) in codes or ("Delete", 202) in codes
    for rule in ("apply_custom_object", "write_custom_status", "delete_custom_object"):
        assert machine.stats.rules[rule] >= 1, rule


def test_deleting_the_operators_crd_takes_its_objects_and_what_they_own():
    """delete_own_crd acts on one draw in DELETE_CRD_ODDS: the API server deletes the Tenants, then the CRD, and
    the garbage collector the namespace the operator made for each (owned by its Tenant); the rule is not drawn
    again once the CRD is gone."""
    machine = TenantRules()
    cluster = machine.cluster
    machine.advance_time(5)

    class Fixed:
        def draw(self, strategy, label=None):
            return {"owner": "bob"}

    machine.apply_custom_object(1, 0, Fixed())  # alpha
    machine.advance_time(10)
    assert cluster.get("namespaces", "", "tenant-alpha") is not None
    crd = "tenants.ops.example.com"
    for chance in range(DELETE_CRD_ODDS - 1):  # the draws that do nothing
        machine.delete_own_crd(0, chance)
    assert cluster.get("customresourcedefinitions", "", crd) is not None
    machine.delete_own_crd(0, DELETE_CRD_ODDS - 1)
    machine.advance_time(30)
    assert cluster.get("customresourcedefinitions", "", crd) is None
    namespace = cluster.get("namespaces", "", "tenant-alpha")
    assert namespace is None or namespace.metadata.deletion_timestamp is not None
    assert not machine._stored_kinds()


OWN_CRD_EXAMPLES = [
    ApplyCustomObject("ops.example.com/v1", "Tenant", "", "alpha", '{"spec":{"owner":"bob"}}'),
    WriteCustomStatus("tenants", "", "alpha", '{"namespace":"tenant-alpha"}'),
    ScaleCustomObject("databases", "default", "orders", 6),
    DeleteCustomObject("backups", "default", "nightly", "Orphan"),
    DeleteOwnCRD("tenants.ops.example.com"),
]


@pytest.mark.parametrize("action", OWN_CRD_EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    again = action_from_json(json.loads(json.dumps(action.to_json())))
    assert again == action and again.stable_json() == action.stable_json()


@component("database-crd", boot_objects=(yaml.safe_load((EXAMPLES / "crd.yaml").read_text()),))
def database_crd(ctx):
    """No process: only the Database CRD of examples/crd.yaml, created at boot (it has the scale subresource)."""
    return []


class DatabaseRules(SmallMachine, OwnCrdRules):
    config = ClusterConfig(nodes=1, components=(*DEFAULT_COMPONENTS, f"{__name__}:database_crd"))


def test_the_scale_rule_drives_a_crd_with_the_scale_subresource():
    machine = DatabaseRules()
    cluster = machine.cluster
    machine.advance_time(5)

    class Fixed:
        def draw(self, strategy, label=None):
            return {"engine": "mysql"} if "spec" in label else {"replicas": 1}

    machine.apply_custom_object(0, 0, Fixed())  # alpha (no boot object of its kind): replicas defaulted to 1
    machine.advance_time(2)
    machine.scale_custom_object(0, 4)
    machine.scale_custom_object(0, 6)  # past the schema's maximum of 5: 422
    machine.write_custom_status(0, 0, Fixed())
    machine.advance_time(2)
    db = cluster.get("databases", "default", "alpha")
    assert db.content["spec"] == {"engine": "mysql", "replicas": 4} and db.content["status"] == {"replicas": 1}
    assert ("Scale", 422) in [(type(r.command).__name__, r.response.code) for r in cluster.kubectl.results]
    assert machine.stats.rules["scale_custom_object"] == 2
