"""The colliding-request action (kmodel/checker/collide_actions.py) and its rules (collide_rules.py): a request reads
as the HTTP request sent, round-trips through JSON, gets upstream's answer where its values meet what is there
(a binding of a bound pod, a stale resourceVersion, a refused selector, a ClusterIP another Service holds, a
kubelet writing another node's pod), and each rule sends one on a machine; a trace of them replays the same."""

from __future__ import annotations

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment, ApplyPod, ApplyService, RunFair, Settle
from kmodel.checker.collide_actions import ApplySizedPod, SendRequest
from kmodel.checker.collide_rules import LEASE_EDITS, LISTED, STATUS_EDITS, USER_CONDITION, WRITE_VERSIONS
from kmodel.checker.draws import (
    CLUSTER_IPS, FIELD_SELECTORS, FUTURE_REVISIONS, LABEL_SELECTORS, RESOURCE_VERSIONS, resource_version,
)
from kmodel.checker.trace import Trace
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Raw
from kmodel.objects import dump

from tests.checker.conftest import SmallMachine, replayed_twice
from tests.checker.test_patch_rules import web  # noqa: F401 (a fixture: two nodes, web, its Service, debug-1)
from tests.checker.test_workload_actions import run

BIND = SendRequest("create", "pods", "default", "debug-1", "binding",
                   {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "debug-1"},
                    "target": {"kind": "Node", "name": "node-2"}}, actor="system:kube-scheduler")
LIST = SendRequest("list", "pods", "default", label_selector="app in (web,api)", field_selector="spec.nodeName=node-1",
                   resource_version="0")
SIZED = ApplySizedPod("debug-2", "node-1", True, "cpu", "3501m")
EXAMPLES = [BIND, LIST, SendRequest("get", "nodes", "", "node-1", resource_version="7", actor="system:node:node-1"),
            SIZED, ApplySizedPod("debug-1", "node-2", False, "", "", 8080, "UDP", "127.0.0.1")]


def test_the_action_reads_as_the_http_request_and_round_trips():
    assert LIST.name == ("GET /api/v1/namespaces/default/pods?labelSelector=app%20in%20(web,api)"
                         "&fieldSelector=spec.nodeName=node-1&resourceVersion=0")
    assert BIND.name == ('POST /api/v1/namespaces/default/pods/debug-1/binding {"apiVersion":"v1","kind":"Binding",'
                         '"metadata":{"name":"debug-1"},"target":{"kind":"Node","name":"node-2"}} '
                         '(as system:kube-scheduler)')
    assert SIZED.name == "kubectl apply pod debug-2 (pinned to node-1; requests cpu=3501m)"
    assert EXAMPLES[-1].name == ("kubectl apply pod debug-1 (nodeSelector hostname=node-2; hostPort 8080/UDP on "
                                 "127.0.0.1)")
    assert [a.pinned for a in SIZED.simpler()] == [False, True] and list(SIZED.simpler())[1].resource == ""
    lease = SendRequest("update", "leases", "kube-node-lease", "node-1", body='{ "spec": {} }')
    assert lease.name == 'PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1 {"spec":{}}'
    for action in (*EXAMPLES, lease):
        assert action_from_json(action.to_json()) == action


def test_bad_requests_in_a_trace_are_refused_in_one_line():
    for data, message in [
        ({"name": "send-request", "verb": "watch", "resource": "pods"}, "verb must be one of"),
        ({"name": "send-request", "verb": "get", "resource": "widgets"}, "resource must be one of"),
        ({"name": "send-request", "verb": "get", "resource": "pods", "actor": "mallory"}, "actor must be one of"),
        ({"name": "send-request", "verb": "get", "resource": "pods", "actor": "system:node:"}, "actor must be one of"),
        ({"name": "send-request", "verb": "create", "resource": "pods", "body": "{"}, "patch must be JSON text"),
    ]:
        with pytest.raises(ValueError, match=message):
            action_from_json(data)


def test_the_pools_name_values_that_meet():
    """Each pool lists its simplest value first; a resourceVersion kind is a number of the store as it is."""
    assert LABEL_SELECTORS[0] == FIELD_SELECTORS[0] == "" and CLUSTER_IPS[0] == "taken"
    assert RESOURCE_VERSIONS[0] == "none" and WRITE_VERSIONS[0] == "read" and STATUS_EDITS[0] == LEASE_EDITS[0]

    class Store:
        revision, compact_revision = 50, 20

    assert [resource_version(k, Store(), 30) for k in RESOURCE_VERSIONS] == [
        "", "0", "50", "29", str(50 + FUTURE_REVISIONS), "19", "latest"]
    assert resource_version("stale", Store()) == "49"
    with pytest.raises(ValueError, match="unknown resourceVersion kind 'old'"):
        resource_version("old", Store())


