"""The --operator options refuse what they cannot use with one line and exit code 2, before any cluster is
served or any process started."""

from __future__ import annotations

import pytest

from kmodel.cli import main
from kmodel.operator.spec import operator_spec

KOPF = ["--operator", "kopf run --standalone examples/operators/kopf_correct.py"]
WEBSITES = KOPF + ["--operator-manifests", "examples/operators/kopf.yaml"]


@pytest.mark.parametrize("args, said", [
    (KOPF, "no CustomResourceDefinition"),
    (KOPF + ["--operator-manifests", "examples/nope.yaml"], "cannot read it"),
    (KOPF + ["--operator-manifests", "examples/crd.yaml"], "one subject of kind User"),
    (WEBSITES + ["--operator-ready", "soon"], "write watch, log:REGEX"),
    (WEBSITES + ["--operator-ready", "log:("], "not a regular expression"),
    (WEBSITES + ["--invariants", "examples.nope:X"], "cannot import it"),
    (WEBSITES + ["--invariants", "examples.operators.websites"], "write module:NAME"),
    (WEBSITES + ["--invariants", "examples.operators.websites:LABEL"], "not an Invariant"),
    (WEBSITES + ["--operator-user", "mallory"], "names this User"),
    (WEBSITES + ["--speed", "0"], "--speed must be a positive number"),
    (WEBSITES + ["--reproduce", "-1"], "--reproduce must be 0 or more"),
    (WEBSITES + ["--component", "examples.operators.tenant:TenantOperator"], "are for the in-model checker"),
    (["--operator", ""], "give the command that starts the operator"),
    (["--reproduce", "3"], "is for --operator runs"),
    (["--operator-manifests", "examples/operators/kopf.yaml"], "is for --operator runs"),
])
def test_bad_operator_options_are_one_line_and_exit_2(args: list, said: str,
                                                      capsys: pytest.CaptureFixture) -> None:
    assert main(["check", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


def test_a_crds_annotation_names_the_operators_invariants_with_those_of_the_option() -> None:
    spec = operator_spec("kopf run op.py", ["examples/operators/kopf.yaml"], None, "watch",
                         ["examples.operators.shards:INVARIANTS", "examples.operators.websites:INVARIANTS"])
    assert [i.name for i in spec.invariants] == ["one-configmap-per-website", "websites-served", "shard-configmaps"]
