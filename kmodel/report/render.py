"""report.md and report.html from one view of a check's results.

Both files are rendered from the same `ReportView`, so they show the same things in the same order: the
summary, whose verdict links to the violations, then each violation (a failing report opens on what failed),
then the tables of what was checked: invariants, rules, situations reached, and the reach (a `--reach` run's:
counts per package, then the branch outcomes never taken). Each violation shows: its invariant and message; the known fix
that takes it out (and the fixes of that invariant that do not); the steps, as a table of what each changed in
the cluster when the story recorded it (else as a numbered list), numbered from 1 as `kmodel replay` numbers
them; the Mermaid sequence diagram, drawing only the messages that touch what the violation names
(kmodel.report.focus); the final state of those objects and components; the replay command. The renderers are pure functions of the
report dict and the stories: no clock, no environment, so the same inputs give byte-identical files.

Markdown escaping: free text goes through `md_inline` (backslash before Markdown punctuation, one line), code
through `md_code` / `md_fence` (a fence longer than any backtick run inside). HTML escaping: everything
through `html.escape`. The HTML loads nothing from outside its folder: the CSS is inline, fonts are the
system's, and Mermaid comes from the report folder (kmodel.report.offline); it only upgrades the diagram text,
which reads as plain text without it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Sequence

import attrs

from kmodel.report.findings import FindingsView, findings_view, html_findings, markdown_findings
from kmodel.report.focus import touches
from kmodel.report.markup import html_text as _e, md_code, md_inline
from kmodel.report.mermaid import sequence_diagram
from kmodel.report.offline import MERMAID_JS
from kmodel.report.story import FixVerdict, ObjectState, StepChanges, ViolationStory

#: the most items a cell of the changes table lists (the ones the violation names always are)
MAX_CELL_ITEMS = 6



# --------------------------------------------------------------------------------------------- the view


@attrs.frozen
class InvariantRow:
    name: str
    kind: str
    checks: str
    violations: str
    principle: str
    guarantee: str
    violated: bool
    unchecked: bool


@attrs.frozen
class RuleRow:
    name: str
    fired: str
    never: bool


@attrs.frozen
class SometimesRow:
    name: str
    examples: str  # examples that reached it
    first: str  # the first example that did ("–": none)
    never: bool
    principle: str
    situation: str


@attrs.frozen
class Cell:
    """One cell of the changes table: its items (object refs, component names), the ones the violation names
    first; how many more were left out of it; and `events`, the Event objects among them, counted only."""

    items: tuple[tuple[str, bool], ...] = ()   # (text, named by the violation)
    more: int = 0
    events: int = 0

    @property
    def empty(self) -> bool:
        return not (self.items or self.more or self.events)

    def text(self) -> str:
        parts = [item for item, _ in self.items]
        if self.more:
            parts.append(f"{self.more:,} more")
        if self.events:
            parts.append(_plural(self.events, "event"))
        return ", ".join(parts)


@attrs.frozen
class ChangeRow:
    step: int          # 1-based, as printed
    action: str
    time: str          # logical time after the step
    messages: int
    created: Cell
    updated: Cell
    deleted: Cell
    down: Cell
    partitions: Cell


@attrs.frozen
class ViolationView:
    number: int
    invariant: str
    message: str
    trace_path: str
    steps: tuple[str, ...]
    step_messages: tuple[int, ...]      # messages delivered during each step
    before: int                         # messages delivered before step 1
    after: int                          # messages delivered after the last step
    diagram: Optional[str]              # None when no story was given for this violation
    arrows_shown: int                   # arrows drawn in the diagram
    messages_left_out: int              # delivered messages the diagram leaves out (no story: the step count)
    replay_command: str
    shrink_note: str = ""               # how the trace was shrunk (report.json's `shrink`), "" if not known
    topology: str = ""                  # the topology the example drew (report.json's `topology`), "" if fixed
    changes: tuple[ChangeRow, ...] = ()  # what each step changed (empty: not recorded)
    focus: tuple[str, ...] = ()         # what the violation names: endpoints, then objects
    focused: bool = False               # the diagram draws only the messages that touch `focus`
    final_states: tuple[ObjectState, ...] = ()
    final_components: tuple[tuple[str, str], ...] = ()   # (endpoint named, "up" or "down") at the end
    fixes: tuple[FixVerdict, ...] = ()


@attrs.frozen
class ReachRow:
    package: str
    lines: str  # "120 of 150 (80 %)"
    outcomes: str
    never: int  # outcomes never taken


@attrs.frozen
class ReachView:
    note: str
    rows: tuple[ReachRow, ...]  # per package, then the total
    never: tuple[tuple[str, tuple[str, ...]], ...]  # (package, "file:line -> to  source" of each never taken)


@attrs.frozen
class ReportView:
    failed: bool
    headline: str
    summary: tuple[tuple[str, str, bool], ...]   # (label, value, value is code)
    invariants: tuple[InvariantRow, ...]
    invariants_note: str
    has_principle: bool
    has_guarantee: bool
    rules: tuple[RuleRow, ...]
    rules_note: str
    violations: tuple[ViolationView, ...]
    sometimes: tuple[SometimesRow, ...] = ()
    sometimes_note: str = ""
    findings: Optional[FindingsView] = None  # a keep-going run's (kmodel.report.findings)
    reach: Optional[ReachView] = None   # report.json's reach section (`kmodel check --reach`), None without


def _count(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _as_run(key: str, figures: dict) -> str:
    """What a run did beside its budget: the examples and steps that ran (a violation ends a run early)."""
    if key == "examples" and isinstance(figures.get("examples_run"), int):
        return f" budgeted, {figures['examples_run']:,} run"
    if key == "steps" and isinstance(figures.get("steps_run"), int):
        return f" at most per example, {figures['steps_run']:,} run in all"
    return ""


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _plural(n: int, word: str, plural: Optional[str] = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def shrink_note(shrink: Any) -> str:
    """One sentence on how a violation was shrunk, from report.json's `shrink` ("" if it is missing or bad)."""
    if not isinstance(shrink, dict):
        return ""
    n = {key: _as_int(shrink.get(key)) for key in ("found_in", "examples", "events", "events_budget",
                                                    "shrunk_actions", "replays", "replays_budget", "actions")}
    if not n["events_budget"]:  # a keep-going run's finding: Hypothesis never heard of it (kmodel.checker.findings)
        text = (f"Found in example {n['found_in']:,} of a run that kept going (Hypothesis did not shrink it), "
                f"with {_plural(n['shrunk_actions'], 'action')}")
    else:
        text = (f"Found in example {n['found_in']:,}. Hypothesis shrank it in "
                f"{_plural(n['examples'], 'more example')} ({n['events']:,} of at most {n['events_budget']:,} model "
                f"events) to {_plural(n['shrunk_actions'], 'action')}")
    if shrink.get("budget_reached") is True:
        text += ", stopping when those events ran out (a longer shrink might find a shorter trace)"
    simplified = [str(s) for s in shrink.get("simplified") or () if isinstance(s, str)]
    if n["replays"]:
        how = "without whole actions and with simpler arguments" if simplified else "without whole actions"
        text += (f"; replaying it {how} ({_plural(n['replays'], 'replay')} of at most "
                 f"{n['replays_budget']:,}) left {_plural(n['actions'], 'action')}")
        text += f", simplified: {'; '.join(simplified)}." if simplified else "."
    else:
        text += "; no action could be cut from it by replay."
    return text


