"""The README stays a short manual whose Quick start is what CI runs: its first fenced block is two lines, the
main job and the test command, and .ci/run runs that second line (it reads it from the README)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
#: the issue's bound on the README's length: details belong in docs/
MAX_README_LINES = 300


def quick_start() -> list[str]:
    """The lines of the README's first fenced block, as .ci/run's awk reads them."""
    block = re.search(r"^```[^\n]*\n(.*?)^```", README.read_text(), re.S | re.M)
    assert block, "the README has no fenced block"
    return block.group(1).splitlines()


def test_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= MAX_README_LINES


def test_quick_start_is_two_lines_the_main_job_then_the_tests() -> None:
    main_job, tests = quick_start()
    assert "-c constraints.txt" in main_job and main_job.endswith("kmodel check --seed 1 --fix all")
    assert "'.[test]'" in tests and "-c constraints.txt" in tests and tests.endswith("python -m pytest -q -n auto")
    assert "etcd-server" in tests  # the conformance suite needs a real etcd


def test_ci_runs_the_quick_start_test_line() -> None:
    script = CI_RUN.read_text()
    # .ci/run takes the second line of the README's first fenced block and runs it as it stands
    assert "awk '/^```/{n++; next} n==1' README.md | sed -n 2p" in script
    assert 'bash -c "$line"' in script


def test_ci_builds_the_site_strictly() -> None:
    script = CI_RUN.read_text()
    assert "'.[docs]' -c constraints.txt" in script
    assert "mkdocs build --strict" in script
