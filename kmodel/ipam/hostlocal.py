"""host-local IPAM: the CNI plugin that hands a pod its IP out of the node's pod CIDR.

A port of containernetworking/plugins plugins/ipam/host-local: backend/allocator (range.go, range_set.go,
allocator.go) and backend/disk (backend.go).

Theory of operation
-------------------
host-local is not a daemon: every CNI ADD or DEL is a fresh process whose only memory is a directory on the node,
/var/lib/cni/networks/<network>/. That directory is modelled as a plain dict `disk` (file name -> contents) which the
kubelet owns and which survives a kubelet or plugin restart; `HostLocalStore` reads and writes it the way the disk
backend reads and writes files, and `HostLocalAllocator` holds nothing but configuration. Files:

- `<ip>` (e.g. "10.244.1.5"): the address is reserved; contents are "<container id>\\r\\n<ifname>".
  Reserving is an O_EXCL create, so it fails if the file exists.
- `last_reserved_ip.<range id>`: the last address reserved from that range set, written on every reservation and
  never cleared (a release does not touch it).

A range is a subnet with an inclusive [rangeStart, rangeEnd] (default: network+1 .. broadcast-1 for IPv4, the last
address for IPv6) and a gateway (default network+1) which the iterator skips. /31 and /32 (/127, /128) are refused.
The configuration's `ranges` is a list of range sets, each a list of ranges; `load_range_sets` checks it as the
plugin does on every call (allocator/config.go, range_set.go, range.go, v1.5), with upstream's errors: no range
set (`no IP ranges specified`); in range set <i> (`invalid range set <i>: ...`) a subnet of /31 or /32 (`Network
<subnet> too small to allocate from`), with host bits set, a rangeStart or rangeEnd outside it, no range, ranges
of two families, two ranges that overlap; two range sets that overlap (`range set <i> overlaps with <j>`).

allocate(id, ifname) first refuses a second address for the same id/ifname in this range set (CNI forbids duplicate
allocation), then walks round robin: it starts just after the last reserved address if that is still inside the
range set (else at rangeStart), wraps from rangeEnd to the next range's start, skips the gateway, and tries to
reserve each address in turn; when the walk comes back to where it began the range set is exhausted:
`no IP addresses available in range set: <rangeStart>-<rangeEnd>`. So a released address comes back only after the
walk wraps. release(id, ifname) deletes the files holding exactly that id and ifname (or, for files written by old
plugin versions, just the id).

Differences from upstream: the plugin's cmdAdd wraps allocator errors as "failed to allocate for range <i>: <err>";
that wrapping belongs to whoever models the CNI call (the kubelet). The directory's lock file and Windows path
escaping are not modelled.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, MutableMapping, Optional, Sequence, Union

from kmodel.ipam.errors import IPAMError

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
IPInterface = Union[ipaddress.IPv4Interface, ipaddress.IPv6Interface]
IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

LAST_IP_FILE_PREFIX = "last_reserved_ip."
LINE_BREAK = "\r\n"

# The characters Go's strings.TrimSpace removes (unicode.IsSpace); Python's str.strip() also strips \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"


class HostLocalError(IPAMError):
    """A host-local failure; the message is upstream's text."""


def _trim_space(text: str) -> str:
    return text.strip(_GO_SPACE)