def build_view(report: dict, stories: Sequence[ViolationStory], *, max_arrows: int = 60) -> ReportView:
    """Everything both files show, computed once."""
    raw_violations = list(report.get("violations") or [])
    notes = {str(entry.get("trace", "")): shrink_note(entry.get("shrink")) for entry in raw_violations
             if isinstance(entry, dict)}
    views: list[ViolationView] = []
    story_traces = {story.trace_path for story in stories}
    topologies = {str(entry.get("trace", "")): str(entry.get("topology", "")) for entry in raw_violations
                  if isinstance(entry, dict)}
    for story in stories:
        n = len(story.steps)
        per_step = [0] * n
        before = after = 0
        for step, *_ in story.messages:
            if step < 0:
                before += 1
            elif step >= n:
                after += 1
            else:
                per_step[step] += 1
        focus = (*story.focus_endpoints, *story.focus_objects)
        keep = None
        if focus:
            def keep(src: str, dst: str, label: str, story: ViolationStory = story) -> bool:
                return touches(src, dst, label, story.focus_endpoints, story.focus_objects)
        diagram, shown, left_out = sequence_diagram(
            story.steps, story.messages, story.invariant, story.message, max_arrows=max_arrows, keep=keep)
        focused = keep is not None and any(keep(src, dst, label) for _, src, dst, label in story.messages)
        down_at_end = set(story.changes[-1].down) if story.changes else set()
        views.append(ViolationView(
            number=len(views) + 1, invariant=story.invariant, message=story.message,
            trace_path=story.trace_path, steps=story.steps, step_messages=tuple(per_step), before=before,
            after=after, diagram=diagram, arrows_shown=shown, messages_left_out=left_out,
            replay_command=story.replay_command, shrink_note=notes.get(story.trace_path, ""),
            topology=topologies.get(story.trace_path, ""),
            changes=tuple(change_row(c, story.steps[c.step], per_step[c.step],
                                     set(story.focus_objects) | set(story.focus_endpoints))
                          for c in on_the_steps_that_asked(story.changes) if 0 <= c.step < n),
            focus=focus, focused=focused, final_states=story.final_states,
            final_components=tuple((e, "down" if e in down_at_end else "up") for e in story.focus_endpoints
                                   if story.changes),
            fixes=story.fixes))
    for entry in raw_violations:
        # A violation the checker recorded but could not tell as a story: show what report.json knows.
        trace = str(entry.get("trace", ""))
        if trace and trace in story_traces:
            continue
        if not trace and any(v.invariant == entry.get("invariant") for v in views):
            continue
        count = _as_int(entry.get("steps"))
        views.append(ViolationView(
            number=len(views) + 1, invariant=str(entry.get("invariant", "?")),
            message=str(entry.get("message", "")), trace_path=trace, steps=(), step_messages=(),
            before=0, after=0, diagram=None, arrows_shown=0, messages_left_out=count,
            replay_command=f"kmodel replay {trace}" if trace else "", shrink_note=shrink_note(entry.get("shrink")),
            topology=str(entry.get("topology", ""))))

    failed = bool(views)
    violated_names = []
    for v in views:
        if v.invariant not in violated_names:
            violated_names.append(v.invariant)
    if failed:
        headline = f"FAIL: {_plural(len(views), 'violation')} ({', '.join(violated_names)})"
    else:
        headline = "PASS: no invariant violated"

    summary: list[tuple[str, str, bool]] = [("Verdict", headline, False)]
    figures = report.get("figures") if isinstance(report.get("figures"), dict) else {}
    for key, label, code in (("seed", "Seed", True), ("examples", "Examples", False), ("steps", "Steps", False),
                             ("trace_digest", "Trace digest", True), ("variant", "Variant", True),
                             ("profile", "Profile", True)):
        if key in report and report[key] is not None:
            summary.append((label, _count(report[key]) + _as_run(key, figures), code))
    fixes = report.get("fixes")
    if isinstance(fixes, list) and fixes:  # only when some are on: the default model has none
        summary.append(("Fixes on", ", ".join(str(f) for f in fixes), True))
    if figures.get("model_events") is not None:
        summary.append(("Model events", _count(figures["model_events"]), False))
    if report.get("duration_s") is not None:
        duration = report["duration_s"]
        text = f"{duration:.1f} s" if isinstance(duration, (int, float)) else str(duration)
        summary.append(("Duration", text, False))
    if report.get("kmodel") is not None:
        summary.append(("kmodel", str(report["kmodel"]), True))
    if report.get("hypothesis") is not None:  # what a seed explores depends on it (constraints.txt)
        summary.append(("Hypothesis", str(report["hypothesis"]), True))
    if report.get("config") is not None:
        config = report["config"]
        text = json.dumps(config, sort_keys=True, ensure_ascii=False) if isinstance(config, (dict, list)) \
            else str(config)
        summary.append(("Configuration", text, True))

    rows = []
    for inv in report.get("invariants") or []:
        checks, violations = inv.get("checks"), inv.get("violations")
        rows.append(InvariantRow(
            name=str(inv.get("name", "?")), kind=str(inv.get("kind", "")), checks=_count(checks),
            violations=_count(violations), principle=str(inv.get("principle") or ""),
            guarantee=str(inv.get("guarantee") or ""),
            violated=_as_int(violations) > 0 or str(inv.get("name")) in violated_names,
            unchecked=checks is not None and _as_int(checks) == 0))
    n_violated = sum(r.violated for r in rows)
    n_unchecked = sum(r.unchecked for r in rows)
    invariants_note = f"{_plural(len(rows), 'invariant')}: {n_violated:,} violated"
    if n_unchecked:
        invariants_note += f", {n_unchecked:,} never checked"
    invariants_note += "."

    rules = [RuleRow(name=str(name), fired=_count(times), never=_as_int(times) == 0)
             for name, times in sorted((report.get("rules") or {}).items(), key=lambda kv: str(kv[0]))]
    n_never = sum(r.never for r in rules)
    rules_note = f"{_plural(len(rules), 'rule')}: " + (
        f"{n_never:,} never fired." if n_never else "every one fired.")

    situations = []
    for entry in report.get("sometimes") or []:
        if not isinstance(entry, dict):
            continue
        reached = _as_int(entry.get("examples"))
        situations.append(SometimesRow(
            name=str(entry.get("name", "?")), examples=_count(reached),
            first=_count(entry.get("first_example")) if reached else "–", never=reached == 0,
            principle=str(entry.get("principle", "")), situation=str(entry.get("situation", ""))))
    n_missed = sum(r.never for r in situations)
    sometimes_note = (f"{_plural(len(situations), 'sometimes property', 'sometimes properties')}, each a situation "
                      "the examples should reach (after their shared warm-up): " +
                      (f"{n_missed:,} never reached: no invariant was checked in {'that situation' if n_missed == 1 else 'those situations'}."
                       if n_missed else "every one reached."))

    return ReportView(
        failed=failed, headline=headline, summary=tuple(summary), invariants=tuple(rows),
        invariants_note=invariants_note, has_principle=any(r.principle for r in rows),
        has_guarantee=any(r.guarantee for r in rows), rules=tuple(rules), rules_note=rules_note,
        sometimes=tuple(situations), sometimes_note=sometimes_note if situations else "",
        violations=tuple(views), findings=findings_view(report), reach=reach_view(report.get("reach")))


