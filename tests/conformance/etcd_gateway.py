"""A real etcd for the conformance suite: start it, talk to its JSON gRPC gateway, stop it.

Standard library only. etcd 3.4 serves the gateway under both /v3/ and /v3beta/; we
use /v3/. Keys and values travel base64-encoded, int64 fields come back as strings,
and fields at their zero value are omitted, so every reader below supplies defaults.

Revisions: one etcd serves many generated sequences, each on its own key prefix, so
its revisions don't restart. A ``Mapping`` turns model revisions into etcd ones and
back with a fixed offset (model revision 1 = etcd's revision when the sequence
starts); 0 stays 0, since it means "current" or "none" on both sides.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any, Optional

from kmodel.store import (
    DeleteOp,
    DeleteRangeResponse,
    KeyEvent,
    KeyValue,
    PutOp,
    PutResponse,
    RangeOp,
    RangeResponse,
    StoreError,
    TxnResponse,
    WatchResponse,
)

GRPC_CODE_NAMES = {3: "InvalidArgument", 5: "NotFound", 9: "FailedPrecondition", 11: "OutOfRange"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdProcess:
    """One etcd member on loopback ports, with a throwaway data dir."""

    # short enough that the suite's barriers (see barrier() in the test module) are cheap
    PROGRESS_INTERVAL = "100ms"

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.data_dir = tempfile.mkdtemp(prefix="kmodel-etcd-")
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.proc: Optional[subprocess.Popen] = None

    def start(self, timeout: float = 30.0) -> None:
        client = f"http://127.0.0.1:{self.client_port}"
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(os.path.join(self.data_dir, "etcd.log"), "wb")
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--name", "conformance",
                "--data-dir", os.path.join(self.data_dir, "data"),
                "--listen-client-urls", client,
                "--advertise-client-urls", client,
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", f"conformance={peer}",
                "--experimental-watch-progress-notify-interval", self.PROGRESS_INTERVAL,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        gateway = Gateway(self.client_port)
        while True:
            if self.proc.poll() is not None:
                with open(self.log.name, "rb") as log:
                    tail = log.read()[-2000:].decode(errors="replace")
                raise RuntimeError(f"etcd exited with {self.proc.returncode}:\n{tail}")
            try:
                gateway.call("kv/range", {"key": _b64("probe")})
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("etcd did not answer in time")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        if getattr(self, "log", None):
            self.log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(field: Optional[str]) -> str:
    return base64.b64decode(field).decode() if field else ""


class Mapping:
    """Model revision <-> etcd revision, for one sequence."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def to_etcd(self, revision: int) -> int:
        return revision + self.offset if revision > 0 else revision

    def to_model(self, revision: int) -> int:
        return revision - self.offset if revision > 0 else revision


