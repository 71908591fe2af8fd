"""`kmodel check --junit-xml PATH`: the check's verdict as JUnit XML, for CI systems that read test reports.

One test suite, "kmodel check", with one test case per invariant (classname ``kmodel.<kind>``, name the
invariant's): a violated invariant fails with its message, the trace's path and the command that replays it;
an invariant never checked is skipped (the exploration never reached a state where it applies); the others
pass. Each sometimes property the run was required to reach (`--require-sometimes`) is a test case too
(classname ``kmodel.sometimes``), failing when no example reached it. The suite's properties carry the seed, the profile, the variant, the fixes on and the trace digest, so
a CI run can be reproduced from its test report alone.

The file is built from report.json's content (`write_results`' return value) with xml.etree, and written to a
temporary file beside PATH that replaces it at once (kmodel.report.atomic_write_texts): a CI system never
reads half of it.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from kmodel.report import atomic_write_texts


def junit_xml(report: dict[str, Any], *, seconds: float = 0.0, replay_command: str = "kmodel replay") -> str:
    """The JUnit XML text of a check's report.json content."""
    violations: dict[str, list[dict]] = {}
    for v in report.get("violations") or []:
        violations.setdefault(str(v.get("invariant")), []).append(v)
    invariants = list(report.get("invariants") or [])
    failures = sum(1 for inv in invariants if inv["name"] in violations)
    # a violation of something that is not a registered invariant (model-error, settles) is a test case too
    extra = [name for name in violations if name not in {inv["name"] for inv in invariants}]
    skipped = sum(1 for inv in invariants if not inv.get("checks") and inv["name"] not in violations)
    required = (report.get("required_sometimes") or {}).get("names") or []
    unreached = set((report.get("required_sometimes") or {}).get("unreached") or [])
    tests = len(invariants) + len(extra) + len(required)
    failures += len(unreached)

    suites = ET.Element("testsuites", name="kmodel check", tests=str(tests), failures=str(failures + len(extra)),
                        errors="0", skipped=str(skipped), time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="kmodel check", tests=str(tests),
                          failures=str(failures + len(extra)), errors="0", skipped=str(skipped),
                          time=f"{seconds:.3f}")
    properties = ET.SubElement(suite, "properties")
    for key in ("seed", "examples", "steps", "profile", "variant", "trace_digest", "kmodel", "hypothesis"):
        if report.get(key) is not None:
            ET.SubElement(properties, "property", name=key, value=str(report[key]))
    ET.SubElement(properties, "property", name="fixes", value=",".join(report.get("fixes") or []))

    cases = [(inv["name"], str(inv.get("kind", "")), inv) for inv in invariants] + \
            [(name, "checker", None) for name in extra]
    for name, kind, inv in cases:
        case = ET.SubElement(suite, "testcase", classname=f"kmodel.{kind}", name=name, time="0")
        if name in violations:
            for v in violations[name]:
                trace = str(v.get("trace", ""))
                failure = ET.SubElement(case, "failure", message=str(v.get("message", "")),
                                        type="InvariantViolation")
                lines = [f"{name} violated: {v.get('message', '')}"]
                if trace:
                    lines += [f"trace: {trace} ({v.get('steps', '?')} steps)",
                              f"replay: {replay_command} {shlex.quote(trace)}"]
                failure.text = "\n".join(lines)
        elif inv is not None and not inv.get("checks"):
            ET.SubElement(case, "skipped", message="never checked: no example reached a state it applies to")
        if inv is not None and inv.get("guarantee"):
            ET.SubElement(case, "system-out").text = str(inv["guarantee"])
    situations = {entry["name"]: entry for entry in report.get("sometimes") or []}
    for name in required:
        case = ET.SubElement(suite, "testcase", classname="kmodel.sometimes", name=name, time="0")
        if name in unreached:
            failure = ET.SubElement(case, "failure", message="no example reached it", type="SituationUnreached")
            failure.text = f"{name} was never reached (required by --require-sometimes)"
        if situations.get(name, {}).get("situation"):
            ET.SubElement(case, "system-out").text = str(situations[name]["situation"])
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit_xml(path: Path, report: dict[str, Any], *, seconds: float = 0.0,
                    replay_command: str = "kmodel replay") -> Path:
    """Write the JUnit XML to `path` atomically; return it."""
    path = Path(path)
    return atomic_write_texts(path.parent, {path.name: junit_xml(report, seconds=seconds,
                                                                 replay_command=replay_command)})[0]