#: how an object moved to the row of the kubectl step that asked for it says when it landed
LANDED = "(landed in step {step})"


def on_the_steps_that_asked(changes: Sequence[StepChanges]) -> list[StepChanges]:
    """The steps' changes, each object a kubectl command of an earlier step changed (`StepChanges.landed`) moved
    to that step's row and marked with the step it landed in: an apply step shows what it created, rather than
    the step during which the model's kubectl got its request through."""
    columns = {c.step: {"created": list(c.created), "updated": list(c.updated), "deleted": list(c.deleted)}
               for c in changes}
    for c in changes:
        for ref, sent in c.landed:
            for name, items in columns[c.step].items():
                if ref in items and sent in columns:
                    items.remove(ref)
                    columns[sent][name].append(f"{ref} {LANDED.format(step=c.step + 1)}")
    return [attrs.evolve(c, **columns[c.step]) for c in changes]


def _change_cell(items: Sequence[str], named: set[str], *, count_events: bool = False,
                 most: Optional[int] = MAX_CELL_ITEMS) -> Cell:
    events = [i for i in items if count_events and i.startswith("events/")]
    rest = [i for i in items if i not in set(events)]
    first = [i for i in rest if i.split(" ", 1)[0] in named]  # a ref, or a ref and when it landed
    others = [i for i in rest if i.split(" ", 1)[0] not in named]
    room = len(others) if most is None else max(most - len(first), 0)
    shown = [(i, True) for i in first] + [(i, False) for i in others[:room]]
    return Cell(tuple(shown), len(others) - min(room, len(others)), len(events))


def _components(names: Sequence[str], named: set[str]) -> Cell:
    """Component names, those sharing a prefix written once when three or more do: controller/{a, b, c}."""
    groups: dict[str, list[str]] = {}
    for name in names:
        head, slash, _ = name.partition("/")
        groups.setdefault(head + slash if slash else name, []).append(name)
    items = []
    for head, members in groups.items():
        hit = any(m in named for m in members)
        if len(members) >= 3 and head.endswith("/"):
            items.append((head + "{" + ", ".join(m[len(head):] for m in members) + "}", hit))
        else:
            items.extend((m, m in named) for m in members)
    return Cell(tuple(items))


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


