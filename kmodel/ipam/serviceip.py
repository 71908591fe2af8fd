"""The API server's ClusterIP allocator for one service CIDR (default 10.96.0.0/12).

A port of kubernetes/kubernetes pkg/registry/core/service/ipallocator/bitmap.go (Range) over
pkg/registry/core/service/allocator/bitmap.go (AllocationBitmap with randomScanStrategyWithOffset), plus the
checks the kube-apiserver applies to --service-cluster-ip-range (cmd/kube-apiserver/app/options/validation.go,
pkg/controlplane/services.go).

Theory of operation
-------------------
Offset i of the bitmap stands for address network+1+i. The network address is never in the bitmap; for IPv4 neither
is the broadcast address; an IPv6 range is capped at 65536 addresses. So neither can ever be handed out or
released, and allocate() of them is "not in range".

KEP-3070 splits the offsets at `range_offset` = min(max(16, size/16), 256) (0 for ranges of 16 addresses or
fewer): the lower block is kept for static allocation. allocate_next() picks a random start in the upper block and
scans forward, wrapping within it, for a free offset; only when the upper block is full does it do the same in the
lower block; then "range is full". For 10.96.0.0/12 the lower block is 10.96.0.1 .. 10.96.1.0.

Upstream seeds its generator from the wall clock. The model takes a random.Random from the caller instead (seed it,
and a run replays exactly); the draws are rng.randrange(n) where Go calls rand.Intn(n), so the addresses differ from
a real cluster's but their distribution and scan order are the same.

The `kubernetes` Service: the allocator itself reserves nothing. The API server's bootstrap controller creates the
default/kubernetes Service with ClusterIP = the range's first address (GetIndexedIP(cidr, 1), 10.96.0.1 by default),
which goes through allocate() like any static IP; it lies in the static block so dynamic allocation avoids it.
`kubernetes_service_ip()` gives that address for whoever models the bootstrap controller.

Error texts are current upstream's: allocate() of an address outside the range says
`the provided IP (<ip>) is not in the valid range. The range of valid IPs is <cidr>` (Kubernetes up to 1.26 said
`provided IP is not in the valid range. The range of valid IPs is <cidr>`, without the address).
"""

from __future__ import annotations

import ipaddress
import random
from typing import Union

from kmodel.ipam import bitmap
from kmodel.ipam.errors import IPAMError

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
IPV6_MAX_RANGE = 65536  # the bitmap is uncompressed, so an IPv6 range is capped
MAX_CIDR_BITS = 20  # kube-apiserver: at most 2^20 service addresses (an IPv4 mask of at least /12)
MIN_SERVICE_RANGE_SIZE = 8

RANGE_FULL = "range is full"
ALREADY_ALLOCATED = "provided IP is already allocated"


class ServiceIPError(IPAMError):
    """A ClusterIP allocation failed; the message is upstream's text."""


class RangeFullError(ServiceIPError):
    """ErrFull."""

    def __init__(self) -> None:
        super().__init__(RANGE_FULL)


class AlreadyAllocatedError(ServiceIPError):
    """ErrAllocated."""

    def __init__(self) -> None:
        super().__init__(ALREADY_ALLOCATED)


class NotInRangeError(ServiceIPError):
    """ErrNotInRange: the address is outside the range, or is its network or broadcast address."""

    def __init__(self, ip: IPAddress, valid_range: str) -> None:
        super().__init__(
            f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {valid_range}"
        )
        self.ip = ip
        self.valid_range = valid_range


