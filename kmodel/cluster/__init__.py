"""Wiring and configuration: a whole cluster from a few numbers (see cluster.py)."""

from kmodel.cluster.cluster import Cluster, ClusterError, boot_objects
from kmodel.cluster.config import DEFAULT_COMPONENTS, ClusterConfig
from kmodel.cluster.kubectl import Apply, CommandResult, Delete, Get, Kubectl, Patch, Scale

__all__ = ["Cluster", "ClusterError", "ClusterConfig", "DEFAULT_COMPONENTS", "boot_objects", "Apply", "Delete",
           "Get", "Patch", "Scale", "CommandResult", "Kubectl"]
