"""The address flags' start checks: what kube-apiserver and kube-controller-manager refuse to start with.

kube-apiserver completes its options before it validates them (cmd/kube-apiserver/app/options/completion.go,
then validation.go, release 1.31): completing --service-cluster-ip-range finds the `kubernetes` Service's address
(controlplane.ServiceIPRange: a range of fewer than 8 addresses is refused; an IPv6 range's size is counted with
netutils.RangeSize, capped at 2^63-1, then at 2^16), then validating it refuses more than 2^20 addresses
(validateMaxCIDRRange: for 128-bit addresses the mask must be >= 108). kube-controller-manager's node IPAM
controller checks --cluster-cidr against --node-cidr-mask-size when it builds its CidrSet (a cluster CIDR smaller
than one node block; an IPv6 one more than 16 bits shorter than the block). A refused flag stops the process at
start, with the error as its last log line.
"""

from __future__ import annotations

from typing import Optional

from kmodel.ipam.cidrset import CidrSet
from kmodel.ipam.errors import IPAMError
from kmodel.ipam.serviceip import kubernetes_service_ip, validate_service_cluster_ip_range

#: how kube-apiserver's option completion wraps controlplane.ServiceIPRange's error (getServiceIPAndRanges)
SERVICE_RANGE_COMPLETION = "error determining service IP ranges for primary service cidr: "


def address_flags_refusal(service_cidr: str, cluster_cidr: str, node_cidr_mask_size: int) -> Optional[str]:
    """The error the first of kube-apiserver and kube-controller-manager to refuse these flags stops with, or
    None when both start."""
    try:
        kubernetes_service_ip(service_cidr)
    except IPAMError as err:
        return SERVICE_RANGE_COMPLETION + str(err)
    try:
        validate_service_cluster_ip_range(service_cidr)
        CidrSet(cluster_cidr, node_cidr_mask_size)
    except IPAMError as err:
        return str(err)
    return None