def parse_cidr(cidr: str | IPNetwork) -> IPNetwork:
    """netutils.ParseCIDRSloppy: host bits are dropped."""
    if isinstance(cidr, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
        return cidr
    return ipaddress.ip_network(cidr, strict=False)


def range_size(cidr: IPNetwork) -> int:
    """netutils.RangeSize: the number of addresses, 0 for an IPv4 /0 or /1 (or IPv6 /0 or /1), capped at 2^63-1."""
    host_bits = cidr.max_prefixlen - cidr.prefixlen
    if (cidr.version == 4 and host_bits >= 31) or (cidr.version == 6 and host_bits >= 127):
        return 0
    if host_bits >= 63:
        return (1 << 63) - 1
    return 1 << host_bits


def calculate_range_offset(cidr: IPNetwork) -> int:
    """calculateRangeOffset: the size of the static block, min(max(16, size/16), 256), or 0 for tiny ranges."""
    size = range_size(cidr)
    if size <= 16:
        return 0
    return min(max(16, size // 16), 256)


def validate_service_cluster_ip_range(cidr: str | IPNetwork, flag: str = "--service-cluster-ip-range") -> None:
    """kube-apiserver's validateMaxCIDRRange: at most 2^20 addresses (IPv4 /12, IPv6 /108)."""
    net = parse_cidr(cidr)
    bits = net.max_prefixlen
    if bits - net.prefixlen > MAX_CIDR_BITS:
        raise ServiceIPError(
            f"specified {flag} is too large; for {bits}-bit addresses, the mask must be >= {bits - MAX_CIDR_BITS}"
        )


def kubernetes_service_ip(cidr: str | IPNetwork = DEFAULT_SERVICE_CIDR) -> IPAddress:
    """controlplane.ServiceIPRange: the default/kubernetes Service's ClusterIP, the range's first address."""
    net = parse_cidr(cidr)
    if min(range_size(net), 1 << 16) < MIN_SERVICE_RANGE_SIZE:
        raise ServiceIPError(
            f"the service cluster IP range must be at least {MIN_SERVICE_RANGE_SIZE} IP addresses"
        )
    return net.network_address + 1


class ServiceIPAllocator:
    """ipallocator.Range over an in-memory AllocationBitmap, with a caller-seeded random generator."""

    __slots__ = ("cidr", "rng", "base", "max", "range_offset", "count", "_allocated")

    def __init__(self, cidr: str | IPNetwork, rng: random.Random) -> None:
        net = parse_cidr(cidr)
        size = range_size(net)
        if net.version == 6:
            size = min(size, IPV6_MAX_RANGE)
        else:
            size -= 1  # never the broadcast address
        size -= 1  # never the network address
        self.cidr: IPNetwork = net
        self.rng = rng
        self.base: int = int(net.network_address) + 1  # offset 0
        self.max: int = max(0, size)
        self.range_offset: int = calculate_range_offset(net)
        self.count: int = 0
        self._allocated: int = 0

    def __repr__(self) -> str:
        return f"ServiceIPAllocator({str(self.cidr)!r}, used={self.count}, free={self.free})"

    @property
    def free(self) -> int:
        """Free: addresses left."""
        return self.max - self.count

    @property
    def used(self) -> int:
        """Used: addresses taken."""
        return self.count

    def state(self) -> tuple[str, int]:
        """The allocation state as a hashable value (the generator's state is the caller's)."""
        return (str(self.cidr), self._allocated)

    def _offset(self, ip: IPAddress) -> int | None:
        """contains: the address's offset, or None outside the range (network and broadcast included)."""
        if ip.version != self.cidr.version or ip not in self.cidr:
            return None
        offset = int(ip) - self.base
        if offset < 0 or offset >= self.max:
            return None
        return offset

    def _address(self, offset: int) -> IPAddress:
        return type(self.cidr.network_address)(self.base + offset)

    def has(self, ip: str | IPAddress) -> bool:
        """Has: whether the address is allocated."""
        offset = self._offset(_ip(ip))
        return offset is not None and bitmap.is_set(self._allocated, offset)

    def allocated(self) -> list[IPAddress]:
        """ForEach: every allocated address, in ascending order."""
        return [self._address(i) for i in bitmap.set_bits(self._allocated)]

    def allocate(self, ip: str | IPAddress) -> None:
        """Allocate: reserve this address (a Service that asked for a specific ClusterIP)."""
        address = _ip(ip)
        offset = self._offset(address)
        if offset is None:
            raise NotInRangeError(address, str(self.cidr))
        if bitmap.is_set(self._allocated, offset):
            raise AlreadyAllocatedError()
        self._allocated |= 1 << offset
        self.count += 1

    def allocate_next(self) -> IPAddress:
        """AllocateNext: a random free address, from the dynamic (upper) block first, then the static one."""
        if self.count >= self.max:
            raise RangeFullError()
        # randomScanStrategyWithOffset.AllocateBit
        upper = self.max - self.range_offset
        start = self.rng.randrange(upper)
        found = bitmap.first_clear_from(self._allocated >> self.range_offset, start, upper)
        if found is not None:
            found += self.range_offset
        else:
            start = self.rng.randrange(self.range_offset)
            found = bitmap.first_clear_from(self._allocated, start, self.range_offset)
        if found is None:  # unreachable while count < max; upstream returns ErrFull here too
            raise RangeFullError()
        self._allocated |= 1 << found
        self.count += 1
        return self._address(found)

    def release(self, ip: str | IPAddress) -> None:
        """Release: free the address; releasing a free or out-of-range address is a no-op."""
        offset = self._offset(_ip(ip))
        if offset is None or not bitmap.is_set(self._allocated, offset):
            return
        self._allocated &= ~(1 << offset)
        self.count -= 1


def _ip(ip: str | IPAddress) -> IPAddress:
    return ipaddress.ip_address(ip) if isinstance(ip, str) else ip
