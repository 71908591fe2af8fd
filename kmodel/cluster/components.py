"""Which module builds which component: the cluster names components, each module builds its own.

Each factory is `make(ctx: ClusterContext) -> list[Component]`, found by import path so that the cluster
layer names components without importing every one of them up front (and a cluster can run a subset, as a
test of one controller does).
"""

from __future__ import annotations

import importlib
from typing import Callable

import attrs

from kmodel.cluster.config import ClusterConfig

FACTORIES: dict[str, str] = {
    "deployment": "kmodel.controllers.deployment:make",
    "replicaset": "kmodel.controllers.replicaset:make",
    "garbagecollector": "kmodel.controllers.garbagecollector:make",
    "podgc": "kmodel.controllers.podgc:make",
    "nodeipam": "kmodel.controllers.nodeipam:make",
    "nodelifecycle": "kmodel.controllers.nodelifecycle:make",
    "endpoints": "kmodel.controllers.endpoints:make",
    "scheduler": "kmodel.scheduler.component:make",
    "kubelet": "kmodel.kubelet.component:make",
    "proxy": "kmodel.proxy.component:make",
}


@attrs.frozen
class ClusterContext:
    """What a factory needs to build its components."""

    config: ClusterConfig
    apiservers: tuple[str, ...]  # API server endpoints, in the order clients fail over through them


def factory(name: str) -> Callable:
    try:
        path = FACTORIES[name]
    except KeyError:
        raise ValueError(f"unknown component {name!r}; known: {', '.join(sorted(FACTORIES))}") from None
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)
