"""IP address management: pure allocator data structures, no I/O.

- cidrset:   Node IPAM's CidrSet (per-node pod CIDRs out of the cluster CIDR), used by the nodeipam controller.
- hostlocal: the host-local CNI IPAM plugin (pod IPs out of the node's pod CIDR) over a dict standing for its
             on-disk directory, used by the kubelet's CNI.
- serviceip: the API server's ClusterIP allocator for the service CIDR.
- startup:   the start checks kube-apiserver and kube-controller-manager run on the address flags.

Each reproduces its upstream's algorithm and error texts; see the module docstrings for the sources and for
every place the model departs from them.
"""

from kmodel.ipam.cidrset import CIDRRangeNoCIDRsRemainingError, CidrSet, CidrSetError
from kmodel.ipam.errors import IPAMError
from kmodel.ipam.hostlocal import HostLocalAllocator, HostLocalError, HostLocalRange, HostLocalStore, IPConfig
from kmodel.ipam.serviceip import (
    AlreadyAllocatedError,
    NotInRangeError,
    RangeFullError,
    ServiceIPAllocator,
    ServiceIPError,
    kubernetes_service_ip,
)

__all__ = [
    "AlreadyAllocatedError",
    "CIDRRangeNoCIDRsRemainingError",
    "CidrSet",
    "CidrSetError",
    "HostLocalAllocator",
    "HostLocalError",
    "HostLocalRange",
    "HostLocalStore",
    "IPAMError",
    "IPConfig",
    "NotInRangeError",
    "RangeFullError",
    "ServiceIPAllocator",
    "ServiceIPError",
    "kubernetes_service_ip",
]
