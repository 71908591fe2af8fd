"""Faults while serving: the control endpoint acts on the model while clients are connected (a crashed API
server answers 503 through the gateway, a restarted one serves again), only the admin may act, scheduled faults
run at their logical time, and live invariant checks report each violation once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from kmodel.serve.live import LiveChecker
from kmodel.serve.session import ServeSession
from kmodel.simulate.inputs import parse_fault
from kmodel.invariants.registry import SAFETY, Invariant

urllib3 = pytest.importorskip("urllib3")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSession]:
    lines: list[str] = []
    s = ServeSession(nodes=2, speed=5.0, faults=[parse_fault("crash:scheduler@1"), parse_fault("restart:scheduler@2")],
                     echo=lines.append)
    s.lines = lines  # type: ignore[attr-defined]
    s.start()
    yield s
    s.stop()


def call(session: ServeSession, method: str, path: str, body: Any = None, user: str = "admin") -> tuple[int, dict]:
    token = dict(session.users)[user]
    http = urllib3.PoolManager()
    response = http.request(method, session.url + path, body=None if body is None else json.dumps(body),
                            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return response.status, json.loads(response.data)


def test_a_crashed_api_server_answers_503_until_it_restarts(session: ServeSession) -> None:
    assert call(session, "GET", "/api/v1/namespaces/default")[0] == 200
    code, answer = call(session, "POST", "/kmodel/control", {"action": "crash", "target": "apiserver-0"})
    assert (code, answer["endpoints"]) == (200, ["apiserver-0"])
    code, status = call(session, "GET", "/api/v1/namespaces/default")
    assert code == 503 and status["reason"] == "ServiceUnavailable"
    assert status["message"] == "connection refused by apiserver-0"
    assert call(session, "POST", "/kmodel/control", {"action": "restart", "target": "apiserver-0"})[0] == 200
    deadline = time.monotonic() + 10
    while call(session, "GET", "/api/v1/namespaces/default")[0] != 200:  # its watch cache fills again first
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_only_the_admin_may_act_and_bad_actions_are_refused(session: ServeSession) -> None:
    code, answer = call(session, "POST", "/kmodel/control", {"action": "crash", "target": "etcd"}, user="bob")
    assert code == 403 and "only system:masters" in answer["error"]
    code, answer = call(session, "POST", "/kmodel/control", {"action": "crash", "target": "nowhere"})
    assert code == 400 and answer["error"].startswith("unknown target 'nowhere'")
    code, answer = call(session, "POST", "/kmodel/control", {"action": "explode", "target": "etcd"})
    assert code == 400 and answer["error"].startswith("unknown action 'explode'")


def test_scheduled_faults_run_at_their_logical_time(session: ServeSession) -> None:
    deadline = time.monotonic() + 10
    while len([a for a in session.actions if a[2] == "scheduler"]) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    scheduled = [(t, a) for t, a, target, _ in session.actions if target == "scheduler"]
    assert scheduled == [(1000, "crash"), (2000, "restart")]
    assert "kmodel serve: crash scheduler at logical time 1 s (scheduler)" in session.lines  # type: ignore[attr-defined]


def test_live_checks_hold_on_a_served_cluster_and_report_a_violation_once() -> None:
    s = ServeSession(nodes=1)
    s.cluster.run(5000)
    live = LiveChecker(s.cluster)
    assert live.invariants and live.check() == []
    live.invariants = [*live.invariants, Invariant("always-broken", SAFETY, "test", "Never holds.",
                                                    lambda cluster, memo: iter(["it broke"]))]
    live._memos["always-broken"] = {}
    first = live.check()
    assert [(v.invariant, v.message, v.at_ms) for v in first] == [("always-broken", "it broke", 5000)]
    assert first[0].line() == "kmodel serve: invariant always-broken violated at logical time 5 s: it broke"
    assert live.check() == []  # reported once
    assert len(live.violations) == 1


def test_a_watch_whose_client_went_away_is_ended_in_the_model(session: ServeSession) -> None:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(session.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=true",
                 headers={"Authorization": f"Bearer {dict(session.users)['admin']}"})
    response = conn.getresponse()
    assert response.status == 200
    assert session.model.call(lambda: len(session.gateway.watches)) == 1
    response.close()  # the client goes away without a word
    conn.close()
    deadline = time.monotonic() + 10
    while session.model.call(lambda: len(session.gateway.watches)):
        assert time.monotonic() < deadline, "the watch stayed open in the model"
        time.sleep(0.1)


def test_a_served_run_replays_to_the_same_digest(tmp_path: Path) -> None:
    from kmodel.serve.recording import read_recording, replay

    s = ServeSession(nodes=2, speed=5.0, faults=[parse_fault("crash:scheduler@1")])
    s.start()
    try:
        assert call(s, "POST", "/api/v1/namespaces/default/configmaps",
                    {"metadata": {"name": "one"}, "data": {"k": "v"}})[0] == 201
        assert call(s, "POST", "/kmodel/control", {"action": "partition", "target": "node-2"})[0] == 200
        # a patch without a patch media type is refused by the server before it reaches the model
        assert call(s, "PATCH", "/api/v1/namespaces/default/configmaps/one", {"data": {"k": "w"}})[0] == 415
        assert call(s, "DELETE", "/api/v1/namespaces/default/configmaps/one")[0] == 200
        time.sleep(0.5)
    finally:
        report = s.stop()
    trace = tmp_path / "trace.json"
    s.recorder.write(trace, report["digest"])
    data = read_recording(trace)
    assert [op[1]["verb"] for op in data["ops"] if op[0] == "submit"] == ["create", "delete"]
    assert sorted(op[1] for op in data["ops"] if op[0] == "act") == ["crash", "partition"]
    assert replay(data) == report["digest"]
    # a request changed in the trace: the replay does something else, and its digest says so
    first = next(op for op in data["ops"] if op[0] == "submit")
    first[1]["body"]["data"] = {"k": "changed"}
    assert replay(data) != report["digest"]
