"""The docs' claims about seeds (benchmarks/seed_claims.py): docs/seeds.md lists exactly those claims as the script
writes them, the cheap ones still hold (re-run here), and no page names a seed in its prose without linking the
claim that is checked."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from seed_claims import CLAIMS, PAGE, expectation, measured_on_page, render, run  # noqa: E402
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: inline code naming a seed: a `kmodel check` command with --seed, or `--seed N` alone
SEED_CODE = re.compile(r"`((?:\.venv/bin/)?kmodel check [^`]*--seed \d+[^`]*|--seed \d+)`")


def test_the_page_lists_exactly_the_claims_as_the_script_writes_them() -> None:
    page = PAGE.read_text()
    assert [c.id for c in CLAIMS] == re.findall(r"^## (\S+)$", page, flags=re.M)
    assert page == render(measured_on_page(page)), \
        "docs/seeds.md is not what benchmarks/seed_claims.py writes: run it with --write (and --only the claims you changed)"


def _prose(path: Path) -> list[tuple[int, str]]:
    """The paragraphs of a page outside fenced blocks (commands shown as usage, outputs), each with the number of
    its first line; a table row is a paragraph of its own."""
    paragraphs: list[tuple[int, str]] = []
    fenced, start, lines = False, 0, []
    for n, line in enumerate([*path.read_text().splitlines(), ""], 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            line = ""
        if fenced:
            continue
        if not line.strip() or line.startswith("|"):
            if lines:
                paragraphs.append((start, " ".join(lines)))
            lines = []
            if line.startswith("|"):
                paragraphs.append((n, line))
            continue
        if not lines:
            start = n
        lines.append(line)
    return paragraphs


def test_no_page_names_a_seed_without_linking_its_claim() -> None:
    commands = {cmd for claim in CLAIMS for cmd in claim.commands()}
    unlinked = []
    for path in DOCS:
        if path == PAGE:
            continue
        for n, line in _prose(path):
            for code in SEED_CODE.findall(line):
                command = code.replace(".venv/bin/", "")
                known = code.startswith("--seed") or command in commands
                if not known or "seeds.md" not in line:
                    unlinked.append(f"{path.relative_to(ROOT)}:{n}: `{code}`")
    assert not unlinked, ("a seed named in prose must be a claim of benchmarks/seed_claims.py, linked in the same "
                          "paragraph or table row (seeds.md#ID):\n  " + "\n  ".join(unlinked))


def test_the_link_check_sees_an_unlinked_seed(tmp_path: Path) -> None:
    assert SEED_CODE.findall("ends on a leak (`kmodel check --seed 7`)") == ["kmodel check --seed 7"]
    assert SEED_CODE.findall("`--seed 42` ends on") == ["--seed 42"]
    assert SEED_CODE.findall("`kmodel check --fix all`") == []


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.in_suite], ids=lambda c: c.id)
def test_a_claim_the_suite_runs_still_holds(claim) -> None:
    for command in claim.commands():
        outcome = run(command)
        assert outcome.holds(claim), f"{command}: {outcome.summary()} (docs/seeds.md#{claim.id} says it " \
                                     f"{expectation(claim)}); re-measure with benchmarks/seed_claims.py"
