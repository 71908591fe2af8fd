"""A violation's replay as a Mermaid sequence diagram between the components.

Theory of operation
-------------------
The diagram is built from a `ViolationStory`'s steps and delivered messages, in three passes:

1. *Participants.* Every endpoint that sent or received a message falls in one category, in the order a
   request travels: users (kubectl), API servers, etcd, controllers, the scheduler, kubelets, proxies, then
   anything else. A category with more than ``max_separate`` endpoints becomes one participant ("kubelet/*
   (7)") and each arrow to or from it names its member (``[node-3] ...``); a category with two to
   ``max_separate`` endpoints keeps them apart inside a Mermaid ``box``. Ids are ``P_`` plus the endpoint
   name with every character outside ``[A-Za-z0-9_]`` replaced by ``_`` (made unique), so no id holds a
   "/" or "-" and none starts like a Mermaid keyword ("end", "note", "par", ...).
2. *Arrows.* The messages of each step become arrows; a run of identical arrows within one step collapses
   into one arrow labelled ``... ×N``. Messages with a step index below 0 belong to "before step 1", those
   at or past the last index to "after step N".
3. *The focus.* Given `keep` (kmodel.report.focus: the messages that touch what the violation names), only
   those messages are drawn, when there are any: each step's note says how many others it delivered, and
   those others are counted as left out. Without a focus, or when nothing touches it, every message is a
   candidate.
4. *The cap.* When there are more than ``max_arrows`` arrows, the first third of the budget and the last two
   thirds are kept (the start sets the scene, the end leads to the violation); the steps in between are
   replaced by one note saying how many messages and which steps were left out, and a step cut in the
   middle says how many of its messages are missing. Every step still appears in the numbered list beside
   the diagram.

A note spanning all participants marks each step; consecutive steps that delivered nothing share one note.
The diagram ends with the violation as a note inside a red ``rect``.

Escaping
--------
Mermaid's sequence lexer ends a message at ``#``, ``;`` or a newline, treats ``%%`` as a comment and
``<br>`` as a line break, and reads a leading ``wrap:`` as a directive. Labels are therefore put on one line
and ``# ; % < >`` written as Mermaid entity codes (``#35;`` ``#59;`` ``#37;`` ``#lt;`` ``#gt;``), which
Mermaid decodes before drawing. The HTML writer escapes the whole block once more for HTML; Mermaid reads
the element's decoded text, so both layers undo cleanly.

Everything here is a pure function of its arguments: no clock, no set iteration, no hashing.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Optional, Sequence

#: Categories of endpoints, in the order their participants appear left to right.
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("users", "Users"),
    ("apiservers", "API servers"),
    ("etcd", "etcd"),
    ("controllers", "Controllers"),
    ("scheduler", "Scheduler"),
    ("kubelets", "Kubelets"),
    ("proxies", "Proxies"),
    ("other", "Other"),
)
_RANK = {key: i for i, (key, _) in enumerate(CATEGORIES)}
_TITLE = dict(CATEGORIES)

_ESCAPES = {"#": "#35;", ";": "#59;", "%": "#37;", "<": "#lt;", ">": "#gt;"}
_WRAP_DIRECTIVE = re.compile(r"(?i)^(no)?wrap:")
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_]")
_DIGITS = re.compile(r"(\d+)")

#: The colour of the rectangle around the final violation note.
VIOLATION_RECT = "rect rgb(255, 221, 221)"
#: The colour of a box grouping the participants of one category.
BOX_COLOUR = "rgb(238, 243, 250)"


def category(endpoint: str) -> str:
    """The category of an endpoint name ("kubelet/node-1" -> "kubelets"); unknown names are "other"."""
    head = endpoint.lower().split("/", 1)[0]
    if head.startswith("kubectl") or head in ("user", "users", "client"):
        return "users"
    if head.startswith(("apiserver", "kube-apiserver")):
        return "apiservers"
    if head.startswith("etcd"):
        return "etcd"
    if head.startswith(("controller", "kube-controller-manager")):
        return "controllers"
    if head.startswith(("scheduler", "kube-scheduler")):
        return "scheduler"
    if head.startswith("kubelet"):
        return "kubelets"
    if head.startswith(("proxy", "kube-proxy")):
        return "proxies"
    return "other"


def natural_key(text: str) -> tuple:
    """Sort "node-2" before "node-10"."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(text) if part)


