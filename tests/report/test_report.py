"""report.md and report.html: content, Mermaid plausibility, escaping, capping, atomic and deterministic writes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kmodel.report as report_pkg
from kmodel.report import ViolationStory, render_reports, write_json, write_reports
from kmodel.report.render import shrink_note
from kmodel.report.mermaid import category, mermaid_text, sequence_diagram

# ------------------------------------------------------------------------------------------------ fixtures

STEPS = (
    "apply deployment default/web (replicas=3)",
    "deliver kubectl → apiserver-0",
    "partition apiserver-1 from etcd",
    "crash controller/replicaset mid-reconcile",
    "heal all",
    "settle",
)
MESSAGES = (
    (0, "kubectl", "apiserver-0", "POST deployments default/web"),
    (1, "apiserver-0", "etcd", "txn create deployments/web"),
    (1, "etcd", "apiserver-0", "ok rev=41"),
    (1, "apiserver-0", "controller/deployment", "watch ADDED deployment web"),
    (1, "controller/deployment", "apiserver-0", "POST replicasets web-7d4b9"),
    (3, "controller/replicaset", "apiserver-1", "POST pods web-a"),
    (5, "apiserver-1", "scheduler", "watch ADDED pod web-a"),
    (5, "scheduler", "apiserver-1", "bind web-a node-1"),
    (5, "apiserver-1", "kubelet/node-1", "watch ADDED pod web-a"),
    (5, "kubelet/node-1", "apiserver-1", "lease renew"),
    (5, "kubelet/node-1", "apiserver-1", "lease renew"),
    (5, "kubelet/node-1", "apiserver-1", "lease renew"),
    (5, "apiserver-1", "proxy/node-1", "watch MODIFIED endpointslice web"),
)
NASTY = "weird; label #1 <b>x</b> & 50%% | `tick` wrap:"


def story(invariant="converges-replicas", message="deployment web: 4 pods, wants 3", steps=STEPS,
          messages=MESSAGES, n=1):
    path = f"reports/latest/traces/{invariant}-{n}.json"
    return ViolationStory(invariant=invariant, message=message, trace_path=path, steps=steps,
                          messages=messages, replay_command=f"kmodel replay {path}")


def report_dict(stories=()):
    return {
        "seed": 7, "examples": 30, "steps": 4210, "trace_digest": "sha256:9f2c1ab0",
        "invariants": [
            {"name": "unique-pod-ips", "kind": "safety", "checks": 4210,
             "violations": sum(s.invariant == "unique-pod-ips" for s in stories)},
            {"name": "converges-replicas", "kind": "liveness", "checks": 30,
             "violations": sum(s.invariant == "converges-replicas" for s in stories)},
            {"name": "eviction-timing", "kind": "safety", "checks": 0, "violations": 0},
        ],
        "rules": {"apply_deployment": 120, "scale": 88, "compact": 0},
        "violations": [{"invariant": s.invariant, "message": s.message, "trace": s.trace_path,
                        "steps": len(s.steps)} for s in stories],
    }


def two_stories():
    return [story(),
            story("unique-pod-ips", "pods a and b share 10.244.1.7\nboth on node-1",
                  messages=MESSAGES + ((2, "kubectl", "apiserver-0", NASTY),), n=2)]


# ------------------------------------------------------------------------------------- Mermaid checking

ARROW = re.compile(r"^(P_[A-Za-z0-9_]+)->>(P_[A-Za-z0-9_]+): (.+)$")
PARTICIPANT = re.compile(r"^participant (P_[A-Za-z0-9_]+) as ([^#;\n]+)$")
NOTE = re.compile(r"^Note over (P_[A-Za-z0-9_]+)(?:,(P_[A-Za-z0-9_]+))?: (.+)$")
ENTITY = re.compile(r"#(?:\d+|[a-z]+);")


def check_mermaid(text: str) -> dict:
    """Fail unless `text` is a plausible Mermaid sequence diagram; return what it holds."""
    lines = [line.strip() for line in text.strip("\n").split("\n")]
    assert lines[0] == "sequenceDiagram"
    declared, arrows, notes, depth = [], [], [], 0
    for line in lines[1:]:
        assert line, "no blank lines"
        if m := PARTICIPANT.match(line):
            assert m.group(1) not in declared
            assert not arrows and not notes, "participants come first"
            declared.append(m.group(1))
        elif line.startswith("box ") or line.startswith("rect "):
            depth += 1
        elif line == "end":
            depth -= 1
            assert depth >= 0
        elif m := ARROW.match(line):
            assert m.group(1) in declared and m.group(2) in declared, line
            arrows.append(m.group(3))
        elif m := NOTE.match(line):
            assert m.group(1) in declared and (m.group(2) is None or m.group(2) in declared), line
            notes.append(m.group(3))
        else:
            raise AssertionError(f"not a Mermaid line: {line!r}")
    assert depth == 0
    for label in arrows + notes:
        bare = ENTITY.sub("", label)
        assert not set(bare) & set(";#<>%"), label
        assert not re.match(r"(?i)(no)?wrap:", label)
    return {"participants": declared, "arrows": arrows, "notes": notes}


def mermaid_blocks_md(md: str) -> list[str]:
    return re.findall(r"^```mermaid\n(.*?)\n```$", md, flags=re.S | re.M)


def mermaid_blocks_html(page: str) -> list[str]:
    import html
    return [html.unescape(b) for b in re.findall(r'<pre class="mermaid">\n(.*?)\n</pre>', page, flags=re.S)]


# ------------------------------------------------------------------------------------------------ tests


def test_no_violation(tmp_path):
    paths = write_reports(report_dict(), [], tmp_path)
    assert paths == [tmp_path / "report.md", tmp_path / "report.html"]
    md, page = (p.read_text() for p in paths)
    assert "# kmodel check: PASS" in md and "PASS" in page
    for text in (md, page):
        assert "unique-pod-ips" in text and "eviction-timing" in text        # invariants table
        assert "apply_deployment" in text and "compact" in text              # rules table
        assert "None: every invariant held" in text
        assert "NEVER FIRED" in text and "not checked" in text
        assert "VIOLATED" not in text
        assert "sha256:9f2c1ab0" in text and "4,210" in text
    assert "mermaid" not in md and "<script" not in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]


def test_two_violations(tmp_path):
    stories = two_stories()
    write_reports(report_dict(stories), stories, tmp_path)
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    assert "# kmodel check: FAIL" in md and "FAIL: 2 violations" in md
    assert '<span class="verdict fail">FAIL</span>' in page
    assert "### 1. converges-replicas" in md and "### 2. unique-pod-ips" in md
    assert '<article class="violation" id="violation-2">' in page
    # violated invariants stand out; the never-fired rule too
    assert "| **VIOLATED** | **`unique-pod-ips`** |" in md
    assert page.count('<tr class="bad">') == 2
    assert "| **NEVER FIRED** | `compact` | **0** |" in md
    # steps as a numbered list, the replay command
    assert "1. apply deployment default/web (replicas=3) — 1 message" in md
    assert "6. settle — 7 messages" in md
    assert "<li>crash controller/replicaset mid-reconcile" in page
    for s in stories:
        assert f"```sh\n{s.replay_command}\n```" in md
        assert f"<code>{s.replay_command}</code>" in page
    # the multi-line message is kept whole
    assert "pods a and b share 10.244.1.7\nboth on node-1" in md
    assert "pods a and b share 10.244.1.7\nboth on node-1" in page
    # the same diagrams in both files, each plausible
    blocks = mermaid_blocks_md(md)
    assert len(blocks) == 2 and blocks == mermaid_blocks_html(page)
    for block in blocks:
        diagram = check_mermaid(block)
        assert diagram["notes"][0].startswith("step 1: apply deployment")
        assert diagram["notes"][-1].startswith("violated ")
    first = check_mermaid(blocks[0])
    assert "P_controller_deployment" in first["participants"]
    assert "lease renew ×3" in first["arrows"]                     # identical messages collapsed
    # Mermaid from the report folder, never from a network: the classic script beside report.html
    assert '<script src="mermaid.min.js"></script>' in page and "https://" not in page and "offline" in page
    assert (tmp_path / "mermaid.min.js").stat().st_size > 1_000_000
    assert "MIT License" in (tmp_path / "mermaid.LICENSE").read_text()


def test_labels_are_escaped(tmp_path):
    evil = "<script>alert(1)</script>"
    s = story(steps=STEPS[:-1] + (evil,), message=f"bad {evil}",
              messages=MESSAGES + ((5, "kubectl", "apiserver-0", NASTY),))
    write_reports(report_dict([s]), [s], tmp_path)
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    assert evil not in page.split('<script src="mermaid.min.js">')[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert r"\<script\>alert(1)\</script\>" in md
    diagram = check_mermaid(mermaid_blocks_md(md)[0])
    label = [a for a in diagram["arrows"] if a.startswith("weird")][0]
    assert label == "weird#59; label #35;1 #lt;b#gt;x#lt;/b#gt; & 50#37;#37; | `tick` wrap:"
    assert mermaid_text("wrap: x").startswith("wrap#58;")
    assert mermaid_text("  ") == "(no label)"
    assert mermaid_text("a\nb;c") == "a b#59;c"


def test_participant_ids_are_sanitised_and_grouped():
    endpoints = ["kubectl", "apiserver-0", "etcd", "controller/deployment", "controller/replicaset",
                 "scheduler"] + [f"kubelet/node-{i}" for i in range(1, 8)] + ["proxy/node-1", "end", "note"]
    messages = [(0, e, "apiserver-0", f"hello from {e}") for e in endpoints if e != "apiserver-0"]
    text, shown, left_out = sequence_diagram(["one"], messages, "x", "y")
    diagram = check_mermaid(text)
    assert (shown, left_out) == (len(messages), 0)
    parts = diagram["participants"]
    assert parts[:3] == ["P_kubectl", "P_apiserver_0", "P_etcd"]
    assert "P_all_kubelets" in parts and not any("node_3" in p for p in parts)   # 7 kubelets: one participant
    assert "box rgb(238, 243, 250) Controllers" in text                           # 2 controllers: a box
    assert "participant P_all_kubelets as kubelet/* (7)" in text
    assert "[node-3] hello from kubelet/node-3" in diagram["arrows"]
    assert "participant P_end as end" in text                                     # keywords behind a prefix
    assert [category(e) for e in ("kubectl", "apiserver-1", "kube-proxy/n", "weird")] == \
        ["users", "apiservers", "proxies", "other"]


def test_long_traces_are_capped():
    steps = [f"fire event {i}" for i in range(300)]
    messages = [(i, "apiserver-0", f"kubelet/node-{i % 3}", f"watch MODIFIED pod p-{i}") for i in range(300)]
    text, shown, left_out = sequence_diagram(steps, messages, "watch-ordered", "out of order", max_arrows=60)
    diagram = check_mermaid(text)
    assert len(diagram["arrows"]) == shown == 60 and left_out == 240
    gap = [n for n in diagram["notes"] if "left out" in n]
    assert gap == ["… steps 21–260 left out here: 240 more messages (every step is in the list)"]
    assert diagram["arrows"][0].startswith("watch MODIFIED pod p-0")
    assert diagram["arrows"][-1].startswith("watch MODIFIED pod p-299")      # the end leads to the violation
    assert len(text.split("\n")) < 200


def test_one_huge_step_is_cut_with_a_note():
    messages = [(0, "controller/replicaset", "apiserver-0", f"POST pods p-{i}") for i in range(500)]
    text, shown, left_out = sequence_diagram(["burst"], messages, "x", "y", max_arrows=60)
    diagram = check_mermaid(text)
    assert shown == 60 and left_out == 440
    assert "… 440 messages of this step left out" in diagram["notes"]


def test_long_trace_note_in_both_files(tmp_path):
    steps = tuple(f"fire event {i}" for i in range(200))
    messages = tuple((i, "apiserver-0", "scheduler", f"watch pod p-{i}") for i in range(200))
    s = story(steps=steps, messages=messages)
    files = render_reports(report_dict([s]), [s])
    for text in files.values():
        assert "140 messages of 200 left out to keep it readable (60 arrows drawn)" in text
    assert "200. fire event 199" in files["report.md"]                       # the list stays complete


def test_messages_outside_the_steps():
    messages = [(-1, "kubectl", "apiserver-0", "early"), (9, "apiserver-0", "etcd", "late")]
    text, _, _ = sequence_diagram(["only"], messages, "x", "y")
    diagram = check_mermaid(text)
    assert diagram["notes"][:3] == ["before step 1", "step 1: only", "after step 1"]
    files = render_reports(report_dict(), [story(steps=("only",), messages=messages)])
    assert "Before step 1: 1 message." in files["report.md"]
    assert "After step 1: 1 message." in files["report.md"]


def test_no_messages_at_all():
    text, shown, left_out = sequence_diagram(["a", "b"], [], "x", "y")
    diagram = check_mermaid(text)
    assert diagram["participants"] == ["P_cluster"] and (shown, left_out) == (0, 0)
    assert diagram["notes"][0] == "steps 1–2: a · b"


def test_violation_without_a_story(tmp_path):
    report = report_dict()
    report["violations"] = [{"invariant": "watch-ordered", "message": "rev 5 after 7",
                             "trace": "reports/latest/traces/w.json", "steps": 12}]
    write_reports(report, [], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "### 1. watch-ordered" in md and "kmodel replay reports/latest/traces/w.json" in md
    assert "No replay story was recorded" in md and "mermaid" not in md


def test_story_is_immutable_data():
    s = ViolationStory("i", "m", "t.json", ["a", "b"], [[0, "x", "y", "z"]], "kmodel replay t.json")
    assert s.steps == ("a", "b") and s.messages == ((0, "x", "y", "z"),)
    hash(s)


def test_byte_identical(tmp_path):
    stories = two_stories()
    write_reports(report_dict(stories), stories, tmp_path / "a")
    write_reports(report_dict(two_stories()), two_stories(), tmp_path / "b")
    for name in ("report.md", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_byte_identical_across_hash_seeds():
    code = ("import hashlib, tests.report.test_report as t; from kmodel.report import render_reports; "
            "s = t.two_stories(); f = render_reports(t.report_dict(s), s); "
            "print(hashlib.sha256((f['report.md'] + f['report.html']).encode()).hexdigest())")
    root = Path(__file__).resolve().parents[2]
    digests = set()
    for seed in ("0", "1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                             check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_atomic_no_temp_files_left(tmp_path):
    stories = two_stories()
    write_reports(report_dict(stories), stories, tmp_path)
    write_reports(report_dict(), [], tmp_path)
    write_json(report_dict(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mermaid.LICENSE", "mermaid.min.js", "report.html",
                                                          "report.json", "report.md"]


def test_failure_while_writing_keeps_the_old_reports(tmp_path, monkeypatch):
    write_reports(report_dict(), [], tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = report_pkg._write_temp
    calls = []

    def failing(folder, name, text):
        calls.append(name)
        if name == "report.html":          # the .md temp is already complete at this point
            raise OSError("disk full")
        return real(folder, name, text)

    monkeypatch.setattr(report_pkg, "_write_temp", failing)
    stories = two_stories()
    with pytest.raises(OSError, match="disk full"):
        write_reports(report_dict(stories), stories, tmp_path)
    assert calls == ["report.md", "report.html"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_failure_inside_a_file_write_leaves_no_temp(tmp_path, monkeypatch):
    write_reports(report_dict(), [], tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def boom(fd):
        raise OSError("fsync failed")

    monkeypatch.setattr(report_pkg.os, "fsync", boom)
    with pytest.raises(OSError, match="fsync failed"):
        write_reports(report_dict(two_stories()), two_stories(), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_failure_while_rendering_writes_nothing(tmp_path, monkeypatch):
    write_reports(report_dict(), [], tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def boom(view):
        raise RuntimeError("render failed")

    monkeypatch.setattr(report_pkg, "render_html", boom)
    with pytest.raises(RuntimeError):
        write_reports(report_dict(two_stories()), two_stories(), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_write_json_round_trips(tmp_path):
    report = report_dict(two_stories())
    report["variant"] = "no-expectations"
    path = write_json(report, tmp_path / "deep" / "folder")
    assert json.loads(path.read_text()) == report
    assert path.read_text().endswith("}\n")


def test_optional_summary_fields(tmp_path):
    report = report_dict()
    report.update(variant="stale-cache", profile="ci", duration_s=12.345, kmodel="0.1.0",
                  config={"nodes": 3, "apiservers": 2})
    report["invariants"][0].update(principle="networking", guarantee="No two pods | share an IP.")
    files = render_reports(report, [])
    md = files["report.md"]
    assert "| Variant | `stale-cache` |" in md and "| Duration | 12.3 s |" in md
    assert '| Configuration | `{"apiservers": 2, "nodes": 3}` |' in md
    assert "No two pods \\| share an IP." in md and "| Principle | Guarantee |" in md
    assert "<th>Guarantee</th>" in files["report.html"]


def test_the_summary_says_what_ran_beside_the_budget():
    """A violation ends a run early: the summary shows the examples and steps that ran, not only the budget."""
    report = report_dict()
    report["figures"] = {"examples_run": 2, "steps_run": 6, "model_events": 1176}
    files = render_reports(report, [])
    md = files["report.md"]
    assert "| Examples | 30 budgeted, 2 run |" in md
    assert "| Steps | 4,210 at most per example, 6 run in all |" in md and "| Model events | 1,176 |" in md
    assert "30 budgeted, 2 run" in files["report.html"]
    assert "| Examples | 30 |" in render_reports(report_dict(), [])["report.md"]  # without figures: the budget


SHRINK = {"found_in": 153, "examples": 84, "events": 125_792, "events_budget": 6_000_000, "budget_reached": False,
          "shrunk_actions": 19, "replays": 19, "replays_budget": 180, "actions": 8}


def test_how_a_violation_was_shrunk_is_told_in_both_files(tmp_path):
    stories = [story()]
    report = report_dict(stories)
    report["violations"][0]["shrink"] = SHRINK
    write_reports(report, stories, tmp_path)
    said = ("Found in example 153. Hypothesis shrank it in 84 more examples (125,792 of at most 6,000,000 model "
            "events) to 19 actions; replaying it without whole actions (19 replays of at most 180) left 8 actions.")
    assert said in (tmp_path / "report.md").read_text()
    assert said in (tmp_path / "report.html").read_text()


def test_the_arguments_minimization_simplified_are_told():
    simplified = {**SHRINK, "simplified": ["scale-deployment: replicas 3 -> 1", "run: ms 30000 -> 1000"]}
    assert shrink_note(simplified).endswith(
        "replaying it without whole actions and with simpler arguments (19 replays of at most 180) left 8 actions, "
        "simplified: scale-deployment: replicas 3 -> 1; run: ms 30000 -> 1000.")
    assert shrink_note({**SHRINK, "simplified": []}) == shrink_note(SHRINK)


def test_a_shrink_cut_short_by_its_budget_says_so():
    assert "stopping when those events ran out" in shrink_note({**SHRINK, "budget_reached": True})
    assert "no action could be cut" in shrink_note({**SHRINK, "replays": 0})
    assert shrink_note(None) == shrink_note("garbage") == ""


def test_a_report_without_shrink_records_says_nothing_of_shrinking(tmp_path):
    stories = [story()]
    write_reports(report_dict(stories), stories, tmp_path)
    assert "Hypothesis shrank" not in (tmp_path / "report.md").read_text()


def test_report_files_and_traces_get_a_new_files_mode_not_a_temporary_ones(tmp_path):
    # mkstemp makes 0600 files: a report in a shared folder would be unreadable by the rest of the team
    from kmodel.checker.results import atomic_write_text
    from kmodel.checker.trace import read_trace, write_trace

    trace = read_trace(Path(__file__).parents[1] / "regressions" / "nodeipam-node-deleted-between-its-two-lists.json")
    old = os.umask(0o022)
    try:
        stories = two_stories()
        paths = write_reports(report_dict(stories), stories, tmp_path)
        paths += [write_json(report_dict(stories), tmp_path), atomic_write_text(tmp_path / "a.json", "{}\n"),
                  write_trace(trace, tmp_path / "traces" / "t.json"), tmp_path / "mermaid.min.js"]
        os.umask(0o027)  # a stricter umask is kept too
        paths.append(write_trace(trace, tmp_path / "traces" / "private.json"))
    finally:
        os.umask(old)
    modes = {path.name: path.stat().st_mode & 0o777 for path in paths}
    assert modes == {"report.md": 0o644, "report.html": 0o644, "report.json": 0o644, "a.json": 0o644,
                     "t.json": 0o644, "mermaid.min.js": 0o644, "private.json": 0o640}


def test_a_failing_report_opens_on_its_violations_and_its_verdict_links_to_them(tmp_path):
    # the tables of every invariant, rule and situation come after the violations, not before them
    for stories, target in (([story()], "#violation-1"), (two_stories(), "#violations")):
        md, page = (render_reports(report_dict(stories), stories)[name] for name in ("report.md", "report.html"))
        assert md.index("## Summary") < md.index("## Violations") < md.index("## Invariants") < md.index("## Rules")
        assert page.index('id="summary"') < page.index('id="violations"') < page.index('id="invariants"') \
            < page.index('id="rules"') < page.index("</main>")
        assert f'<strong><a href="{target}">FAIL: ' in page and target[1:] in page
        assert "| Verdict | **[FAIL: " in md and "](#violations)** |" in md
    passing = render_reports(report_dict(), [])
    assert "href" not in passing["report.html"] and "](#" not in passing["report.md"]