def change_row(change: StepChanges, action: str, messages: int, named: set[str],
               most: Optional[int] = MAX_CELL_ITEMS) -> ChangeRow:
    """One row of the changes table (the report's, and `kmodel replay --state`'s): step numbers from 1; at most
    `most` objects per cell besides those in `named` (None: all)."""
    return ChangeRow(
        step=change.step + 1, action=action, time=_seconds(change.time_ms), messages=messages,
        created=_change_cell(change.created, named, count_events=True, most=most),
        updated=_change_cell(change.updated, named, count_events=True, most=most),
        deleted=_change_cell(change.deleted, named, count_events=True, most=most),
        down=_components(change.down, named),
        partitions=Cell(tuple((side, any(e in named for e in side.split(", "))) for side in change.partitions)))


# VIOLATIONS_FIRST: both files put the violations right after the summary and the tables of what was checked
# (every invariant, rule and situation: thousands of pixels) after them, so that a failing report opens on what
# failed. The renderers write the tables where they always did, then move them after the violations.

#: what the changes table shows, said above it
CHANGES_NOTE = ("What each step changed in the cluster, as the difference between the state before and after it: "
                "objects by resource/namespace/name (the ones the violation names in bold; Events only counted), "
                "then the components down and the endpoints cut off by a partition after the step. An object "
                "created and deleted within one step is not shown. An object a kubectl step asked for is shown "
                "on that step's row, with the step its request landed in when that came later.")


def _diagram_note(v: ViolationView) -> str:
    total = v.before + v.after + sum(v.step_messages)
    text = "Components left to right as a request travels; a note marks each step."
    if v.focused:
        text += (f" Only the messages that touch what the violation names are drawn ({', '.join(v.focus)}); each "
                 f"step's note counts the others it delivered.")
    if v.messages_left_out:
        text += (f" {_plural(v.messages_left_out, 'message')} of {total:,} left out to keep it readable"
                 f" ({_plural(v.arrows_shown, 'arrow')} drawn); the "
                 f"{'table' if v.changes else 'numbered steps'} above {'lists' if v.changes else 'are'} "
                 f"{'every step' if v.changes else 'complete'}.")
    return text


def _step_suffix(count: int) -> str:
    return f" — {_plural(count, 'message')}" if count else ""


# --------------------------------------------------------------------------------------------- Markdown

