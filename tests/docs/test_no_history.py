"""README, docs/ and the code's comments and docstrings state current facts and rules, never the history of
the work: no dates, no numbered or named work sessions, no "found by campaign seed N". Who found a bug and
when belongs in the regression trace's `note` and in git. The checker's class `Session` (and the sessions it
runs, in code) are allowed: only the work-history use of the word is not."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
#: a calendar date (an RFC 3339 timestamp, "...T00:00:00Z", is a value the model prints, not a date of work)
DATE = re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d(?!T\d)")
MONTH_YEAR = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|"
                        r"December) (19|20)\d\d\b")
ORDINAL = (r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
           r"fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\d+(st|nd|rd|th)|"
           r"previous|earlier|work)")
#: "session" as a period of work: "the sixteenth session", "a previous session", "session 12"
WORK_SESSION = re.compile(rf"\b{ORDINAL} sessions?\b|\bsessions? \d+\b", re.I)
#: who found what, when: that is the trace note's and git's to say
FOUND_BY = re.compile(r"campaign seed \d+|found by `?kmodel|found by (a |the )?campaign|the checker found", re.I)
#: documents that are not in the repository
MISSING_DOCS = re.compile(r"DESIGN\.md|\bissue \d+\b|shared/reference")

CODE_RULES = (DATE, MONTH_YEAR, WORK_SESSION, FOUND_BY, MISSING_DOCS)
#: in prose for readers, the word "session" at all, unless it names the class or its module (`Session`,
#: `Session.dispose`, `kmodel.checker.session`)
ANY_SESSION = re.compile(r"(?<![`.])\bsessions?\b|(?<!`)\bSession\b(?!\.|`)", re.I)
DOC_RULES = (DATE, MONTH_YEAR, ANY_SESSION, FOUND_BY, MISSING_DOCS)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def code_files() -> list[Path]:
    return sorted(p for d in ("kmodel", "invariants", "benchmarks") for p in (ROOT / d).rglob("*.py"))


def comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                yield body[0].lineno, body[0].value.value
        # attribute docs: a `#:` comment is a comment; a string right after an assignment is a docstring too
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for before, after in zip(node.body, node.body[1:]):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                    yield after.lineno, after.value.value


def offences(text: str, rules: tuple[re.Pattern, ...]) -> list[str]:
    return [m.group(0) for rule in rules for m in rule.finditer(text)]


def test_readme_and_docs_tell_no_history() -> None:
    found = [f"{p.relative_to(ROOT)}:{n}: {hit!r}" for p in doc_files()
             for n, line in enumerate(p.read_text().splitlines(), 1) for hit in offences(line, DOC_RULES)]
    assert not found, "dates or work history in the documentation:\n" + "\n".join(found)


def test_code_comments_tell_no_history() -> None:
    found = [f"{p.relative_to(ROOT)}:{n}: {hit!r}" for p in code_files()
             for n, text in comments_and_docstrings(p) for hit in offences(" ".join(text.split()), CODE_RULES)]
    assert not found, "dates or work history in comments or docstrings:\n" + "\n".join(found)


def test_the_rules_catch_what_they_are_for() -> None:
    assert offences("measured on 2026-12-01", CODE_RULES)
    assert offences("the roles added in December 2026", CODE_RULES)
    assert offences("Since the sixteenth session campaigns", CODE_RULES)
    assert offences("found by `kmodel check --profile campaign --seed 3`", CODE_RULES)
    assert offences("campaign seed 5 with every fix failed", CODE_RULES)
    assert offences("see DESIGN.md, principle 5", CODE_RULES)
    assert offences("each example's session is freed", DOC_RULES)
    assert not offences("a session's digest (kmodel.checker.session.Session)", CODE_RULES)
    assert not offences("Timestamps count from 2024-01-01T00:00:00Z", CODE_RULES)
    assert not offences("`Session.dispose` frees it; a `Session` applies each action", DOC_RULES)
    assert not offences("`kmodel.checker.session.all_invariants`", DOC_RULES)
