"""host-local IPAM against kubernetes.md's vectors and upstream's allocator_test.go / range tests."""

from __future__ import annotations

import ipaddress

import pytest

from kmodel.ipam.hostlocal import HostLocalAllocator, HostLocalError, HostLocalRange, load_range_sets


def allocator(subnets: list[str], taken: dict[str, str] | None = None, last_ip: str | None = None):
    disk: dict[str, str] = dict(taken or {})
    if last_ip is not None:
        disk["last_reserved_ip.0"] = last_ip
    return HostLocalAllocator([HostLocalRange.parse(s) for s in subnets], disk), disk


# -- kubernetes.md vectors (allocator_test.go "should allocate ips in round robin") ----------------------------------


@pytest.mark.parametrize(
    "subnets, taken, last_ip, expected",
    [
        (["10.0.0.0/29"], [], None, "10.0.0.2"),
        (["2001:db8:1::0/64"], [], None, "2001:db8:1::2"),
        (["10.0.0.0/30"], [], None, "10.0.0.2"),
        (["10.0.0.0/29"], ["10.0.0.2"], None, "10.0.0.3"),
        (["10.0.0.0/29"], [], "10.0.0.5", "10.0.0.6"),
        (["10.0.0.0/29"], ["10.0.0.4", "10.0.0.5"], "10.0.0.3", "10.0.0.6"),
        (["10.0.0.0/29"], ["10.0.0.6"], "10.0.0.5", "10.0.0.2"),  # wrap
        (["10.0.0.0/29"], ["10.0.0.2"], "10.0.0.128", "10.0.0.3"),  # last reserved outside the range
        (["10.0.0.0/29"], ["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"], "10.0.0.3", "10.0.0.3"),
        (["10.0.0.0/30", "10.0.1.0/30"], [], None, "10.0.0.2"),
        (["10.0.0.0/30", "10.0.1.0/30"], [], "10.0.0.2", "10.0.1.2"),
        (["10.0.0.0/30", "10.0.1.0/30", "10.0.2.0/30"], [], "10.0.2.2", "10.0.0.2"),
    ],
)
def test_round_robin_vectors(subnets: list[str], taken: list[str], last_ip: str | None, expected: str) -> None:
    alloc, disk = allocator(subnets, {ip: "id" for ip in taken}, last_ip)
    result = alloc.allocate("ID", "eth0")
    assert str(result.ip) == expected
    assert disk[expected] == "ID\r\neth0"
    assert disk["last_reserved_ip.0"] == expected


def test_iterating_192_168_1_0_29() -> None:
    alloc, _ = allocator(["192.168.1.0/29"])
    assert [str(ip) for ip in alloc.iterator()] == [f"192.168.1.{i}" for i in range(2, 7)]


@pytest.mark.parametrize(
    "last, order",
    [("192.168.1.6", [2, 3, 4, 5, 6]), ("192.168.1.3", [4, 5, 6, 2, 3])],
)
def test_iterator_loops_from_last_reserved(last: str, order: list[int]) -> None:
    alloc, disk = allocator(["192.168.1.0/29"])
    assert alloc.store.reserve("ID", "eth0", ipaddress.ip_address(last), "0")
    alloc.store.release_by_id("ID", "eth0")
    assert disk == {"last_reserved_ip.0": last}
    assert [str(ip) for ip in alloc.iterator()] == [f"192.168.1.{i}" for i in order]


def test_does_not_allocate_the_broadcast_address() -> None:
    alloc, _ = allocator(["192.168.1.0/29"])
    for i in range(2, 7):
        assert str(alloc.allocate(f"ID{i}", "eth0").address) == f"192.168.1.{i}/29"
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID8", "eth0")
    assert str(err.value) == "no IP addresses available in range set: 192.168.1.1-192.168.1.6"


def test_release_does_not_reset_last_reserved() -> None:
    alloc, disk = allocator(["192.168.1.0/29"])
    assert str(alloc.allocate("ID", "eth0").address) == "192.168.1.2/29"
    alloc.release("ID", "eth0")
    assert disk == {"last_reserved_ip.0": "192.168.1.2"}
    assert str(alloc.allocate("ID", "eth0").address) == "192.168.1.3/29"


def test_gateway_defaults_to_network_plus_one() -> None:
    alloc, _ = allocator(["10.244.1.0/24"])
    result = alloc.allocate("c1", "eth0")
    assert (str(result.address), str(result.gateway)) == ("10.244.1.2/24", "10.244.1.1")
    r = alloc.ranges[0]
    assert (str(r.range_start), str(r.range_end)) == ("10.244.1.1", "10.244.1.254")


@pytest.mark.parametrize(
    "subnets, taken",
    [
        (["10.0.0.0/30"], ["10.0.0.2"]),
        (["10.0.0.0/29"], ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]),
        (["10.0.0.0/30", "10.0.1.0/30"], ["10.0.0.2", "10.0.1.2"]),
    ],
)
def test_out_of_ips(subnets: list[str], taken: list[str]) -> None:
    alloc, _ = allocator(subnets, {ip: "id" for ip in taken})
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID", "eth0")
    assert str(err.value).startswith("no IP addresses available in range set")