def member_name(endpoint: str) -> str:
    """The short name of an endpoint inside its group: what follows the first "/", or the whole name."""
    return endpoint.split("/", 1)[1] if "/" in endpoint else endpoint


def mermaid_text(text: str, limit: Optional[int] = None) -> str:
    """Text made safe for a Mermaid message or note: one line, at most `limit` characters, special
    characters as entity codes. Never empty."""
    line = " ".join(str(text).split())
    if limit is not None and len(line) > limit:
        line = line[: max(limit - 1, 1)].rstrip() + "…"
    out = "".join(_ESCAPES.get(ch, ch) for ch in line)
    if _WRAP_DIRECTIVE.match(out):
        out = out.replace(":", "#58;", 1)
    return out or "(no label)"


def _alias(text: str) -> str:
    # A participant's alias ends at "#", ";" or a newline, and is not entity-decoded everywhere: replace.
    return re.sub(r"[#;%<>\s]+", " ", text).strip() or "?"


class _Participants:
    """Maps endpoints to Mermaid participants, grouping by category."""

    def __init__(self, endpoints: Iterable[str], max_separate: int) -> None:
        by_category: dict[str, list[str]] = {}
        for endpoint in sorted(set(endpoints), key=lambda e: (_RANK[category(e)], natural_key(e), e)):
            by_category.setdefault(category(endpoint), []).append(endpoint)
        self.of: dict[str, str] = {}          # endpoint -> participant id
        self.collapsed: set[str] = set()     # endpoints shown inside a one-participant group
        self.lines: list[str] = []           # the declarations, boxes included
        self.order: list[str] = []           # participant ids, left to right
        used: set[str] = set()

        def new_id(base: str) -> str:
            pid = "P_" + _UNSAFE_ID.sub("_", base)
            candidate, n = pid, 2
            while candidate.lower() in used:
                candidate, n = f"{pid}_{n}", n + 1
            used.add(candidate.lower())
            return candidate

        for key, _title in CATEGORIES:
            members = by_category.get(key, [])
            if not members:
                continue
            if len(members) > max_separate:
                pid = new_id("all_" + key)
                prefix = _common_prefix(members)
                self.lines.append(f"participant {pid} as {_alias(prefix + ' (' + str(len(members)) + ')')}")
                self.order.append(pid)
                for endpoint in members:
                    self.of[endpoint] = pid
                    self.collapsed.add(endpoint)
                continue
            boxed = len(members) > 1
            if boxed:
                self.lines.append(f"box {BOX_COLOUR} {_TITLE[key]}")
            for endpoint in members:
                pid = new_id(endpoint)
                self.lines.append(f"{'    ' if boxed else ''}participant {pid} as {_alias(endpoint)}")
                self.order.append(pid)
                self.of[endpoint] = pid
            if boxed:
                self.lines.append("end")
        if not self.order:
            self.lines.append("participant P_cluster as cluster")
            self.order.append("P_cluster")

    def label(self, src: str, dst: str, label: str) -> str:
        names = [member_name(e) for e in (src, dst) if e in self.collapsed]
        if len(names) == 2:
            return f"[{names[0]}→{names[1]}] {label}"
        if names:
            return f"[{names[0]}] {label}"
        return label

    @property
    def span(self) -> str:
        """The participants a note spanning the whole diagram goes over."""
        if len(self.order) == 1:
            return self.order[0]
        return f"{self.order[0]},{self.order[-1]}"


def _common_prefix(members: Sequence[str]) -> str:
    heads = sorted({m.split("/", 1)[0] for m in members})
    if len(heads) == 1 and all("/" in m for m in members):
        return heads[0] + "/*"
    return _TITLE[category(members[0])].lower()


def _step_title(index: int, steps: Sequence[str], aside: str = "") -> str:
    if index < 0:
        return "before step 1" + aside
    if index >= len(steps):
        return f"after step {len(steps)}{aside}"
    return f"step {index + 1}{aside}: {steps[index]}"


def _range_title(first: int, last: int) -> str:
    return f"step {first + 1}" if first == last else f"steps {first + 1}–{last + 1}"


