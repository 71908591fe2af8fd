"""Refused address plans, refused host-local configurations and the tight plan's CNI range layouts
(kmodel.checker.addressplan): flags upstream refuses are refused by the model's start checks and the example runs
the default plan; range configurations upstream's host-local refuses are refused by the model's with upstream's
error and the example runs the plan's own layout; the tight plan's examples meet every layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from kmodel.checker import addressplan
from kmodel.checker.addressplan import (
    PLANS, REFUSED_PLANS, REFUSED_RANGES, PlanNotRefused, RangesNotRefused, check_refused_ranges, draw_address_plan,
    first_block, plan_of, plan_text,
)
from kmodel.cluster import ClusterConfig
from kmodel.ipam.hostlocal import HostLocalError, load_range_sets
from kmodel.ipam.startup import address_flags_refusal
from kmodel.kubelet.cni import IPAM_LAYOUTS

UPSTREAM = {
    "services-too-large": "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be "
                          ">= 12",
    "services-too-small": "error determining service IP ranges for primary service cidr: the service cluster IP "
                          "range must be at least 8 IP addresses",
    "cluster-smaller-than-a-node": "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than "
                                   "or equal to --node-cidr-mask-size configured for CIDR family",
    "ipv6-services-too-large": "specified --service-cluster-ip-range is too large; for 128-bit addresses, the mask "
                               "must be >= 108",
    "ipv6-node-blocks-too-many": "New CIDR set failed; the node CIDR size is too big",
}


@pytest.mark.parametrize("plan", REFUSED_PLANS, ids=lambda p: p.name)
def test_each_refused_plan_is_refused_with_upstreams_error(plan):
    assert address_flags_refusal(**plan.fields()) == UPSTREAM[plan.name]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_every_plan_is_accepted(plan):
    assert address_flags_refusal(**plan.fields()) is None


def test_only_the_tight_plan_draws_a_layout_and_kindnets_comes_first():
    assert [p.cni_ipam for p in PLANS[:2]] == [("podcidr",), ("podcidr",)]
    assert PLANS[2].cni_ipam == tuple(IPAM_LAYOUTS)
    tight = ClusterConfig(**PLANS[2].fields(), cni_ipam="halves")
    assert plan_text(tight) == "tight (services 10.96.0.0/29, pods 10.244.0.0/26 by /28, host-local layout halves)"


#: upstream host-local's error (containernetworking/plugins v1.5 allocator/config.go, range_set.go, range.go) for
#: each configuration, written for the tight plan's first block 10.244.0.0/28
UPSTREAM_RANGES = {
    "start-outside": "invalid range set 0: RangeStart 10.244.0.20 not in network 10.244.0.0/28",
    "end-outside": "invalid range set 0: RangeEnd 10.244.0.30 not in network 10.244.0.0/28",
    "start-after-end": "invalid range set 0: RangeStart 10.244.0.11 not in network 10.244.0.0/28",
    "host-bits-set": "invalid range set 0: Network has host bits set. For a subnet mask of length 28 the network "
                     "address is 10.244.0.0",
    "subnet-31": "invalid range set 0: Network 10.244.0.0/31 too small to allocate from",
    "overlapping-ranges": "invalid range set 0: subnets 10.244.0.1-10.244.0.14 and 10.244.0.9-10.244.0.14 overlap",
    "mixed-families": "invalid range set 0: mixed address families",
    "empty-range-set": "invalid range set 0: empty range set",
    "no-ranges": "no IP ranges specified",
    "range-sets-overlap": "range set 1 overlaps with 2",
}


@pytest.mark.parametrize("wrong", REFUSED_RANGES)
def test_each_refused_range_configuration_is_refused_with_upstreams_error(wrong):
    block = first_block(PLANS[2])
    assert str(block) == "10.244.0.0/28"
    with pytest.raises(HostLocalError) as refused:
        load_range_sets(REFUSED_RANGES[wrong](block))
    assert str(refused.value) == UPSTREAM_RANGES[wrong]
    for plan in PLANS:  # and on every plan's block, which an example checks it on
        check_refused_ranges(wrong, first_block(plan))


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_every_plans_own_layouts_are_accepted(plan):
    block = first_block(plan)
    assert load_range_sets([[{"subnet": str(block)}]])[0][0].subnet == block


MET: set[tuple[str, str]] = set()


@settings(max_examples=80, database=None, derandomize=True)
@given(st.data())
def draw_many(data):
    drawn = draw_address_plan(ClusterConfig(nodes=2))
    MET.add((plan_of(drawn).name, drawn.cni_ipam))


def test_examples_meet_every_layout_of_the_tight_plan_and_kindnets_elsewhere():
    draw_many()
    assert {layout for name, layout in MET if name == "tight"} == set(IPAM_LAYOUTS)
    assert {layout for name, layout in MET if name != "tight"} == {"podcidr"}


def test_examples_meet_every_refused_range_configuration_and_run_the_plans_own_layout(monkeypatch):
    checked = []
    monkeypatch.setattr(addressplan, "load_range_sets",
                        lambda ranges: checked.append(ranges) or load_range_sets(ranges))
    draw_many()
    drawn = {str(ranges) for ranges in checked}
    assert drawn == {str(make(first_block(plan))) for make in REFUSED_RANGES.values() for plan in PLANS}
    assert {layout for name, layout in MET if name != "tight"} == {"podcidr"}


def test_a_range_configuration_the_model_would_accept_is_an_error(monkeypatch):
    monkeypatch.setattr(addressplan, "load_range_sets", lambda ranges: ())
    with pytest.raises(RangesNotRefused, match="the model's host-local accepts the range configuration"):
        draw_many()
    with pytest.raises(RangesNotRefused, match="accepts the range configuration subnet-31, which upstream refuses"):
        check_refused_ranges("subnet-31", first_block(PLANS[0]))


def test_a_plan_the_model_would_start_with_is_an_error(monkeypatch):
    monkeypatch.setattr(addressplan, "address_flags_refusal", lambda **flags: None)
    with pytest.raises(PlanNotRefused, match="the model starts with the address plan"):
        draw_many()


@settings(max_examples=20, database=None, derandomize=True)
@given(st.data())
def test_a_layout_of_its_own_is_kept_inside_an_example(data):
    own = ClusterConfig(cni_ipam="middle")
    assert draw_address_plan(own) == own


def test_the_manual_lists_every_refused_plan_and_configuration_with_upstreams_error():
    from pathlib import Path
    manual = (Path(__file__).resolve().parents[2] / "docs" / "checking.md").read_text()
    for name, error in [*UPSTREAM.items(), *UPSTREAM_RANGES.items()]:
        assert f"| `{name}` |" in manual and f"`{error}`" in manual, name
