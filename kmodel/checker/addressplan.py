"""The cluster's address plan, drawn per example: the service CIDR, the cluster CIDR and the node block size.

A cluster's three address flags decide where its pools run out: kube-apiserver's --service-cluster-ip-range
(the ClusterIPs; a full range answers a Service's create with 500 `range is full`), kube-controller-manager's
--cluster-cidr cut into --node-cidr-mask-size blocks (one per node; with none left a new node gets no podCIDR
and the node IPAM controller records CIDRNotAvailable), and the node's block itself, from which host-local
hands each pod an address (round robin, wrapping past the block's end; with none left the pod's sandbox fails
with host-local's `no IP addresses available in range set`). The default plan never runs out in a checked
cluster. So every example draws one of `PLANS`, in every profile, as its first choice after the topology
counts (kmodel.checker.topology): the configuration's own plan first, where a failing example shrinks to,
then plans real clusters are given that run out within an example's few Services, nodes and pods:

    default   the configuration's own (ClusterConfig: 10.96.0.0/12, 10.244.0.0/16 cut into /24)
    small     10.96.0.0/27: 30 ClusterIPs, the first 16 kept for static ones (KEP-3070), so the 15th
              dynamic one goes to the static block; 10.244.0.0/23 cut into /26: 8 nodes of 61 pods
    tight     10.96.0.0/29: 6 ClusterIPs, the smallest range kube-apiserver accepts; 10.244.0.0/26 cut
              into /28: 4 nodes of 13 pods. An example has up to five nodes, so a fifth gets no block (the
              node IPAM controller's CIDRNotAvailable); its kubelet reports Ready False (NetworkPluginNotReady),
              the node lifecycle controller taints it not-ready and the scheduler places nothing there

Each plan is one kube-apiserver and kube-controller-manager would start with (the service range between 8
and 2^20 addresses, the node mask not shorter than the cluster's). An administrator may give flags they refuse
instead: an example that draws the default plan then draws one of `REFUSED_PLANS` or none, checks that the
model's start checks (kmodel.ipam.startup) refuse it, and runs the default plan, as the administrator would
once the process stopped with that error; a plan the model would start with is a `PlanNotRefused` error:

    services-too-large           10.96.0.0/11: over 2^20 ClusterIPs
    services-too-small           10.96.0.0/30: under 8
    cluster-smaller-than-a-node  10.244.0.0/25 cut into /24
    ipv6-services-too-large      fd00:10:96::/64, the size IPv6 subnets usually have (kube-apiserver counts its
                                 2^64 addresses capped at 2^63-1 while it completes its options, then refuses
                                 more than 2^20)
    ipv6-node-blocks-too-many    fd00:10:244::/56 cut into /120: 2^64 blocks where the node IPAM allows 2^16

The model runs one IPv4 family (docs/differences.md): the IPv6 plans are only checked, never run.

The node's CNI configuration may be written wrong too. Every example, of any plan, then draws one of
`REFUSED_RANGES` or none: a host-local `ranges` section an administrator may write for the node's block (a
rangeStart or rangeEnd in the next block, rangeStart and rangeEnd swapped, the bridge's address as the subnet,
a /31, the halves layout with the whole block as its first range, IPv4 and IPv6 blocks in one range set, an
empty range set, no range set, a third range set overlapping the second). It checks that the model's host-local
(kmodel.ipam.hostlocal.load_range_sets) refuses it for the plan's first block, and runs the plan's own layout,
as the administrator who reads the pods' FailedCreatePodSandBox events and fixes the file would; a
configuration the model accepts is a `RangesNotRefused` error. Both checks are pure calls at draw time: no
cluster runs a refused configuration.

The tight plan's nodes are small enough for host-local's range layout to matter, so an example that draws it
also draws how the nodes' CNI configuration lays out host-local's ranges in the podCIDR (ClusterConfig.cni_ipam,
one of kmodel.kubelet.cni.IPAM_LAYOUTS: kindnet's, the podCIDR alone, first; then an administrator's, with a
rangeStart and rangeEnd, the gateway at the block's end, or the block in two ranges). The others keep kindnet's.
A plan whose block holds fewer pod addresses than the kubelet's --max-pods (110) also lowers --max-pods to the
addresses its layout gives (`fitted_max_pods`: small 61; tight 13, 8 with `middle`, 10 with `halves`), as an
administrator sizing nodes' blocks does, so a node's pods never outnumber its addresses; host-local runs dry
only when an address outlives its pod.

A configuration whose plan is not the default's (a test's own ClusterConfig) keeps it: nothing is drawn. The session's configuration holds the
plan and the trace records its configuration, so `kmodel replay`, the minimizer and the regression seeds
rebuild the plan an example ran on.
"""

from __future__ import annotations

import ipaddress
from typing import Callable

import attrs
from hypothesis import strategies as st
from hypothesis.control import current_build_context, currently_in_test_context

