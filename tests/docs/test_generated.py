"""The generated reference pages match what their generators print now: a parser option, an invariant or a
sometimes property changed without regenerating its page fails here, with the command that regenerates it."""

from __future__ import annotations

from pathlib import Path

from kmodel.checker.command import invariants_markdown
from kmodel.clidoc import commands_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_commands_page_matches_the_parsers() -> None:
    assert (DOCS / "commands.md").read_text() == commands_markdown(), \
        "docs/commands.md is stale: regenerate it with `python -m kmodel.clidoc > docs/commands.md`"


def test_invariants_page_matches_the_registry() -> None:
    assert (DOCS / "invariants.md").read_text() == invariants_markdown(), \
        "docs/invariants.md is stale: regenerate it with `kmodel invariants --markdown > docs/invariants.md`"


def test_commands_page_names_every_option() -> None:
    page = (DOCS / "commands.md").read_text()
    for option in ("--examples", "--profile", "--lenient", "--markdown", "--fault", "--as", "--cost-nodes"):
        assert f"`{option}" in page


def test_invariants_page_names_every_invariant_and_sometimes_property() -> None:
    from kmodel.checker.session import all_invariants

    from kmodel.invariants.sometimes import registered_sometimes

    page = (DOCS / "invariants.md").read_text()
    for name in [inv.name for inv in all_invariants()] + [p.name for p in registered_sometimes()]:
        assert f"| `{name}` |" in page


def test_kmodel_invariants_markdown_prints_the_page(capsys) -> None:
    from kmodel.cli import main

    assert main(["invariants", "--markdown"]) == 0
    assert capsys.readouterr().out == invariants_markdown()


def test_performance_page_is_the_benchmarks_output_naming_the_machine() -> None:
    """docs/performance.md is written by benchmarks/performance_page.py (its figures are measured, so the test
    cannot regenerate them): its text is the script's, it names the machine, and every quick benchmark ran."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("performance_page", DOCS.parent / "benchmarks" / "performance_page.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (DOCS / "performance.md").read_text()
    assert page.startswith(script.HEAD.strip() + "\n"), \
        "docs/performance.md is stale: regenerate it with `python benchmarks/performance_page.py`"
    for row in ("| platform |", "| CPU |", "| cores |", "| Python |", "| Hypothesis |"):
        assert row in page
    for name, args, _ in script.QUICK:
        assert f"$ python benchmarks/{name} {' '.join(args)}".rstrip() in page
    assert "(exit " not in page, "a benchmark failed while the page was generated"


def test_rule_tables_match_the_rules_docstrings() -> None:
    from kmodel.checker.ruledoc import generated_page

    stale = [p.name for p in sorted(DOCS.glob("*.md")) if generated_page(p.read_text()) != p.read_text()]
    assert not stale, f"rule tables are stale in {stale}: regenerate them with `python -m kmodel.checker.ruledoc`"


def test_every_documented_family_has_a_table_and_every_rule_a_row() -> None:
    from kmodel.checker.rulebook import rule_families, rule_names
    from kmodel.checker.ruledoc import rule_fields, tabled_families

    tabled = tabled_families(DOCS)
    for family in rule_families():
        if family.docs_columns:
            assert family.__name__ in tabled, \
                f"{family.__name__} has docs_columns but no page holds `<!-- rules: {family.__name__} -->`"
            page = (DOCS / tabled[family.__name__]).read_text()
            for name in rule_names(family):
                assert f"| `{name}` | " in page
                assert all(rule_fields(family, name).values())


def test_a_rule_missing_a_column_is_named() -> None:
    import pytest

    from kmodel.checker.rulebook import RuleFamily, rule
    from kmodel.checker.ruledoc import rule_fields, rules_table

    class Documented(RuleFamily):
        docs_columns = ("Draws", "Does")

        @rule()
        def poke(self) -> None:
            """A note for the code's reader.

            Draws: nothing
            Does: `kubectl get`,
            twice"""

        @rule()
        def prod(self) -> None:
            """Draws: nothing"""

    assert rule_fields(Documented, "poke") == {"Draws": "nothing", "Does": "`kubectl get`, twice"}
    with pytest.raises(ValueError, match=r"Documented.prod: its docstring has no Does field"):
        rules_table([Documented])
