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
