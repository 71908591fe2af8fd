"""Refused address plans and the tight plan's CNI range layouts (kmodel.checker.addressplan): flags upstream
refuses are refused by the model's start checks and the example runs the default plan; the tight plan's examples
meet every layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from kmodel.checker import addressplan
from kmodel.checker.addressplan import PLANS, REFUSED_PLANS, PlanNotRefused, draw_address_plan, plan_of, plan_text
from kmodel.cluster import ClusterConfig
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


def test_a_plan_the_model_would_start_with_is_an_error(monkeypatch):
    monkeypatch.setattr(addressplan, "address_flags_refusal", lambda **flags: None)
    with pytest.raises(PlanNotRefused, match="the model starts with the address plan"):
        draw_many()


@settings(max_examples=20, database=None, derandomize=True)
@given(st.data())
def test_a_layout_of_its_own_is_kept_inside_an_example(data):
    own = ClusterConfig(cni_ipam="middle")
    assert draw_address_plan(own) == own
