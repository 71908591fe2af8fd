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


def unlinked_seeds(paths: list[Path], commands: set[str]) -> list[str]:
    """`page:line: `code`` for each seed named in prose that is no claim's command, or whose paragraph (or table
    row) does not link seeds.md."""
    unlinked = []
    for path in paths:
        for n, line in _prose(path):
            for code in SEED_CODE.findall(line):
                known = code.startswith("--seed") or code.replace(".venv/bin/", "") in commands
                if not known or "seeds.md" not in line:
                    unlinked.append(f"{path.name}:{n}: `{code}`")
    return unlinked


def test_no_page_names_a_seed_without_linking_its_claim() -> None:
    commands = {cmd for claim in CLAIMS for cmd in claim.commands()}
    unlinked = unlinked_seeds([p for p in DOCS if p != PAGE], commands)
    assert not unlinked, ("a seed named in prose must be a claim of benchmarks/seed_claims.py, linked in the same "
                          "paragraph or table row (seeds.md#ID):\n  " + "\n  ".join(unlinked))


def test_the_link_check_sees_an_unlinked_seed(tmp_path: Path) -> None:
    assert SEED_CODE.findall("`kmodel check --fix all`") == []
    page = tmp_path / "page.md"
    page.write_text(
        "Seed 7 ends on a leak (`kmodel check --seed 7`, [claim](seeds.md#leak)).\n\n"  # linked, a claim: fine
        "`--seed 42` ends\non a leak.\n\n"  # no link in its paragraph
        "`kmodel check --seed 9` passes ([claim](seeds.md#x)).\n\n"  # linked, but no claim's command
        "| row | `--seed 3` |\n| next | [seeds](seeds.md) |\n\n"  # a table row links only itself
        "```sh\nkmodel check --seed 5\n```\n")  # a fenced usage block is not prose
    assert unlinked_seeds([page], {"kmodel check --seed 7"}) == [
        "page.md:3: `--seed 42`", "page.md:6: `kmodel check --seed 9`", "page.md:8: `--seed 3`"]


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.in_suite], ids=lambda c: c.id)
def test_a_claim_the_suite_runs_still_holds(claim) -> None:
    for command in claim.commands():
        outcome = run(command)
        assert outcome.holds(claim), f"{command}: {outcome.summary()} (docs/seeds.md#{claim.id} says it " \
                                     f"{expectation(claim)}); re-measure with benchmarks/seed_claims.py"
