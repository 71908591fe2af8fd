"""The address plan drawn per example (kmodel.checker.addressplan): each plan one a real cluster starts with, the
default first, every plan met, a configuration of its own kept; the rows of create_service_ip follow the drawn
service CIDR."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from kmodel.checker.addressplan import PLANS, draw_address_plan, fitted_max_pods, plan_of, plan_text
from kmodel.checker.draws import CLUSTER_IPS, cluster_ips
from kmodel.checker.trace import config_from_json
from kmodel.cluster import ClusterConfig
from kmodel.ipam.cidrset import CidrSet
from kmodel.ipam.serviceip import (
    AlreadyAllocatedError, NotInRangeError, ServiceIPAllocator, kubernetes_service_ip,
    validate_service_cluster_ip_range,
)

def test_the_first_plan_is_the_configurations_own_so_a_failure_shrinks_to_it():
    assert plan_of(ClusterConfig()) is PLANS[0]
    assert plan_text(ClusterConfig()) == "default (services 10.96.0.0/12, pods 10.244.0.0/16 by /24)"


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_each_plan_is_one_kube_apiserver_and_the_controller_manager_start_with(plan):
    validate_service_cluster_ip_range(plan.service_cidr)  # at most 2^20 addresses
    kubernetes_service_ip(plan.service_cidr)  # at least 8
    CidrSet(plan.cluster_cidr, plan.node_cidr_mask_size)  # the node mask not shorter than the cluster's


def test_the_small_plans_run_out_of_service_addresses_within_an_example():
    import random
    tight = ServiceIPAllocator(PLANS[2].service_cidr, random.Random(0))
    assert tight.max == 6 and tight.range_offset == 0
    small = ServiceIPAllocator(PLANS[1].service_cidr, random.Random(0))
    assert (small.max, small.range_offset) == (30, 16)  # 14 dynamic addresses, then the static block
    # four node blocks: fewer than the five nodes an example can have, so a node can be left without a podCIDR
    assert CidrSet(PLANS[2].cluster_cidr, PLANS[2].node_cidr_mask_size).max_cidrs == 4


@settings(max_examples=60, database=None, derandomize=True)
@given(st.data())
def test_an_example_draws_every_plan_and_keeps_a_plan_of_its_own(data):
    met = test_an_example_draws_every_plan_and_keeps_a_plan_of_its_own.__dict__.setdefault("met", set())
    drawn = draw_address_plan(ClusterConfig(nodes=2))
    assert drawn.nodes == 2 and plan_of(drawn) is not None
    met.add(plan_of(drawn).name)
    # the kubelet's --max-pods fits the node's block as laid out, so the scheduler stops before host-local does
    assert drawn.max_pods == fitted_max_pods(110, plan_of(drawn), drawn.cni_ipam) <= 110
    own = ClusterConfig(service_cidr="10.0.0.0/24")
    assert draw_address_plan(own) == own


def test_every_plan_is_met():
    test_an_example_draws_every_plan_and_keeps_a_plan_of_its_own()
    assert test_an_example_draws_every_plan_and_keeps_a_plan_of_its_own.__dict__["met"] == {p.name for p in PLANS}


def test_max_pods_is_lowered_to_the_addresses_of_a_small_block_only():
    default, small, tight = PLANS
    assert fitted_max_pods(110, default, "podcidr") == 110  # a /24 holds 253 pod addresses
    assert fitted_max_pods(110, small, "podcidr") == 61
    assert {layout: fitted_max_pods(110, tight, layout) for layout in tight.cni_ipam} == {
        "podcidr": 13, "middle": 8, "gateway-last": 13, "halves": 10}


def test_outside_an_example_nothing_is_drawn():
    assert draw_address_plan(ClusterConfig()) == ClusterConfig()


def test_a_trace_records_the_plan_and_rebuilds_it():
    config = attrs.evolve(ClusterConfig(), **PLANS[2].fields())
    data = {"service_cidr": config.service_cidr, "cluster_cidr": config.cluster_cidr,
            "node_cidr_mask_size": config.node_cidr_mask_size}
    assert plan_of(config_from_json(data)) is PLANS[2]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_the_clusterip_rows_follow_the_service_cidr(plan):
    import random
    rows = cluster_ips(plan.service_cidr)
    assert len(rows) == len(CLUSTER_IPS) and rows[0] == "taken" and rows[5:] == CLUSTER_IPS[5:]
    allocator = ServiceIPAllocator(plan.service_cidr, random.Random(0))
    allocator.allocate(rows[1])  # a free address of the range
    allocator.allocate(rows[2])  # the range's first (kubernetes' own)
    with pytest.raises(AlreadyAllocatedError):
        allocator.allocate(rows[2])
    for outside in (rows[3], rows[4], rows[5]):  # the network and broadcast addresses, one outside
        with pytest.raises(NotInRangeError):
            allocator.allocate(outside)
    assert cluster_ips(PLANS[0].service_cidr) == CLUSTER_IPS


def test_a_violation_says_the_address_plan_it_ran_on_unless_the_default():
    from kmodel.checker.results import violation_lines
    violation = {"invariant": "no-cidr-leak", "message": "m", "trace": "t.json", "steps": 3,
                 "address_plan": plan_text(attrs.evolve(ClusterConfig(), **PLANS[2].fields()))}
    lines = violation_lines(violation, "kmodel replay")
    assert "  address plan: tight (services 10.96.0.0/29, pods 10.244.0.0/26 by /28)" in lines
    del violation["address_plan"]
    assert not any("address plan" in line for line in violation_lines(violation, "kmodel replay"))
