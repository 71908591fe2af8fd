"""What `kmodel check --operator` writes to its report folder and prints:

    report.json                     the run: the operator, the options, each episode's start-up and findings,
                                    and for a failure its invariant, recurrence rate and actions
    actions.json                    the failing episode's actions, as drawn and minimized (`--operator-actions`
                                    runs them again)
    traces/<invariant>.json         the served trace of the minimized failing run: `kmodel replay` runs it again
                                    in-model, to the digest recorded in it
    operator.log                    that run's operator output, across its restarts
    steps.txt                       its steps, each with the operator's requests and the cluster's answers
    episodes/, reproduce/, minimize/   every run's own folder (kubeconfig, log, trace)
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

from kmodel.operator.campaign import Campaign
from kmodel.operator.exchanges import steps_with_requests
from kmodel.operator.spec import OperatorSpec


def startup_figures(found: Campaign) -> dict:
    """Start-up of the episodes run (serve until the CRDs are Established, then the operator until ready), in s."""
    totals = [r.startup_s for r in found.episodes]
    if not totals:
        return {}
    return {"episodes": len(totals), "median_s": round(statistics.median(totals), 3), "max_s": round(max(totals), 3),
            "serve_median_s": round(statistics.median(r.serve_s for r in found.episodes), 3),
            "operator_ready_median_s": round(statistics.median(r.ready_s for r in found.episodes), 3)}


def write_report(spec: OperatorSpec, found: Campaign, options: Any, folder: Path) -> dict:
    out: dict[str, Any] = {
        "operator": {"command": list(spec.command), "user": spec.user, "ready": spec.ready,
                     "resources": [r.plural for r in spec.resources],
                     "invariants": [i.name for i in spec.invariants]},
        "options": {"examples": options.examples, "steps": options.steps, "seed": options.seed,
                    "reproduce": options.reproduce, "speed": options.episode.speed, "nodes": options.episode.nodes,
                    "settle_s": options.episode.settle_s},
        "seconds": round(found.seconds, 3),
        "startup": startup_figures(found),
        "episodes": [{"folder": str(r.folder), "startup_s": round(r.startup_s, 3), "restarts": r.restarts,
                      "requests": len(r.requests), "findings": [f.to_json() for f in r.findings]}
                     for r in found.episodes],
        "violation": None,
    }
    failing = found.failing
    if failing is not None and failing.violated is not None:
        shown = found.minimized_run or failing
        invariant = failing.violated.invariant
        traces = folder / "traces"
        traces.mkdir(parents=True, exist_ok=True)
        trace = traces / f"{invariant}.json"
        shutil.copyfile(shown.folder / "trace.json", trace)
        shutil.copyfile(shown.folder / "operator.log", folder / "operator.log")
        actions = {"actions": [a.to_json() for a in found.actions],
                   "minimized": [a.to_json() for a in found.minimized or found.actions]}
        (folder / "actions.json").write_text(json.dumps(actions, indent=2) + "\n", encoding="utf-8")
        steps = steps_with_requests(shown, found.minimized or found.actions)
        (folder / "steps.txt").write_text("\n".join(steps) + "\n", encoding="utf-8")
        finding = (shown.violated or failing.violated)
        out["violation"] = {
            "invariant": invariant, "message": finding.message, "step": finding.step,
            "episode": len(found.episodes), "reproduced": found.reproduced, "recurred": found.recurred,
            "actions": len(found.actions), "minimized_actions": len(found.minimized or found.actions),
            "minimize_episodes": found.minimize_episodes, "trace": str(trace), "digest": shown.digest,
            "actions_file": str(folder / "actions.json"), "steps_file": str(folder / "steps.txt"),
            "steps": steps}
    (folder / "report.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


def verdict_lines(report: dict, found: Campaign, folder: Path, replay_command: str) -> list[str]:
    """What a run says at its end: its figures, then the violation, its recurrence, its steps with the operator's
    requests, and the files to look at (`replay_command` followed by the trace's path replays it)."""
    startup = report["startup"]
    lines = [f"kmodel check --operator: seed {report['options']['seed']}, {len(found.episodes)} episodes in "
             f"{found.seconds:.1f} s; episode start-up median {startup.get('median_s', 0):.2f} s, max "
             f"{startup.get('max_s', 0):.2f} s (serve {startup.get('serve_median_s', 0):.2f} s + operator ready "
             f"{startup.get('operator_ready_median_s', 0):.2f} s, medians)"]
    violation = report["violation"]
    if violation is None:
        return lines + ["no invariant violated"]
    return lines + [
        f"invariant {violation['invariant']} violated in episode {violation['episode']}: {violation['message']}",
        f"recurred in {violation['recurred']} of {violation['reproduced']} re-runs of its actions; minimized from "
        f"{violation['actions']} to {violation['minimized_actions']} actions ({violation['minimize_episodes']} "
        f"episodes)",
        *violation["steps"],
        f"served trace: {violation['trace']} (digest {violation['digest']}); replay it in-model with: "
        f"{replay_command} {violation['trace']}",
        f"actions: {violation['actions_file']} (run them again: --operator-actions); operator log: "
        f"{folder / 'operator.log'}; report: {folder / 'report.json'}"]
