"""A scenario whose verdict validation ratcheting changed: the Database CRD is tightened after `orders` exists
(spec.replicas at most 1, and orders has 2), then `orders` is applied again with a new label and its spec as it
was. Upstream (CRDValidationRatcheting, on by default since Kubernetes 1.30) accepts the apply, because it
leaves the value the new schema refuses unchanged; before the model ratcheted, it refused it with 422 and
`kmodel simulate` exited 1. Changing the refused value is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kmodel.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CRD = EXAMPLES / "crd.yaml"
DATABASE = EXAMPLES / "objects" / "database.yaml"


def _write(path: Path, doc: dict) -> str:
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _scenario(tmp_path: Path, replicas: int) -> list[str]:
    crd = yaml.safe_load(CRD.read_text())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"][
        "maximum"] = 1
    db = yaml.safe_load(DATABASE.read_text())
    db["metadata"]["labels"] = {"tier": "gold"}
    db["spec"]["replicas"] = replicas
    return ["-f", str(CRD), "--apply", f"{DATABASE}@5", "--apply", f"{_write(tmp_path / 'crd.yaml', crd)}@6",
            "--apply", f"{_write(tmp_path / 'db.yaml', db)}@7"]


def simulate(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(["simulate", "--nodes", "1", "--until", "10", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_an_apply_that_keeps_the_refused_value_is_accepted(capsys, tmp_path):
    code, report = simulate(capsys, _scenario(tmp_path, replicas=2))
    assert (code, report["rejected"]) == (0, [])
    assert [o["name"] for o in report["custom_objects"]] == ["orders"]


def test_an_apply_that_changes_the_refused_value_is_refused(capsys, tmp_path):
    code, report = simulate(capsys, _scenario(tmp_path, replicas=3))
    assert code == 1
    [refused] = report["rejected"]
    assert (refused["code"], refused["reason"]) == (422, "Invalid")
    assert refused["message"].endswith("spec.replicas: Invalid value: 3: spec.replicas in body should be less than "
                                       "or equal to 1")
