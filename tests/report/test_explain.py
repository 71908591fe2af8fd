"""A report that explains a violation, from the committed trace of `kmodel check --seed 14` (the nodeipam leak):
what each step changed, what the violation names, the final state, the fix that takes it out, step numbers
that agree with `kmodel replay`, and a replay command that runs as printed."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from kmodel.checker.changes import Look, difference
from kmodel.checker.command import invocation
from kmodel.checker.replay import replay
from kmodel.checker.results import violation_story
from kmodel.checker.trace import read_trace
from kmodel.cli import main
from kmodel.report import render_reports, write_reports
from kmodel.report.story import StepChanges

TRACE = Path(__file__).parent / "traces" / "seed-14-no-cidr-leak.json"


class KV:
    def __init__(self, create: int, mod: int) -> None:
        self.create_revision, self.mod_revision = create, mod


def test_a_step_s_changes_are_the_difference_of_two_looks():
    before = Look({"pods/default/a": KV(2, 2), "pods/default/b": KV(3, 3), "pods/default/c": KV(4, 4),
                   "nodes/n": KV(5, 5)}, (), (), 0)
    after = Look({"pods/default/a": KV(2, 9), "pods/default/c": KV(10, 10), "nodes/n": KV(5, 5),
                  "pods/default/d": KV(11, 11)}, ("etcd",), ("kubelet/n, proxy/n",), 5000)
    change = difference(3, before, after)
    assert change == StepChanges(3, created=["pods/default/c", "pods/default/d"], updated=["pods/default/a"],
                                 deleted=["pods/default/b", "pods/default/c"], down=["etcd"],
                                 partitions=["kubelet/n, proxy/n"], time_ms=5000)


@pytest.fixture(scope="module")
def story():
    trace = read_trace(TRACE)
    replayed = replay(trace, record_changes=True)
    return violation_story(trace, replayed, str(TRACE), f"kmodel replay {TRACE}")


def test_the_story_records_what_each_step_changed(story):
    assert [c.step for c in story.changes] == list(range(len(story.steps))) == list(range(12))
    by_step = {c.step + 1: c for c in story.changes}
    assert "remove node-2" in story.steps[4]
    assert {"kubelet/node-2", "proxy/node-2"} <= set(by_step[5].down)          # its machine stopped
    assert "controller/nodeipam" in by_step[4].down and "controller/nodeipam" not in by_step[6].down
    assert "nodes/node-2" in by_step[3].created and "nodes/node-2" in by_step[12].deleted
    assert by_step[12].time_ms > by_step[11].time_ms


def test_the_story_names_what_the_violation_names_and_its_final_state(story):
    assert story.focus_objects == ("nodes/node-2",)                 # it held 10.244.1.0/24
    assert "controller/nodeipam" in story.focus_endpoints           # "node IPAM"
    (state,) = story.final_states
    assert state.ref == "nodes/node-2" and state.status.startswith("deleted in step 12")
    assert "podCIDR: 10.244.1.0/24" in state.text


def test_the_fix_that_takes_the_violation_out_comes_first(story):
    verdicts = {v.name: v for v in story.fixes}
    assert story.fixes[0].name == "nodeipam-release-by-owner" and story.fixes[0].takes_out
    assert story.fixes[0].command.endswith("--fix nodeipam-release-by-owner --lenient")
    # the other fix of no-cidr-leak answers another cause of it, not this one
    assert not verdicts["etcd-keep-compaction-tombstone"].takes_out
    assert "still violates no-cidr-leak" in verdicts["etcd-keep-compaction-tombstone"].outcome


def test_the_report_shows_the_changes_the_final_state_and_the_fix(story):
    files = render_reports({"violations": [{"invariant": story.invariant, "trace": story.trace_path}]}, [story])
    md, page = files["report.md"], files["report.html"]
    assert "| 5 | remove node-2 (stop its machine, kubectl delete node) |" in md
    assert "**`nodes/node-2`**" in md                                # named, in bold
    assert "**`nodeipam-release-by-owner` takes this violation out**" in md
    assert "Final state of what the violation names" in md and "podCIDR: 10.244.1.0/24" in md
    assert 'id="violation-1-step-8"' in page and '<code class="named">nodes/<wbr>node-2</code>' in page
    assert "Only the messages that touch what the violation names are drawn" in md


def _table_steps(md: str) -> list[tuple[int, str]]:
    # the action as written in Markdown, its punctuation unescaped
    return [(int(m.group(1)), re.sub(r"\\(.)", r"\1", m.group(2)))
            for m in re.finditer(r"^\| (\d+) \| (.+?) \| [\d.]+ s \|", md, re.M)]


def test_step_numbers_agree_between_the_report_and_kmodel_replay(story, capsys, tmp_path):
    write_reports({"violations": []}, [story], tmp_path)
    rows = _table_steps((tmp_path / "report.md").read_text())
    assert main(["replay", str(TRACE), "--state"]) == 1
    out = capsys.readouterr().out
    printed = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^ +(\d+)\. (.+)$", out, re.M)]
    assert printed == rows and rows[0][0] == 1 and len(rows) == 12
    # the violating step is the last row, in both
    assert f"after step {rows[-1][0]}:" in out
    # --state prints the same changes under each step
    step5 = out.split("\n   5. ")[1].split("\n   6. ")[0]
    assert re.search(r"^      down +controller/", step5, re.M) and "kubelet/node-2" in step5.split("down", 1)[1]


def test_quiet_and_state_together_are_bad_usage(capsys):
    assert main(["replay", str(TRACE), "--state", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "choose one" in err


def test_the_replay_command_runs_as_printed(tmp_path):
    """The command `kmodel check` prints and writes in the report (`invocation()` + " replay" + the trace),
    run by a shell from another folder, reproduces the violation."""
    command = f"{invocation()} replay {shlex.quote(str(TRACE))} --quiet"
    run = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    assert "VIOLATION no-cidr-leak after step 12" in run.stdout


def test_a_violation_no_known_fix_answers_says_so(story):
    import attrs

    alone = attrs.evolve(story, fixes=())
    files = render_reports({"violations": []}, [alone])
    assert "No known fix that is not already on answers no-cidr-leak" in files["report.md"]
    assert "No known fix that is not already on answers no-cidr-leak" in files["report.html"]
    assert "takes this violation out" not in files["report.md"]


def test_what_a_kubectl_step_asked_for_is_on_its_row_with_the_step_it_landed_in(story):
    # the model's kubectl sends its request when the loop lets it: the apply of step 1 lands during step 3
    by_step = {c.step + 1: c for c in story.changes}
    assert by_step[3].landed == (("deployments/default/web", 0), ("services/default/web", 1))
    assert by_step[12].landed == (("nodes/node-2", 4),)  # step 5's kubectl delete node, answered in the settle
    assert all(not c.landed for c in story.changes if c.step + 1 not in (3, 12))
    md = render_reports({"violations": [{"invariant": story.invariant, "trace": story.trace_path}]},
                        [story])["report.md"]
    rows = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\| (\d+) \| .*$", md, re.M)}
    assert "`deployments/default/web (landed in step 3)`" in rows[1]
    assert "`services/default/web (landed in step 3)`" in rows[2]
    assert "deployments/default/web" not in rows[3] and "services/default/web" not in rows[3]
    assert "**`nodes/node-2 (landed in step 12)`**" in rows[5]  # still in bold: the violation names it
    assert "nodes/node-2" not in rows[12]
