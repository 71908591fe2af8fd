"""`kmodel check` refuses bad usage with one line and exit code 2, before it spends any time exploring."""

from __future__ import annotations

import json

import pytest

from kmodel.cli import main


@pytest.mark.parametrize("argv, words", [
    (["--variant", "nope"], "nope"),
    (["--examples", "0"], "examples"),
    (["--profile", "fast"], "fast"),
    (["--require-sometimes", "rolling-update,no-such-situation"], "no-such-situation"),
])
def test_bad_options_exit_2(argv, words, capsys, tmp_path):
    try:
        code = main(["check", "--report", str(tmp_path / "r"), *argv])
    except SystemExit as exc:  # argparse's own refusals (an unknown choice) exit from inside the parser
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err.strip().splitlines()[-1] and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_a_report_path_that_is_a_file_is_refused_before_exploring(capsys, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    assert main(["check", "--examples", "1", "--report", str(taken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is a file, not a folder" in err
    assert main(["check", "--examples", "1", "--report", str(taken / "below")]) == 2
    assert "cannot create the folder" in capsys.readouterr().err
    assert taken.read_text() == "not a folder"


def test_a_reader_that_goes_away_ends_replay_quietly_with_the_sigpipe_status():
    import subprocess
    import sys
    from pathlib import Path

    trace = Path(__file__).parents[1] / "regressions" / "deployment-stale-desired-replicas-annotation-blocks-rollout.json"
    proc = subprocess.Popen([sys.executable, "-m", "kmodel", "replay", str(trace)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=Path(__file__).parents[2])
    proc.stdout.close()  # the reader is gone before anything is written (`kmodel replay T | head -0`)
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 141
    assert stderr == ""  # no traceback, no "internal error", no "Exception ignored"


def test_the_report_names_the_kmodel_and_hypothesis_releases_the_run_used(tmp_path):
    # a seed explores what this Hypothesis draws: a digest is only comparable with one from the same release
    import json

    import hypothesis

    import kmodel

    folder = tmp_path / "r"
    assert main(["check", "--examples", "1", "--steps", "2", "--report", str(folder)]) == 0
    report = json.loads((folder / "report.json").read_text())
    assert report["hypothesis"] == hypothesis.__version__ and report["kmodel"] == kmodel.__version__
    assert f"| Hypothesis | `{hypothesis.__version__}` |" in (folder / "report.md").read_text()



def test_invariants_wraps_its_guarantees_within_the_width(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["invariants"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "PRINCIPLE", "GUARANTEE"]
    assert max(len(line) for line in lines) <= 120
    column = lines[0].index("GUARANTEE")
    continued = [line for line in lines[1:] if line[:column].strip() == ""]
    assert continued and all(line[column] != " " for line in continued)  # under the GUARANTEE column
    # every word of every guarantee is still there, in order
    from kmodel.checker.session import all_invariants

    text = " ".join(line[column:].strip() for line in lines[1:])
    for inv in all_invariants():
        assert " ".join(inv.guarantee.split()) in text


def test_a_required_situation_never_reached_fails_the_run_and_is_reported(tmp_path, capsys):
    import json

    folder = tmp_path / "r"
    assert main(["check", "--seed", "1", "--examples", "3", "--fix", "all", "--report", str(folder),
                 "--require-sometimes", "liveness-restart"]) == 1
    out = capsys.readouterr().out
    assert "UNREACHED liveness-restart: no example reached it (required by --require-sometimes)" in out
    report = json.loads((folder / "report.json").read_text())
    assert report["required_sometimes"] == {"names": ["liveness-restart"], "unreached": ["liveness-restart"]}
    assert report["violations"] == []
    reached = [e["name"] for e in report["sometimes"] if e["examples"]]
    assert reached, "the example reached no situation at all"
    assert main(["check", "--seed", "1", "--examples", "3", "--fix", "all", "--report", str(folder),
                 "--require-sometimes", ",".join(reached)]) == 0


def test_the_last_line_names_the_report_to_open_and_the_two_beside_it(tmp_path, capsys):
    folder = tmp_path / "r"
    assert main(["check", "--examples", "1", "--steps", "2", "--report", str(folder)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    named = [folder / name for name in ("report.html", "report.md", "report.json")]
    assert last == "report: " + ", ".join(str(path) for path in named)
    assert all(path.is_file() for path in named)


def test_the_fixes_banner_wraps_between_names_within_the_width(tmp_path, capsys, monkeypatch):
    from kmodel.fixes import FIXES

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["check", "--examples", "1", "--steps", "2", "--fix", "all", "--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out.splitlines()
    banner = out[:next(i for i, line in enumerate(out) if line.startswith("kmodel check:"))]
    assert len(banner) > 1 and banner[0].startswith("fixes on: ")
    assert all(len(line) <= 80 for line in banner)
    assert all(line.startswith(" " * len("fixes on: ")) for line in banner[1:])  # under the first name
    names = " ".join(banner)[len("fixes on: "):].replace(",", " ").split()
    assert names == [f.name for f in FIXES]  # every name whole, in order


def test_a_run_that_replays_saved_failures_from_the_database_says_so_first(tmp_path, capsys):
    # an anti-pattern variant that fails within a few examples, so that the first run saves its failure
    campaign = ["check", "--variant", "edge-triggered", "--examples", "60", "--steps", "8", "--seed", "1",
                "--database", str(tmp_path / "db"), "--report", str(tmp_path / "r")]
    assert main(campaign) == 1
    first = capsys.readouterr().out.splitlines()
    assert first[0].startswith("kmodel check: ")  # an empty database: nothing to say
    saved = json.loads((tmp_path / "r" / "report.json").read_text())["parallel"]["database_entries_saved"]
    assert saved >= 1
    assert main(campaign) == 1
    again = capsys.readouterr().out.splitlines()
    assert again[0] == (f"replaying {saved} saved failing example{'s' if saved > 1 else ''} from the example "
                        f"database {tmp_path / 'db'} first (--database none explores the seed alone)")
    assert again[1].startswith("kmodel check: ")


@pytest.mark.parametrize("command, room", [("invariants", 24), ("fixes", 45)])
def test_piped_tables_break_lines_only_between_words(command, room):
    # stdout is not a terminal: 100 columns, and a long word (a label, a trace's file name) is never cut in two
    import os
    import subprocess
    import sys

    from kmodel.checker.session import all_invariants
    from kmodel.fixes import FIXES

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    out = subprocess.run([sys.executable, "-m", "kmodel", command], capture_output=True, text=True, env=env,
                         check=True, timeout=120).stdout
    tokens = set(out.split())
    if command == "invariants":
        texts = [inv.guarantee for inv in all_invariants()]
    else:
        texts = [f"tests/regressions/{t}" for f in FIXES for t in f.traces] + [f.bug for f in FIXES]
    words = {word.rstrip(",") for text in texts for word in text.split()}
    assert {w for w in words if w not in tokens and w + "," not in tokens} == set()
    assert any(len(word) > room for word in words)  # a word longer than its column's room, kept whole
