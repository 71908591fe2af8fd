"""Hypothesis properties: allocations are unique and in range, and reallocation follows upstream's order.

Each allocator is driven by a random sequence of operations next to a deliberately naive reference model written
straight from the upstream algorithm's description; they must agree step by step.
"""

from __future__ import annotations

import ipaddress
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.ipam.cidrset import CIDRRangeNoCIDRsRemainingError, CidrSet
from kmodel.ipam.hostlocal import HostLocalAllocator, HostLocalError, HostLocalRange
from kmodel.ipam.serviceip import AlreadyAllocatedError, RangeFullError, ServiceIPAllocator

ops = st.lists(st.tuples(st.sampled_from(["alloc", "release"]), st.integers(0, 63)), max_size=120)


@settings(max_examples=150, deadline=None)
@given(ops=ops, node_mask=st.sampled_from([24, 25, 26]), v6=st.booleans())
def test_cidrset_matches_round_robin_reference(ops, node_mask: int, v6: bool) -> None:
    cluster, mask = ("fd00:10:244::/56", node_mask + 40) if v6 else ("10.244.0.0/22", node_mask)
    cs = CidrSet(cluster, mask)
    used: set[int] = set()
    next_candidate = 0
    for op, n in ops:
        if op == "alloc":
            free = [(next_candidate + i) % cs.max_cidrs for i in range(cs.max_cidrs)]
            free = [c for c in free if c not in used]
            if not free:
                try:
                    cs.allocate_next()
                except CIDRRangeNoCIDRsRemainingError:
                    continue
                raise AssertionError("allocated from a full set")
            block = cs.allocate_next()
            expected = free[0]
            assert block == cs.index_to_cidr_block(expected)
            assert block.subnet_of(cs.cluster_cidr) and block.prefixlen == mask
            used.add(expected)
            next_candidate = (expected + 1) % cs.max_cidrs
        else:
            index = n % cs.max_cidrs
            cs.release(cs.index_to_cidr_block(index))
            used.discard(index)
        assert cs.allocated == len(used)
        assert cs.next_candidate == next_candidate
        assert [cs.index_for_cidr(b) for b in cs.used_blocks()] == sorted(used)


@settings(max_examples=150, deadline=None)
@given(ops=ops, restarts=st.lists(st.booleans(), max_size=120))
def test_hostlocal_matches_round_robin_reference(ops, restarts) -> None:
    subnet = ipaddress.ip_network("10.244.3.0/28")
    candidates = [subnet.network_address + i for i in range(2, 15)]  # .1 is the gateway, .15 broadcast
    disk: dict[str, str] = {}
    alloc = HostLocalAllocator(HostLocalRange.parse(str(subnet)), disk)
    owner: dict[ipaddress.IPv4Address, str] = {}
    last = None
    for step, (op, n) in enumerate(ops):
        if step < len(restarts) and restarts[step]:
            alloc = HostLocalAllocator(HostLocalRange.parse(str(subnet)), disk)  # a kubelet restart
        cid = f"c{n % 20}"
        if op == "alloc":
            k = candidates.index(last) if last in candidates else -1
            order = candidates[k + 1:] + candidates[:k + 1]
            if cid in owner.values():
                try:
                    alloc.allocate(cid, "eth0")
                except HostLocalError as err:
                    assert "duplicate allocation is not allowed" in str(err)
                    continue
                raise AssertionError("duplicate allocation succeeded")
            free = [ip for ip in order if ip not in owner]
            if not free:
                try:
                    alloc.allocate(cid, "eth0")
                except HostLocalError as err:
                    assert str(err) == "no IP addresses available in range set: 10.244.3.1-10.244.3.14"
                    continue
                raise AssertionError("allocated from a full range")
            got = alloc.allocate(cid, "eth0")
            assert got.ip == free[0] and got.ip in subnet and got.ip != got.gateway
            owner[got.ip] = cid
            last = got.ip
        else:
            alloc.release(cid, "eth0")
            owner = {ip: c for ip, c in owner.items() if c != cid}
        assert {ip: text.split("\r\n")[0] for ip, text in alloc.store.reserved().items()} == owner
        assert alloc.store.last_reserved_ip("0") == last


@settings(max_examples=100, deadline=None)
@given(ops=ops, seed=st.integers(0, 2**32), cidr=st.sampled_from(["10.96.0.0/26", "10.96.0.0/27", "fd00::/122"]))
def test_service_ips_unique_and_in_range(ops, seed: int, cidr: str) -> None:
    r = ServiceIPAllocator(cidr, random.Random(seed))
    net = r.cidr
    held: set = set()
    for op, n in ops:
        if op == "alloc":
            if r.free == 0:
                try:
                    r.allocate_next()
                except RangeFullError:
                    continue
                raise AssertionError("allocated from a full range")
            sole_free = None
            if r.free == 1:
                sole_free = next(net.network_address + 1 + i for i in range(r.max) if not r.has(net.network_address + 1 + i))
            ip = r.allocate_next()
            assert ip in net and ip != net.network_address and ip not in held
            if net.version == 4:
                assert ip != net.broadcast_address
            if sole_free is not None:
                assert ip == sole_free  # release-then-reallocate of the last free address returns it
            held.add(ip)
        else:
            ip = net.network_address + 1 + n % r.max
            if ip in held:
                try:
                    r.allocate(ip)
                except AlreadyAllocatedError:
                    pass
                else:
                    raise AssertionError("allocated an address twice")
                r.release(ip)
                held.discard(ip)
        assert r.used == len(held) and set(r.allocated()) == held


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_service_ip_allocation_replays_for_a_seed(seed: int) -> None:
    a = ServiceIPAllocator("10.96.0.0/24", random.Random(seed))
    b = ServiceIPAllocator("10.96.0.0/24", random.Random(seed))
    assert [a.allocate_next() for _ in range(40)] == [b.allocate_next() for _ in range(40)]
