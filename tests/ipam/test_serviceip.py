"""ClusterIP allocator against upstream's ipallocator bitmap_test.go and the API server's range checks."""

from __future__ import annotations

import ipaddress
import random

import pytest

from kmodel.ipam.serviceip import (
    ALREADY_ALLOCATED,
    DEFAULT_SERVICE_CIDR,
    AlreadyAllocatedError,
    NotInRangeError,
    RangeFullError,
    ServiceIPAllocator,
    ServiceIPError,
    calculate_range_offset,
    kubernetes_service_ip,
    parse_cidr,
    validate_service_cluster_ip_range,
)


def new(cidr: str, seed: int = 0) -> ServiceIPAllocator:
    return ServiceIPAllocator(cidr, random.Random(seed))


@pytest.mark.parametrize(
    "cidr, free, released, out_of_range, already",
    [
        ("192.168.1.0/24", 254, "192.168.1.5", ["192.168.0.1", "192.168.1.0", "192.168.1.255", "192.168.2.2"],
         "192.168.1.1"),
        ("10.0.0.0/15", 131070, "10.0.0.5", ["10.0.0.0", "10.15.255.255", "10.255.255.2"], "10.0.0.1"),
        ("2001:db8:1::/48", 65535, "2001:db8:1::5", ["2001:db8::1", "2001:db8:1::", "2001:db8:1::1:0", "2001:db8:2::2"],
         "2001:db8:1::1"),
    ],
)
def test_allocate_whole_range(cidr: str, free: int, released: str, out_of_range: list[str], already: str) -> None:
    r = new(cidr)
    net = parse_cidr(cidr)
    assert (r.free, r.used) == (free, 0)
    seen = set()
    while r.free > 0:
        ip = r.allocate_next()
        assert ip in net and ip not in seen
        seen.add(ip)
    with pytest.raises(RangeFullError, match="^range is full$"):
        r.allocate_next()
    r.release(released)
    assert (r.free, r.used) == (1, free - 1)
    assert str(r.allocate_next()) == released  # the only free address
    r.release(released)
    for ip in out_of_range:
        with pytest.raises(NotInRangeError) as err:
            r.allocate(ip)
        assert str(err.value) == f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}"
    with pytest.raises(AlreadyAllocatedError) as err:
        r.allocate(already)
    assert str(err.value) == ALREADY_ALLOCATED
    assert (r.free, r.used) == (1, free - 1)
    r.allocate(released)
    assert (r.free, r.used) == (0, free)


def test_allocate_tiny() -> None:
    r = new("192.168.1.0/32")
    assert r.free == 0
    with pytest.raises(RangeFullError):
        r.allocate_next()


def test_allocate_small() -> None:
    r = new("192.168.1.240/30")
    assert (r.free, r.max) == (2, 2)
    found = {r.allocate_next(), r.allocate_next()}
    assert found == {ipaddress.ip_address("192.168.1.241"), ipaddress.ip_address("192.168.1.242")}
    for ip in found:
        assert r.has(ip)
        with pytest.raises(AlreadyAllocatedError):
            r.allocate(ip)
    for _ in range(100):
        with pytest.raises(RangeFullError):
            r.allocate_next()


def test_allocate_reserved_dynamic_block_first() -> None:
    r = new("192.168.1.0/25")
    offset = calculate_range_offset(r.cidr)
    assert offset == 16
    for _ in range(r.max - offset):
        r.allocate_next()
    for i in range(offset, r.max):
        assert r.has(f"192.168.1.{i + 1}")
    assert r.free == offset
    for i in range(offset):
        r.allocate(f"192.168.1.{i + 1}")
    assert r.free == 0
    r.release("192.168.1.10")
    assert str(r.allocate_next()) == "192.168.1.10"
    assert r.free == 0


def test_static_block_used_only_when_dynamic_block_full() -> None:
    r = new("192.168.1.0/25")
    for _ in range(r.max - 16):
        assert int(r.allocate_next()) - int(r.cidr.network_address) > 16
    assert int(r.allocate_next()) - int(r.cidr.network_address) <= 16


def test_release_is_a_no_op_when_free_or_out_of_range() -> None:
    r = new("10.0.0.0/24")
    r.release("10.0.0.7")
    r.release("10.1.0.7")
    r.release("10.0.0.0")
    assert r.used == 0


@pytest.mark.parametrize(
    "cidr, offset",
    [("192.168.1.0/28", 0), ("192.168.1.0/27", 16), ("192.168.1.0/24", 16), ("10.0.0.0/20", 256),
     ("10.96.0.0/12", 256), ("2001:db8::/112", 256), ("2001:db8::/64", 256), ("2001:db8::/124", 0)],
)
def test_calculate_range_offset(cidr: str, offset: int) -> None:
    assert calculate_range_offset(parse_cidr(cidr)) == offset


def test_default_service_cidr() -> None:
    r = new(DEFAULT_SERVICE_CIDR)
    assert (r.max, r.range_offset) == (2**20 - 2, 256)
    assert str(kubernetes_service_ip()) == "10.96.0.1"
    r.allocate(kubernetes_service_ip())
    with pytest.raises(AlreadyAllocatedError):
        r.allocate("10.96.0.1")
    for ip in ("10.96.0.0", "10.111.255.255", "10.112.0.1"):
        with pytest.raises(NotInRangeError, match=r"The range of valid IPs is 10\.96\.0\.0/12$"):
            r.allocate(ip)


def test_allocate_next_is_deterministic_for_a_seed() -> None:
    a, b = new(DEFAULT_SERVICE_CIDR, seed=7), new(DEFAULT_SERVICE_CIDR, seed=7)
    assert [a.allocate_next() for _ in range(50)] == [b.allocate_next() for _ in range(50)]


def test_service_range_validation() -> None:
    validate_service_cluster_ip_range("10.92.0.0/12")
    validate_service_cluster_ip_range("3000::/108")
    with pytest.raises(ServiceIPError) as err:
        validate_service_cluster_ip_range("10.92.0.0/8")
    assert str(err.value) == "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"
    with pytest.raises(ServiceIPError) as err:
        validate_service_cluster_ip_range("3000::/64")
    assert str(err.value) == (
        "specified --service-cluster-ip-range is too large; for 128-bit addresses, the mask must be >= 108"
    )
    with pytest.raises(ServiceIPError, match="^the service cluster IP range must be at least 8 IP addresses$"):
        kubernetes_service_ip("10.0.0.0/30")


def test_allocated_lists_in_order() -> None:
    r = new("192.168.1.0/24")
    for ip in ("192.168.1.254", "192.168.1.1", "192.168.1.128"):
        r.allocate(ip)
    assert [str(ip) for ip in r.allocated()] == ["192.168.1.1", "192.168.1.128", "192.168.1.254"]
