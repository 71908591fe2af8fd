"""The example operators (examples/operators) joined to `kmodel check` by their import paths: the backup
operator's bug is found, minimized and replayed by `kmodel replay` alone (the trace records the component, and
its registration brings its invariant); the tenant operator's guarantees hold."""

from __future__ import annotations

import json

from kmodel.cli import main

BACKUP = "examples.operators.backup:BackupOperator"
TENANT = "examples.operators.tenant:TenantOperator"


def test_kmodel_check_finds_the_backup_operators_bug_and_kmodel_replay_reproduces_it(tmp_path, capsys):
    report = tmp_path / "report"
    assert main(["check", "--component", BACKUP, "--nodes", "1", "--examples", "5", "--report", str(report)]) == 1
    out = capsys.readouterr().out
    assert "VIOLATION one-runner-per-backup: Backup default/nightly has 2 runner pods at once" in out
    trace = report / "traces" / "one-runner-per-backup.json"
    assert BACKUP in json.loads(trace.read_text())["config"]["components"]
    # the report names the custom object by its resource, as the built-in ones
    assert "`backups/default/nightly`" in (report / "report.md").read_text()
    assert main(["replay", str(trace), "--quiet"]) == 1
    assert "VIOLATION one-runner-per-backup" in capsys.readouterr().out


def test_kmodel_check_explores_the_tenant_operator_and_its_guarantees_hold(tmp_path, capsys):
    report = tmp_path / "report"
    assert main(["check", "--component", TENANT, "--nodes", "1", "--examples", "8", "--steps", "10", "--fix", "all",
                 "--report", str(report)]) == 0
    checked = {inv["name"]: inv["checks"] for inv in json.loads((report / "report.json").read_text())["invariants"]}
    assert checked["one-namespace-per-tenant"] > 0 and checked["tenants-have-their-namespace"] > 0



def test_kmodel_check_drives_the_objects_of_the_tenant_crd_and_still_passes(tmp_path, capsys):
    """The operator's registration brings the Tenant CRD: the campaign adds the rules of its objects
    (kmodel/checker/own_crd_rules.py), each drawn from its schema, and the operator's guarantees still hold."""
    report = tmp_path / "report"
    # with every known fix of upstream bugs on: the operator's guarantees are what is judged here (seed 23 draws
    # each of the four rules below)
    assert main(["check", "--component", TENANT, "--nodes", "1", "--examples", "40", "--seed", "23", "--fix", "all",
                 "--report", str(report)]) == 0
    rules = json.loads((report / "report.json").read_text())["rules"]
    for rule in ("apply_custom_object", "write_custom_status", "delete_custom_object", "delete_own_crd"):
        assert rules.get(rule, 0) > 0, rule
    assert "scale_custom_object" not in rules  # the Tenant CRD has no scale subresource


def test_a_check_without_a_components_crd_has_no_rules_of_own_custom_objects(tmp_path, capsys):
    report = tmp_path / "report"
    assert main(["check", "--nodes", "1", "--examples", "3", "--steps", "10", "--seed", "1",
                 "--report", str(report)]) in (0, 1)
    rules = json.loads((report / "report.json").read_text())["rules"]
    assert not [rule for rule in rules if "custom" in rule]
