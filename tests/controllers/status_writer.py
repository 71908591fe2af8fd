"""A test-only client that writes status subresources as the cluster admin (kubectl apply cannot)."""

from __future__ import annotations

from collections import deque
from typing import Any

from kmodel.client import ApiClient
from kmodel.cluster.cluster import Cluster
from kmodel.component import Component, Out

NAME = "status-writer"


class StatusWriter(Component):
    """Sends queued `update` requests of <resource>/status, one at a time, and keeps the answers."""

    def __init__(self, apiservers: list[str]) -> None:
        super().__init__(NAME)
        self.client = ApiClient(NAME, apiservers, token="admin-token")
        self.pending: deque = deque()
        self.answers: list = []

    def has_work(self) -> bool:
        return bool(self.pending)

    def work(self, now: int, out: Out) -> None:
        resource, obj = self.pending.popleft()
        self.client.update_status(now, out, resource, obj,
                                  on_done=lambda t, response, o: self.answers.append(response))

    def on_message(self, now, msg, out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now, name, out) -> None:
        self.client.on_timer(now, name, out)


def with_status_writer(config) -> tuple[Cluster, StatusWriter]:
    writer = StatusWriter(config.apiserver_names())
    return Cluster(config, extra=[writer]), writer


def write_status(cluster: Cluster, writer: StatusWriter, resource: str, obj: Any) -> None:
    """Queue a status update of `obj` (sent without resourceVersion: unconditional)."""
    writer.pending.append((resource, obj))
    cluster.loop.notify_work(writer.name)
