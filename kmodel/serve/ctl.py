"""The `kmodel ctl` subcommand: act on a served model (`kmodel serve`) through its control endpoint, as the
kubeconfig's admin: partition, heal, crash, restart or pause a component, a process or a node."""

from __future__ import annotations

import argparse
import base64
import json
import ssl
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kmodel.errors import KmodelUsageError
from kmodel.serve.command import DEFAULT_DIR
from kmodel.serve.control import ACTIONS
from kmodel.serve.http import CONTROL_PATH

HELP = "partition, heal, crash, restart or pause part of a model served by kmodel serve"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("ctl", help=HELP, description=HELP)
    p.add_argument("action", choices=ACTIONS, help="what to do")
    p.add_argument("target", help="an endpoint (apiserver-0, scheduler, kubelet/node-1, ...), a process "
                                   "(kube-controller-manager) or a node name")
    p.add_argument("--seconds", type=float, default=0.0, help="pause: for how long, in logical seconds")
    p.add_argument("--kubeconfig", default=str(DEFAULT_DIR / "kubeconfig"), metavar="PATH",
                   help="the kubeconfig kmodel serve wrote (default reports/serve/kubeconfig)")
    p.set_defaults(handler=run)


def _admin(config: dict) -> tuple[str, str, str]:
    """(server URL, admin token, CA certificate PEM or "") from a kubeconfig kmodel serve wrote."""
    try:
        cluster = config["clusters"][0]["cluster"]
        token = next(u["user"]["token"] for u in config["users"] if u["name"] == config["current-context"])
    except (KeyError, IndexError, TypeError, StopIteration):
        raise KmodelUsageError("the kubeconfig is not one kmodel serve wrote (no cluster or admin token)") from None
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode() if "certificate-authority-data" in cluster \
        else ""
    return cluster["server"], token, ca


def run(args: argparse.Namespace) -> int:
    try:
        config = yaml.safe_load(Path(args.kubeconfig).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise KmodelUsageError(f"cannot read the kubeconfig {args.kubeconfig}: {exc}; start kmodel serve first or "
                               "pass --kubeconfig") from None
    server, token, ca = _admin(config if isinstance(config, dict) else {})
    context = None
    if ca:
        with tempfile.NamedTemporaryFile("w", suffix=".crt") as f:
            f.write(ca)
            f.flush()
            context = ssl.create_default_context(cafile=f.name)
    body = json.dumps({"action": args.action, "target": args.target, "seconds": args.seconds}).encode()
    request = urllib.request.Request(server + CONTROL_PATH, data=body, method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        message = json.loads(exc.read() or b"{}").get("error", exc.reason)
        raise KmodelUsageError(message) from None
    except (urllib.error.URLError, OSError) as exc:
        raise KmodelUsageError(f"cannot reach kmodel serve at {server}: {getattr(exc, 'reason', exc)}") from None
    print(f"{answer['action']} {answer['target']}: {', '.join(answer['endpoints'])}")
    return 0
