"""Node IPAM's CidrSet: which per-node pod CIDR blocks of the cluster CIDR are taken.

A port of kubernetes/kubernetes pkg/controller/nodeipam/ipam/cidrset/cidr_set.go, used by the node IPAM
controller's range allocator to give each Node its spec.podCIDR.

Theory of operation
-------------------
The cluster CIDR (e.g. 10.244.0.0/16) is cut into 2^(nodeMask - clusterMask) equal blocks of the node mask size
(e.g. /24). Block i is `cluster base | (i << (bits - nodeMask))`. A bitmap (an int, bit i = block i taken) and a
count of taken blocks are the whole state, plus `next_candidate`:

- allocate_next() scans from next_candidate for the first free block, wrapping around, takes it and sets
  next_candidate to the block after it. So allocation is round robin: a block freed by release() is handed out
  again only after the scan has wrapped past the end of the range.
- occupy(cidr) / release(cidr) mark every block the CIDR covers (a CIDR larger than a block covers several, one
  containing the whole cluster CIDR covers all of them). Neither moves next_candidate, and each counts only the
  bits it actually flips, so occupying twice or releasing a free block changes nothing.
- When every block is taken, allocate_next() fails with upstream's
  `CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range`
  (the controller turns it into a CIDRNotAvailable event).

Differences from upstream: none in behaviour. The controller-level check that the cluster mask is not longer than
the node mask (node_ipam_controller.go) is done here too, with the controller's text, because in Go a negative
shift would panic instead; metrics are not modelled.
"""

from __future__ import annotations

import ipaddress
from typing import Union

from kmodel.ipam import bitmap
from kmodel.ipam.errors import IPAMError

IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

# The subnet mask size cannot be more than 16 longer than the cluster mask for IPv6 (an uncompressed bitmap).
CLUSTER_SUBNET_MAX_DIFF = 16

DEFAULT_NODE_MASK_IPV4 = 24
DEFAULT_NODE_MASK_IPV6 = 64

NO_CIDRS_REMAINING = (
    "CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range"
)
SUBNET_TOO_BIG = "New CIDR set failed; the node CIDR size is too big"
CLUSTER_MASK_TOO_LONG = (
    "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to "
    "--node-cidr-mask-size configured for CIDR family"
)


class CidrSetError(IPAMError):
    """A CidrSet operation failed; the message is upstream's text."""


class CIDRRangeNoCIDRsRemainingError(CidrSetError):
    """ErrCIDRRangeNoCIDRsRemaining: every block is taken."""

    def __init__(self) -> None:
        super().__init__(NO_CIDRS_REMAINING)


class CIDRSetSubNetTooBigError(CidrSetError):
    """ErrCIDRSetSubNetTooBig: an IPv6 node mask more than 16 bits longer than the cluster mask."""

    def __init__(self) -> None:
        super().__init__(SUBNET_TOO_BIG)


class InvalidClusterCIDRError(CidrSetError):
    """The node IPAM controller's refusal of a cluster CIDR smaller than one node block."""

    def __init__(self) -> None:
        super().__init__(CLUSTER_MASK_TOO_LONG)