def _answer(cluster: Cluster, action: SendRequest, ms: int = 2_000) -> tuple[int, str]:
    [r] = run(cluster, action, ms)
    assert isinstance(r.command, Raw)
    return r.response.code, getattr(r.response.body, "message", "")


def test_reads_get_upstreams_answers_for_selectors_and_resource_versions(web):
    code, _ = _answer(web, LIST)
    assert code == 200
    assert _answer(web, SendRequest("list", "pods", "", label_selector="app ~ web")) == (
        400, "unable to parse requirement: found '~', expected: in, notin, =, ==, !=, gt, lt")
    assert _answer(web, SendRequest("list", "pods", "default", field_selector="spec.replicas=1")) == (
        400, "field label not supported: spec.replicas")
    assert _answer(web, SendRequest("get", "pods", "default", "debug-1", resource_version="latest")) == (
        400, 'invalid resource version "latest"')
    future = web.store.revision + FUTURE_REVISIONS
    code, message = _answer(web, SendRequest("get", "pods", "default", "debug-1", resource_version=str(future)),
                            10_000)
    assert code == 504 and message.startswith(f"Timeout: Too large resource version: {future}, current: ")


def test_writes_components_make_collide_with_theirs(web):
    pod = web.get("pods", "default", "debug-1")
    assert pod.spec.node_name  # the scheduler bound it: a second binding is refused
    code, message = _answer(web, BIND)
    assert code == 409 and message.endswith(f'pod debug-1 is already assigned to node "{pod.spec.node_name}"')
    other = next(n for n in web.nodes if n != pod.spec.node_name)
    body = dump(pod)
    assert _answer(web, SendRequest("update", "pods", "default", "debug-1", "status", body,
                                    actor=f"system:node:{other}")) == (
        403, f'pods "debug-1" is forbidden: node "{other}" can only update pod status for pods with spec.nodeName '
             f"set to itself")
    body["metadata"]["resourceVersion"] = str(int(pod.metadata.resource_version) - 1)
    code, _ = _answer(web, SendRequest("update", "pods", "default", "debug-1", "status", body))
    assert code == 409
    body["metadata"].pop("resourceVersion")
    body["status"]["conditions"].append({"type": USER_CONDITION, "status": "True"})
    code, _ = _answer(web, SendRequest("update", "pods", "default", "debug-1", "status", body,
                                       actor=f"system:node:{pod.spec.node_name}"))
    assert code == 200  # an unconditional update by the pod's own kubelet
    assert USER_CONDITION in [c.type for c in web.get("pods", "default", "debug-1").status.conditions]
    taken = web.get("services", "default", "web").spec.cluster_ip
    code, message = _answer(web, SendRequest("create", "services", "default", body={
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
        "spec": {"clusterIP": taken, "selector": {"app": "api"}, "ports": [{"port": 80}]}}))
    assert code == 422 and message.endswith(f"failed to allocate IP {taken}: provided IP is already allocated")
    assert web.get("services", "default", "api") is None


def test_a_pod_sized_to_what_a_node_has_left_fits_and_one_unit_more_does_not():
    """Pinned, the kubelet's admission judges it (OutOfcpu; NodePorts for a host port a pod there holds); through
    the scheduler, its filters do (Pending)."""
    machine = SmallMachine()
    machine.apply_deployment("web", 1, 500, True, False)
    machine.advance_time(15)
    [web] = machine.cluster.objects("pods", "default")
    node = web.spec.node_name
    i = machine.cluster.nodes.index(node)
    outcomes = []
    for pod, sized, fit, pinned, host_port in (("debug-1", 1, 0, True, False), ("debug-2", 1, 1, True, False),
                                               ("debug-2", 2, 1, False, False), ("debug-2", 0, 0, True, True)):
        machine.apply_pod_near_capacity(pod, i, sized, fit, pinned, host_port)
        machine.advance_time(10)
        got = machine.cluster.get("pods", "default", pod)
        outcomes.append((machine.session.actions[-2].quantity or machine.session.actions[-2].host_port,
                         got.status.phase, got.status.reason))
        if pod == "debug-2":
            machine.delete_pod(pod)
            machine.advance_time(30)
    alloc = machine.cluster.get("nodes", "", node).status.allocatable["cpu"].milli_value()
    assert outcomes == [(f"{alloc - 500}m", "Running", ""), (f"{1}m", "Failed", "OutOfcpu"),
                        (outcomes[2][0], "Pending", ""), (8080, "Failed", "NodePorts")]
    machine.teardown()


