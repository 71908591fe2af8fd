"""The kubeconfig `kmodel serve` writes: one cluster (the server's URL), one user per person with the bearer token
drawn for this run (admin, alice, bob, and the users the manifests' RBAC names; kmodel.serve.credentials), and one
context per user, the admin's current."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Optional, Sequence

import yaml

CLUSTER = "kmodel"


def kubeconfig(server: str, users: Sequence[tuple[str, str]], certificate: Optional[Path] = None) -> dict:
    """`users`: (name, token) pairs, the first the current context's; `certificate`: the server's self-signed
    certificate, trusted as the cluster's certificate authority."""
    cluster: dict = {"server": server}
    if certificate is not None:
        cluster["certificate-authority-data"] = base64.b64encode(certificate.read_bytes()).decode()
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": CLUSTER, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}} for name, token in users],
        "contexts": [{"name": name, "context": {"cluster": CLUSTER, "user": name, "namespace": "default"}}
                     for name, _ in users],
        "current-context": users[0][0],
    }


def write_kubeconfig(path: Path, server: str, users: Sequence[tuple[str, str]],
                     certificate: Optional[Path] = None) -> None:
    """Write the kubeconfig readable and writable by its owner only (0600) from its first byte on: it holds the
    run's tokens."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig(server, users, certificate), sort_keys=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)  # a kubeconfig that was there before keeps its mode through O_CREAT
        f.write(text)
