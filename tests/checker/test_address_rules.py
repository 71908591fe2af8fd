"""The address rule (kmodel.checker.address_rules): a chart of Services fills a small service range with upstream's
answer, and deleting it gives the addresses back."""

from __future__ import annotations

import attrs

from kmodel.checker.action_json import action_from_json
from kmodel.checker.address_actions import CHART_SIZES, CHART_SLICES, ApplyChart
from kmodel.checker.addressplan import PLANS
from kmodel.cluster import Cluster, ClusterConfig

from tests.checker.test_workload_actions import run

#: one action of each kind this family adds, for tests/checker/test_actions.py's round trips
EXAMPLES = [ApplyChart(16, True), ApplyChart(4, external=True), ApplyChart(4, False, 2)]


def test_a_chart_fills_the_tight_range_with_upstreams_answer_and_a_delete_frees_it():
    config = attrs.evolve(ClusterConfig(nodes=1), **PLANS[2].fields())
    cluster = Cluster(config)
    cluster.run(20_000)
    results = run(cluster, ApplyChart(CHART_SIZES[0] + 2), 10_000)
    # 6 addresses: kubernetes holds the first, the chart's first five take the rest, the sixth finds none; then
    # the chart's four EndpointSlices
    assert [r.ok for r in results] == [True] * 5 + [False] + [True] * CHART_SLICES
    refused = results[5].response
    assert refused.code == 500 and refused.body.message == ("Internal error occurred: failed to allocate a "
                                                            "serviceIP: range is full")
    deleted = run(cluster, ApplyChart(CHART_SIZES[0] + 2, delete=True), 10_000)
    # the sixth was never created: NotFound
    assert [r.ok for r in deleted] == [True] * 5 + [False] + [True] * CHART_SLICES
    again = run(cluster, ApplyChart(1), 10_000)
    assert again[0].ok
    assert action_from_json(ApplyChart(16, True).to_json()) == ApplyChart(16, True)


def test_the_charts_external_version_gives_the_addresses_back_and_a_delete_releases_nothing_more():
    config = attrs.evolve(ClusterConfig(nodes=1), **PLANS[2].fields())
    cluster = Cluster(config)
    cluster.run(20_000)
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0]), 10_000))
    used = cluster.service_ips.used
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0], external=True), 10_000))
    services = [cluster.get("services", "default", f"chart-{i}") for i in range(1, CHART_SIZES[0] + 1)]
    assert [(s.spec.type, s.spec.cluster_ip) for s in services] == [("ExternalName", "")] * CHART_SIZES[0]
    assert cluster.service_ips.used == used - CHART_SIZES[0]
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0], delete=True), 10_000))
    assert cluster.service_ips.used == used - CHART_SIZES[0]
    assert action_from_json(ApplyChart(4, external=True).to_json()) == ApplyChart(4, external=True)


def test_kube_proxy_programs_the_charts_slices_as_upstreams_does_and_follows_a_moved_one():
    """The chart's hand-written slices: the docs' own is programmed; a port without a number and an IPv6 slice of
    the IPv4 Service are skipped; version 2 moves chart-4's slice to chart-1, and kube-proxy syncs both."""
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(20_000)
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0]), 10_000))
    proxy = cluster.loop.components[f"proxy/{cluster.nodes[0]}"]

    def rules_of(index: int) -> list[str]:
        svc = cluster.get("services", "default", f"chart-{index}")
        return sorted(proxy.rules.get(f"{svc.spec.cluster_ip}:{80 + index}", []))

    assert [rules_of(i) for i in range(1, 5)] == [["192.0.2.1:9001"], [], [], ["192.0.2.4:9004"]]
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0], version=2), 10_000))
    assert [rules_of(1), rules_of(4)] == [["192.0.2.1:9001", "192.0.2.4:9004"], []]
    assert all(r.ok for r in run(cluster, ApplyChart(CHART_SIZES[0], delete=True), 10_000))
    assert cluster.objects("endpointslices") == [s for s in cluster.objects("endpointslices")
                                                 if not s.metadata.name.endswith("-manual")]
