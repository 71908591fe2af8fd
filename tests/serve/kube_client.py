"""The official Python client (`kubernetes` from PyPI) set up on a `kmodel serve` session's kubeconfig, and a
poller for what the served cluster does in its own time. Import it after `pytest.importorskip("kubernetes")`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from kubernetes import client, config


def api_client(kubeconfig: Path, user: str = "admin") -> client.ApiClient:
    """A client of the kubeconfig's context `user` (its bearer token, the session's CA), as kopf and the other
    clients load it."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), context=user, client_configuration=cfg)
    return client.ApiClient(cfg)


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """`check()`'s first true value, polled every 0.1 s; its last value once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)
