"""kmodel.traffic: the data plane and an in-cluster client that sends requests through it.

    dataplane.py   DataPlane: what a packet does (a node's kube-proxy rules, the pod network), read, never sent
    client.py      TrafficClient: a workload on a node calling Services by name on a timer

Nothing here is a control-plane message: a request never touches the network of kmodel.network (the
communication graph) or an API server. See the modules' docstrings.
"""

from kmodel.traffic.client import TrafficClient
from kmodel.traffic.dataplane import DataPlane, Reached

__all__ = ["DataPlane", "Reached", "TrafficClient"]