def md_fence(text: str, info: str = "") -> list[str]:
    """A fenced code block holding `text` exactly."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *text.split("\n"), fence]


def _cell(text: str) -> str:
    # In a GFM table a "|" ends the cell even inside a code span unless it is backslash-escaped.
    return text.replace("|", "\\|") if "`" in text else text


def render_markdown(view: ReportView) -> str:
    out: list[str] = []
    add = out.append
    add(f"# kmodel check: {'FAIL' if view.failed else 'PASS'}")
    add("")
    add("## Summary")
    add("")
    add("| | |")
    add("|---|---|")
    for label, value, code in view.summary:
        shown = md_code(value) if code else md_inline(value)
        if label == "Verdict":
            shown = f"**[{shown}](#violations)**" if view.failed else f"**{shown}**"
        add(f"| {label} | {_cell(shown)} |")
    add("")
    tables_at = len(out)  # the tables of what was checked go after the violations (VIOLATIONS_FIRST)

    add("## Invariants")
    add("")
    add(md_inline(view.invariants_note))
    add("")
    if view.invariants:
        head = ["Status", "Invariant", "Kind", "Checks", "Violations"]
        align = ["---", "---", "---", "---:", "---:"]
        if view.has_principle:
            head.append("Principle"); align.append("---")
        if view.has_guarantee:
            head.append("Guarantee"); align.append("---")
        add("| " + " | ".join(head) + " |")
        add("|" + "|".join(align) + "|")
        for r in view.invariants:
            status = "**VIOLATED**" if r.violated else ("not checked" if r.unchecked else "ok")
            name = f"**{md_code(r.name)}**" if r.violated else md_code(r.name)
            violations = f"**{md_inline(r.violations)}**" if r.violated else md_inline(r.violations)
            checks = f"**{md_inline(r.checks)}**" if r.unchecked else md_inline(r.checks)
            cells = [status, name, md_inline(r.kind), checks, violations]
            if view.has_principle:
                cells.append(md_inline(r.principle))
            if view.has_guarantee:
                cells.append(md_inline(r.guarantee))
            add("| " + " | ".join(_cell(c) for c in cells) + " |")
        add("")

    add("## Rules")
    add("")
    add(md_inline(view.rules_note))
    add("")
    if view.rules:
        add("| Status | Rule | Times fired |")
        add("|---|---|---:|")
        for r in view.rules:
            status = "**NEVER FIRED**" if r.never else "ok"
            fired = f"**{md_inline(r.fired)}**" if r.never else md_inline(r.fired)
            add(f"| {status} | {_cell(md_code(r.name))} | {fired} |")
        add("")

    if view.sometimes:
        add("## Situations reached")
        add("")
        add(md_inline(view.sometimes_note))
        add("")
        add("| Status | Sometimes property | Examples | First | Principle | Situation |")
        add("|---|---|---:|---:|---|---|")
        for r in view.sometimes:
            status = "**NEVER REACHED**" if r.never else "ok"
            examples = f"**{md_inline(r.examples)}**" if r.never else md_inline(r.examples)
            add(f"| {status} | {_cell(md_code(r.name))} | {examples} | {md_inline(r.first)} | "
                f"{_cell(md_inline(r.principle))} | {_cell(md_inline(r.situation))} |")
        add("")

    if view.reach is not None:
        _markdown_reach(view.reach, add)

    tables = out[tables_at:]
    del out[tables_at:]
    out.extend(markdown_findings(view.findings))
    add("## Violations")
    add("")
    if not view.violations:
        add("None: every invariant held in every example.")
        add("")
    for v in view.violations:
        add(f"### {v.number}. {md_inline(v.invariant)}")
        add("")
        add(f"Invariant {md_code(v.invariant)} was violated:")
        add("")
        out.extend(md_fence(v.message or "(no message)", "text"))
        add("")
        if v.trace_path:
            add(f"Trace: {md_code(v.trace_path)}" + (f", {_plural(len(v.steps), 'step')}." if v.steps else "."))
            add("")
        if v.topology:
            add(md_inline(f"Ran on: {v.topology}."))
            add("")
        if v.shrink_note:
            add(md_inline(v.shrink_note))
            add("")
        if v.diagram is None:
            add(md_inline(f"No replay story was recorded for this violation ({_plural(v.messages_left_out, 'step')}"
                          " in the trace); replay the trace to see it step by step."))
            add("")
        else:
            _markdown_fixes(v, add, out)
            add("#### Steps")
            add("")
            if v.before:
                add(f"Before step 1: {_plural(v.before, 'message')}.")
                add("")
            if v.changes:
                add(md_inline(CHANGES_NOTE))
                add("")
                add("| Step | Action | Time | Messages | Created | Updated | Deleted | Down after | Cut off after |")
                add("|---:|---|---:|---:|---|---|---|---|---|")
                for row in v.changes:
                    cells = [str(row.step), md_inline(row.action), row.time, f"{row.messages:,}"]
                    cells += [_md_change_cell(c) for c in (row.created, row.updated, row.deleted, row.down,
                                                           row.partitions)]
                    add("| " + " | ".join(_cell(c) for c in cells) + " |")
            else:
                for i, (step, count) in enumerate(zip(v.steps, v.step_messages), start=1):
                    add(f"{i}. {md_inline(step)}{_step_suffix(count)}")
                if not v.steps:
                    add("(The trace has no steps.)")
            add("")
            if v.after:
                add(f"After step {len(v.steps)}: {_plural(v.after, 'message')}.")
                add("")
            add(f"Then {md_code(v.invariant)} was violated.")
            add("")
            add("#### Sequence diagram")
            add("")
            add(md_inline(_diagram_note(v)))
            add("")
            out.extend(md_fence(v.diagram, "mermaid"))
            add("")
            if v.final_components or v.final_states:
                add("#### Final state of what the violation names")
                add("")
                for endpoint, state in v.final_components:
                    add(f"- {md_code(endpoint)}: {state} at the end")
                if v.final_components:
                    add("")
                for state in v.final_states:
                    add(f"{md_code(state.ref)}, {md_inline(state.status)}:")
                    add("")
                    out.extend(md_fence(state.text, "yaml"))
                    add("")
        if v.replay_command:
            add("#### Replay")
            add("")
            out.extend(md_fence(v.replay_command, "sh"))
            add("")
    out.extend(tables)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _md_change_cell(cell: Cell) -> str:
    parts = [f"**{md_code(text)}**" if named else md_code(text) for text, named in cell.items]
    if cell.more:
        parts.append(f"{cell.more:,} more")
    if cell.events:
        parts.append(_plural(cell.events, "event"))
    return ", ".join(parts) or "–"


#: said when the story looked for a fix and none answers the invariant
NO_FIX = "No known fix that is not already on answers {invariant} (kmodel fixes lists them): a new bug, perhaps."


def _markdown_fixes(v: ViolationView, add: Any, out: list[str]) -> None:
    if not v.fixes:
        if v.changes:  # a story told in full looked for one
            add(md_inline(NO_FIX.format(invariant=v.invariant)))
            add("")
        return
    add("#### Known fix")
    add("")
    for fix in v.fixes:
        if fix.takes_out:
            add(f"**{md_code(fix.name)} takes this violation out**: {md_inline(fix.outcome)}.")
            add("")
            add(f"The bug: {md_inline(fix.bug)}.")
            add("")
            if fix.upstream:
                add(f"Upstream: {md_inline(fix.upstream)}.")
                add("")
            out.extend(md_fence(fix.command, "sh"))
            add("")
        else:
            add(f"{md_code(fix.name)}, also a fix of {md_code(v.invariant)}, does not take this one out: "
                f"{md_inline(fix.outcome)}.")
            add("")


# --------------------------------------------------------------------------------------------- HTML

_CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-soft: #f6f8fa;
  --bad: #b42318; --bad-bg: #fdecea; --warn: #8a5a00; --warn-bg: #fff4d6; --ok: #1a7f37; --ok-bg: #e6f4ea; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff; line-height: 1.5;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; display: flex; gap: 12px; align-items: center; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 0 0 8px; }
h4 { font-size: 14px; margin: 20px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
code { overflow-wrap: anywhere; }
td code.name { white-space: nowrap; }
.verdict { font-size: 14px; font-weight: 700; padding: 2px 10px; border-radius: 12px; }
.verdict.fail { color: #fff; background: var(--bad); }
.verdict.pass { color: #fff; background: var(--ok); }
.headline { margin: 0 0 8px; color: var(--muted); }
.note { color: var(--muted); margin: 4px 0 10px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { border: 1px solid var(--line); padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.summary { width: auto; min-width: 50%; }
table.summary th { width: 11em; }
tr.bad td { background: var(--bad-bg); }
tr.bad td.status, tr.bad td.hot { color: var(--bad); font-weight: 700; }
tr.warn td { background: var(--warn-bg); }
tr.warn td.status, tr.warn td.hot { color: var(--warn); font-weight: 700; }
td.status { white-space: nowrap; font-size: 12px; }
td.status.ok { color: var(--ok); }
.violation { border: 1px solid var(--line); border-left: 5px solid var(--bad); border-radius: 6px;
  padding: 14px 18px; margin: 16px 0 24px; }
pre { background: var(--bg-soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; white-space: pre; margin: 6px 0; }
pre.message { background: var(--bad-bg); border-color: #f3c4bf; white-space: pre-wrap; }
pre.mermaid { background: #fff; font-size: 12px; line-height: 1.35; max-height: 85vh; overflow: auto; }
ol.steps { margin: 4px 0; padding-left: 3.2em; }
ol.steps li { padding: 1px 0; }
ol.steps .count { color: var(--muted); font-size: 13px; }
p.then { margin: 6px 0 0; color: var(--bad); font-weight: 600; }
table.changes { font-size: 13px; table-layout: fixed; min-width: 1000px; }
table.changes td.action { min-width: 14em; }
table.changes code { font-size: 12px; overflow-wrap: normal; word-break: keep-all; }
div.scroll { overflow-x: auto; }
code.named { font-weight: 700; background: var(--bad-bg); padding: 0 3px; border-radius: 3px; }
span.more { color: var(--muted); }
.fix { border: 1px solid #b7dfc2; background: var(--ok-bg); border-radius: 6px; padding: 4px 14px; margin: 6px 0; }
.fix pre.cmd { background: #fff; }
ul.final { margin: 4px 0; }
ul.final .down { color: var(--bad); font-weight: 700; }
ul.final .up { color: var(--ok); }
details.object { margin: 4px 0; }
details.object summary { cursor: pointer; }
pre.yaml { max-height: 24em; overflow: auto; }
details.reach { margin: 4px 0; }
details.reach summary { cursor: pointer; }
pre.reach { max-height: 30em; overflow: auto; font-size: 12px; }
""".strip()

