"""The address flags' start checks: what kube-apiserver and kube-controller-manager refuse to start with.

kube-apiserver checks --service-cluster-ip-range (cmd/kube-apiserver/app/options/validation.go
validateMaxCIDRRange: at most 2^20 addresses; controlplane.ServiceIPRange: at least 8), and kube-controller-manager's
node IPAM controller checks --cluster-cidr against --node-cidr-mask-size when it builds its CidrSet (a cluster CIDR
smaller than one node block, an IPv6 one more than 16 bits shorter than the block). A refused flag stops the
process at start, with the error as its last log line.
"""

from __future__ import annotations

from typing import Optional

from kmodel.ipam.cidrset import CidrSet
from kmodel.ipam.errors import IPAMError
from kmodel.ipam.serviceip import kubernetes_service_ip, validate_service_cluster_ip_range


def address_flags_refusal(service_cidr: str, cluster_cidr: str, node_cidr_mask_size: int) -> Optional[str]:
    """The error the first of kube-apiserver and kube-controller-manager to refuse these flags stops with, or
    None when both start."""
    try:
        validate_service_cluster_ip_range(service_cidr)
        kubernetes_service_ip(service_cidr)
        CidrSet(cluster_cidr, node_cidr_mask_size)
    except IPAMError as err:
        return str(err)
    return None
