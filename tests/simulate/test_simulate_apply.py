"""`kmodel simulate --apply FILE_OR_DIR@SECONDS`: a later kubectl apply, so that a CRD applied first serves its
custom objects; its results are reported as the first apply's, and bad specs are one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kmodel.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CRD = str(EXAMPLES / "crd.yaml")
DATABASE = str(EXAMPLES / "objects" / "database.yaml")
INVALID = str(EXAMPLES / "objects" / "database-invalid.yaml")
#: upstream's 422 for spec.replicas below the CRD schema's minimum (apiextensions-apiserver's validation)
REPLICAS_MESSAGE = ('Database.example.com "broken" is invalid: spec.replicas: Invalid value: -1: '
                    "spec.replicas in body should be greater than or equal to 0")


def simulate(capsys, *argv: str, json_out: bool = True) -> tuple[int, object]:
    code = main(["simulate", "--nodes", "1", "--until", "10", *argv, *(["--json"] if json_out else [])])
    out = capsys.readouterr().out
    return code, json.loads(out) if json_out else out


def test_a_crd_applied_first_serves_the_object_of_a_later_apply(capsys):
    code, report = simulate(capsys, "-f", CRD, "--apply", f"{DATABASE}@5")
    assert code == 0 and report["rejected"] == []
    assert report["custom_objects"] == [{"apiVersion": "example.com/v1", "kind": "Database", "namespace": "default",
                                         "name": "orders"}]


def test_the_custom_objects_section_lists_them_as_kubectl_get(capsys):
    code, out = simulate(capsys, "-f", CRD, "--apply", f"{DATABASE}@5", json_out=False)
    assert code == 0
    section = out.split("CUSTOM OBJECTS\n")[1].split("\n\n")[0].splitlines()
    assert section[0].split() == ["NAMESPACE", "KIND", "NAME"]
    assert section[1].split() == ["default", "Database.example.com", "orders"]


def test_in_one_invocation_the_object_is_refused_as_kubectl_refuses_it(capsys):
    code, report = simulate(capsys, "-f", CRD, "-f", DATABASE)
    assert code == 1 and report["custom_objects"] == []
    [refused] = report["rejected"]
    assert refused["reason"] == "NoKindMatch" and refused["object"] == "database/orders"
    assert 'no matches for kind "Database" in version "example.com/v1"' in refused["message"]


def test_a_later_apply_before_the_crd_names_the_refused_kind_the_same_way(capsys):
    code, report = simulate(capsys, "--apply", f"{CRD}@5", "-f", str(EXAMPLES / "web-service.yaml"),
                            "--apply", f"{DATABASE}@0")
    assert code == 1
    [refused] = report["rejected"]
    assert refused["reason"] == "NoKindMatch" and f'from "{DATABASE}"' in refused["message"]
    assert report["custom_objects"] == []


def test_an_invalid_object_is_refused_with_upstreams_422(capsys):
    code, report = simulate(capsys, "-f", CRD, "--apply", f"{DATABASE}@5", "--apply", f"{INVALID}@6")
    assert code == 1
    assert report["rejected"] == [{"code": 422, "reason": "Invalid", "message": REPLICAS_MESSAGE,
                                   "object": "database.example.com/broken"}]
    assert [o["name"] for o in report["custom_objects"]] == ["orders"]
    code, out = simulate(capsys, "-f", CRD, "--apply", f"{INVALID}@6", json_out=False)
    assert f"Error from server (Invalid): {REPLICAS_MESSAGE} [database.example.com/broken]" in out


def test_a_later_apply_happens_at_its_time(capsys):
    code, report = simulate(capsys, "-f", CRD, "--apply", f"{str(EXAMPLES / 'web-service.yaml')}@8")
    assert code == 0
    created = [e["time"] for e in report["events"] if e["reason"] == "SuccessfulCreate"]
    assert created and min(created) >= 8


@pytest.mark.parametrize("spec, error", [
    ("nope.yaml@5", "--apply nope.yaml@5: the path 'nope.yaml' does not exist"),
    (f"{DATABASE}@soon", "'soon' is not a number of seconds"),
    (f"{DATABASE}@-1", "the time must be a finite number of seconds >= 0"),
    (f"{DATABASE}@nan", "the time must be a finite number of seconds >= 0"),
    (f"{DATABASE}@11", "is after the end of the run (--until 10): raise --until or apply it earlier"),
    (DATABASE, "use FILE_OR_DIR@SECONDS"),
    ("@5", "use FILE_OR_DIR@SECONDS"),
])
def test_bad_apply_specs_are_one_line_errors_with_exit_2(capsys, spec, error):
    assert main(["simulate", "-f", CRD, "--until", "10", "--apply", spec]) == 2
    err = capsys.readouterr().err
    assert error in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