from kmodel.cluster import ClusterConfig
from kmodel.ipam.hostlocal import HostLocalError, load_range_sets
from kmodel.ipam.startup import address_flags_refusal
from kmodel.kubelet.cni import DEFAULT_IPAM_LAYOUT, IPAM_LAYOUTS, pod_addresses


@attrs.frozen
class AddressPlan:
    """One plan: the three flags, as ClusterConfig's fields."""

    name: str
    service_cidr: str
    cluster_cidr: str
    node_cidr_mask_size: int
    #: the CNI range layouts an example of this plan draws from (kmodel.kubelet.cni.IPAM_LAYOUTS), kindnet's first
    cni_ipam: tuple[str, ...] = (DEFAULT_IPAM_LAYOUT,)

    def fields(self) -> dict[str, object]:
        """The plan as ClusterConfig's fields."""
        return {"service_cidr": self.service_cidr, "cluster_cidr": self.cluster_cidr,
                "node_cidr_mask_size": self.node_cidr_mask_size}


_DEFAULT = attrs.fields(ClusterConfig)
#: the plans an example draws from, the configuration's own first (see the module docstring)
PLANS: tuple[AddressPlan, ...] = (
    AddressPlan("default", _DEFAULT.service_cidr.default, _DEFAULT.cluster_cidr.default,
                _DEFAULT.node_cidr_mask_size.default),
    AddressPlan("small", "10.96.0.0/27", "10.244.0.0/23", 26),
    AddressPlan("tight", "10.96.0.0/29", "10.244.0.0/26", 28, cni_ipam=tuple(IPAM_LAYOUTS)),
)
#: flags an administrator may give that kube-apiserver or kube-controller-manager refuses to start with
REFUSED_PLANS: tuple[AddressPlan, ...] = (
    AddressPlan("services-too-large", "10.96.0.0/11", _DEFAULT.cluster_cidr.default,
                _DEFAULT.node_cidr_mask_size.default),
    AddressPlan("services-too-small", "10.96.0.0/30", _DEFAULT.cluster_cidr.default,
                _DEFAULT.node_cidr_mask_size.default),
    AddressPlan("cluster-smaller-than-a-node", _DEFAULT.service_cidr.default, "10.244.0.0/25", 24),
    # an IPv6 cluster given a /64 service range, the size IPv6 subnets usually have: 2^64 addresses
    AddressPlan("ipv6-services-too-large", "fd00:10:96::/64", "fd00:10:244::/56", 64),
    # IPv6 node blocks of 256 addresses, as IPv4's /24, cut from a /56: 2^64 blocks, the node IPAM allows 2^16
    AddressPlan("ipv6-node-blocks-too-many", "fd00:10:96::/112", "fd00:10:244::/56", 120),
)


def _next_block(block: ipaddress.IPv4Network) -> ipaddress.IPv4Network:
    return ipaddress.ip_network((block.broadcast_address + 1, block.prefixlen))


