"""What `kmodel check` leaves in its report folder: report.json, the shrunk traces, and the human reports.

`write_results(result, folder)` writes, in this order:

1. each failing trace as ``traces/<invariant>.json`` (kmodel-trace/2, expecting that invariant to fail);
2. report.json: the seed and budget, the kmodel and Hypothesis versions, the campaign's trace digest, every invariant with how often it was
   checked and violated, how often each rule fired, how many examples reached each sometimes property
   (invariants/sometimes.py), and the violations (invariant, message, trace path,
   number of actions, how it was shrunk: `run.ShrinkRecord`, and what each known fix of the invariant does to
   the trace: kmodel.checker.fix_verdicts), plus figures (examples and steps run, model events, seconds);
   a keep-going run's violations are its distinct findings, each with the known fix that takes it out
   (`known_fix`, null for a new finding) and the examples that ended on it, and report.json's `keep_going`
   sets the known upstream bugs apart from the new findings (kmodel.checker.findings);
3. report.md and report.html through `kmodel.report.write_reports`, given one `ViolationStory` per
   violation: the trace replayed once more without Hypothesis, with the messages delivered and what changed
   in the cluster at each step (kmodel.checker.changes), what the violation names (kmodel.report.focus) and
   the last state of those objects, and what each known fix of the invariant does to the trace
   (kmodel.checker.fix_verdicts). The replay command is `trace_command` and the trace's path, quoted for a
   shell: `kmodel check` passes the command that ran it, so the command printed runs as printed.

The invariants listed and checked by every replay are the explored machine's (`result.machine`: the pytest
plugin's machines add their own, and their own components) and those of the components its cluster ran
(`CampaignResult.invariant_list`). `violation_lines` is what a front end prints of
one violation: `kmodel check` and the pytest plugin print the same lines, each with its own commands.

Every file is written to a temporary name and renamed, so a reader never sees half a report.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Optional, Sequence

from hypothesis import __version__ as hypothesis_version

from kmodel import __version__ as kmodel_version
from kmodel.checker.fix_verdicts import REPLAY_FIX_OPTIONS, fix_verdicts
from kmodel.checker.replay import replay
from kmodel.checker.run import CampaignResult
from kmodel.checker.addressplan import PLANS, plan_of, plan_text
from kmodel.checker.staticpods import static_text
from kmodel.checker.topology import topology_text
from kmodel.checker.trace import write_trace
from kmodel.report import atomic_write_texts, write_reports
from kmodel.checker.findings import keep_going_json
from kmodel.report.focus import focus_of
from kmodel.report.story import ViolationStory


def atomic_write_text(path: Path, text: str) -> Path:
    """Write `path` atomically, with a new file's mode (kmodel.report.atomic_write_texts)."""
    return atomic_write_texts(path.parent, {path.name: text})[0]


def report_json(result: CampaignResult, violations: list[dict[str, Any]],
                required_sometimes: Sequence[str] = ()) -> dict[str, Any]:
    stats = result.stats
    invariants = [
        {"name": inv.name, "kind": inv.kind, "principle": inv.principle, "guarantee": inv.guarantee,
         "checks": stats.checks.get(inv.name, 0), "violations": stats.violations.get(inv.name, 0)}
        for inv in result.invariant_list()
    ]
    options = result.options
    return {
        "seed": options.seed,
        "kmodel": kmodel_version,
        "hypothesis": hypothesis_version,  # a seed explores what this release draws (constraints.txt pins it)
        "examples": result.examples,
        "steps": result.steps,
        "profile": options.profile,
        "variant": options.variant,
        "fixes": list(options.fixes),
        "config": {"nodes": options.nodes, "apiservers": options.apiservers,
                   "controller_managers": options.controller_managers, "schedulers": options.schedulers,
                   "leader_elect": options.leader_elect},
        **_drawn_topologies(options, stats),
        "trace_digest": stats.trace_digest(),
        "invariants": invariants,
        "rules": dict(sorted(stats.rules.items())),
        "sometimes": [
            {"name": p.name, "principle": p.principle, "situation": p.situation,
             "examples": stats.reached.get(p.name, 0), "first_example": stats.first_reached.get(p.name)}
            for p in result.sometimes
        ],
        "violations": violations,
        "required_sometimes": {"names": list(required_sometimes),
                               "unreached": [n for n in required_sometimes if not stats.reached.get(n, 0)]},
        "figures": {
            "examples_run": stats.examples,
            "steps_run": stats.steps,
            "rule_steps": stats.rule_steps,
            "model_events": stats.events,
            "seconds": round(result.seconds, 3),
            "invariant_seconds": round(stats.invariant_seconds, 3),
        },
    }


def _drawn_topologies(options: Any, stats: Any) -> dict[str, Any]:
    """report.json's keys for a campaign that drew its topology per example (kmodel.checker.topology): the
    counts drawn, and how many examples ran on each topology (none for a campaign of one fixed topology)."""
    draws = options.draws()
    if not draws:
        return {}
    return {"drawn": list(draws), "topologies": dict(sorted(stats.topologies.items()))}


