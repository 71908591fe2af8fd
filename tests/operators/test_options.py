"""The --operator options refuse what they cannot use with one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

KOPF = ["--operator", "kopf run --standalone examples/operators/kopf_correct.py"]


def kmodel(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kmodel", "check", *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("args, said", [
    (KOPF, "no CustomResourceDefinition"),
    (KOPF + ["--operator-manifests", "examples/nope.yaml"], "cannot read it"),
    (KOPF + ["--operator-manifests", "examples/crd.yaml"], "one subject of kind User"),
    (KOPF + ["--operator-manifests", "examples/operators/kopf.yaml", "--operator-ready", "soon"],
     "write watch, log:REGEX"),
    (KOPF + ["--operator-manifests", "examples/operators/kopf.yaml", "--invariants", "examples.nope:X"],
     "cannot import it"),
    (KOPF + ["--operator-manifests", "examples/operators/kopf.yaml", "--operator-user", "mallory"],
     "names this User"),
    (["--reproduce", "3"], "is for --operator runs"),
])
def test_bad_operator_options_are_one_line_and_exit_2(args: list, said: str) -> None:
    done = kmodel(*args)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr
