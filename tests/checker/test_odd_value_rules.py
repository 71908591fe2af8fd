"""The odd-value rules (kmodel/checker/odd_value_rules.py): each sends one create with a value from its pool, the API
server answers as upstream (201, 400 for a body that does not decode, 422 with validation's field errors, 409 for a
name taken), and a trace of them replays the same."""

from __future__ import annotations

from kmodel.checker.actions import RunFair, Settle
from kmodel.checker.collide_actions import SendRequest
from kmodel.checker.odd_value_rules import (
    ANNOTATIONS, LABELS, LIMITS, NAMED_KINDS, NAMES, QUANTITIES, RESOURCES, SELECTORS, odd_deployment, odd_named,
    odd_pod,
)
from kmodel.checker.trace import Trace
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Raw
from kmodel.objects.quantity import ERR_FORMAT_WRONG

from tests.checker.conftest import SmallMachine, replayed_twice
from tests.checker.test_workload_actions import run


def _answer(cluster: Cluster, resource: str, body: dict) -> tuple[int, str]:
    [r] = run(cluster, SendRequest("create", resource, "default", body=body), 1_000)
    assert isinstance(r.command, Raw)
    return r.response.code, getattr(r.response.body, "message", "")


def test_the_pools_list_an_ordinary_value_first():
    assert (QUANTITIES[0], RESOURCES[0], LIMITS[0], NAMES[0]) == ("100m", "cpu", "none", "odd")
    assert LABELS[0] == ANNOTATIONS[0] == ("", "") and SELECTORS[0] == {"matchLabels": {"app": "{app}"}}
    assert len(NAMES[1]) == 63 and len(NAMES[2]) == 64 and len(NAMES[3]) == 253 and len(NAMES[4]) == 254
    assert odd_deployment("api", SELECTORS[1])["spec"]["selector"] == {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]}


def test_quantities_are_parsed_and_validated_as_upstream():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run_for(5_000)
    answers = {}
    for amount in ("1.5Gi", "-1", "1Zi", "1e", "9223372036854775808"):
        code, message = _answer(cluster, "pods", odd_pod("debug-1", "memory", amount, "none"))
        answers[amount] = (code, message)
        if code == 201:
            cluster.submit(Raw("delete", "pods", "default", "debug-1"))
            cluster.run_for(40_000)
    assert answers["1.5Gi"] == (201, "")
    assert answers["-1"] == (422, 'Pod "debug-1" is invalid: spec.containers[0].resources.requests[memory]: '
                                  'Invalid value: "-1": must be greater than or equal to 0')
    assert answers["1Zi"] == (400, f'Pod in version "v1" cannot be handled as a Pod: {ERR_FORMAT_WRONG}')
    assert answers["1e"] == (400, "Pod in version \"v1\" cannot be handled as a Pod: unable to parse quantity's suffix")
    assert answers["9223372036854775808"] == (201, "")  # past int64: the slow path, exact
    code, message = _answer(cluster, "pods", odd_pod("debug-2", "example.com/dongle", "100m", "1"))
    assert code == 422 and message.endswith('requests: Invalid value: "100m": must be equal to example.com/dongle '
                                            'limit of 1')
    code, message = _answer(cluster, "pods", odd_pod("debug-2", "pods", "1", "none"))
    assert code == 422 and message.endswith('Invalid value: "pods": must be a standard resource for containers')


def test_names_labels_and_annotations_meet_their_limits():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run_for(5_000)
    none = ("", "")
    assert _answer(cluster, "configmaps", odd_named("configmaps", NAMES[3], none, none))[0] == 201  # 253
    assert _answer(cluster, "configmaps", odd_named("configmaps", NAMES[3], none, none))[0] == 409
    assert _answer(cluster, "configmaps", odd_named("configmaps", NAMES[4], none, none))[0] == 422  # 254
    assert _answer(cluster, "services", odd_named("services", NAMES[1], none, none))[0] == 201  # 63
    code, message = _answer(cluster, "services", odd_named("services", NAMES[2], none, none))
    assert code == 422 and message.endswith("metadata.name: Invalid value: " f'"{NAMES[2]}": must be no more than '
                                            "63 characters")
    code, message = _answer(cluster, "services", odd_named("services", "odd.v1", none, none))
    assert code == 422 and "a DNS-1035 label must consist of" in message
    code, message = _answer(cluster, "configmaps", odd_named("configmaps", "lab", ("/tier", "x"), none))
    assert (code, message) == (422, 'ConfigMap "lab" is invalid: metadata.labels: Invalid value: "/tier": prefix '
                                    "part must be non-empty")
    code, message = _answer(cluster, "configmaps", odd_named("configmaps", "lab", ("app", "v" * 64), none))
    assert code == 422 and message.endswith("must be no more than 63 characters")
    assert _answer(cluster, "configmaps", odd_named("configmaps", "ann", none, ANNOTATIONS[2]))[0] == 201


def test_deployment_selectors_are_validated_as_upstream():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run_for(5_000)
    code, message = _answer(cluster, "deployments", odd_deployment("api", SELECTORS[7]))  # operator Equals
    assert code == 422 and message.endswith(
        'spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator, '
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:'
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Equals", '
        'Values:[]string{"api"}}}}: invalid label selector]')
    code, message = _answer(cluster, "deployments", odd_deployment("api", SELECTORS[9]))  # app=other
    assert code == 422 and message.endswith("`selector` does not match template `labels`")
    code, message = _answer(cluster, "deployments", odd_deployment("api", SELECTORS[-1]))  # {}
    assert code == 422 and message.endswith("empty selector is invalid for deployment")
    assert _answer(cluster, "deployments", odd_deployment("api", SELECTORS[4]))[0] == 201  # app Exists
    assert _answer(cluster, "deployments", odd_deployment("api", SELECTORS[0]))[0] == 409


def test_each_rule_sends_its_create_on_a_machine():
    machine = SmallMachine()
    machine.create_odd_pod("debug-1", 1, 1, 1)
    machine.create_odd_named(1, 0, 1, 1)
    machine.create_odd_selector("web", 2)
    sent = [a for a in machine.session.actions if a.kind == "send-request"]
    assert [(a.verb, a.resource) for a in sent] == [("create", "pods"), ("create", NAMED_KINDS[1]),
                                                   ("create", "deployments")]
    assert '"memory":"1.5Gi"' in sent[0].body and '"limits":{"memory":"1.5Gi"}' in sent[0].body
    assert [machine.stats.rules[r] for r in ("create_odd_pod", "create_odd_named", "create_odd_selector")] == [1] * 3
    machine.advance_time(5)
    machine.teardown()


def test_a_trace_of_odd_values_replays_the_same(tmp_path):
    """Written, read back and replayed twice with every registered invariant: the same digest, no violation."""
    none = ("", "")
    trace = Trace(ClusterConfig(nodes=2), (
        RunFair(10_000),
        SendRequest("create", "pods", "default", body=odd_pod("debug-1", "cpu", "1e3", "none")),
        SendRequest("create", "pods", "default", body=odd_pod("debug-2", "memory", "1Zi", "same")),
        SendRequest("create", "services", "default", body=odd_named("services", NAMES[1], LABELS[2], none)),
        SendRequest("create", "deployments", "default", body=odd_deployment("api", SELECTORS[3])),
        RunFair(10_000), Settle(120_000)))
    replayed_twice(trace, tmp_path / "odd.json")