_MERMAID_SCRIPT = f"""<!-- The diagrams above are Mermaid text in pre.mermaid blocks, readable as plain text.
     {MERMAID_JS}, beside this file in the report folder (kmodel ships it: kmodel/report/offline.py), draws
     them, with no network. Without that file the text stays as it is. Nothing is loaded from outside. -->
<script src="{MERMAID_JS}"></script>
<script>
if (window.mermaid) {{
  // the diagram at its own size, scrolling inside its block (at most 85% of the window's height, so both
  // scroll bars are in sight), rather than shrunk to the page's width
  mermaid.initialize({{ startOnLoad: false, securityLevel: "strict", sequence: {{ wrap: true, useMaxWidth: false }} }});
  mermaid.run({{ querySelector: "pre.mermaid" }}).then(
    () => document.body.setAttribute("data-diagrams", "drawn"),
    (error) => document.body.setAttribute("data-diagrams", "failed: " + error));
}}
</script>"""


def _html_change_cell(cell: Cell) -> str:
    """Each item on a line of its own, breaking only after a "/" when the column is narrow."""
    parts = [("<code class=\"named\">" if named else "<code>") + _e(text).replace("/", "/<wbr>") + "</code>"
             for text, named in cell.items]
    if cell.more:
        parts.append(f'<span class="more">{cell.more:,} more</span>')
    if cell.events:
        parts.append(f'<span class="more">{_e(_plural(cell.events, "event"))}</span>')
    # one item a line: a step's changes read down the cell, as a state diff does
    return "<br>".join(parts) or '<span class="more">–</span>'


def _html_fixes(v: ViolationView, add: Any) -> None:
    if not v.fixes:
        if v.changes:  # a story told in full looked for one
            add(f'<p class="note">{_e(NO_FIX.format(invariant=v.invariant))}</p>')
        return
    add('<h4>Known fix</h4>')
    for fix in v.fixes:
        if fix.takes_out:
            add('<div class="fix">')
            add(f'<p><strong><code>{_e(fix.name)}</code> takes this violation out</strong>: {_e(fix.outcome)}.</p>')
            add(f"<p>The bug: {_e(fix.bug)}.</p>")
            if fix.upstream:
                add(f'<p class="note">Upstream: {_e(fix.upstream)}.</p>')
            add(f'<pre class="cmd"><code>{_e(fix.command)}</code></pre>')
            add("</div>")
        else:
            add(f'<p class="note"><code>{_e(fix.name)}</code>, also a fix of <code>{_e(v.invariant)}</code>, does '
                f"not take this one out: {_e(fix.outcome)}.</p>")


