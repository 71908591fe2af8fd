"""Endpoints, FIFO links, partitions (a networkx graph over sides), streams and network faults.

See `kmodel.network.network` for the theory of operation.
"""

from kmodel.network.message import Message
from kmodel.network.network import REFUSED, Link, LinkKey, Network, NetworkError
from kmodel.network.reachability import Reachability

__all__ = ["Link", "LinkKey", "Message", "Network", "NetworkError", "REFUSED", "Reachability"]
