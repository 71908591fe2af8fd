"""Actions are data: each has a stable name, a readable line and a JSON form that reads back equal."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.actions import (
    RunEvents,ACTIONS, AddNode, ApplyDeployment, ApplyService, Compact, DeleteObject,
                                    FailContainer, Fault, Fire, RemoveNode, RunFair, ScaleDeployment, Settle,
                                    action_from_json, deployment_manifest)
from kmodel.loop.events import BreakStream, Crash, DelayHead, Deliver, Partition, Work

EXAMPLES = [
    ApplyDeployment("web", 2, 500, True), ScaleDeployment("api", 3), ApplyService("web"),
    DeleteObject("deployments", "web"), AddNode(), RemoveNode("node-2"),
    Fire((Deliver("scheduler", "apiserver-0"), Work("kubectl"))), Fault(Partition(("kubelet/node-1", "etcd"))),
    Fault(DelayHead("etcd", "apiserver-1", 10_000)), Fault(BreakStream("scheduler/watch-1")),
    Fault(Crash("controller/deployment")), Compact(42), FailContainer("node-1", "web-x", "app"), RunFair(5000), RunEvents(12),
    Settle(60_000),
]


def test_every_kind_has_an_example():
    assert {a.kind for a in EXAMPLES} == set(ACTIONS)


@pytest.mark.parametrize("action", EXAMPLES, ids=lambda a: a.kind)
def test_json_round_trip(action):
    data = json.loads(json.dumps(action.to_json()))
    assert data["name"] == action.kind
    again = action_from_json({**data, "say": action.name})
    assert again == action and again.stable_json() == action.stable_json()
    assert action.name and str(action) == action.name


def test_readable_names():
    assert Fire((Deliver("a", "b"), Work("c"))).name == "deliver a -> b; work c"
    assert ScaleDeployment("web", 2).name == "kubectl scale deployment web --replicas=2"


def test_bad_actions_are_refused():
    with pytest.raises(ValueError, match="unknown action"):
        action_from_json({"name": "teleport"})
    with pytest.raises(ValueError, match="bad scale-deployment"):
        action_from_json({"name": "scale-deployment", "app": "web"})


def test_deployment_manifest_shape():
    m = deployment_manifest("web", 2, 500, True)
    container = m["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"][0]["hostPort"] == 8080 and container["resources"]["requests"]["cpu"] == "500m"
    assert "resources" not in deployment_manifest("web", 1, 0, False)["spec"]["template"]["spec"]["containers"][0]