def render_html(view: ReportView) -> str:
    verdict = "FAIL" if view.failed else "PASS"
    out: list[str] = []
    add = out.append
    add("<!DOCTYPE html>")
    add('<html lang="en">')
    add("<head>")
    add('<meta charset="utf-8">')
    add('<meta name="viewport" content="width=device-width, initial-scale=1">')
    add(f"<title>kmodel check: {_e(view.headline)}</title>")
    add(f"<style>\n{_CSS}\n</style>")
    add("</head>")
    add("<body>")
    add("<main>")
    add(f'<h1>kmodel check <span class="verdict {verdict.lower()}">{verdict}</span></h1>')
    add(f'<p class="headline">{_e(view.headline)}</p>')

    add('<section id="summary">')
    add("<h2>Summary</h2>")
    add('<table class="summary">')
    for label, value, code in view.summary:
        shown = f"<code>{_e(value)}</code>" if code else _e(value)
        if label == "Verdict":
            target = "violation-1" if len(view.violations) == 1 else "violations"
            shown = f'<strong><a href="#{target}">{shown}</a></strong>' if view.failed else f"<strong>{shown}</strong>"
        add(f"<tr><th>{_e(label)}</th><td>{shown}</td></tr>")
    add("</table>")
    add("</section>")
    tables_at = len(out)  # the tables of what was checked go after the violations (VIOLATIONS_FIRST)

    add('<section id="invariants">')
    add("<h2>Invariants</h2>")
    add(f'<p class="note">{_e(view.invariants_note)}</p>')
    if view.invariants:
        add("<table>")
        head = '<tr><th>Status</th><th>Invariant</th><th>Kind</th><th class="num">Checks</th>' \
               '<th class="num">Violations</th>'
        if view.has_principle:
            head += "<th>Principle</th>"
        if view.has_guarantee:
            head += "<th>Guarantee</th>"
        add("<thead>" + head + "</tr></thead>")
        add("<tbody>")
        for r in view.invariants:
            cls, status = ("bad", "VIOLATED") if r.violated else (("warn", "not checked") if r.unchecked else ("", "ok"))
            row = f'<tr class="{cls}">' if cls else "<tr>"
            row += f'<td class="status{"" if cls else " ok"}">{status}</td><td><code class="name">{_e(r.name)}</code></td>'
            row += f"<td>{_e(r.kind)}</td>"
            row += f'<td class="num{" hot" if r.unchecked else ""}">{_e(r.checks)}</td>'
            row += f'<td class="num{" hot" if r.violated else ""}">{_e(r.violations)}</td>'
            if view.has_principle:
                row += f"<td>{_e(r.principle)}</td>"
            if view.has_guarantee:
                row += f"<td>{_e(r.guarantee)}</td>"
            add(row + "</tr>")
        add("</tbody>")
        add("</table>")
    add("</section>")

    add('<section id="rules">')
    add("<h2>Rules</h2>")
    add(f'<p class="note">{_e(view.rules_note)}</p>')
    if view.rules:
        add("<table>")
        add('<thead><tr><th>Status</th><th>Rule</th><th class="num">Times fired</th></tr></thead>')
        add("<tbody>")
        for r in view.rules:
            if r.never:
                add(f'<tr class="warn"><td class="status">NEVER FIRED</td><td><code>{_e(r.name)}</code></td>'
                    f'<td class="num hot">{_e(r.fired)}</td></tr>')
            else:
                add(f'<tr><td class="status ok">ok</td><td><code>{_e(r.name)}</code></td>'
                    f'<td class="num">{_e(r.fired)}</td></tr>')
        add("</tbody>")
        add("</table>")
    add("</section>")

    if view.sometimes:
        add('<section id="sometimes">')
        add("<h2>Situations reached</h2>")
        add(f'<p class="note">{_e(view.sometimes_note)}</p>')
        add("<table>")
        add('<thead><tr><th>Status</th><th>Sometimes property</th><th class="num">Examples</th>'
            '<th class="num">First</th><th>Principle</th><th>Situation</th></tr></thead>')
        add("<tbody>")
        for r in view.sometimes:
            status = ('<tr class="warn"><td class="status">NEVER REACHED</td>' if r.never
                      else '<tr><td class="status ok">ok</td>')
            examples = f'<td class="num hot">{_e(r.examples)}</td>' if r.never else f'<td class="num">{_e(r.examples)}</td>'
            add(f'{status}<td><code>{_e(r.name)}</code></td>{examples}<td class="num">{_e(r.first)}</td>'
                f'<td>{_e(r.principle)}</td><td>{_e(r.situation)}</td></tr>')
        add("</tbody>")
        add("</table>")
        add("</section>")

    if view.reach is not None:
        _html_reach(view.reach, add)

    tables = out[tables_at:]
    del out[tables_at:]
    out.extend(html_findings(view.findings))
    add('<section id="violations">')
    add("<h2>Violations</h2>")
    if not view.violations:
        add('<p class="note">None: every invariant held in every example.</p>')
    for v in view.violations:
        add(f'<article class="violation" id="violation-{v.number}">')
        add(f"<h3>{v.number}. {_e(v.invariant)}</h3>")
        add(f"<p>Invariant <code>{_e(v.invariant)}</code> was violated:</p>")
        add(f'<pre class="message">{_e(v.message or "(no message)")}</pre>')
        if v.trace_path:
            steps = f", {_e(_plural(len(v.steps), 'step'))}." if v.steps else "."
            add(f"<p>Trace: <code>{_e(v.trace_path)}</code>{steps}</p>")
        if v.topology:
            add(f"<p>Ran on: {_e(v.topology)}.</p>")
        if v.shrink_note:
            add(f'<p class="note">{_e(v.shrink_note)}</p>')
        if v.diagram is None:
            add(f'<p class="note">No replay story was recorded for this violation '
                f'({_e(_plural(v.messages_left_out, "step"))} in the trace); replay the trace to see it step by '
                f'step.</p>')
        else:
            _html_fixes(v, add)
            add("<h4>Steps</h4>")
            if v.before:
                add(f'<p class="note">Before step 1: {_e(_plural(v.before, "message"))}.</p>')
            if v.changes:
                add(f'<p class="note">{_e(CHANGES_NOTE)}</p>')
                add('<div class="scroll"><table class="changes">')
                add('<colgroup><col style="width:3.5em"><col style="width:15%"><col style="width:4.5em">'
                    '<col style="width:6.5em"><col style="width:20%"><col style="width:20%"><col style="width:15%">'
                    '<col style="width:17%"><col style="width:8%"></colgroup>')
                add('<thead><tr><th class="num">Step</th><th>Action</th><th class="num">Time</th>'
                    '<th class="num">Messages</th><th>Created</th><th>Updated</th><th>Deleted</th>'
                    '<th>Down after</th><th>Cut off after</th></tr></thead>')
                add("<tbody>")
                for row in v.changes:
                    cells = "".join(f"<td>{_html_change_cell(c)}</td>" for c in (
                        row.created, row.updated, row.deleted, row.down, row.partitions))
                    add(f'<tr id="violation-{v.number}-step-{row.step}"><td class="num">{row.step}</td>'
                        f'<td class="action">{_e(row.action)}</td><td class="num">{_e(row.time)}</td>'
                        f'<td class="num">{row.messages:,}</td>{cells}</tr>')
                add("</tbody>")
                add("</table></div>")
            elif v.steps:
                add('<ol class="steps">')
                for step, count in zip(v.steps, v.step_messages):
                    suffix = f' <span class="count">{_e(_step_suffix(count).strip())}</span>' if count else ""
                    add(f"<li>{_e(step)}{suffix}</li>")
                add("</ol>")
            else:
                add('<p class="note">(The trace has no steps.)</p>')
            if v.after:
                add(f'<p class="note">After step {len(v.steps)}: {_e(_plural(v.after, "message"))}.</p>')
            add(f'<p class="then">Then <code>{_e(v.invariant)}</code> was violated.</p>')
            add("<h4>Sequence diagram</h4>")
            add(f'<p class="note">{_e(_diagram_note(v))}</p>')
            add(f'<pre class="mermaid">\n{_e(v.diagram)}\n</pre>')
            if v.final_components or v.final_states:
                add("<h4>Final state of what the violation names</h4>")
                if v.final_components:
                    add('<ul class="final">')
                    for endpoint, state in v.final_components:
                        add(f'<li><code>{_e(endpoint)}</code>: <span class="{state}">{_e(state)}</span> '
                            f'at the end</li>')
                    add("</ul>")
                for state in v.final_states:
                    add(f'<details class="object"><summary><code>{_e(state.ref)}</code>, {_e(state.status)}</summary>')
                    add(f'<pre class="yaml">{_e(state.text)}</pre>')
                    add("</details>")
        if v.replay_command:
            add("<h4>Replay</h4>")
            add(f'<pre class="cmd"><code>{_e(v.replay_command)}</code></pre>')
        add("</article>")
    add("</section>")
    out.extend(tables)
    add("</main>")
    if any(v.diagram for v in view.violations):
        add(_MERMAID_SCRIPT)
    add("</body>")
    add("</html>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------- reach


def _taken_of(figures: Any) -> str:
    figures = figures if isinstance(figures, dict) else {}
    taken, total = _as_int(figures.get("taken")), _as_int(figures.get("total"))
    share = f" ({100 * taken / total:.0f} %)" if total else ""
    return f"{taken:,} of {total:,}{share}"


def reach_view(section: Any) -> Optional[ReachView]:
    """The reach section of report.json (kmodel.checker.reach) as both files show it: the counts per package and
    in all, then the outcomes never taken, grouped by package; None when the run did not measure it."""
    if not isinstance(section, dict):
        return None
    never: dict[str, list[str]] = {}
    for o in section.get("never_taken") or []:
        if isinstance(o, dict):
            to = "exit" if o.get("to") is None else o.get("to")
            never.setdefault(str(o.get("package", "?")), []).append(
                f"{o.get('file', '?')}:{o.get('line', '?')} -> {to}  {o.get('source', '')}")
    rows = []
    for entry in [*(section.get("packages") or []), {"name": "total", **(section.get("total") or {})}]:
        if isinstance(entry, dict):
            name = str(entry.get("name", "?"))
            count = sum(len(v) for v in never.values()) if name == "total" else len(never.get(name, ()))
            rows.append(ReachRow(name, _taken_of(entry.get("lines")), _taken_of(entry.get("outcomes")), count))
    note = ("Branch outcomes (each way out of an if, a loop, a match, a try) and lines inside the functions of the "
            "model packages and of the components of one's own that this run took, measured by coverage.py in "
            "branch mode. An outcome never taken is a decision the run never saw go that way: no invariant was "
            "checked after it.")
    return ReachView(note, tuple(rows), tuple((name, tuple(lines)) for name, lines in never.items()))


def _markdown_reach(reach: ReachView, add: Any) -> None:
    for line in ("## Reach", "", md_inline(reach.note), "",
                 "| Package | Branch outcomes taken | Lines taken | Never taken |", "|---|---:|---:|---:|"):
        add(line)
    for r in reach.rows:
        name = f"**{md_inline(r.package)}**" if r.package == "total" else md_code(r.package)
        add(f"| {_cell(name)} | {md_inline(r.outcomes)} | {md_inline(r.lines)} | {r.never:,} |")
    add("")
    for package, lines in reach.never:
        add(f"### Never taken in {md_code(package)} ({len(lines):,})")
        add("")
        for block in md_fence("\n".join(lines)):
            add(block)
        add("")


def _html_reach(reach: ReachView, add: Any) -> None:
    add('<section id="reach">')
    add("<h2>Reach</h2>")
    add(f'<p class="note">{_e(reach.note)}</p>')
    add("<table>")
    add('<thead><tr><th>Package</th><th class="num">Branch outcomes taken</th><th class="num">Lines taken</th>'
        '<th class="num">Never taken</th></tr></thead>')
    add("<tbody>")
    for r in reach.rows:
        name = f"<strong>{_e(r.package)}</strong>" if r.package == "total" else f"<code>{_e(r.package)}</code>"
        add(f'<tr><td>{name}</td><td class="num">{_e(r.outcomes)}</td><td class="num">{_e(r.lines)}</td>'
            f'<td class="num">{r.never:,}</td></tr>')
    add("</tbody>")
    add("</table>")
    for package, lines in reach.never:
        add(f'<details class="reach"><summary>Never taken in <code>{_e(package)}</code> ({len(lines):,})</summary>')
        add(f'<pre class="reach">{_e(chr(10).join(lines))}</pre>')
        add("</details>")
    add("</section>")