def test_multi_range_error_names_every_range() -> None:
    alloc, _ = allocator(["10.0.0.0/30", "10.0.1.0/30"], {"10.0.0.2": "id", "10.0.1.2": "id"})
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID", "eth0")
    assert str(err.value) == "no IP addresses available in range set: 10.0.0.1-10.0.0.2,10.0.1.1-10.0.1.2"


def test_duplicate_allocation_for_same_id_and_ifname() -> None:
    alloc, _ = allocator(["10.244.1.0/24"])
    alloc.allocate("c1", "eth0")
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("c1", "eth0")
    assert str(err.value) == "10.244.1.2 has been allocated to c1, duplicate allocation is not allowed"
    # Another interface of the same container is a different allocation.
    assert str(alloc.allocate("c1", "net1").ip) == "10.244.1.3"


def test_duplicate_check_matches_old_format_files() -> None:
    alloc, _ = allocator(["10.244.1.0/24"], {"10.244.1.7": "c1"})
    with pytest.raises(HostLocalError, match="10.244.1.7 has been allocated to c1"):
        alloc.allocate("c1", "eth0")


def test_release_only_frees_that_container_interface() -> None:
    alloc, disk = allocator(["10.244.1.0/24"])
    alloc.allocate("c1", "eth0")
    alloc.allocate("c2", "eth0")
    alloc.release("c1", "eth0")
    assert sorted(disk) == ["10.244.1.3", "last_reserved_ip.0"]
    alloc.release("nobody", "eth0")  # releasing what is not there is not an error
    assert sorted(disk) == ["10.244.1.3", "last_reserved_ip.0"]


def test_reservations_survive_a_restart() -> None:
    disk: dict[str, str] = {}
    first = HostLocalAllocator(HostLocalRange.parse("10.244.1.0/24"), disk)
    first.allocate("c1", "eth0")
    first.allocate("c2", "eth0")
    first.release("c1", "eth0")
    restarted = HostLocalAllocator(HostLocalRange.parse("10.244.1.0/24"), disk)
    assert str(restarted.allocate("c3", "eth0").ip) == "10.244.1.4"
    assert restarted.store.find_by_id("c2", "eth0")
    assert not restarted.store.find_by_id("c1", "eth0")


def test_forgotten_disk_hands_out_an_ip_twice() -> None:
    # The bug class "pod IP handed out twice after an IPAM restart": only the disk prevents it.
    alloc, _ = allocator(["10.244.1.0/24"])
    first = alloc.allocate("c1", "eth0").ip
    amnesiac, _ = allocator(["10.244.1.0/24"])
    assert amnesiac.allocate("c2", "eth0").ip == first


# -- requested IPs ---------------------------------------------------------------------------------------------------


def test_requested_ip() -> None:
    alloc, _ = allocator(["192.168.1.0/29"])
    assert str(alloc.allocate("ID", "eth0", "192.168.1.5").ip) == "192.168.1.5"
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID", "eth0", "192.168.1.5")
    assert str(err.value) == (
        "requested IP address 192.168.1.5 is not available in range set 192.168.1.1-192.168.1.6"
    )


def test_requested_ip_outside_range_and_gateway() -> None:
    alloc = HostLocalAllocator(HostLocalRange.parse("192.168.1.0/29", range_end="192.168.1.4"), {})
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID", "eth0", "192.168.1.5")
    assert str(err.value) == "192.168.1.5 not in range set 192.168.1.1-192.168.1.4"
    with pytest.raises(HostLocalError) as err:
        alloc.allocate("ID", "eth0", "192.168.1.1")
    assert str(err.value) == "requested ip 192.168.1.1 is subnet's gateway"
    before_start = HostLocalAllocator(HostLocalRange.parse("192.168.1.0/29", range_start="192.168.1.3"), {})
    with pytest.raises(HostLocalError):
        before_start.allocate("ID", "eth0", "192.168.1.2")


# -- range validation (range.go Canonicalize) -----------------------------------------------------------------------


@pytest.mark.parametrize("subnet", ["10.0.0.0/31", "10.0.0.1/32", "2001:db8::/127", "2001:db8::/128"])
def test_too_small_networks_are_refused(subnet: str) -> None:
    with pytest.raises(HostLocalError) as err:
        HostLocalRange.parse(subnet)
    assert str(err.value) == f"Network {subnet} too small to allocate from"


def test_host_bits_are_refused() -> None:
    with pytest.raises(HostLocalError) as err:
        HostLocalRange.parse("10.1.2.3/24")
    assert str(err.value) == "Network has host bits set. For a subnet mask of length 24 the network address is 10.1.2.0"


