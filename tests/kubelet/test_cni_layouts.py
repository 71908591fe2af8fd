"""The node's CNI range layouts (kmodel.kubelet.cni.IPAM_LAYOUTS): host-local's walk over each, on a /28 block."""

from __future__ import annotations

import pytest

from kmodel.kubelet.cni import IPAM_LAYOUTS, BridgeCNI, CNIError, pod_addresses

BLOCK = "10.244.0.16/28"  # .16-.31: network .16, broadcast .31


def fill(layout: str, count: int) -> list[str]:
    cni = BridgeCNI(BLOCK, {}, layout=layout)
    return [cni.add(f"c{i}", f"/ns/{i}", "eth0").pod_ips[0] for i in range(count)]


def exhausted(layout: str, count: int) -> str:
    cni = BridgeCNI(BLOCK, {}, layout=layout)
    for i in range(count):
        cni.add(f"c{i}", f"/ns/{i}", "eth0")
    with pytest.raises(CNIError) as e:
        cni.add("one-more", "/ns/x", "eth0")
    return str(e.value)


def test_kindnets_layout_is_the_first_and_the_podcidr_alone():
    assert next(iter(IPAM_LAYOUTS)) == "podcidr"
    assert fill("podcidr", 2) == ["10.244.0.18", "10.244.0.19"]  # .17 is the gateway


def test_middle_hands_out_the_blocks_second_and_third_quarters_only():
    assert fill("middle", 8) == [f"10.244.0.{i}" for i in range(20, 28)]
    assert exhausted("middle", 8) == (
        "failed to allocate for range 0: no IP addresses available in range set: 10.244.0.20-10.244.0.27")


def test_gateway_last_hands_out_the_first_address_and_skips_the_gateway_at_the_end():
    got = fill("gateway-last", 13)
    assert got[0] == "10.244.0.17" and "10.244.0.30" not in got and got[-1] == "10.244.0.29"
    assert exhausted("gateway-last", 13).endswith("10.244.0.17-10.244.0.30")


def test_halves_walk_into_the_second_range_once_the_first_is_full():
    got = fill("halves", 10)
    assert got == [f"10.244.0.{i}" for i in (18, 19, 20, 21, 22, 26, 27, 28, 29, 30)]  # gateways .17 and .25
    assert exhausted("halves", 10) == ("failed to allocate for range 0: no IP addresses available in range set: "
                                       "10.244.0.17-10.244.0.22,10.244.0.25-10.244.0.30")


def test_a_released_address_comes_back_after_the_walk_wraps_past_the_range_end():
    cni = BridgeCNI(BLOCK, {}, layout="middle")
    for i in range(8):
        cni.add(f"c{i}", f"/ns/{i}", "eth0")
    cni.delete("c2", "/ns/2", "eth0")
    assert cni.add("again", "/ns/a", "eth0").pod_ips == ("10.244.0.22",)


@pytest.mark.parametrize("layout", IPAM_LAYOUTS)
def test_pod_addresses_counts_what_host_local_hands_out_before_it_runs_dry(layout):
    cni = BridgeCNI(BLOCK, {}, layout=layout)
    handed = 0
    with pytest.raises(CNIError, match="no IP addresses available"):
        while True:
            cni.add(f"c{handed}", f"/ns/{handed}", "eth0")
            handed += 1
    assert pod_addresses(BLOCK, layout) == handed
