"""The static pod drawn per example (kmodel.checker.staticpods): none first, every manifest met, a configuration's
own static pods kept; a trace records the manifest and rebuilds it; the mirror pod of a drawn manifest is a pod
the checker's rules meet."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from kmodel.checker.actions import ApplyService, DeleteObject
from kmodel.checker.staticpods import STATIC_MANIFESTS, STATIC_NODE, draw_static_pods, static_text
from kmodel.checker.trace import TraceError, config_from_json, config_to_json
from kmodel.checker.workload_actions import ApplyPodShape
from kmodel.cluster import Cluster, ClusterConfig

from tests.checker.test_workload_actions import run


def _with(name: str) -> ClusterConfig:
    manifest = dict(STATIC_MANIFESTS)[name]
    return ClusterConfig(nodes=2, static_pods=((STATIC_NODE, (manifest,)),))


def test_the_first_choice_is_an_empty_folder_so_a_failure_shrinks_to_it():
    assert STATIC_MANIFESTS[0] == ("none", None)
    assert draw_static_pods(ClusterConfig()) == ClusterConfig()  # outside an example nothing is drawn


def test_only_the_campaigns_own_machine_draws_a_static_pod(monkeypatch):
    """`kmodel check` runs KmodelMachine with the draw on; a machine of one's own (a test's, a plugin user's)
    keeps the static pods its configuration names."""
    from kmodel.checker import machine as machine_module
    from kmodel.checker.run import CheckOptions, run_campaign
    from tests.checker.conftest import SmallMachine

    drawn = []
    monkeypatch.setattr(machine_module, "draw_static_pods", lambda config: drawn.append(config) or config)
    run_campaign(CheckOptions(examples=2, steps=1, seed=3, nodes=2), machine=SmallMachine)
    assert drawn == []
    run_campaign(CheckOptions(examples=2, steps=1, seed=3, nodes=2))
    assert drawn and all(not c.static_pods for c in drawn)


@settings(max_examples=30, database=None, derandomize=True)
@given(st.data())
def test_an_example_draws_every_manifest_and_keeps_static_pods_of_its_own(data):
    met = test_an_example_draws_every_manifest_and_keeps_static_pods_of_its_own.__dict__.setdefault("met", set())
    drawn = draw_static_pods(ClusterConfig(nodes=2))
    pods = drawn.static_pods_of(STATIC_NODE)
    met.add(pods[0].metadata.name if pods else "none")
    own = _with("web")
    assert draw_static_pods(own) == own


def test_every_manifest_is_met():
    test_an_example_draws_every_manifest_and_keeps_static_pods_of_its_own()
    assert test_an_example_draws_every_manifest_and_keeps_static_pods_of_its_own.__dict__["met"] == {
        "none", "static-web", "static-agent"}


@pytest.mark.parametrize("name", ["web", "hostport"])
def test_a_trace_records_the_manifest_and_rebuilds_it(name):
    config = _with(name)
    data = json.loads(json.dumps(config_to_json(config)))
    assert config_from_json(data) == config
    assert "static_pods" not in config_to_json(ClusterConfig())  # written only when a folder holds one
    assert static_text(config) == f"static pod {config.static_pods[0][1][0].metadata.name} on node-1"


@pytest.mark.parametrize("bad, message", [
    (5, "static_pods must be a list of \\[node, \\[pod manifest, ...\\]\\] pairs"),
    ([["node-1", {}]], "static_pods must be a list"),
    ([["node-1", [{"apiVersion": "v1", "kind": "Pod", "spec": 3}]]], "static_pods of node-1: not a pod manifest"),
    ([["node-1", [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}}]]], "must be a Pod"),
])
def test_a_trace_with_a_bad_static_pod_is_refused_in_one_line(bad, message):
    with pytest.raises(TraceError, match=message):
        config_from_json({"static_pods": bad})


def test_the_web_manifests_mirror_pod_joins_the_web_service_and_comes_back_when_deleted():
    cluster = Cluster(_with("web"))
    ApplyService("web").apply(cluster)
    cluster.run(30_000)
    mirror = cluster.get("pods", "default", "static-web-node-1")
    assert mirror is not None and mirror.metadata.owner_references[0].kind == "Node"
    [subset] = cluster.get("endpoints", "default", "web").subsets
    assert [a.target_ref.name for a in subset.addresses] == ["static-web-node-1"]
    run(cluster, DeleteObject("pods", "static-web-node-1"), 30_000)
    again = cluster.get("pods", "default", "static-web-node-1")
    assert again is not None and again.metadata.uid != mirror.metadata.uid


def test_the_hostport_manifest_takes_node_1s_host_port_from_the_scheduler():
    cluster = Cluster(_with("hostport"))
    cluster.run(30_000)
    run(cluster, ApplyPodShape("debug-1", "", (1, 0, 0, 0)), 20_000)  # host port 8080/TCP
    assert cluster.get("pods", "default", "debug-1").spec.node_name == "node-2"
