"""The operator's requests and the cluster's answers, put beside the steps of an episode: each request (as it
entered the model, at its logical time) under the step during which it came, with the answer's HTTP code (a
watch: open, or how it ended)."""

from __future__ import annotations

import bisect
from typing import Sequence

from kmodel.operator.actions import Action
from kmodel.operator.episode import EpisodeResult

#: at most this many requests are shown under one step (the rest are counted)
PER_STEP = 25


def request_line(request: tuple) -> str:
    t, _, verb, resource, namespace, name, code = request
    where = "/".join(p for p in (namespace, name) if p)
    if verb == "watch":
        answer = "open" if code is None else ("ended" if code == 0 else f"ended {code}")
    else:
        answer = "no answer" if code is None else str(code)
    return f"{t / 1000:9.3f} s  {verb} {resource}{' ' + where if where else ''} -> {answer}"


def steps_with_requests(result: EpisodeResult, actions: Sequence[Action]) -> list[str]:
    """The episode's steps, each followed by the operator's requests during it."""
    titles = ["start-up: the operator starts and becomes ready"] + \
        [f"step {i}: {action.text}" for i, action in enumerate(actions, 1)] + \
        ["settle: the liveness invariants must hold by its end"]
    bounds = list(result.step_ms)
    groups: list[list[tuple]] = [[] for _ in titles]
    for request in result.requests:
        at = bisect.bisect_right(bounds, request[0]) - 1
        groups[min(max(at, 0), len(titles) - 1)].append(request)
    findings = {}
    for finding in result.findings:
        findings.setdefault(finding.step, []).append(finding)
    lines: list[str] = []
    for index, title in enumerate(titles[:len(bounds)] if bounds else titles[:1]):
        begins = f" (logical time {bounds[index] / 1000:g} s)" if index < len(bounds) else ""
        lines.append(f"{title}{begins}")
        shown = groups[index][:PER_STEP]
        lines.extend("    " + request_line(r) for r in shown)
        if len(groups[index]) > len(shown):
            lines.append(f"    ... {len(groups[index]) - len(shown)} more requests")
        for finding in findings.get(index, []):
            lines.append(f"    VIOLATED {finding.invariant} at logical time {finding.at_ms / 1000:g} s: "
                         f"{finding.message}")
    return lines