def _parse_ip(text: str) -> Optional[IPAddress]:
    """net.ParseIP: the address, or None when the text is not one."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------------------------
# The disk store
# ---------------------------------------------------------------------------------------------------------------


class HostLocalStore:
    """backend/disk.Store over a dict that stands for the network's data directory (name -> contents).

    The store does not own the dict: it mutates the one it is given, so the kubelet keeps the dict across a
    restart of itself or of the plugin, exactly as files stay on disk.
    """

    __slots__ = ("files",)

    def __init__(self, files: MutableMapping[str, str]) -> None:
        self.files = files

    def _walk(self) -> list[str]:
        # filepath.Walk visits a directory's files in lexical order.
        return sorted(self.files)

    def reserve(self, container_id: str, ifname: str, ip: IPAddress, range_id: str) -> bool:
        """Reserve: create the IP's file (False if it already exists) and record it as the last reserved."""
        name = str(ip)
        if name in self.files:
            return False
        self.files[name] = _trim_space(container_id) + LINE_BREAK + ifname
        self.files[LAST_IP_FILE_PREFIX + range_id] = name
        return True

    def last_reserved_ip(self, range_id: str) -> Optional[IPAddress]:
        """LastReservedIP: the recorded address, or None if there is no (parsable) record."""
        data = self.files.get(LAST_IP_FILE_PREFIX + range_id)
        return None if data is None else _parse_ip(data)

    def _release_by_key(self, match: str) -> bool:
        found = False
        for name in self._walk():
            if _trim_space(self.files[name]) == match:
                del self.files[name]
                found = True
        return found

    def release_by_id(self, container_id: str, ifname: str) -> None:
        """ReleaseByID: delete every file owned by id+ifname; failing that, every file owned by id alone."""
        if not self._release_by_key(_trim_space(container_id) + LINE_BREAK + ifname):
            self._release_by_key(_trim_space(container_id))

    def get_by_id(self, container_id: str, ifname: str) -> list[IPAddress]:
        """GetByID: the addresses whose files are owned by id+ifname (or by id alone), in file-name order."""
        match = _trim_space(container_id) + LINE_BREAK + ifname
        match_old = _trim_space(container_id)
        ips = []
        for name in self._walk():
            if _trim_space(self.files[name]) in (match, match_old):
                ip = _parse_ip(name)
                if ip is not None:
                    ips.append(ip)
        return ips

    def find_by_id(self, container_id: str, ifname: str) -> bool:
        """FindByID (used by CNI CHECK): whether any file is owned by id+ifname, or by id alone."""
        return bool(self.get_by_id(container_id, ifname))

    def reserved(self) -> dict[IPAddress, str]:
        """Every reserved address and the raw owner text of its file (a view for invariants and tests)."""
        out = {}
        for name in self._walk():
            ip = _parse_ip(name)
            if ip is not None:
                out[ip] = self.files[name]
        return out


# ---------------------------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostLocalRange:
    """One canonical range (allocator.Range after Canonicalize). Build it with HostLocalRange.parse()."""

    subnet: IPNetwork
    range_start: IPAddress
    range_end: IPAddress
    gateway: IPAddress

    @classmethod
    def parse(
        cls,
        subnet: str,
        range_start: Optional[str] = None,
        range_end: Optional[str] = None,
        gateway: Optional[str] = None,
    ) -> HostLocalRange:
        """Range.Canonicalize: validate a configured range and fill in the defaults, with upstream's errors."""
        iface = ipaddress.ip_interface(subnet)  # keeps host bits, like types.ParseCIDR
        ones, masklen = iface.network.prefixlen, iface.max_prefixlen
        if ones > masklen - 2:
            raise HostLocalError(f"Network {iface.with_prefixlen} too small to allocate from")
        network = iface.network
        if iface.ip != network.network_address:
            raise HostLocalError(
                f"Network has host bits set. For a subnet mask of length {ones} "
                f"the network address is {network.network_address}"
            )
        gw = network.network_address + 1 if gateway is None else ipaddress.ip_address(gateway)
        start = None if range_start is None else ipaddress.ip_address(range_start)
        end = None if range_end is None else ipaddress.ip_address(range_end)
        if start is not None:
            # Upstream checks Contains(rangeStart) while rangeEnd still holds the configured value.
            if not _range_contains(network, start, start, end):
                raise HostLocalError(f"RangeStart {start} not in network {network}")
        else:
            start = network.network_address + 1
        if end is not None:
            if not _range_contains(network, end, start, None):
                raise HostLocalError(f"RangeEnd {end} not in network {network}")
        else:
            end = _last_ip(network)
        return cls(network, start, end, gw)

    def contains(self, ip: IPAddress) -> bool:
        """Range.Contains: ip is in the subnet and within [rangeStart, rangeEnd]."""
        return _range_contains(self.subnet, ip, self.range_start, self.range_end)

    def overlaps(self, other: HostLocalRange) -> bool:
        """Range.Overlaps."""
        if self.range_start.version != other.range_start.version:
            return False
        return (
            self.contains(other.range_start)
            or self.contains(other.range_end)
            or other.contains(self.range_start)
            or other.contains(self.range_end)
        )

    def __str__(self) -> str:
        return f"{self.range_start}-{self.range_end}"


