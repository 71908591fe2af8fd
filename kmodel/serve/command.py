"""The `kmodel serve` subcommand: options, the one line it prints, the report it writes on Ctrl-C."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from kmodel.cluster.leader_elect_option import add_leader_elect_option
from kmodel.errors import KmodelUsageError
from kmodel.serve.kubeconfig import write_kubeconfig
from kmodel.serve.tls import TLSError
from kmodel.serve.control import ControlError
from kmodel.simulate.inputs import InputError, parse_fault, read_manifests

HELP = "serve a model cluster over HTTPS (--http: plain HTTP) as kube-apiserver does, for kubectl and client libraries"
EPILOG = """The model runs in real time (logical milliseconds follow the wall clock, times --speed). Every request
goes through the model's API server and its whole pipeline (bearer-token authentication, RBAC, admission,
validation). The kubeconfig names the admin user (current context) and alice, bob and the users the manifests'
RBAC names. The safety invariants are checked live: each violation is printed once and written to the report.
`kmodel ctl` partitions, heals, crashes, restarts or pauses components while clients are connected.
Ctrl-C (SIGINT) or SIGTERM stops the server and writes the report (JSON) beside the kubeconfig, and the run's
trace.json, which `kmodel replay` (or `kmodel serve --replay`) runs again without the clients.
See docs/serve.md for what is served."""

DEFAULT_DIR = Path("reports") / "serve"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help=HELP, description=HELP, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-f", "--filename", dest="files", action="append", default=[], metavar="FILE_OR_DIR",
                   help="manifests to apply at the start (a file or a directory; repeatable)")
    p.add_argument("--nodes", type=int, default=3, metavar="N", help="nodes node-1 … node-N (default 3)")
    p.add_argument("--port", type=int, default=6443, metavar="P",
                   help="port on 127.0.0.1 (default 6443; 0 picks a free one)")
    p.add_argument("--kubeconfig", default=str(DEFAULT_DIR / "kubeconfig"), metavar="PATH",
                   help="where to write the kubeconfig (default reports/serve/kubeconfig)")
    p.add_argument("--report", default=None, metavar="PATH",
                   help="where to write the report on exit (default: report.json beside the kubeconfig)")
    p.add_argument("--speed", type=float, default=1.0, metavar="X",
                   help="logical time runs X times as fast as the wall clock (default 1)")
    p.add_argument("--fault", dest="faults", action="append", default=[], metavar="SPEC",
                   help="ACTION:TARGET@SECONDS of logical time, ACTION partition, heal, crash or restart, as in "
                        "kmodel simulate (repeatable)")
    p.add_argument("--no-invariants", dest="invariants", action="store_false",
                   help="do not check the safety invariants live")
    p.add_argument("--http", action="store_true",
                   help="serve plain HTTP instead of HTTPS (kubectl then sends no token: every request is anonymous)")
    p.add_argument("--replay", metavar="TRACE",
                   help="run a recorded serve (its trace.json) again without the clients and compare the digests")
    p.add_argument("--seed", type=int, default=0, help="seed of the model's own choices (default 0)")
    add_leader_elect_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kmodel.serve.session import ServeSession

    if args.replay:
        return replay_command(Path(args.replay))
    if args.nodes < 1:
        raise KmodelUsageError(f"--nodes must be at least 1 (got {args.nodes})")
    if not 0 <= args.port <= 65535:
        raise KmodelUsageError(f"--port must be between 0 and 65535 (got {args.port})")
    if not (args.speed > 0 and args.speed < float("inf")):
        raise KmodelUsageError(f"--speed must be a positive number (got {args.speed})")
    try:
        manifests = [m.document for m in read_manifests(args.files) if m.mapped] if args.files else []
        faults = [parse_fault(spec) for spec in args.faults]
    except InputError as exc:
        raise KmodelUsageError(str(exc)) from None
    kubeconfig = Path(args.kubeconfig)
    try:
        session = ServeSession(nodes=args.nodes, manifests=manifests, seed=args.seed, speed=args.speed,
                               port=args.port, tls_dir=None if args.http else kubeconfig.parent, faults=faults,
                               check_invariants=args.invariants, leader_elect=args.leader_elect,
                               echo=lambda line: print(line, flush=True))
    except (TLSError, ControlError) as exc:
        raise KmodelUsageError(str(exc)) from None
    except OSError as exc:
        raise KmodelUsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; "
                               "choose another --port (0 picks a free one)") from None
    report_path = Path(args.report) if args.report else kubeconfig.parent / "report.json"
    try:
        write_kubeconfig(kubeconfig, session.url, session.users, session.certificate)
    except OSError as exc:
        session.stop()
        raise KmodelUsageError(f"cannot write the kubeconfig {kubeconfig}: {exc.strerror or exc}") from None
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    session.start()
    print(f"kmodel serve: listening on {session.url} ({args.nodes} nodes); kubeconfig {kubeconfig}; "
          f"Ctrl-C stops and writes {report_path}", flush=True)
    while not stop.wait(0.5):
        if not session.model.alive:
            break
    report = session.stop()
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    session.recorder.write(report_path.parent / "trace.json", report["digest"])
    print(f"kmodel serve: stopped at logical time {report['logical_ms'] / 1000:g} s after {report['requests']} "
          f"requests, {len(report['violations'])} invariant violations; report {report_path}, trace "
          f"{report_path.parent / 'trace.json'}", flush=True)
    if report["model_error"]:
        print(f"kmodel serve: the model stopped on an error: {report['model_error']}", file=sys.stderr)
        return 3
    return 0


def replay_command(path: Path) -> int:
    """`kmodel serve --replay TRACE` and `kmodel replay TRACE` given a serve recording: 0 when the replay reaches
    the recorded digest, 1 when it does not."""
    from kmodel.serve.recording import RecordingError, read_recording, replay_cluster

    try:
        data = read_recording(path)
        cluster = replay_cluster(data)
    except RecordingError as exc:
        raise KmodelUsageError(str(exc)) from None
    digest = cluster.loop.digest()
    same = digest == data["digest"]
    verdict = "the same as recorded" if same else f"recorded: {data['digest']}"
    print(f"replayed {len(data['ops'])} operations of the kmodel serve run {path} to logical time "
          f"{cluster.now / 1000:g} s: digest {digest} ({verdict})")
    return 0 if same else 1