def test_each_rule_sends_its_request_on_a_machine():
    machine = SmallMachine()
    machine.apply_deployment("web", 2, 0, False, False)
    machine.apply_service("web")
    machine.advance_time(15)
    machine.list_objects(0, 4, 3, 1, 0, False)
    machine.get_object(0, 4, 0)
    machine.bind_pod(0, 1, 1)
    machine.write_status(0, 1, 1, 0)
    machine.update_lease(0, 1, 0, 0)
    machine.create_service_ip("api", 0)
    sent = [a for a in machine.session.actions if a.kind == "send-request"]
    assert [(a.verb, a.resource, a.subresource) for a in sent] == [
        ("list", LISTED[0][0], ""), ("get", "pods", ""), ("create", "pods", "binding"), ("update", "pods", "status"),
        ("update", "leases", ""), ("create", "services", "")]
    assert sent[0].label_selector == LABEL_SELECTORS[4] and sent[0].resource_version == "0"
    assert '"holderIdentity":"intruder"' in sent[4].body
    assert [machine.stats.rules[r] for r in ("list_objects", "get_object", "bind_pod", "write_status",
                                              "update_lease", "create_service_ip")] == [1] * 6
    machine.advance_time(5)
    machine.teardown()


def test_a_trace_of_colliding_requests_replays_the_same(tmp_path):
    """Written, read back and replayed twice with every registered invariant: the same digest, no violation."""
    trace = Trace(ClusterConfig(nodes=2), (
        ApplyDeployment("web", 2), ApplyService("web"), ApplyPod("debug-1", ""), RunFair(15_000), LIST, BIND,
        SendRequest("update", "leases", "kube-node-lease", "node-1", body={
            "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": "intruder", "leaseDurationSeconds": 40}}),
        RunFair(5_000), Settle(120_000)))
    first = replayed_twice(trace, tmp_path / "collide.json")
    assert [s for s in first.steps if s.startswith(("GET ", "POST ", "PUT "))] == [
        LIST.name, BIND.name, trace.actions[6].name]


def test_write_status_replaces_a_workloads_scale_as_read_or_one_more():
    machine = SmallMachine()
    run(machine.cluster, ApplyDeployment("web", 1))
    machine.advance_time(5)

    def replace_scale(edit: int, rv: int, who: int = 0) -> tuple[int, str]:
        targets = machine._status_written()
        i = next(n for n, (resource, _, _) in enumerate(targets) if resource == "deployments")
        since = len(machine.cluster.kubectl.results)
        machine.write_status(i, edit, rv, who)
        machine.advance_time(1)
        [r] = machine.cluster.kubectl.results[since:]
        assert r.command.subresource == "scale"
        return r.response.code, getattr(r.response.body, "message", "")

    assert replace_scale(STATUS_EDITS.index("condition"), WRITE_VERSIONS.index("read"))[0] == 200
    assert machine.cluster.get("deployments", "default", "web").spec.replicas == 2
    code, message = replace_scale(STATUS_EDITS.index("condition"), WRITE_VERSIONS.index("stale"))
    assert code == 409 and "the object has been modified" in message
    assert replace_scale(0, WRITE_VERSIONS.index("none"), who=1)[0] == 403  # alice
    assert machine.cluster.get("deployments", "default", "web").spec.replicas == 2


def test_bind_pod_fresh_creates_a_pending_pod_and_binds_it_behind_its_create():
    """With no pod (or `fresh`), the rule applies a bare pod with a free name and sends its binding in the same
    step: in the fair order the admin's binding lands before the scheduler has the pod, which stays where the admin
    put it; a second fresh draw takes the next free name."""
    machine = SmallMachine()
    machine.advance_time(5)
    assert machine._pods() == []
    machine.bind_pod(0, 1, 0)  # no pod: created whatever `fresh` says
    assert [a.kind for a in machine.session.actions[-2:]] == ["apply-pod", "send-request"]
    machine.advance_time(10)
    bound = machine.cluster.get("pods", "default", "debug-1")
    assert bound.spec.node_name == machine.cluster.nodes[1]
    assert [r.response.code for r in machine.cluster.kubectl.results[-2:]] == [201, 201]
    machine.bind_pod(0, 0, 0, True)
    assert machine.session.actions[-2].pod == "debug-2"
    machine.bind_pod(0, 0, 0, False)  # a pod exists and no fresh one is asked for: a pod that exists
    assert machine.session.actions[-1].object == "debug-1"
    machine.advance_time(10)
    machine.teardown()
