"""The bridge CNI plugin over host-local: ADD/DEL, upstream's error wrapping, idempotent DEL, restarts."""

from __future__ import annotations

import pytest

from kmodel.kubelet.cni import BridgeCNI, CNIError


def test_first_addresses_skip_the_gateway():
    disk: dict[str, str] = {}
    cni = BridgeCNI("10.244.1.0/24", disk)
    r = cni.add("ctr-a", "/var/run/netns/a", "eth0")
    assert r.pod_ips == ("10.244.1.2",)
    assert str(r.ips[0].address) == "10.244.1.2/24" and str(r.ips[0].gateway) == "10.244.1.1"
    assert [i.name for i in r.interfaces] == ["cni0", "eth0"]
    assert cni.add("ctr-b", "/var/run/netns/b", "eth0").pod_ips == ("10.244.1.3",)
    assert disk["10.244.1.2"] == "ctr-a\r\neth0" and disk["last_reserved_ip.0"] == "10.244.1.3"


def test_iterating_a_29_hands_out_five_then_fails_with_upstream_wrapping():
    cni = BridgeCNI("192.168.1.0/29", {})
    got = [cni.add(f"c{i}", f"/ns/{i}", "eth0").pod_ips[0] for i in range(5)]
    assert got == ["192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"]
    with pytest.raises(CNIError) as e:
        cni.add("c5", "/ns/5", "eth0")
    assert str(e.value) == (
        "failed to allocate for range 0: no IP addresses available in range set: 192.168.1.1-192.168.1.6")


@pytest.mark.parametrize("taken,last,want", [
    ({}, None, "10.0.0.2"),
    ({"10.0.0.2"}, None, "10.0.0.3"),
    ({}, "10.0.0.5", "10.0.0.6"),
    ({"10.0.0.4", "10.0.0.5"}, "10.0.0.3", "10.0.0.6"),
    ({"10.0.0.6"}, "10.0.0.5", "10.0.0.2"),
    ({"10.0.0.2"}, "10.0.0.128", "10.0.0.3"),
    ({"10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"}, "10.0.0.3", "10.0.0.3"),
])
def test_host_local_vectors_through_add(taken, last, want):
    """kubernetes.md's host-local vectors (subnet 10.0.0.0/29, taken, last reserved -> next)."""
    disk = {ip: f"other-{ip}\r\neth0" for ip in taken}
    if last is not None:
        disk["last_reserved_ip.0"] = last
    assert BridgeCNI("10.0.0.0/29", disk).add("new", "/ns/new", "eth0").pod_ips == (want,)


def test_del_releases_and_is_idempotent():
    disk: dict[str, str] = {}
    cni = BridgeCNI("10.0.0.0/29", disk)
    cni.add("a", "/ns/a", "eth0")
    cni.add("b", "/ns/b", "eth0")
    cni.delete("a", "/ns/a", "eth0")
    assert "10.0.0.2" not in disk
    cni.delete("a", "/ns/a", "eth0")  # again: still fine
    cni.delete("never-added", "", "eth0")  # unknown container, no netns: fine (CNI spec)
    assert cni.reserved() == {"10.0.0.3": "b"}
    # Release does not reset the last reserved address: the freed .2 comes back only after a wrap.
    assert cni.add("c", "/ns/c", "eth0").pod_ips == ("10.0.0.4",)


def test_duplicate_add_is_refused():
    cni = BridgeCNI("10.0.0.0/29", {})
    cni.add("a", "/ns/a", "eth0")
    with pytest.raises(CNIError) as e:
        cni.add("a", "/ns/a", "eth0")
    assert str(e.value) == (
        "failed to allocate for range 0: 10.0.0.2 has been allocated to a, duplicate allocation is not allowed")


def test_restart_keeps_reservations():
    """A new plugin (or kubelet, or runtime) over the same disk sees every reservation and the round robin."""
    disk: dict[str, str] = {}
    BridgeCNI("10.244.0.0/24", disk).add("a", "/ns/a", "eth0")
    BridgeCNI("10.244.0.0/24", disk).add("b", "/ns/b", "eth0")
    restarted = BridgeCNI("10.244.0.0/24", disk)
    assert restarted.reserved() == {"10.244.0.2": "a", "10.244.0.3": "b"}
    assert restarted.add("c", "/ns/c", "eth0").pod_ips == ("10.244.0.4",)


def test_dual_stack_rolls_back_the_first_family_when_the_second_fails():
    disk: dict[str, str] = {"fd00::2": "x\r\neth0", "last_reserved_ip.1": "fd00::2"}
    cni = BridgeCNI(["10.0.0.0/29", "fd00::/126"], disk)
    r = cni.add("a", "/ns/a", "eth0")
    assert r.pod_ips == ("10.0.0.2", "fd00::3")
    with pytest.raises(CNIError) as e:
        cni.add("b", "/ns/b", "eth0")
    assert str(e.value) == "failed to allocate for range 1: no IP addresses available in range set: fd00::1-fd00::3"
    assert cni.reserved() == {"10.0.0.2": "a", "fd00::2": "x", "fd00::3": "a"}  # b's IPv4 address was released


def test_missing_arguments():
    cni = BridgeCNI("10.0.0.0/29", {})
    with pytest.raises(CNIError) as e:
        cni.add("a", "", "eth0")
    assert e.value.code == 4 and str(e.value) == "required env variables [CNI_NETNS] missing"