class Gateway:
    """Unary calls to etcd's JSON gateway, answered in the model's record types."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: Optional[http.client.HTTPConnection] = None

    def call(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode()
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                self.conn.request("POST", "/v3/" + path, body=data, headers={"Content-Type": "application/json"})
                return json.loads(self.conn.getresponse().read())
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    # --- requests, from model ops ------------------------------------------------------

    @staticmethod
    def range_body(op: RangeOp, m: Mapping) -> dict:
        body: dict[str, Any] = {"key": _b64(op.key)}
        if op.range_end:
            body["range_end"] = _b64(op.range_end)
        if op.revision:
            body["revision"] = m.to_etcd(op.revision)
        if op.limit:
            body["limit"] = op.limit
        if op.count_only:
            body["count_only"] = True
        if op.keys_only:
            body["keys_only"] = True
        return body

    @staticmethod
    def put_body(op: PutOp, m: Mapping) -> dict:
        return {"key": _b64(op.key), "value": _b64(op.value), "prev_kv": op.prev_kv}

    @staticmethod
    def delete_body(op: DeleteOp, m: Mapping) -> dict:
        body: dict[str, Any] = {"key": _b64(op.key), "prev_kv": op.prev_kv}
        if op.range_end:
            body["range_end"] = _b64(op.range_end)
        return body

    @classmethod
    def txn_body(cls, compare: list, success: list, failure: list, m: Mapping) -> dict:
        def cmp(c) -> dict:
            body: dict[str, Any] = {"key": _b64(c.key), "target": c.target, "result": c.result}
            if c.range_end:
                body["range_end"] = _b64(c.range_end)
            if c.target == "VALUE":
                body["value"] = _b64(c.value)
            elif c.target == "VERSION":
                body["version"] = c.value
            elif c.target == "CREATE":
                body["create_revision"] = m.to_etcd(c.value)
            elif c.target == "MOD":
                body["mod_revision"] = m.to_etcd(c.value)
            return body

        def op_body(op) -> dict:
            if isinstance(op, RangeOp):
                return {"request_range": cls.range_body(op, m)}
            if isinstance(op, PutOp):
                return {"request_put": cls.put_body(op, m)}
            return {"request_delete_range": cls.delete_body(op, m)}

        return {
            "compare": [cmp(c) for c in compare],
            "success": [op_body(op) for op in success],
            "failure": [op_body(op) for op in failure],
        }

    # --- answers, into model records ----------------------------------------------------

    @staticmethod
    def error(answer: dict) -> Optional[StoreError]:
        if "error" not in answer and "code" not in answer:
            return None
        code = answer.get("code", 2)
        return StoreError(GRPC_CODE_NAMES.get(code, str(code)), answer.get("message") or answer.get("error"))

    @staticmethod
    def header(answer: dict, m: Mapping) -> int:
        return m.to_model(int(answer.get("header", {}).get("revision", 0)))

    @staticmethod
    def kv(raw: Optional[dict], m: Mapping) -> Optional[KeyValue]:
        if raw is None:
            return None
        return KeyValue(
            _unb64(raw.get("key")),
            _unb64(raw.get("value")),
            m.to_model(int(raw.get("create_revision", 0))),
            m.to_model(int(raw.get("mod_revision", 0))),
            int(raw.get("version", 0)),
            int(raw.get("lease", 0)),
        )

    @classmethod
    def range_response(cls, a: dict, m: Mapping) -> RangeResponse:
        return RangeResponse(
            cls.header(a, m), [cls.kv(kv, m) for kv in a.get("kvs", [])], int(a.get("count", 0)), bool(a.get("more"))
        )

    @classmethod
    def put_response(cls, a: dict, m: Mapping) -> PutResponse:
        return PutResponse(cls.header(a, m), cls.kv(a.get("prev_kv"), m))

    @classmethod
    def delete_response(cls, a: dict, m: Mapping) -> DeleteRangeResponse:
        return DeleteRangeResponse(
            cls.header(a, m), int(a.get("deleted", 0)), [cls.kv(kv, m) for kv in a.get("prev_kvs", [])]
        )

    @classmethod
    def txn_response(cls, a: dict, m: Mapping) -> TxnResponse:
        responses = []
        for r in a.get("responses", []):
            if "response_range" in r:
                responses.append(cls.range_response(r["response_range"], m))
            elif "response_put" in r:
                responses.append(cls.put_response(r["response_put"], m))
            else:
                responses.append(cls.delete_response(r["response_delete_range"], m))
        return TxnResponse(cls.header(a, m), bool(a.get("succeeded")), responses)

    @classmethod
    def watch_response(cls, raw: dict, m: Mapping) -> WatchResponse:
        events = [
            KeyEvent(e.get("type", "PUT"), cls.kv(e["kv"], m), cls.kv(e.get("prev_kv"), m)) for e in raw.get("events", [])
        ]
        return WatchResponse(
            int(raw.get("watch_id", 0)),
            cls.header(raw, m),
            events,
            m.to_model(int(raw.get("compact_revision", 0))),
            bool(raw.get("canceled")),
            raw.get("cancel_reason", ""),
        )


class WatchStream:
    """One watch on its own streaming HTTP request; a thread collects what arrives."""

    def __init__(self, port: int, create_request: dict) -> None:
        self.messages: list[dict] = []
        self.closed = False
        self._lock = threading.Lock()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("POST", "/v3/watch", body=json.dumps({"create_request": create_request}).encode())
        self.response = self.conn.getresponse()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                line = line.strip()
                if line:
                    with self._lock:
                        self.messages.append(json.loads(line).get("result", {}))
        except Exception:  # noqa: BLE001 - closing the connection under a blocked read ends up here
            pass
        finally:
            self.closed = True

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.messages)

    def close(self) -> None:
        try:
            self.conn.sock and self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()
        self.thread.join(timeout=5)
