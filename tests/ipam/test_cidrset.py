"""CidrSet against kubernetes.md's Node IPAM vectors and upstream's cidr_set_test.go."""

from __future__ import annotations

import pytest

from kmodel.ipam.cidrset import (
    CLUSTER_MASK_TOO_LONG,
    NO_CIDRS_REMAINING,
    SUBNET_TOO_BIG,
    CIDRRangeNoCIDRsRemainingError,
    CidrSet,
    CidrSetError,
)


def exhausted(cs: CidrSet) -> bool:
    with pytest.raises(CIDRRangeNoCIDRsRemainingError) as err:
        cs.allocate_next()
    assert str(err.value) == NO_CIDRS_REMAINING
    return True


# -- kubernetes.md vectors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cluster", ["127.123.234.0/30", "beef:1234::/30"])
def test_fully_allocated_then_release_and_reallocate(cluster: str) -> None:
    cs = CidrSet(cluster, 30)
    assert str(cs.allocate_next()) == cluster
    assert exhausted(cs)
    cs.release(cluster)
    assert str(cs.allocate_next()) == cluster
    assert exhausted(cs)


@pytest.mark.parametrize(
    "cluster, mask, first, second",
    [
        ("127.0.0.0/8", 32, "127.0.0.0/32", "127.0.0.1/32"),
        ("2001:beef:1234:369b::/60", 64, "2001:beef:1234:3690::/64", "2001:beef:1234:3691::/64"),
    ],
)
def test_first_two_allocations(cluster: str, mask: int, first: str, second: str) -> None:
    cs = CidrSet(cluster, mask)
    assert str(cs.allocate_next()) == first
    assert str(cs.allocate_next()) == second


def test_ipv6_node_mask_more_than_16_longer_is_refused() -> None:
    with pytest.raises(CidrSetError) as err:
        CidrSet("beef:1234::/32", 49)
    assert str(err.value) == SUBNET_TOO_BIG


def test_cluster_cidr_smaller_than_a_node_block_is_refused() -> None:
    with pytest.raises(CidrSetError) as err:
        CidrSet("10.0.0.0/26", 24)
    assert str(err.value) == CLUSTER_MASK_TOO_LONG


@pytest.mark.parametrize(
    "cluster, mask, index, block",
    [
        ("127.123.3.0/16", 24, 0, "127.123.0.0/24"),
        ("127.123.0.0/16", 24, 15, "127.123.15.0/24"),
        ("192.168.5.219/28", 32, 5, "192.168.5.213/32"),
        ("2001:0db8:1234:3::/48", 64, 0, "2001:db8:1234::/64"),
        ("2001:0db8:1234::/48", 64, 15, "2001:db8:1234:f::/64"),
        ("2001:0db8:85a3::8a2e:0370:7334/50", 63, 6425, "2001:db8:85a3:3232::/63"),
        ("2001:0db8::/32", 48, 0, "2001:db8::/48"),
        ("2001:0db8::/32", 48, 15, "2001:db8:f::/48"),
        ("2001:0db8:85a3::8a2e:0370:7334/32", 48, 6425, "2001:db8:1919::/48"),
        ("2001:0db8:1234:ff00::/56", 72, 0, "2001:db8:1234:ff00::/72"),
        ("2001:0db8:1234:ff00::/56", 72, 15, "2001:db8:1234:ff00:f00::/72"),
        ("2001:0db8:1234:ff00::0370:7334/56", 72, 6425, "2001:db8:1234:ff19:1900::/72"),
        ("2001:0db8:1234:0:1234::/80", 96, 0, "2001:db8:1234:0:1234::/96"),
        ("2001:0db8:1234:0:1234::/80", 96, 15, "2001:db8:1234:0:1234:f::/96"),
        ("2001:0db8:1234:ff00::0370:7334/80", 96, 6425, "2001:db8:1234:ff00:0:1919::/96"),
    ],
)
def test_index_to_cidr_block(cluster: str, mask: int, index: int, block: str) -> None:
    cs = CidrSet(cluster, mask)
    assert str(cs.index_to_cidr_block(index)) == block
    assert cs.index_for_cidr(block) == index


def test_double_occupy_release_counts() -> None:
    cs = CidrSet("10.42.0.0/16", 24)
    steps = [
        ("occupy", "10.42.5.0/24", 1),
        ("occupy", "10.42.9.0/24", 2),
        ("occupy", "10.42.8.0/22", 5),
        ("occupy", "10.42.9.0/24", 5),
        ("release", "10.42.9.0/24", 4),
        ("release", "10.42.9.0/24", 4),
        ("release", "10.42.4.0/22", 3),
    ]
    for op, cidr, used in steps:
        getattr(cs, op)(cidr)
        assert cs.allocated == used, (op, cidr)
    for _ in range(253):
        cs.allocate_next()
    assert exhausted(cs)


def test_release_is_reused_only_after_wrap() -> None:
    cs = CidrSet("10.0.0.0/22", 24)
    assert [str(cs.allocate_next()) for _ in range(3)] == ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"]
    cs.release("10.0.0.0/24")
    assert [str(cs.allocate_next()) for _ in range(2)] == ["10.0.3.0/24", "10.0.0.0/24"]
    assert exhausted(cs)


# -- further ports of cidr_set_test.go -----------------------------------------------------------------------------


@pytest.mark.parametrize("cluster", ["127.123.234.0/16", "beef:1234::/16"])
def test_randomish_allocation_reallocates_same_collection(cluster: str) -> None:
    cs = CidrSet(cluster, 24)
    first = [cs.allocate_next() for _ in range(256)]
    assert exhausted(cs)
    for cidr in first:
        cs.release(cidr)
    again = [cs.allocate_next() for _ in range(256)]
    assert exhausted(cs)
    assert again == first