def _range_contains(
    subnet: IPNetwork, ip: IPAddress, start: Optional[IPAddress], end: Optional[IPAddress]
) -> bool:
    if ip.version != subnet.version or ip not in subnet:
        return False
    if start is not None and ip < start:
        return False
    if end is not None and ip > end:
        return False
    return True


def _last_ip(network: IPNetwork) -> IPAddress:
    """lastIP: the broadcast address, minus one for IPv4."""
    last = network.broadcast_address
    return last - 1 if network.version == 4 else last


def canonical_range_set(ranges: Iterable[HostLocalRange]) -> tuple[HostLocalRange, ...]:
    """RangeSet.Canonicalize: non-empty, one family, no overlaps. `ranges` may be a generator that canonicalizes
    each configured range as the check reaches it (load_range_sets), so that, as upstream's loop does, a range of
    another family than the first is refused before a later range is canonicalized."""
    canonical: list[HostLocalRange] = []
    for r in ranges:
        if canonical and r.range_start.version != canonical[0].range_start.version:
            raise HostLocalError("mixed address families")
        canonical.append(r)
    if not canonical:
        raise HostLocalError("empty range set")
    for i, first in enumerate(canonical):
        for second in canonical[i + 1:]:
            if first.overlaps(second):
                raise HostLocalError(f"subnets {first} and {second} overlap")
    return tuple(canonical)


def load_range_sets(ranges: Sequence[Sequence[Mapping[str, str]]]) -> tuple[tuple[HostLocalRange, ...], ...]:
    """allocator.LoadIPAMConfig's checks of the ipam section's `ranges` (a list of range sets, each a list of
    {"subnet", "rangeStart", "rangeEnd", "gateway"} as the configuration file writes them): the canonical range
    sets, or upstream's refusal, which the plugin returns on every ADD and DEL while the file stays as it is.
    The CNI version check (one address per family before 0.3.0) is not modelled: the model's configuration
    declares 1.0.0."""
    if not ranges:
        raise HostLocalError("no IP ranges specified")
    sets = []
    for i, configured in enumerate(ranges):
        try:
            sets.append(canonical_range_set(HostLocalRange.parse(
                r["subnet"], r.get("rangeStart"), r.get("rangeEnd"), r.get("gateway")) for r in configured))
        except HostLocalError as err:
            raise HostLocalError(f"invalid range set {i}: {err}") from None
    # no address of one range set may be in another (RangeSet.Overlaps: any two of their ranges overlap)
    for i, first in enumerate(sets):
        for j, second in enumerate(sets[i + 1:], start=i + 1):
            if any(a.overlaps(b) for a in first for b in second):
                raise HostLocalError(f"range set {i} overlaps with {j}")
    return tuple(sets)


def range_set_str(ranges: Sequence[HostLocalRange]) -> str:
    """RangeSet.String: the ranges' "start-end" joined by commas."""
    return ",".join(str(r) for r in ranges)


# ---------------------------------------------------------------------------------------------------------------
# The allocator
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IPConfig:
    """The part of a CNI result one allocation produces: the address with its subnet mask, and the gateway."""

    address: IPInterface
    gateway: IPAddress

    @property
    def ip(self) -> IPAddress:
        return self.address.ip


