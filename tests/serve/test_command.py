"""`kmodel serve` as a command: it starts, prints where it listens and where the kubeconfig is, serves, and on
SIGINT stops and writes its report and its trace, which `--replay` runs again to the same digest; bad options exit 2
with one line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from kmodel.cli import main


def test_serve_starts_prints_one_line_and_writes_its_report_on_sigint(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc" / "kubeconfig"
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "kmodel", "serve", "--port", "0", "--nodes", "3",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("kmodel serve: listening on https://127.0.0.1:"), line
        assert f"kubeconfig {kubeconfig}" in line
        assert time.monotonic() - started < 15  # under 3 s on an idle machine; generous for a loaded one
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["current-context"] == "admin"
        assert [u["name"] for u in config["users"]] == ["admin", "alice", "bob"]
        assert config["clusters"][0]["cluster"]["server"] in line
        assert (kubeconfig.parent / "server.crt").exists()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "kmodel serve: stopped at logical time" in out
    report = json.loads((kubeconfig.parent / "report.json").read_text())
    assert report["model_error"] is None
    assert [n["name"] for n in report["nodes"]] == ["node-1", "node-2", "node-3"]
    trace = kubeconfig.parent / "trace.json"
    replayed = subprocess.run([sys.executable, "-m", "kmodel", "serve", "--replay", str(trace)], capture_output=True,
                              text=True, timeout=120)
    assert replayed.returncode == 0, replayed.stderr
    assert f"digest {report['digest']} (the same as recorded)" in replayed.stdout


def test_two_runs_write_different_tokens_and_refuse_the_old_one(tmp_path: Path) -> None:
    import ssl
    import stat
    from urllib.error import HTTPError
    from urllib.request import Request, urlopen

    tokens = []
    for run in ("one", "two"):
        kubeconfig = tmp_path / run / "kubeconfig"
        proc = subprocess.Popen([sys.executable, "-m", "kmodel", "serve", "--port", "0", "--nodes", "1",
                                 "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            assert "listening on" in proc.stdout.readline()  # type: ignore[union-attr]
            assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
            config = yaml.safe_load(kubeconfig.read_text())
            tokens.append({u["name"]: u["user"]["token"] for u in config["users"]})
            context = ssl.create_default_context(cafile=str(kubeconfig.parent / "server.crt"))
            url = config["clusters"][0]["cluster"]["server"] + "/api/v1/namespaces/default/configmaps"
            for token, code in ((tokens[-1]["admin"], 200), ("admin-token", 401)):
                try:
                    with urlopen(Request(url, headers={"Authorization": f"Bearer {token}"}), context=context,
                                 timeout=30) as response:
                        got = response.status
                except HTTPError as e:
                    got = e.code
                assert got == code, token
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)
    assert tokens[0].keys() == tokens[1].keys() == {"admin", "alice", "bob"}
    assert all(tokens[0][name] != tokens[1][name] for name in tokens[0])


def test_bad_options_exit_2_with_one_line(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--nodes", "0", "--kubeconfig", str(tmp_path / "k")]) == 2
    assert main(["serve", "--speed", "0", "--kubeconfig", str(tmp_path / "k")]) == 2
    assert main(["serve", "-f", str(tmp_path / "missing.yaml"), "--kubeconfig", str(tmp_path / "k")]) == 2
    (tmp_path / "not-a-trace.json").write_text("{}")
    assert main(["serve", "--replay", str(tmp_path / "not-a-trace.json")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "kmodel serve: error: --nodes must be at least 1 (got 0)"
    assert err[1] == "kmodel serve: error: --speed must be a positive number (got 0.0)"
    assert err[2].startswith("kmodel serve: error: ") and "missing.yaml" in err[2]
    assert err[3].endswith("not-a-trace.json is not a kmodel serve recording (version 1): give the trace.json a "
                           "kmodel serve run wrote")
