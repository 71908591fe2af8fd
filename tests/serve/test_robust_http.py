"""Requests that must not break the server: each malformed or refused request goes over one TLS keep-alive
connection, followed by a normal request on the same connection; every answer is a metav1.Status with
upstream's code and reason, the server keeps serving and prints nothing. A slow client holds only its own
connection."""

from __future__ import annotations

import json
import socket
import ssl
import time
from typing import Any, Iterator, Optional

import pytest

from kmodel.serve import body
from kmodel.serve.session import ServeSession

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class Connection:
    """One raw TLS connection to the server, requests written byte for byte, answers read as HTTP/1.1."""

    def __init__(self, session: ServeSession) -> None:
        host, port = session.server.server_address[:2]
        context = ssl.create_default_context(cafile=str(session.certificate))
        self.sock = context.wrap_socket(socket.create_connection((host, port), timeout=30), server_hostname=host)
        self.file = self.sock.makefile("rb")
        self.token = dict(session.users)["admin"]

    def request(self, method: str, path: str, data: bytes = b"", headers: str = "",
                length: Optional[str] = None) -> None:
        length = str(len(data)) if length is None else length
        head = (f"{method} {path} HTTP/1.1\r\nHost: kmodel\r\nAuthorization: Bearer {self.token}\r\n{headers}"
                f"Content-Length: {length}\r\n\r\n")
        self.sock.sendall(head.encode() + data)

    def answer(self) -> tuple[int, dict, Any]:
        """(code, headers in lower case, the JSON body)."""
        status = self.file.readline()
        assert status.startswith(b"HTTP/1.1 "), status
        headers = {}
        while (line := self.file.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        data = self.file.read(int(headers.get("content-length", "0")))
        return int(status.split()[1]), headers, json.loads(data) if data else None

    def closed_by_server(self) -> bool:
        return self.file.read(1) == b""

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSession]:
    s = ServeSession(nodes=1, speed=5.0, tls_dir=tmp_path_factory.mktemp("robust"))
    s.start()
    yield s
    assert s.stop()["model_error"] is None


def assert_status(answer: tuple[int, dict, Any], code: int, reason: str, message: str = "") -> None:
    got, headers, status = answer
    assert got == code, status
    assert headers["content-type"] == "application/json"
    assert status["kind"] == "Status" and status["status"] == "Failure"
    assert (status["code"], status["reason"]) == (code, reason)
    assert message in status["message"]


def assert_still_serving(conn: Connection) -> None:
    conn.request("GET", CONFIGMAPS)
    code, headers, answer = conn.answer()
    assert code == 200 and answer["kind"] == "ConfigMapList"
    assert headers.get("connection") != "close"


JSON = "Content-Type: application/json\r\n"
CASES = [
    # (what, method, path, body, headers, code, reason, message)
    ("an unserved resource with a body", "POST", "/api/v1/namespaces/default/widgets",
     b'{"metadata": {"name": "w"}}', JSON, 404, "NotFound", "the server could not find the requested resource"),
    ("a protobuf body without its magic", "POST", CONFIGMAPS, b"\n\x0f\n\x02v1\x12\tConfigMap\x12\x00",
     "Content-Type: application/vnd.kubernetes.protobuf\r\n", 400, "BadRequest",
     "not a Kubernetes protobuf object"),
    ("a text body", "PUT", CONFIGMAPS + "/c", b"hello", "Content-Type: text/plain\r\n", 415, "UnsupportedMediaType",
     "application/json"),
    ("an apply without a field manager", "PATCH", CONFIGMAPS + "/c", b"metadata:\n  name: c\n",
     "Content-Type: application/apply-patch+yaml\r\n", 422, "Invalid", "fieldManager: Required value"),
    ("JSON nested 5,000 deep", "POST", CONFIGMAPS, b"[" * 5000 + b"]" * 5000, JSON, 400, "BadRequest",
     f"nested more than {body.MAX_DEPTH} levels"),
    ("an object nested past the limit", "POST", CONFIGMAPS,
     b'{"a":' * (body.MAX_DEPTH + 1) + b"1" + b"}" * (body.MAX_DEPTH + 1), JSON, 400, "BadRequest", "nested"),
    ("a body that is not JSON", "POST", CONFIGMAPS, b"{not json", JSON, 400, "BadRequest", "could not be decoded"),
    ("a body over 3 MiB", "POST", CONFIGMAPS, b" " * (body.MAX_BODY_BYTES + 1), JSON, 413, "RequestEntityTooLarge",
     "Request entity too large: limit is 3145728"),
    ("a dry run of an unknown kind", "POST", CONFIGMAPS + "?dryRun=Some", b'{"metadata": {"name": "d"}}', JSON,
     422, "Invalid", 'dryRun: Unsupported value: []string{"Some"}: supported values: "All"'),
    ("a bad query with a body", "DELETE", CONFIGMAPS + "/c?gracePeriodSeconds=soon", b"{}", JSON, 400,
     "BadRequest", "gracePeriodSeconds"),
    ("a method a resource does not take", "PUT", CONFIGMAPS, b"{}", JSON, 405, "MethodNotAllowed", ""),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_refused_request_leaves_the_connection_usable(session: ServeSession, case: tuple) -> None:
    _, method, path, data, headers, code, reason, message = case
    conn = Connection(session)
    try:
        assert_still_serving(conn)
        conn.request(method, path, data, headers)
        answer = conn.answer()
        assert_status(answer, code, reason, message)
        assert answer[1].get("connection") != "close"
        assert_still_serving(conn)
    finally:
        conn.close()


def test_every_refusal_in_turn_on_one_connection(session: ServeSession, capfd: pytest.CaptureFixture) -> None:
    conn = Connection(session)
    try:
        for _, method, path, data, headers, code, reason, message in CASES:
            conn.request(method, path, data, headers)
            assert_status(conn.answer(), code, reason, message)
        assert_still_serving(conn)
    finally:
        conn.close()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def test_a_chunked_body_is_read_whole(session: ServeSession) -> None:
    conn = Connection(session)
    try:
        payload = json.dumps({"metadata": {"name": "chunked"}, "data": {"k": "v"}}).encode()
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (payload[:10], payload[10:])) + b"0\r\n\r\n"
        head = (f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: kmodel\r\nAuthorization: Bearer {conn.token}\r\n{JSON}"
                f"Transfer-Encoding: chunked\r\n\r\n")
        conn.sock.sendall(head.encode() + chunks)
        code, _, created = conn.answer()
        assert code == 201 and created["data"] == {"k": "v"}
        assert_still_serving(conn)
    finally:
        conn.close()


