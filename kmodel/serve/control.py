"""Faults while serving: what `--fault` schedules and the control endpoint (``POST /kmodel/control``, `kmodel ctl`)
does, on the model's thread, with the cluster's own hands (kmodel.cluster: partition, heal, crash, restart, and
the loop's pause).

An action is ``{"action": ACTION, "target": TARGET}`` (``"seconds"`` too for pause): TARGET a network endpoint
(etcd, apiserver-0, scheduler, controller/deployment, kubelet/node-1, http-clients, ...), a process
(kube-controller-manager) or a node name (all its endpoints), as `kmodel simulate --fault` takes them. Only a user
of group system:masters (the admin) may act; the answer says what was done, or why not.
"""

from __future__ import annotations

from typing import Any

from kmodel.cluster.cluster import ClusterError
from kmodel.apiserver.errors import APIError

ACTIONS = ("partition", "heal", "crash", "restart", "pause")
MASTERS = "system:masters"


class ControlError(ValueError):
    """An action that cannot be done: `code` is the HTTP status of the answer."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


def act(cluster: Any, action: str, target: str, seconds: float = 0.0) -> list[str]:
    """Do `action` on `target` now (on the model's thread); the endpoints acted on."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r}: use one of {', '.join(ACTIONS)}")
    try:
        endpoints = cluster.endpoints_of(target)
    except ClusterError as exc:
        raise ControlError(str(exc)) from None
    if action == "pause":
        if not seconds > 0:
            raise ControlError("pause needs seconds > 0")
        until = cluster.now + round(seconds * 1000)
        for name in endpoints:
            if cluster.loop.is_up(name):
                cluster.loop.pause(name, until)
    else:
        getattr(cluster, action)(target)
    return endpoints


def authorize(cluster: Any, token: str) -> None:
    """The control endpoint's authorization: the token's user must be in system:masters (ControlError 401/403)."""
    try:
        user = cluster.replicas[0].pipeline.authenticator.authenticate(token)
    except APIError:
        raise ControlError("Unauthorized", 401) from None
    if MASTERS not in user.groups:
        raise ControlError(f'User "{user.name}" may not control the model: only system:masters may', 403)