def parse_cidr(cidr: str | IPNetwork) -> IPNetwork:
    """Parse like netutils.ParseCIDRSloppy: host bits are dropped ("127.123.3.0/16" is 127.123.0.0/16)."""
    if isinstance(cidr, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
        return cidr
    return ipaddress.ip_network(cidr, strict=False)


class CidrSet:
    """The taken node blocks of one cluster CIDR (one per IP family in a dual-stack cluster)."""

    __slots__ = ("cluster_cidr", "node_mask_size", "max_cidrs", "allocated", "next_candidate", "_used")

    def __init__(self, cluster_cidr: str | IPNetwork, node_mask_size: int) -> None:
        cluster = parse_cidr(cluster_cidr)
        bits = cluster.max_prefixlen
        if not 0 <= node_mask_size <= bits:
            raise ValueError(f"node mask size {node_mask_size} is not a valid /{bits} prefix length")
        if cluster.prefixlen > node_mask_size:
            raise InvalidClusterCIDRError()
        if cluster.version == 6 and node_mask_size - cluster.prefixlen > CLUSTER_SUBNET_MAX_DIFF:
            raise CIDRSetSubNetTooBigError()
        self.cluster_cidr: IPNetwork = cluster
        self.node_mask_size: int = node_mask_size
        self.max_cidrs: int = 1 << (node_mask_size - cluster.prefixlen)
        self.allocated: int = 0  # allocatedCIDRs: the number of set bits in _used
        self.next_candidate: int = 0
        self._used: int = 0

    def __repr__(self) -> str:
        return (
            f"CidrSet({str(self.cluster_cidr)!r}, {self.node_mask_size}, "
            f"allocated={self.allocated}, next_candidate={self.next_candidate})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CidrSet):
            return NotImplemented
        return self.state() == other.state()

    __hash__ = None  # mutable

    def state(self) -> tuple[str, int, int, int]:
        """The whole state as a hashable value: (cluster CIDR, node mask, next candidate, used bitmap)."""
        return (str(self.cluster_cidr), self.node_mask_size, self.next_candidate, self._used)

    def copy(self) -> CidrSet:
        """An independent copy (the bitmap int is immutable, so this is O(1))."""
        twin = CidrSet.__new__(CidrSet)
        for name in CidrSet.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin

    # -- index <-> block ------------------------------------------------------------------------------------

    def index_to_cidr_block(self, index: int) -> IPNetwork:
        """indexToCIDRBlock: block `index` of the cluster CIDR."""
        shift = self.cluster_cidr.max_prefixlen - self.node_mask_size
        base = int(self.cluster_cidr.network_address)
        return type(self.cluster_cidr)((base | (index << shift), self.node_mask_size))

    def index_for_ip(self, ip: IPAddress) -> int:
        """getIndexForIP: the block holding `ip`; CidrSetError if it lies outside the allocator's range."""
        if ip.version != self.cluster_cidr.version:
            raise CidrSetError(f"invalid IP: {ip}")
        shift = self.cluster_cidr.max_prefixlen - self.node_mask_size
        index = (int(self.cluster_cidr.network_address) ^ int(ip)) >> shift
        if index >= self.max_cidrs:
            raise CidrSetError(f"CIDR: {ip}/{self.node_mask_size} is out of the range of CIDR allocator")
        return index

    def index_for_cidr(self, cidr: str | IPNetwork) -> int:
        """getIndexForCIDR: the block holding the CIDR's first address."""
        return self.index_for_ip(parse_cidr(cidr).network_address)

    def is_used(self, index: int) -> bool:
        """Whether block `index` is taken."""
        return bitmap.is_set(self._used, index)

    def used_blocks(self) -> list[IPNetwork]:
        """Every taken block, in index order."""
        return [self.index_to_cidr_block(i) for i in bitmap.set_bits(self._used)]

    # -- operations -----------------------------------------------------------------------------------------

    def allocate_next(self) -> IPNetwork:
        """AllocateNext: take the first free block at or after next_candidate (wrapping) and return it."""
        if self.allocated == self.max_cidrs:
            raise CIDRRangeNoCIDRsRemainingError()
        candidate = bitmap.first_clear_from(self._used, self.next_candidate, self.max_cidrs)
        assert candidate is not None, "allocated count is below max, so a block is free"
        self.next_candidate = (candidate + 1) % self.max_cidrs
        self._used |= 1 << candidate
        self.allocated += 1
        return self.index_to_cidr_block(candidate)

    def occupy(self, cidr: str | IPNetwork) -> None:
        """Occupy: mark every block the CIDR covers as taken (succeeds if some already were)."""
        begin, end = self._beginning_and_end_indices(cidr)
        span = bitmap.span_mask(begin, end)
        self.allocated += (span & ~self._used).bit_count()
        self._used |= span

    def release(self, cidr: str | IPNetwork) -> None:
        """Release: mark every block the CIDR covers as free; next_candidate does not move."""
        begin, end = self._beginning_and_end_indices(cidr)
        span = bitmap.span_mask(begin, end)
        self.allocated -= (span & self._used).bit_count()
        self._used &= ~span

    def _beginning_and_end_indices(self, cidr: str | IPNetwork | None) -> tuple[int, int]:
        """getBeginningAndEndIndices: the first and last block a CIDR covers."""
        if cidr is None:
            raise CidrSetError(f"error getting indices for cluster cidr {self.cluster_cidr}, cidr is nil")
        net = parse_cidr(cidr)
        cluster = self.cluster_cidr
        # Upstream: neither does the cluster hold the CIDR's address, nor the CIDR the cluster's address.
        if net.version != cluster.version or (
            not _contains(cluster, net.network_address) and not _contains(net, cluster.network_address)
        ):
            raise CidrSetError(f"cidr {net} is out the range of cluster cidr {cluster}")
        if cluster.prefixlen >= net.prefixlen:
            return 0, self.max_cidrs - 1
        begin = self.index_for_ip(self._block_start(net.network_address))
        end = self.index_for_ip(self._block_start(net.broadcast_address))
        return begin, end

    def _block_start(self, ip: IPAddress) -> IPAddress:
        """ip.Mask(nodeMask): the first address of the node-sized block holding ip."""
        return ipaddress.ip_network((ip, self.node_mask_size), strict=False).network_address


def _contains(net: IPNetwork, ip: IPAddress) -> bool:
    """net.Contains(ip.Mask(net.Mask)): masking first makes no difference to containment."""
    return ip in net
