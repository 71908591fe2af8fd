"""The official Python client (`kubernetes` from PyPI) set up on a `kmodel serve` session's kubeconfig, and a
poller for what the served cluster does in its own time. Import it after `pytest.importorskip("kubernetes")`."""

from __future__ import annotations

import json
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


def raw(served: Any, method: str, path: str, *, body: Any = None, content_type: str = "application/json",
        user: str = "admin", accept: str = "application/json") -> tuple[int, Any]:
    """One request as the client's transport sends it (urllib3 with the kubeconfig's CA and the user's bearer
    token): (status, the body's text)."""
    api = api_client(served.kubeconfig, user)
    cfg = api.configuration
    headers = {"Authorization": cfg.api_key["BearerToken"], "Content-Type": content_type, "Accept": accept}
    response = api.rest_client.pool_manager.request(method, cfg.host + path, headers=headers,
                                                    body=None if body is None else json.dumps(body))
    return response.status, response.data.decode()


def grant(served: Any, name: str, subject: Any, rule: Any, namespace: str = "default") -> None:
    """A Role `name` with the one `rule` (a V1PolicyRule), bound to `subject` (an RbacV1Subject), made by the
    admin."""
    rbac = client.RbacAuthorizationV1Api(api_client(served.kubeconfig))
    rbac.create_namespaced_role(namespace, client.V1Role(metadata=client.V1ObjectMeta(name=name), rules=[rule]))
    rbac.create_namespaced_role_binding(namespace, client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name=name), subjects=[subject],
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=name)))
