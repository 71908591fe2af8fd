"""The pages' runnable examples do what the page shows: a fenced block right after the line
`<!-- runnable: exit N -->` in README.md or docs/*.md is run, each `$ COMMAND` line of it in turn, and each must
exit N and print every line the page quotes under it ("…" in a quoted line stands for text that changes from run
to run, such as a time). A page's runnable blocks run in the page's order in one scratch folder, as a reader
following the page would run them (a replay reads the trace the check before it wrote); there `.venv/bin/kmodel`
and `kmodel` are this environment's, and examples/ and tests/ are the repository's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- runnable: exit (\d+) -->$")


class Command(NamedTuple):
    page: str
    line: int
    exit: int
    command: str
    quoted: tuple[str, ...]


def runnable(path: Path) -> list[list[Command]]:
    """The runnable blocks of a page, each as its commands with the lines quoted under each."""
    lines = path.read_text().splitlines()
    blocks = []
    for n, line in enumerate(lines):
        mark = MARK.match(line)
        if not mark:
            continue
        assert lines[n + 1].startswith("```"), f"{path.name}:{n + 1}: a runnable mark must stand right before a fence"
        block: list[Command] = []
        for m in range(n + 2, len(lines)):
            if lines[m].startswith("```"):
                break
            if lines[m].startswith("$ "):
                block.append(Command(path.name, m + 1, int(mark.group(1)), lines[m][2:], ()))
            elif lines[m].strip():
                assert block, f"{path.name}:{m + 1}: a runnable block starts with a `$ ` command"
                block[-1] = block[-1]._replace(quoted=block[-1].quoted + (lines[m],))
        blocks.append(block)
    return blocks


def quoted_line_pattern(quoted: str) -> re.Pattern:
    """The output line a quoted line stands for: the same text, "…" standing for any."""
    return re.compile(".*".join(re.escape(part) for part in quoted.split("…")))


BLOCKS = {page.name: runnable(page) for page in PAGES if runnable(page)}


def test_the_pages_mark_runnable_examples() -> None:
    assert set(BLOCKS) >= {"README.md", "tour.md"}


def test_a_quoted_line_matches_what_changes_and_nothing_else() -> None:
    pattern = quoted_line_pattern("kmodel check: seed 54, 76 examples in … s; digest 6b3f")
    assert pattern.fullmatch("kmodel check: seed 54, 76 examples in 11.1 s; digest 6b3f")
    assert not pattern.fullmatch("kmodel check: seed 54, 77 examples in 11.1 s; digest 6b3f")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "kmodel").symlink_to(Path(sys.executable).parent / "kmodel")
    for folder in ("examples", "tests"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    return tmp_path


@pytest.mark.parametrize("page", sorted(BLOCKS))
def test_a_pages_runnable_examples_do_what_it_shows(page: str, scratch: Path) -> None:
    # kmodel names itself in what it prints as it was called: `.venv/bin/kmodel` (README's reader, nothing on the
    # PATH) or `kmodel` (the tour's, the venv on the PATH); so the PATH holds a kmodel only for the latter
    bare = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "kmodel").exists()]
    env = {k: v for k, v in os.environ.items() if k != "KMODEL_TRACEBACK"}
    for c in (c for block in BLOCKS[page] for c in block):
        on_path = [str(scratch / ".venv" / "bin")] if c.command.startswith("kmodel ") else []
        run = subprocess.run(["bash", "-c", c.command], cwd=scratch, capture_output=True, text=True, timeout=900,
                             env={**env, "PATH": os.pathsep.join(on_path + bare)})
        where = f"{c.page}:{c.line}: `{c.command}`"
        assert run.returncode == c.exit, f"{where} exited {run.returncode}, the page says {c.exit}\n{run.stderr[-2000:]}"
        printed = (run.stdout + run.stderr).splitlines()
        missing = [q for q in c.quoted if not any(quoted_line_pattern(q).fullmatch(p) for p in printed)]
        assert not missing, f"{where}: the page quotes lines it does not print:\n  " + "\n  ".join(missing) + \
            "\nit printed:\n  " + "\n  ".join(printed[-20:])
