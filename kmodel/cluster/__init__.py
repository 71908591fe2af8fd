"""Wiring and configuration: a whole cluster from a few numbers (see cluster.py)."""

from kmodel.cluster.cluster import Cluster, ClusterError, boot_objects
from kmodel.cluster.config import ClusterConfig
from kmodel.cluster.kubectl import Apply, CommandResult, Delete, Get, Kubectl, Patch, Scale
from kmodel.cluster import config

__all__ = ["Cluster", "ClusterError", "ClusterConfig", "DEFAULT_COMPONENTS", "boot_objects", "Apply", "Delete",
           "Get", "Patch", "Scale", "CommandResult", "Kubectl"]


def __getattr__(name: str):  # DEFAULT_COMPONENTS, read when first asked for (kmodel.cluster.config)
    if name == "DEFAULT_COMPONENTS":
        return config.DEFAULT_COMPONENTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