class RangeIter:
    """allocator.RangeIter: the round-robin walk over a range set, skipping gateways."""

    def __init__(self, ranges: Sequence[HostLocalRange], last_reserved: Optional[IPAddress]) -> None:
        self.ranges = ranges
        self.range_idx = 0
        self.cur: Optional[IPAddress] = None
        self.start_ip: Optional[IPAddress] = None
        if last_reserved is not None and any(r.contains(last_reserved) for r in ranges):
            # The first next() returns last_reserved + 1.
            self.range_idx = next(i for i, r in enumerate(ranges) if r.contains(last_reserved))
            self.cur = last_reserved
        else:
            self.start_ip = ranges[0].range_start

    def next(self) -> Optional[tuple[IPAddress, HostLocalRange]]:
        """The next candidate address and its range, or None once the walk is back where it started."""
        while True:  # upstream recurses to skip a gateway; a loop is the same walk
            r = self.ranges[self.range_idx]
            if self.cur is None:
                self.cur = r.range_start
                self.start_ip = self.cur
                if self.cur == r.gateway:
                    continue
                return self.cur, r
            if self.cur == r.range_end:
                self.range_idx = (self.range_idx + 1) % len(self.ranges)
                r = self.ranges[self.range_idx]
                self.cur = r.range_start
            else:
                self.cur = self.cur + 1
            if self.start_ip is None:
                self.start_ip = self.cur
            elif self.cur == self.start_ip:
                return None
            if self.cur == r.gateway:
                continue
            return self.cur, r

    def __iter__(self) -> Iterator[IPAddress]:
        while (step := self.next()) is not None:
            yield step[0]


class HostLocalAllocator:
    """allocator.IPAllocator: one range set of one network, reserving in the given disk dict."""

    __slots__ = ("ranges", "store", "range_id")

    def __init__(
        self,
        ranges: HostLocalRange | Sequence[HostLocalRange],
        disk: MutableMapping[str, str],
        range_id: int = 0,
    ) -> None:
        if isinstance(ranges, HostLocalRange):
            ranges = (ranges,)
        self.ranges: tuple[HostLocalRange, ...] = canonical_range_set(ranges)
        self.store = HostLocalStore(disk)
        self.range_id: str = str(range_id)  # the range set's index in the config; names last_reserved_ip.<id>

    def range_for(self, ip: IPAddress) -> HostLocalRange:
        """RangeSet.RangeFor: the range holding ip, or an error naming the range set."""
        for r in self.ranges:
            if r.contains(ip):
                return r
        raise HostLocalError(f"{ip} not in range set {range_set_str(self.ranges)}")

    def iterator(self) -> RangeIter:
        """GetIter: the walk, starting after the last reserved address when it is still in the range set."""
        return RangeIter(self.ranges, self.store.last_reserved_ip(self.range_id))

    def allocate(
        self, container_id: str, ifname: str, requested_ip: Optional[str | IPAddress] = None
    ) -> IPConfig:
        """Get: reserve an address for id/ifname (the requested one, if given) and return it."""
        if requested_ip is not None:
            ip = ipaddress.ip_address(requested_ip) if isinstance(requested_ip, str) else requested_ip
            r = self.range_for(ip)
            if ip == r.gateway:
                raise HostLocalError(f"requested ip {ip} is subnet's gateway")
            if not self.store.reserve(container_id, ifname, ip, self.range_id):
                raise HostLocalError(
                    f"requested IP address {ip} is not available in range set {range_set_str(self.ranges)}"
                )
            return IPConfig(ipaddress.ip_interface((ip, r.subnet.prefixlen)), r.gateway)

        # Duplicate allocation is not allowed by the CNI spec.
        for allocated in self.store.get_by_id(container_id, ifname):
            if any(r.contains(allocated) for r in self.ranges):
                raise HostLocalError(
                    f"{allocated} has been allocated to {container_id}, duplicate allocation is not allowed"
                )
        walk = self.iterator()
        while (step := walk.next()) is not None:
            ip, r = step
            if self.store.reserve(container_id, ifname, ip, self.range_id):
                return IPConfig(ipaddress.ip_interface((ip, r.subnet.prefixlen)), r.gateway)
        raise HostLocalError(f"no IP addresses available in range set: {range_set_str(self.ranges)}")

    def release(self, container_id: str, ifname: str) -> None:
        """Release: free every address of id/ifname; last_reserved_ip is left as it is."""
        self.store.release_by_id(container_id, ifname)
