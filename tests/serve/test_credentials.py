"""Credentials no one can guess: each run draws its own tokens, the model's fixed tokens (admin-token, ...) are
refused from outside, a drawn token acts as its person (RBAC included), the kubeconfig is its owner's alone, and
the trace holds no drawn token and still replays."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Iterator
from urllib.request import Request, urlopen
from urllib.error import HTTPError

import pytest

from kmodel.serve.credentials import REFUSED, Credentials
from kmodel.serve.kubeconfig import write_kubeconfig
from kmodel.serve.recording import replay
from kmodel.serve.session import ServeSession

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def session() -> Iterator[ServeSession]:
    s = ServeSession(nodes=1, speed=5.0)  # plain HTTP: the tokens are what is tested here
    s.start()
    yield s
    s.stop()


def get(session: ServeSession, path: str, token: str) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urlopen(Request(session.url + path, headers=headers), timeout=30) as response:
            return response.status, json.loads(response.read())
    except HTTPError as e:
        return e.code, json.loads(e.read())


def test_each_session_draws_its_own_unguessable_tokens() -> None:
    first, second = Credentials([("admin", "admin-token"), ("bob", "bob-token")]), Credentials([("admin", "x")])
    assert [name for name, _ in first.users] == ["admin", "bob"]
    assert first.users[0][1] != second.users[0][1]
    assert len({token for _, token in first.users}) == 2
    for name, token in first.users:
        assert len(token) >= 40 and token != f"{name}-token"


def test_a_client_token_becomes_the_model_s_and_any_other_is_refused() -> None:
    credentials = Credentials([("admin", "admin-token")])
    [(_, token)] = credentials.users
    assert credentials.model_token(token) == "admin-token"
    assert credentials.model_token("") == ""  # anonymous stays anonymous
    for guess in ("admin-token", "node-node-1-token", "scheduler-token", token + "x", token[:-1]):
        assert credentials.model_token(guess) == REFUSED


def test_the_model_s_fixed_tokens_are_refused_with_401(session: ServeSession) -> None:
    for guess in ("admin-token", "alice-token", "bob-token", "scheduler-token", "node-node-1-token",
                  "sa-deployment-controller-token"):
        code, status = get(session, CONFIGMAPS, guess)
        assert (code, status["reason"], status["message"]) == (401, "Unauthorized", "Unauthorized"), guess


def test_a_drawn_token_acts_as_its_person(session: ServeSession) -> None:
    tokens = dict(session.users)
    assert get(session, CONFIGMAPS, tokens["admin"])[0] == 200
    code, status = get(session, CONFIGMAPS, tokens["bob"])  # bob has no RoleBinding
    assert code == 403 and status["message"].startswith('configmaps is forbidden: User "bob" cannot list')
    code, status = get(session, CONFIGMAPS, "")
    assert code == 403 and 'User "system:anonymous"' in status["message"]


def test_the_control_endpoint_refuses_the_old_admin_token(session: ServeSession) -> None:
    request = Request(session.url + "/kmodel/control", method="POST", data=b'{"action": "heal", "target": "etcd"}',
                      headers={"Authorization": "Bearer admin-token", "Content-Type": "application/json"})
    with pytest.raises(HTTPError) as refused:
        urlopen(request, timeout=30)
    assert refused.value.code == 401


def test_the_trace_holds_no_drawn_token_and_replays(session: ServeSession, tmp_path: Path) -> None:
    tokens = dict(session.users)
    assert get(session, CONFIGMAPS, tokens["admin"])[0] == 200
    trace = tmp_path / "trace.json"

    def write() -> str:  # on the model's thread: the digest and the operations of one moment
        digest = session.cluster.loop.digest()
        session.recorder.write(trace, digest)
        return digest

    digest = session.model.call(write)
    text = trace.read_text()
    assert '"token": "admin-token"' in text  # what the model authenticated
    assert not any(token in text for token in tokens.values())
    assert replay(json.loads(text)) == digest


def test_the_kubeconfig_is_its_owner_s_alone(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("old")
    path.chmod(0o644)  # a kubeconfig left by someone else's run keeps no wider mode
    old = os.umask(0)
    try:
        write_kubeconfig(path, "https://127.0.0.1:6443", Credentials([("admin", "admin-token")]).users)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
