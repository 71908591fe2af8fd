"""The Findings section of report.md and report.html: a keep-going run's distinct violations, known upstream bugs
apart from new findings.

`findings_view(report)` reads report.json's `keep_going` section (kmodel.checker.findings.keep_going_json) and
its violations; None for a run without --keep-going, which has no such section. `markdown_findings` and
`html_findings` render it: how many examples ended on a violation, then one table of the known upstream bugs
(each with the fix that takes it out, the `--fix` that turns it on) and one of the new findings, each row
pointing at its violation's section further down (numbered from 1, as the Violations section numbers them).
Pure functions of the report, as the rest of kmodel.report.render.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.report.markup import html_text as _e, md_code


@attrs.frozen
class FindingRow:
    number: int  # the violation's number in the Violations section (1-based)
    invariant: str
    fix: Optional[str]  # the known fix that takes it out; None: a new finding
    examples: int  # examples of the run that ended on it
    first_example: int
    trace: str


@attrs.frozen
class FindingsView:
    examples_violated: int
    examples_run: int
    known: tuple[FindingRow, ...]
    new: tuple[FindingRow, ...]

    @property
    def note(self) -> str:
        ended = "example" if self.examples_violated == 1 else "examples"
        return (f"The run kept going past each violation (--keep-going): {self.examples_violated:,} of "
                f"{self.examples_run:,} {ended} ended on one. Each distinct violation (its invariant, and the known "
                f"fix that takes it out, if any) is minimized and reported below: {len(self.known):,} known "
                f"upstream {'bug' if len(self.known) == 1 else 'bugs'}, {len(self.new):,} new "
                f"{'finding' if len(self.new) == 1 else 'findings'}.")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def findings_view(report: dict) -> Optional[FindingsView]:
    """The view of report.json's `keep_going` section, or None when the run did not keep going."""
    section = report.get("keep_going")
    if not isinstance(section, dict):
        return None
    rows = []
    for number, v in enumerate(report.get("violations") or [], start=1):
        if not isinstance(v, dict):
            continue
        fix = v.get("known_fix")
        rows.append(FindingRow(number, str(v.get("invariant", "?")), str(fix) if fix else None,
                               _int(v.get("examples")), _int(v.get("first_example")), str(v.get("trace", ""))))
    figures = report.get("figures") if isinstance(report.get("figures"), dict) else {}
    return FindingsView(_int(section.get("examples_violated")), _int(figures.get("examples_run")),
                        tuple(r for r in rows if r.fix), tuple(r for r in rows if not r.fix))


def markdown_findings(view: Optional[FindingsView]) -> list[str]:
    """The Findings section as Markdown lines (none without a view)."""
    if view is None:
        return []
    out = ["## Findings", "", view.note, ""]
    if view.known:
        out += ["### Known upstream bugs", "", "| Violation | Invariant | Taken out by | Examples | First | Trace |",
                "|---:|---|---|---:|---:|---|"]
        out += [f"| {r.number} | {md_code(r.invariant)} | {md_code('--fix ' + r.fix)} | {r.examples:,} | "
                f"{r.first_example:,} | {md_code(r.trace)} |" for r in view.known if r.fix]
        out.append("")
    out += ["### New findings", ""]
    if view.new:
        out += ["| Violation | Invariant | Examples | First | Trace |", "|---:|---|---:|---:|---|"]
        out += [f"| {r.number} | {md_code(r.invariant)} | {r.examples:,} | {r.first_example:,} | "
                f"{md_code(r.trace)} |" for r in view.new]
    else:
        out.append("None: every violation found is a known upstream bug that a known fix takes out.")
    out.append("")
    return out


def html_findings(view: Optional[FindingsView]) -> list[str]:
    """The Findings section as HTML lines (none without a view)."""
    if view is None:
        return []
    out = ['<section id="findings">', "<h2>Findings</h2>", f'<p class="note">{_e(view.note)}</p>']

    def link(r: FindingRow) -> str:
        return f'<a href="#violation-{r.number}">{r.number}</a>'

    if view.known:
        out += ["<h3>Known upstream bugs</h3>", "<table>",
                '<thead><tr><th class="num">Violation</th><th>Invariant</th><th>Taken out by</th>'
                '<th class="num">Examples</th><th class="num">First</th><th>Trace</th></tr></thead>', "<tbody>"]
        out += [f'<tr><td class="num">{link(r)}</td><td><code>{_e(r.invariant)}</code></td>'
                f'<td><code>--fix {_e(r.fix)}</code></td><td class="num">{r.examples:,}</td>'
                f'<td class="num">{r.first_example:,}</td><td><code>{_e(r.trace)}</code></td></tr>' for r in view.known]
        out += ["</tbody>", "</table>"]
    out.append("<h3>New findings</h3>")
    if view.new:
        out += ["<table>", '<thead><tr><th class="num">Violation</th><th>Invariant</th><th class="num">Examples</th>'
                '<th class="num">First</th><th>Trace</th></tr></thead>', "<tbody>"]
        out += [f'<tr class="warn"><td class="num">{link(r)}</td><td><code>{_e(r.invariant)}</code></td>'
                f'<td class="num">{r.examples:,}</td><td class="num">{r.first_example:,}</td>'
                f'<td><code>{_e(r.trace)}</code></td></tr>' for r in view.new]
        out += ["</tbody>", "</table>"]
    else:
        out.append('<p class="note">None: every violation found is a known upstream bug that a known fix takes '
                   "out.</p>")
    out.append("</section>")
    return out
