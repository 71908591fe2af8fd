"""Requests per second through `kmodel serve` over HTTPS, and watch events per second, with no event lost.

Run: python benchmarks/bench_serve.py [--seconds S] [--clients C] [--creates N] [--http]

Starts `kmodel serve --nodes 3 --port 0` as its own process, then, from C client threads each holding one
keep-alive connection (as client-go keeps its connections): GETs of one ConfigMap for S seconds, then N creates of
ConfigMaps (each recording its field manager, bench-serve, from the User-Agent), while one watch of ConfigMaps
streams their ADDED events. Prints gets/s, creates/s and watch
events/s, checks that the watch saw every created ConfigMap exactly once and in the order of their
resourceVersions, and prints the machine's load average beside the figures (the figures depend on it).
Exit 1 when an event was lost.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]


def start_server(folder: Path, plain_http: bool) -> tuple[subprocess.Popen, str, dict]:
    kubeconfig = folder / "kubeconfig"
    cmd = [sys.executable, "-m", "kmodel", "serve", "--nodes", "3", "--port", "0", "--kubeconfig", str(kubeconfig)]
    if plain_http:
        cmd.append("--http")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"kmodel serve did not start: {line!r}")
    config = yaml.safe_load(kubeconfig.read_text())
    return proc, config["clusters"][0]["cluster"]["server"], config


class Conn:
    """One keep-alive connection with the admin's token (the kubeconfig's, drawn for this run)."""

    def __init__(self, url: str, tls: ssl.SSLContext | None, token: str) -> None:
        parts = urlsplit(url)
        if tls is not None:
            self.conn: http.client.HTTPConnection = http.client.HTTPSConnection(parts.hostname, parts.port,
                                                                                 context=tls)
        else:
            self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        # a User-Agent, as every client library sends: each create then records its field manager (managedFields)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json", "User-Agent": "bench-serve/1.0"}

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=self.headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read())


def run_clients(clients: int, work: callable) -> None:
    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--http", action="store_true", help="plain HTTP instead of HTTPS")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    proc, url, config = start_server(folder, args.http)
    token = next(u["user"]["token"] for u in config["users"] if u["name"] == "admin")
    tls = None
    if not args.http:
        tls = ssl.create_default_context(cafile=str(folder / "server.crt"))
    base = "/api/v1/namespaces/default/configmaps"
    try:
        Conn(url, tls, token).request("POST", base, {"metadata": {"name": "target"}, "data": {"k": "v"}})
        counts = [0] * args.clients
        deadline = time.monotonic() + args.seconds

        def gets(i: int) -> None:
            conn = Conn(url, tls, token)
            while time.monotonic() < deadline:
                status, _ = conn.request("GET", f"{base}/target")
                assert status == 200
                counts[i] += 1

        t0 = time.monotonic()
        run_clients(args.clients, gets)
        get_rate = sum(counts) / (time.monotonic() - t0)

        _, listed = Conn(url, tls, token).request("GET", base)
        seen: list[tuple[str, int]] = []
        watch_done = threading.Event()
        first_event: list[float] = []

        def watch() -> None:
            conn = Conn(url, tls, token)
            path = f"{base}?watch=true&resourceVersion={listed['metadata']['resourceVersion']}&timeoutSeconds=600"
            conn.conn.request("GET", path, headers=conn.headers)
            response = conn.conn.getresponse()
            while len(seen) < args.creates:
                line = response.fp.readline()  # chunk size
                if not line:
                    break
                size = int(line.strip() or b"0", 16)
                if size == 0:
                    break
                data = response.fp.read(size + 2)[:-2]
                for text in data.splitlines():
                    event = json.loads(text)
                    if event["type"] == "ADDED":
                        if not first_event:
                            first_event.append(time.monotonic())
                        meta = event["object"]["metadata"]
                        seen.append((meta["name"], int(meta["resourceVersion"])))
            watch_done.set()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        per_client = args.creates // args.clients
        created: list[str] = []

        def creates(i: int) -> None:
            conn = Conn(url, tls, token)
            for n in range(per_client):
                name = f"c-{i}-{n}"
                status, body = conn.request("POST", base, {"metadata": {"name": name}, "data": {"n": str(n)}})
                assert status == 201, body
                created.append(name)

        t0 = time.monotonic()
        run_clients(args.clients, creates)
        create_time = time.monotonic() - t0
        args.creates = len(created)
        watch_done.wait(60)
        watch_time = time.monotonic() - t0
        names = [n for n, _ in seen]
        lost = sorted(set(created) - set(names))
        duplicated = len(names) - len(set(names))
        ordered = [rv for _, rv in seen] == sorted(rv for _, rv in seen)
        load = os.getloadavg()
        print(f"kmodel serve over {'HTTP' if args.http else 'HTTPS'}, {args.clients} clients, keep-alive; "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
        print(f"  GET configmap      {get_rate:8.0f} requests/s ({sum(counts)} in {args.seconds:g} s)")
        print(f"  POST configmap     {len(created) / create_time:8.0f} requests/s ({len(created)})")
        print(f"  watch ADDED events {len(seen) / watch_time:8.0f} events/s ({len(seen)} of {len(created)}; "
              f"lost {len(lost)}, duplicated {duplicated}, in resourceVersion order: {ordered})")
        return 1 if lost or duplicated or not ordered else 0
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