@pytest.mark.parametrize("length", ["abc", "-1", "12, 13", "0x10"])
def test_a_bad_content_length_is_400_and_closes_the_connection(session: ServeSession, length: str) -> None:
    conn = Connection(session)
    try:
        conn.request("POST", CONFIGMAPS, b"{}", JSON, length=length)
        answer = conn.answer()
        assert_status(answer, 400, "BadRequest", "Content-Length")
        assert answer[1]["connection"] == "close"  # where the next request starts is unknown
        assert conn.closed_by_server()
    finally:
        conn.close()
    fresh = Connection(session)
    try:
        assert_still_serving(fresh)
    finally:
        fresh.close()


def test_a_body_too_long_to_drain_is_413_and_closes_the_connection(session: ServeSession) -> None:
    conn = Connection(session)
    try:
        conn.request("POST", CONFIGMAPS, b"", JSON, length=str(body.DRAIN_BYTES + 1))  # and sends none of it
        answer = conn.answer()
        assert_status(answer, 413, "RequestEntityTooLarge", "limit is 3145728")
        assert answer[1]["connection"] == "close"
        assert conn.closed_by_server()
    finally:
        conn.close()


def test_a_malformed_request_line_is_a_status(session: ServeSession) -> None:
    conn = Connection(session)
    try:
        conn.sock.sendall(b"NOT A REQUEST\r\n\r\n")
        answer = conn.answer()
        assert answer[0] == 400 and answer[2]["kind"] == "Status" and answer[2]["reason"] == "BadRequest"
        assert answer[1]["connection"] == "close"
    finally:
        conn.close()


def test_a_slow_client_holds_only_its_own_connection(session: ServeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = session.server.RequestHandlerClass
    monkeypatch.setattr(handler, "timeout", 1.0)
    slow = Connection(session)
    try:
        # headers that promise a body, then nothing: the server waits for it on the connection's own thread
        slow.sock.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: kmodel\r\n{JSON}Content-Length: 100\r\n\r\n{{"
                          .encode())
        other = Connection(session)
        try:
            started = time.monotonic()
            assert_still_serving(other)  # answered while the slow client is being waited for
            assert time.monotonic() - started < 0.9
        finally:
            other.close()
        assert slow.closed_by_server()  # after the read timeout, without an answer (no whole request came)
    finally:
        slow.close()


def test_a_vanished_client_leaves_nothing_behind(session: ServeSession, capfd: pytest.CaptureFixture) -> None:
    # one goes away in the middle of its body, one right after its request (before the model answers)
    half = Connection(session)
    half.sock.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: kmodel\r\n{JSON}Content-Length: 100\r\n\r\n{{\"a\""
                      .encode())
    half.close()
    gone = Connection(session)
    gone.request("POST", CONFIGMAPS, json.dumps({"metadata": {"name": "orphan"}}).encode(), JSON)
    gone.close()
    conn = Connection(session)
    try:
        deadline = time.monotonic() + 10
        while True:  # the create the vanished client sent is still done by the model
            conn.request("GET", CONFIGMAPS + "/orphan")
            code, _, _ = conn.answer()
            if code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert code == 200
    finally:
        conn.close()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
