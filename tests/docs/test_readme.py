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


def _shell_lines(page: Path) -> list[str]:
    """The lines of a page's ```sh blocks, in order."""
    blocks = re.findall(r"^```sh\n(.*?)^```", page.read_text(), re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def _installs_pytest(line: str) -> bool:
    words = line.split("#", 1)[0].replace("&&", " ").split()
    return "install" in words and any(w.strip("'\"") in ("pytest", ".[test]") for w in words)


def test_a_page_that_runs_pytest_installs_it_first() -> None:
    # the Quick start's first line installs kmodel alone (no pytest): a page that then runs pytest says how to
    # install it, before it runs it
    main_job, _ = quick_start()
    assert not _installs_pytest(main_job)
    for page in (README, ROOT / "docs" / "pytest.md"):
        lines = _shell_lines(page)
        if page == README:
            lines = lines[2:]  # after the Quick start, whose second line installs the test extra for the suite
        first_run = next(i for i, line in enumerate(lines) if "-m pytest test_mine.py" in line)
        assert any(_installs_pytest(line) for line in lines[:first_run]), page.name