def sequence_diagram(
    steps: Sequence[str],
    messages: Iterable[tuple[int, str, str, str]],
    invariant: str,
    message: str,
    *,
    max_arrows: int = 60,
    max_separate: int = 4,
    max_label: int = 60,
    max_note: int = 110,
    keep: Optional[Callable[[str, str, str], bool]] = None,
) -> tuple[str, int, int]:
    """The Mermaid text of one violation, the number of arrows drawn, and the number of messages left out.

    An arrow stands for one message or for a run of identical ones (``×N``); at most `max_arrows` are drawn,
    of the messages `keep(src, dst, label)` accepts when it accepts any (see the module docstring).
    """
    messages = list(messages)
    total_messages = len(messages)
    n = len(steps)
    others: dict[int, int] = {}    # segment -> messages the focus left out
    if keep is not None:
        focused = [m for m in messages if keep(m[1], m[2], m[3])]
        if focused:
            for step, src, dst, label in messages:
                if not keep(src, dst, label):
                    seg = -1 if step < 0 else min(step, n)
                    others[seg] = others.get(seg, 0) + 1
            messages = focused
    parts = _Participants([e for _, src, dst, _ in messages for e in (src, dst)], max_separate)

    # Segments: -1 (before step 1), 0..n-1, n (after the last step); each a list of [src, dst, label, count].
    segments: dict[int, list[list]] = {i: [] for i in range(-1, n + 1)}
    for step, src, dst, label in messages:
        seg = -1 if step < 0 else min(step, n)
        arrow = [parts.of[src], parts.of[dst], parts.label(src, dst, label)]
        run = segments[seg]
        if run and run[-1][:3] == arrow:
            run[-1][3] += 1
        else:
            run.append(arrow + [1])
    order = [i for i in range(-1, n + 1) if i in range(n) or segments[i]]

    total = sum(len(segments[i]) for i in order)
    head = max_arrows // 3
    tail = max_arrows - head
    capped = total > max_arrows

    def kept(index: int) -> bool:
        return not capped or index < head or index >= total - tail

    lines = ["sequenceDiagram"] + ["    " + line for line in parts.lines]
    span = parts.span

    def note(text: str) -> None:
        lines.append(f"    Note over {span}: {mermaid_text(text, max_note)}")

    def elsewhere(segs: Sequence[int]) -> str:
        count = sum(others.get(seg, 0) for seg in segs)
        return f" ({count} other message{'s' if count != 1 else ''} not drawn)" if count else ""

    quiet: list[int] = []          # consecutive shown steps that delivered nothing
    hidden: list[int] = []         # consecutive steps left out entirely
    hidden_arrows = 0

    def flush_quiet() -> None:
        if not quiet:
            return
        if len(quiet) == 1:
            note(_step_title(quiet[0], steps, elsewhere(quiet)))
        else:
            names = " · ".join(steps[i] for i in quiet if 0 <= i < n)
            note(f"{_range_title(quiet[0], quiet[-1])}{elsewhere(quiet)}: {names}")
        quiet.clear()

    def flush_hidden() -> None:
        nonlocal hidden_arrows
        if not hidden:
            return
        first, last = max(hidden[0], 0), min(hidden[-1], n - 1)
        where = _range_title(first, last) if first <= last else _step_title(hidden[0], steps)
        note(f"… {where} left out here: {hidden_arrows + sum(others.get(seg, 0) for seg in hidden)} more messages "
             f"(every step is in the list)")
        hidden.clear()
        hidden_arrows = 0

    shown = shown_messages = 0
    position = 0                   # arrows before the current segment
    for seg in order:
        arrows = segments[seg]
        if not arrows:
            if capped and head < position < total - tail:
                flush_quiet()
                hidden.append(seg)
            else:
                flush_hidden()
                quiet.append(seg)
            continue
        flags = [kept(position + j) for j in range(len(arrows))]
        position += len(arrows)
        if not any(flags):
            flush_quiet()
            hidden.append(seg)
            hidden_arrows += sum(a[3] for a in arrows)
            continue
        flush_quiet()
        flush_hidden()
        note(_step_title(seg, steps, elsewhere([seg])))
        skipped = 0
        for (src, dst, label, count), keep in zip(arrows, flags):
            if not keep:
                skipped += count
                continue
            if skipped:
                note(f"… {skipped} messages of this step left out")
                skipped = 0
            text = label if count == 1 else f"{label} ×{count}"
            lines.append(f"    {src}->>{dst}: {mermaid_text(text, max_label)}")
            shown += 1
            shown_messages += count
        if skipped:
            note(f"… {skipped} more messages of this step left out")
    flush_quiet()
    flush_hidden()

    lines.append(f"    {VIOLATION_RECT}")
    lines.append(f"    Note over {span}: {mermaid_text('violated ' + invariant + ': ' + message, max_note * 2)}")
    lines.append("    end")
    return "\n".join(lines), shown, total_messages - shown_messages
