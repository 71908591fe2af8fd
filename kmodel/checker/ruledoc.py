"""The docs' tables of rules, generated from the rules' docstrings.

A rule family that names its `docs_columns` (kmodel.checker.rulebook.RuleFamily) documents each of its rules
in the rule's docstring, one field per column, each starting a line with the column's name and a colon:

    @rule(replicas=REPLICAS)
    def scale_statefulset(self, replicas: int) -> None:
        \"\"\"Draws: 0-3 replicas
        Does: `kubectl scale statefulset db` (`scale-statefulset`; 404 while there is no set)
        Shrinks to: scale to 0\"\"\"

Text before the first field is the rule's own note, not in the table. A page of docs/ holds a family's table
between a marker naming the families it lists, in that order, and an end marker:

    <!-- rules: WorkloadRules PatchRules -->
    ... (generated)
    <!-- end rules -->

`python -m kmodel.checker.ruledoc` rewrites every such table in docs/ (tests/docs/test_generated.py checks that
each is what this module prints now).
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from kmodel.checker.rulebook import RuleFamily, rule_families, rule_names

#: a page's generated table: the marker naming its families, the table, the end marker
TABLE = re.compile(r"<!-- rules: (?P<families>[\w ]+) -->\n(?P<table>.*?)<!-- end rules -->", re.S)
DOCS = Path(__file__).resolve().parents[2] / "docs"


def rule_fields(family: type[RuleFamily], name: str) -> dict[str, str]:
    """The docstring fields of a rule, by column (each field's lines joined by single spaces); ValueError naming
    the rule and the column when one of its family's columns is missing."""
    doc = inspect.cleandoc(getattr(family, name).__doc__ or "")
    fields: dict[str, list[str]] = {}
    current = None
    for line in doc.splitlines():
        heading = next((c for c in family.docs_columns if line.startswith(f"{c}: ")), None)
        if heading is not None:
            current = fields.setdefault(heading, [])
            line = line[len(heading) + 2:]
        if current is not None:
            current.append(line)
    missing = [c for c in family.docs_columns if c not in fields]
    if missing:
        raise ValueError(f"{family.__name__}.{name}: its docstring has no {', '.join(missing)} field: start a "
                         f"line of it with '{missing[0]}: ' (kmodel/checker/ruledoc.py)")
    return {c: " ".join(" ".join(lines).split()) for c, lines in fields.items()}


def rules_table(families: list[type[RuleFamily]]) -> str:
    """The markdown table of the rules of `families` (which share their columns), in definition order."""
    columns = families[0].docs_columns
    if any(f.docs_columns != columns for f in families):
        raise ValueError(f"one table lists families of the same columns: {[f.__name__ for f in families]}")
    lines = ["| Rule | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for family in families:
        for name in sorted(rule_names(family), key=list(vars(family)).index):
            fields = rule_fields(family, name)
            lines.append(f"| `{name}` | " + " | ".join(fields[c] for c in columns) + " |")
    return "\n".join(lines) + "\n"


def _family(name: str) -> type[RuleFamily]:
    found = {f.__name__: f for f in rule_families()}
    if name not in found:
        raise ValueError(f"no rule family {name!r}; known: {', '.join(sorted(found))}")
    return found[name]


def generated_page(text: str) -> str:
    """`text` (a page of docs/) with each of its rule tables as the rules document them now."""
    return TABLE.sub(lambda m: f"<!-- rules: {m['families']} -->\n"
                     + rules_table([_family(n) for n in m["families"].split()]) + "<!-- end rules -->", text)


def tabled_families(docs: Path = DOCS) -> dict[str, str]:
    """Family name -> the page of docs/ that holds its table."""
    return {name: page.name for page in sorted(docs.glob("*.md"))
            for m in TABLE.finditer(page.read_text()) for name in m["families"].split()}


def main() -> int:
    """Rewrite every rule table in docs/."""
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        new = generated_page(text)
        if new != text:
            page.write_text(new)
            print(f"rewrote {page.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
