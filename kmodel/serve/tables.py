"""Server-side printing: the meta.k8s.io/v1 Table kubectl asks for (``Accept: application/json;as=Table;...``), with
upstream's columns for pods, nodes and deployments (pkg/printers/internalversion/printers.go; priority-1 columns
are what ``-o wide`` adds) and NAME, AGE for the other kinds. Ages are counted in the model's logical time."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kmodel.objects import dump


def human_duration(ms: int) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    seconds = max(0, ms // 1000)
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d" if days < 365 * 8 else f"{days // 365}y"


def _age(obj: Any, now: int) -> str:
    created = obj.metadata.creation_timestamp
    return "<unknown>" if created is None else human_duration(now - created)


def _pod_status(pod: Any) -> str:
    if pod.metadata.deletion_timestamp is not None:
        return "Terminating"
    for cs in pod.status.container_statuses:
        waiting = getattr(cs.state, "waiting", None)
        if waiting is not None and getattr(waiting, "reason", ""):
            return waiting.reason
    return pod.status.reason or pod.status.phase or "Pending"


def _pod_row(pod: Any, now: int) -> list:
    statuses = pod.status.container_statuses
    ready = sum(1 for cs in statuses if cs.ready)
    restarts = sum(cs.restart_count for cs in statuses)
    return [pod.metadata.name, f"{ready}/{len(pod.spec.containers)}", _pod_status(pod), restarts, _age(pod, now),
            pod.status.pod_ip or "<none>", pod.spec.node_name or "<none>",
            pod.status.nominated_node_name or "<none>", "<none>"]


def _node_row(node: Any, now: int) -> list:
    ready = next((c.status for c in node.status.conditions if c.type == "Ready"), "Unknown")
    status = "Ready" if ready == "True" else "NotReady"
    if node.spec.unschedulable:
        status += ",SchedulingDisabled"
    roles = sorted(k.rpartition("/")[2] for k in node.metadata.labels if k.startswith("node-role.kubernetes.io/"))
    internal = next((a.address for a in node.status.addresses if a.type == "InternalIP"), "<none>")
    version = getattr(node.status.node_info, "kubelet_version", "") or "<none>"
    return [node.metadata.name, status, ",".join(roles) or "<none>", _age(node, now), version, internal]


def _deployment_row(d: Any, now: int) -> list:
    s = d.status
    containers = d.spec.template.spec.containers
    match = dict(d.spec.selector.match_labels or {}) if d.spec.selector is not None else {}
    return [d.metadata.name, f"{s.ready_replicas}/{d.spec.replicas}", s.updated_replicas, s.available_replicas,
            _age(d, now), ",".join(c.name for c in containers), ",".join(c.image for c in containers),
            ",".join(f"{k}={v}" for k, v in sorted(match.items()))]


def _column(name: str, kind: str = "string", priority: int = 0) -> dict:
    return {"name": name, "type": kind, "format": "name" if name == "Name" else "", "description": "",
            "priority": priority}


_COLUMNS: dict[str, tuple[list, Callable[[Any, int], list]]] = {
    "pods": ([_column("Name"), _column("Ready"), _column("Status"), _column("Restarts", "integer"), _column("Age"),
              _column("IP", priority=1), _column("Node", priority=1), _column("Nominated Node", priority=1),
              _column("Readiness Gates", priority=1)], _pod_row),
    "nodes": ([_column("Name"), _column("Status"), _column("Roles"), _column("Age"), _column("Version"),
               _column("Internal-IP", priority=1)], _node_row),
    "deployments": ([_column("Name"), _column("Ready"), _column("Up-to-date", "integer"),
                     _column("Available", "integer"), _column("Age"), _column("Containers", priority=1),
                     _column("Images", priority=1), _column("Selector", priority=1)], _deployment_row),
}


def table(resource: str, objects: Sequence[Any], now: int, resource_version: str = "", cont: str = "") -> dict:
    """A meta.k8s.io/v1 Table of `objects`, each row carrying its object's metadata (includeObject=Metadata)."""
    columns, row = _COLUMNS.get(resource, ([_column("Name"), _column("Age")],
                                           lambda o, t: [o.metadata.name, _age(o, t)]))
    rows = []
    for obj in objects:
        doc = dump(obj)
        rows.append({"cells": row(obj, now),
                     "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                "metadata": doc["metadata"]}})
    metadata = {"resourceVersion": resource_version}
    if cont:
        metadata["continue"] = cont
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns,
            "rows": rows}