def test_range_start_and_end_validation() -> None:
    with pytest.raises(HostLocalError, match="^RangeStart 10.1.3.5 not in network 10.1.2.0/24$"):
        HostLocalRange.parse("10.1.2.0/24", range_start="10.1.3.5")
    with pytest.raises(HostLocalError, match="^RangeEnd 10.1.3.5 not in network 10.1.2.0/24$"):
        HostLocalRange.parse("10.1.2.0/24", range_end="10.1.3.5")
    # Upstream checks rangeStart against the configured rangeEnd, so start > end is reported as the start.
    with pytest.raises(HostLocalError, match="^RangeStart 10.1.2.50 not in network 10.1.2.0/24$"):
        HostLocalRange.parse("10.1.2.0/24", range_start="10.1.2.50", range_end="10.1.2.40")


def test_range_defaults_and_explicit_values() -> None:
    r = HostLocalRange.parse("10.1.2.0/24", range_start="10.1.2.40", range_end="10.1.2.50", gateway="10.1.2.254")
    assert (str(r.range_start), str(r.range_end), str(r.gateway)) == ("10.1.2.40", "10.1.2.50", "10.1.2.254")
    v6 = HostLocalRange.parse("2001:db8:1::/64")
    assert (str(v6.range_start), str(v6.range_end)) == ("2001:db8:1::1", "2001:db8:1:0:ffff:ffff:ffff:ffff")


def test_range_set_validation() -> None:
    with pytest.raises(HostLocalError, match="^empty range set$"):
        HostLocalAllocator([], {})
    with pytest.raises(HostLocalError, match="^mixed address families$"):
        HostLocalAllocator([HostLocalRange.parse("10.0.0.0/24"), HostLocalRange.parse("2001:db8::/64")], {})
    with pytest.raises(HostLocalError, match="^subnets 10.0.0.1-10.0.0.254 and 10.0.0.1-10.0.0.126 overlap$"):
        HostLocalAllocator([HostLocalRange.parse("10.0.0.0/24"), HostLocalRange.parse("10.0.0.0/25")], {})


def test_range_start_on_the_gateway_is_skipped() -> None:
    alloc = HostLocalAllocator(HostLocalRange.parse("10.0.0.0/29", range_start="10.0.0.1"), {})
    assert str(alloc.allocate("a", "eth0").ip) == "10.0.0.2"


# upstream's vectors (containernetworking/plugins v1.5.1 allocator/config_test.go), then each refusal of a range
@pytest.mark.parametrize("ranges, error", [
    ([[{"subnet": "10.1.2.0/24"}, {"subnet": "10.2.2.0/24"}],
      [{"subnet": "10.1.4.0/24"}, {"subnet": "10.1.6.0/24"}, {"subnet": "10.1.8.0/24"}, {"subnet": "10.1.2.0/24"}]],
     "range set 0 overlaps with 1"),
    ([[{"subnet": "10.1.0.0/22"}, {"subnet": "10.1.2.0/24"}]],
     "invalid range set 0: subnets 10.1.0.1-10.1.3.254 and 10.1.2.1-10.1.2.254 overlap"),
    ([[{"subnet": "10.1.0.0/22"}, {"subnet": "2001:db8:5::/64"}]], "invalid range set 0: mixed address families"),
    ([], "no IP ranges specified"),
    ([[{"subnet": "10.1.0.0/24"}], []], "invalid range set 1: empty range set"),
    ([[{"subnet": "10.1.0.0/31"}]], "invalid range set 0: Network 10.1.0.0/31 too small to allocate from"),
    ([[{"subnet": "10.1.0.1/24"}]],
     "invalid range set 0: Network has host bits set. For a subnet mask of length 24 the network address is 10.1.0.0"),
    ([[{"subnet": "10.1.0.0/24", "rangeStart": "10.1.1.5"}]], "invalid range set 0: RangeStart 10.1.1.5 not in network "
                                                               "10.1.0.0/24"),
    ([[{"subnet": "10.1.0.0/24", "rangeEnd": "10.1.1.5"}]], "invalid range set 0: RangeEnd 10.1.1.5 not in network "
                                                             "10.1.0.0/24"),
    # a range of another family is refused before a later range is canonicalized, as upstream's loop does
    ([[{"subnet": "10.1.0.0/24"}, {"subnet": "2001:db8:5::/64"}, {"subnet": "10.2.0.0/31"}]],
     "invalid range set 0: mixed address families"),
])
def test_a_configuration_upstream_refuses_is_refused_with_its_error(ranges, error) -> None:
    with pytest.raises(HostLocalError) as refused:
        load_range_sets(ranges)
    assert str(refused.value) == error


def test_a_valid_configuration_loads_as_its_canonical_range_sets() -> None:
    sets = load_range_sets([[{"subnet": "10.1.0.0/24", "rangeStart": "10.1.0.10", "rangeEnd": "10.1.0.20",
                              "gateway": "10.1.0.254"}, {"subnet": "10.2.0.0/30"}],
                            [{"subnet": "2001:db8:5::/64"}]])
    assert [[str(r) for r in s] for s in sets] == [["10.1.0.10-10.1.0.20", "10.2.0.1-10.2.0.2"],
                                                   ["2001:db8:5::1-2001:db8:5:0:ffff:ffff:ffff:ffff"]]
    assert str(sets[0][0].gateway) == "10.1.0.254"