#: host-local configurations an administrator may write for a node's block (its podCIDR) and host-local refuses
#: (containernetworking/plugins v1.5 allocator/config.go, range_set.go, range.go): the ipam section's `ranges`,
#: a list of range sets, each a list of ranges, by what is wrong
REFUSED_RANGES: dict[str, Callable[[ipaddress.IPv4Network], list[list[dict[str, str]]]]] = {
    # the next node's file copied, only its subnet changed: its rangeStart lies in the next block
    "start-outside": lambda b: [[{"subnet": str(b), "rangeStart": str(_next_block(b).network_address + 4)}]],
    # a rangeEnd written for two blocks as one range: the next block's last address
    "end-outside": lambda b: [[{"subnet": str(b), "rangeEnd": str(_next_block(b).broadcast_address - 1)}]],
    # the middle layout's bounds swapped: upstream checks the rangeStart against the rangeEnd as written, and
    # says it is not in the network
    "start-after-end": lambda b: [[{"subnet": str(b),
                                    "rangeStart": str(b.network_address + 3 * b.num_addresses // 4 - 1),
                                    "rangeEnd": str(b.network_address + b.num_addresses // 4)}]],
    # the bridge's address written as the subnet: host bits set
    "host-bits-set": lambda b: [[{"subnet": f"{b.network_address + 1}/{b.prefixlen}"}]],
    # a /31 for the block's mask: no address to hand out
    "subnet-31": lambda b: [[{"subnet": f"{b.network_address}/31"}]],
    # the halves layout with the whole block as its first range: the two overlap
    "overlapping-ranges": lambda b: [[{"subnet": str(b)}, {"subnet": str(list(b.subnets(1))[1])}]],
    # a dual-stack node's IPv4 and IPv6 blocks in one range set instead of one set each
    "mixed-families": lambda b: [[{"subnet": str(b)}, {"subnet": "fd00:10:244::/64"}]],
    # a template's range set left empty
    "empty-range-set": lambda b: [[]],
    # a template rendered without the node's podCIDR
    "no-ranges": lambda b: [],
    # an IPv6-first dual-stack node's configuration (a range set per podCIDR, in the Node's order) given a third
    # range set, the IPv4 block's upper half, which the second holds
    "range-sets-overlap": lambda b: [[{"subnet": "fd00:10:244::/64"}], [{"subnet": str(b)}],
                                     [{"subnet": str(list(b.subnets(1))[1])}]],
}


class PlanNotRefused(AssertionError):
    """The model's start checks accept a plan that kube-apiserver or kube-controller-manager refuses."""


class RangesNotRefused(AssertionError):
    """The model's host-local accepts a range configuration that upstream's host-local refuses."""


def plan_of(config: ClusterConfig) -> AddressPlan | None:
    """The plan of PLANS `config` runs, or None for one of its own."""
    for plan in PLANS:
        if all(getattr(config, k) == v for k, v in plan.fields().items()):
            return plan
    return None


def draw_address_plan(config: ClusterConfig) -> ClusterConfig:
    """`config` with a plan of PLANS drawn as the current Hypothesis example's next choice, when it runs the
    default plan and kindnet's layout; otherwise (a plan or layout of its own), or outside a Hypothesis example,
    `config` as it is. The default plan draws a refused plan or none next (check_refused_plan), a plan with
    several CNI range layouts draws one of them, and every plan then draws a refused host-local configuration or
    none (check_refused_ranges; see the module docstring)."""
    own = plan_of(config) is not PLANS[0] or config.cni_ipam != DEFAULT_IPAM_LAYOUT
    if own or not currently_in_test_context():
        return config
    data = current_build_context().data
    plan = data.draw(st.sampled_from(PLANS))
    if plan is PLANS[0]:
        check_refused_plan(data.draw(st.sampled_from((None, *REFUSED_PLANS))))
    layout = data.draw(st.sampled_from(plan.cni_ipam)) if len(plan.cni_ipam) > 1 else plan.cni_ipam[0]
    check_refused_ranges(data.draw(st.sampled_from((None, *REFUSED_RANGES))), first_block(plan))
    return attrs.evolve(config, **plan.fields(), cni_ipam=layout,
                        max_pods=fitted_max_pods(config.max_pods, plan, layout))


def check_refused_plan(refused: AddressPlan | None) -> None:
    """PlanNotRefused unless the model's start checks refuse the plan `refused` (None: none drawn). Refused, the
    example runs the default plan, as the administrator would once the process stopped with that error."""
    if refused is not None and address_flags_refusal(**refused.fields()) is None:
        raise PlanNotRefused(f"the model starts with the address plan {refused.name}, which upstream refuses")


def check_refused_ranges(wrong: str | None, block: ipaddress.IPv4Network) -> None:
    """RangesNotRefused unless the model's host-local refuses the configuration REFUSED_RANGES[`wrong`] for the
    node block `block` (None: none drawn). Refused, the example runs the plan's own layout, as the administrator
    who reads the pods' FailedCreatePodSandBox events and fixes the file would."""
    if wrong is None:
        return
    try:
        load_range_sets(REFUSED_RANGES[wrong](block))
    except HostLocalError:
        return
    raise RangesNotRefused(f"the model's host-local accepts the range configuration {wrong}, which upstream refuses")


def fitted_max_pods(max_pods: int, plan: AddressPlan, layout: str) -> int:
    """The kubelet's --max-pods on a node of `plan` whose CNI lays its block out as `layout`: `max_pods`, or
    fewer where the block has fewer pod addresses. An administrator who gives nodes small blocks sets --max-pods
    to fit them (GKE derives each node's block from its maximum pods per node), so the scheduler stops at a
    full node ("Too many pods") before host-local runs dry; left at 110 on a /28, pods would sit Pending on a
    Ready node for want of an address, a configuration mistake rather than a behaviour of Kubernetes."""
    return min(max_pods, pod_addresses(str(first_block(plan)), layout))


def first_block(plan: AddressPlan) -> ipaddress.IPv4Network:
    """The first node block of `plan`'s cluster CIDR: the podCIDR of the first node to register."""
    return next(ipaddress.ip_network(plan.cluster_cidr).subnets(new_prefix=plan.node_cidr_mask_size))


def plan_text(config: ClusterConfig) -> str:
    """The plan of `config` as a report says it: ``tight (services 10.96.0.0/29, pods 10.244.0.0/26 by /28)``,
    with its CNI range layout when it is not kindnet's (``..., host-local layout halves)``)."""
    plan = plan_of(config)
    name = plan.name if plan is not None else "own"
    layout = f", host-local layout {config.cni_ipam}" if config.cni_ipam != DEFAULT_IPAM_LAYOUT else ""
    return (f"{name} (services {config.service_cidr}, pods {config.cluster_cidr} by "
            f"/{config.node_cidr_mask_size}{layout})")