@pytest.mark.parametrize("cluster", ["127.123.234.0/16", "beef:1234::/16"])
def test_allocation_occupied(cluster: str) -> None:
    cs = CidrSet(cluster, 24)
    cidrs = [cs.allocate_next() for _ in range(256)]
    assert exhausted(cs)
    for cidr in cidrs:
        cs.release(cidr)
    for cidr in cidrs[128:]:
        cs.occupy(cidr)
    cs.occupy(cidrs[128])
    again = [cs.allocate_next() for _ in range(128)]
    assert exhausted(cs)
    assert again + cidrs[128:] == cidrs


@pytest.mark.parametrize(
    "cluster, mask, subnet, index",
    [
        ("127.0.0.0/8", 16, "127.0.0.0/16", 0),
        ("be00::/8", 16, "be00::/16", 0),
        ("127.0.0.0/8", 16, "127.123.0.0/16", 123),
        ("be00::/8", 16, "beef::/16", 0xEF),
        ("127.0.0.0/8", 16, "127.168.0.0/16", 168),
        ("be00::/8", 16, "be68::/16", 0x68),
        ("127.0.0.0/8", 16, "127.224.0.0/16", 224),
        ("be00::/8", 16, "be24::/16", 0x24),
        ("192.168.0.0/16", 24, "192.168.12.0/24", 12),
        ("beef::/16", 24, "beef:1200::/24", 0x12),
        ("192.168.0.0/16", 24, "192.168.151.0/24", 151),
        ("beef::/16", 24, "beef:9700::/24", 0x97),
    ],
)
def test_index_for_cidr(cluster: str, mask: int, subnet: str, index: int) -> None:
    assert CidrSet(cluster, mask).index_for_cidr(subnet) == index


@pytest.mark.parametrize(
    "cluster, mask, subnet",
    [("192.168.0.0/16", 24, "127.168.224.0/24"), ("beef::/16", 24, "2001:db00::/24")],
)
def test_index_for_cidr_outside_is_an_error(cluster: str, mask: int, subnet: str) -> None:
    with pytest.raises(CidrSetError) as err:
        CidrSet(cluster, mask).index_for_cidr(subnet)
    assert "is out of the range of CIDR allocator" in str(err.value)


@pytest.mark.parametrize(
    "cluster, mask, subnet, begin, end",
    [
        ("127.0.0.0/8", 16, "127.0.0.0/8", 0, 255),
        ("2001:beef:1200::/40", 48, "2001:beef:1200::/40", 0, 255),
        ("127.0.0.0/8", 16, "127.0.0.0/2", 0, 255),
        ("2001:beef:1200::/40", 48, "2001:beef:1234::/34", 0, 255),
        ("127.0.0.0/8", 16, "127.0.0.0/16", 0, 0),
        ("2001:beef:1200::/40", 48, "2001:beef:1200::/48", 0, 0),
        ("127.0.0.0/8", 32, "127.0.0.0/16", 0, 65535),
        ("2001:beef:1200::/48", 64, "2001:beef:1200::/48", 0, 65535),
        ("127.0.0.0/7", 16, "127.0.0.0/15", 256, 257),
        ("2001:beef:7f00::/39", 48, "2001:beef:7f00::/47", 256, 257),
        ("127.0.0.0/7", 15, "127.0.0.0/15", 128, 128),
        ("2001:beef:7f00::/39", 47, "2001:beef:7f00::/47", 128, 128),
        ("127.0.0.0/7", 18, "127.0.0.0/15", 1024, 1031),
        ("2001:beef:7f00::/39", 50, "2001:beef:7f00::/47", 1024, 1031),
    ],
)
def test_occupy_marks_exactly_the_covered_blocks(cluster: str, mask: int, subnet: str, begin: int, end: int) -> None:
    cs = CidrSet(cluster, mask)
    cs.occupy(subnet)
    assert cs.state()[3] == ((1 << (end - begin + 1)) - 1) << begin
    assert cs.allocated == end - begin + 1


def test_occupy_outside_cluster_is_an_error() -> None:
    cs = CidrSet("10.244.0.0/16", 24)
    with pytest.raises(CidrSetError) as err:
        cs.occupy("10.245.0.0/24")
    assert str(err.value) == "cidr 10.245.0.0/24 is out the range of cluster cidr 10.244.0.0/16"
    assert cs.allocated == 0


def test_occupy_does_not_move_next_candidate() -> None:
    # TestCidrSetMetricsHistogram: occupy the lower half, the next allocation scans 128 blocks to 10.0.128.0/24.
    cs = CidrSet("10.0.0.0/16", 24)
    cs.occupy("10.0.0.0/17")
    assert cs.allocated == 128 and cs.next_candidate == 0
    assert str(cs.allocate_next()) == "10.0.128.0/24"


def test_release_and_occupy_whole_cluster() -> None:
    cs = CidrSet("10.0.0.0/16", 24)
    for _ in range(256):
        cs.allocate_next()
    cs.release("10.0.0.0/16")
    assert cs.allocated == 0
    cs.occupy("10.0.0.0/16")
    assert cs.allocated == 256
    assert exhausted(cs)


def test_default_seed_cluster() -> None:
    cs = CidrSet("10.244.0.0/16", 24)
    assert cs.max_cidrs == 256
    assert [str(cs.allocate_next()) for _ in range(2)] == ["10.244.0.0/24", "10.244.1.0/24"]
    assert [str(b) for b in cs.used_blocks()] == ["10.244.0.0/24", "10.244.1.0/24"]


def test_copy_is_independent() -> None:
    cs = CidrSet("10.244.0.0/16", 24)
    cs.allocate_next()
    twin = cs.copy()
    assert twin == cs
    twin.allocate_next()
    assert twin != cs and cs.allocated == 1