def write_results(result: CampaignResult, folder: Path, *, trace_command: str = "kmodel replay",
                  fix_options: str = REPLAY_FIX_OPTIONS, required_sometimes: Sequence[str] = (),
                  found: Optional[Sequence[tuple[Any, Any, dict[str, Any]]]] = None,
                  extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Write the report folder; returns report.json's content. `fix_options` is what `trace_command` is given to
    replay a trace with a fix on (kmodel.checker.fix_verdicts); `required_sometimes`: the sometimes properties
    the run was required to reach (`kmodel check --require-sometimes`), reported with those it did not.
    `found` (default: the result's own failure and shrink record) lists the violations to report, each as
    (trace, ShrinkRecord or None, fields added to its entry): a parallel run's, deduplicated
    (kmodel.checker.merge); `extra`: keys added to report.json (a parallel run's workers)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if found is None and result.findings:  # a keep-going run's distinct violations (kmodel.checker.findings)
        found = [(f.trace, f.shrink, f.report_fields()) for f in result.findings]
    if found is None:
        found = [(result.failure, result.shrink, {})] if result.failure is not None else []
    violations: list[dict[str, Any]] = []
    stories: list[Any] = []
    machine = result.machine
    names: set[str] = set()
    for trace, shrink, fields in found:
        assert trace.violation is not None
        name, n = trace.violation.invariant, 1
        while name in names:  # two shapes of one invariant's violation: <invariant>-2.json for the second
            n += 1
            name = f"{trace.violation.invariant}-{n}"
        names.add(name)
        path = write_trace(trace, folder / "traces" / f"{name}.json")
        invariants = result.invariant_list()
        components = machine.replay_components if machine.has_own_components() else None
        replayed = replay(trace, record_changes=True, invariants=invariants, components=components)
        story = violation_story(trace, replayed, str(path), f"{trace_command} {shlex.quote(str(path))}",
                                invariants=invariants, components=components, fix_options=fix_options)
        violations.append({
            "invariant": trace.violation.invariant,
            "message": trace.violation.message,
            "trace": str(path),
            "steps": len(trace.actions),
            **({"topology": topology_text(trace.config)} if result.options.draws() else {}),
            **({"address_plan": plan_text(trace.config)} if plan_of(trace.config) is not PLANS[0] else {}),
            **({"static_pods": static_text(trace.config)} if trace.config.static_pods else {}),
            "reproduced": replayed.violation is not None
            and replayed.violation.invariant == trace.violation.invariant,
            **({"shrink": shrink.to_json()} if shrink is not None else {}),
            "fixes": [{"name": v.name, "takes_out": v.takes_out, "outcome": v.outcome, "command": v.command}
                      for v in story.fixes],
            **fields,
        })
        stories.append(story)
    report = {**report_json(result, violations, required_sometimes), **(extra or {})}
    if result.options.keep_going:
        report["keep_going"] = keep_going_json(result.stats.violating_examples, violations)
    atomic_write_text(folder / "report.json", json.dumps(report, indent=2) + "\n")
    _write_human_reports(report, stories, folder)
    return report


def violation_lines(violation: dict[str, Any], replay_command: str, turn_on: str = "--fix {fix}") -> list[str]:
    """What a front end prints of one violation of report.json, ending with the command that replays it
    (`replay_command` and the trace's path): the invariant and message, the trace, and each known fix that
    takes the violation out, with how to turn it on (`turn_on`, given the fix's name)."""
    lines = [f"VIOLATION {violation['invariant']}: {violation['message']}",
             f"  shrunk to {violation['steps']} steps: {violation['trace']}"]
    if violation.get("topology"):  # a campaign that drew its topology per example (kmodel.checker.topology)
        lines.append(f"  ran on: {violation['topology']}")
    if violation.get("address_plan"):  # an address plan other than the default (kmodel.checker.addressplan)
        lines.append(f"  address plan: {violation['address_plan']}")
    if violation.get("static_pods"):  # a manifest in a kubelet's folder (kmodel.checker.staticpods)
        lines.append(f"  manifest folders: {violation['static_pods']}")
    for fix in violation.get("fixes", ()):
        if fix["takes_out"]:
            lines.append(f"  the known fix {fix['name']} takes it out (an upstream bug, `kmodel fixes` tells it); "
                         f"turn it on with {turn_on.format(fix=fix['name'])}")
    lines.append(f"  replay: {replay_command} {shlex.quote(violation['trace'])}")
    return lines


def violation_story(trace: Any, replayed: Any, path: str, command: str, *, invariants: Optional[list] = None,
                    components: Any = None, fix_options: str = REPLAY_FIX_OPTIONS) -> Any:
    """The story of one violation for the reports: `replayed` is `trace` replayed with `record_changes`
    (`invariants` and `components`: the machine's, see `write_results`)."""
    recorder = replayed.recorder
    endpoints = sorted({e for _, src, dst, _ in replayed.messages for e in (src, dst)} | set(recorder.endpoints))
    # what the violation names, read from the message it gave when replayed (the recorded one may differ in
    # what a settle's bound adds, never in what it names)
    message = replayed.violation.message if replayed.violation is not None else trace.violation.message
    focus_endpoints, focus_objects = focus_of(message, endpoints, recorder.object_texts())
    return ViolationStory(trace.violation.invariant, trace.violation.message, path, replayed.steps,
                          replayed.messages, command, changes=replayed.changes, focus_endpoints=focus_endpoints,
                          focus_objects=focus_objects, final_states=recorder.final_states(focus_objects),
                          fixes=fix_verdicts(trace, command, invariants=invariants, components=components,
                                             fix_options=fix_options))


def _write_human_reports(report: dict, stories: list, folder: Path) -> Optional[list[Path]]:
    return write_reports(report, stories, folder)
