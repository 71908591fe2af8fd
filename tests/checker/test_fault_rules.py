"""The request-fault family of rules (kmodel/checker/fault_rules.py), its action and its sometimes properties."""

from __future__ import annotations

import json

import pytest

from kmodel.invariants.sometimes import SOMETIMES
from kmodel.checker.actions import ApplyDeployment, ApplyService, DeleteObject, Fault, RunFair
from kmodel.checker.action_json import action_from_json
from kmodel.checker.fault_actions import (
    PROBED_APP, ApplyProbedApp, FailLiveness, FlapReadiness, RebootNode, StallWatch,
)
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.loop import Crash, EventNotEnabled
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.loop.events import FailRequest

from tests.checker.conftest import SmallMachine


def reached(name: str, machine: SmallMachine, memo: dict) -> bool:
    return SOMETIMES[name].reached(machine.cluster, memo)


class Fired:
    """How many times each rule fired since this was made (the machine's Stats live as long as its class)."""

    def __init__(self, machine: SmallMachine) -> None:
        self.stats = machine.stats
        self.before = dict(machine.stats.rules)

    def __getitem__(self, rule: str) -> int:
        return self.stats.rules.get(rule, 0) - self.before.get(rule, 0)


def test_fail_request_answers_the_busiest_components_next_request_and_counts_its_status():
    machine = SmallMachine()
    fired = Fired(machine)
    memo: dict = {}
    assert not reached("request-retried-after", machine, memo)
    machine.fail_request(0, 0, False, 0)  # 429, Retry-After 1 s, on the first candidate
    [event] = [a.event for a in machine.session.actions[-1:]]
    assert event == FailRequest(machine.request_links()[0][0], "apiserver-0", 429, retry_after_seconds=1)
    assert event.src == "kube-controller-manager"  # its leader election renews every 2 s: the busiest
    assert fired["fail_request_429"] == 1
    machine.advance_time(20)
    assert reached("request-retried-after", machine, memo)
    for status, code in enumerate((500, 503, 504)):
        machine.fail_request(1, status + 1, True, 1)
        last = machine.session.actions[-1].event
        assert last.code == code and last.retry_after_seconds == 0 and last.applied == (code == 504)
        assert fired[f"fail_request_{code}"] == 1


def test_a_504_whose_write_was_applied_reaches_its_sometimes_property():
    machine = SmallMachine()
    memo: dict = {}
    machine.fail_request(0, 3, False, 0)  # 504, not applied
    machine.advance_time(20)
    assert not reached("timeout-write-applied", machine, memo)
    machine.fail_request(0, 3, True, 0)
    machine.advance_time(20)
    assert reached("timeout-write-applied", machine, memo)


def test_with_every_api_server_down_fail_request_restarts_one():
    machine = SmallMachine()
    fired = Fired(machine)
    for replica in ("apiserver-0", "apiserver-1"):
        machine.session.execute(Fault(Crash(replica)))
    assert machine.request_links() == []
    machine.fail_request(0, 0, False, 0)
    assert fired["restart"] == 1 and len(machine.cluster.loop.down_components()) == 1


def test_compact_delete_compacts_at_the_newest_revision_that_deleted_a_key():
    machine = SmallMachine()
    fired = Fired(machine)
    machine.session.execute(ApplyDeployment("web", 1))
    machine.session.execute(RunFair(10_000))
    assert machine.cluster.store.deletion_revisions() == []
    machine.compact_delete(0)  # nothing deleted yet: a compaction as `compact` draws it
    assert fired["compact"] == 1 and fired["compact_delete"] == 0
    machine.session.execute(DeleteObject("deployments", "web"))
    machine.session.execute(RunFair(10_000))
    deletes = machine.cluster.store.deletion_revisions()
    assert deletes and deletes == sorted(deletes, reverse=True)
    machine.compact_delete(0)
    assert machine.cluster.store.compact_revision == deletes[0] and fired["compact_delete"] == 1
    assert machine.cluster.store.deletion_revisions() == [r for r in deletes if r > deletes[0]]


def _lease_watch(machine: SmallMachine) -> tuple[str, str, str]:
    machine.advance_time(30)
    first = machine.stallable_watches()[0]
    leases = machine.cluster.replicas[0].cache.resources["leases"].all_watchers
    assert first[0] in leases  # Leases change most: their watches come first
    return first


class NoElectionMachine(SmallMachine):
    """Only the nodes renew Leases: no leader election renewing every 2 s (which alone would fill the window of
    100 in 100 s)."""

    config = ClusterConfig(nodes=2, apiservers=2, leader_elect=False)


def test_a_watch_stalled_past_the_caches_window_resumes_into_410_and_relists():
    machine = NoElectionMachine()
    fired = Fired(machine)
    memo: dict = {}
    stream, replica, client = _lease_watch(machine)
    machine.stall_watch(0, 2)  # two minutes: 24 Lease renewals of two nodes, within the window of 100
    machine.advance_time(5)
    assert not reached("watch-expired-relist", machine, memo)
    stream, replica, client = machine.stallable_watches()[0]
    machine.stall_watch(0, 10)  # ten: 120 renewals, more than the window holds
    assert machine.cluster.loop.network.stream_ends(stream) is None  # the replica ended it
    machine.advance_time(5)
    assert reached("watch-expired-relist", machine, memo)
    assert fired["stall_watch"] == 2


def test_stall_watch_with_no_watch_open_delays_a_link():
    machine = SmallMachine()
    fired = Fired(machine)
    machine.stallable_watches = lambda: []  # type: ignore[method-assign]
    actions = len(machine.session.actions)
    machine.stall_watch(0, 2)
    # the first kind from delay_link on in FAULTS order that has a candidate: with nothing in flight, nothing
    # down and no partition, a partition
    assert len(machine.session.actions) == actions + 1 and fired["stall_watch"] == 0 and fired["partition"] == 1


def test_stall_watch_refuses_a_stream_that_is_not_open_and_round_trips():
    machine = SmallMachine()
    action = StallWatch("nobody/watch-9", "apiserver-0", "nobody", 120_000)
    with pytest.raises(EventNotEnabled, match="no such open watch"):
        action.apply(machine.cluster)
    assert action_from_json(json.loads(json.dumps(action.to_json()))) == action
    fault = Fault(FailRequest("scheduler", "apiserver-1", 504, applied=True))
    assert action_from_json(json.loads(json.dumps(fault.to_json()))) == fault
    with pytest.raises(ValueError, match="ms must be at least 2"):
        action_from_json({**action.to_json(), "ms": 1})


def test_an_api_server_crash_under_watches_is_reached_once_its_clients_watch_again():
    machine = SmallMachine()
    memo: dict = {}
    assert not reached("apiserver-restarted-under-watches", machine, memo)
    machine.session.execute(Fault(Crash("apiserver-1")))  # nobody watches there
    assert not reached("apiserver-restarted-under-watches", machine, memo)
    machine.restart(0)
    assert not reached("apiserver-restarted-under-watches", machine, memo)
    machine.session.execute(Fault(Crash("apiserver-0")))  # its clients watch again through apiserver-1 at once
    assert reached("apiserver-restarted-under-watches", machine, memo)


def test_a_probe_fault_applies_the_probed_app_first_then_flaps_readiness_and_fails_liveness():
    machine = SmallMachine()
    fired = Fired(machine)
    flapped, restarted = {}, {}
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    assert machine.probed_containers("readiness") == []
    assert not reached("readiness-flapped", machine, flapped)
    # no container has a readiness probe: the probed app is applied, its rollout waited for, then the flap
    machine.flap_readiness(0, 0)
    applied, flap = machine.session.actions[-2:]
    assert isinstance(applied, ApplyProbedApp) and applied.wait_seconds == 60
    assert isinstance(flap, FlapReadiness) and flap.pod.startswith(PROBED_APP)
    assert fired["apply_probed_app"] == 1 and fired["flap_readiness"] == 1
    machine.advance_time(5)
    assert reached("readiness-flapped", machine, flapped)
    assert not reached("liveness-restart", machine, restarted)
    machine.fail_liveness(1)
    action = machine.session.actions[-1]
    assert isinstance(action, FailLiveness) and fired["fail_liveness"] == 1 and fired["apply_probed_app"] == 1
    # the fault itself runs until the kubelet has restarted the container: no later step has to wait it out
    assert reached("liveness-restart", machine, restarted)
    pod = machine.cluster.get("pods", "default", action.pod)
    assert pod.status.container_statuses[0].restart_count == 1


def test_a_probe_fault_kills_a_container_while_the_probed_app_is_on_its_way():
    machine = SmallMachine()
    fired = Fired(machine)
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    machine.session.execute(ApplyProbedApp())  # no wait: its pods are not running yet
    machine.fail_liveness(0)
    assert fired["apply_probed_app"] == 0 and fired["fail_container"] == 1


def test_applying_the_probed_app_can_wait_for_its_rollout():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(10_000)
    action = ApplyProbedApp(wait_seconds=60)
    assert action.name.endswith("; kubectl rollout status deployment probed --timeout=60s")
    action.apply(cluster)
    assert cluster.get("deployments", "default", PROBED_APP).status.available_replicas == 2


def test_probe_faults_refuse_a_container_without_the_probe():
    machine = SmallMachine()
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    [(node, pod, container)] = machine.failable()
    for action in (FlapReadiness(node, pod, container, 15_000), FailLiveness(node, pod, container)):
        with pytest.raises(EventNotEnabled, match="with a (readiness|liveness) probe"):
            action.apply(machine.cluster)


def test_a_replicaset_create_answered_504_after_it_was_applied_converges_to_its_replicas():
    # Upstream's manageReplicas lowers its expectations for every create that failed, a 504 included; the pod that
    # was created anyway reaches it through its informer, and a surplus one (made before the informer saw it) goes
    from kmodel.checker.actions import ScaleDeployment, Settle
    from kmodel.store import prefix_end

    machine = SmallMachine()
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    rs = "controller/replicaset"
    endpoint = machine.cluster.loop.components[rs].client.endpoint
    machine.session.execute(Fault(FailRequest(rs, endpoint, 504, applied=True)))
    machine.session.execute(ScaleDeployment("web", 2))
    machine.session.execute(Settle(120_000, check_at_once=True))
    answered = [f for r in machine.cluster.replicas for f in r.faults_answered]
    assert [(verb, code, written) for _, src, verb, code, written in answered if src == rs] == [
        ("create", 504, True)]
    store = machine.cluster.store
    pods = [kv.value for kv in store.range("/registry/pods/default/", prefix_end("/registry/pods/default/")).kvs]
    assert len([p for p in pods if p.metadata.deletion_timestamp is None]) == 2


def test_a_rebooted_machine_runs_its_pods_again_in_new_sandboxes_with_a_restart_counted():
    machine = SmallMachine()
    fired = Fired(machine)
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    [pod] = [p for p in machine.cluster.objects("pods", "default") if p.metadata.name.startswith("web-")]
    node = pod.spec.node_name
    kubelet = machine.cluster.loop.components[f"kubelet/{node}"]
    [old_sandbox] = [sid for sid, sb in kubelet.runtime.sandboxes.items() if sb.metadata.name == pod.metadata.name]
    machine.reboot_node(machine.cluster.nodes.index(node))
    action = machine.session.actions[-1]
    assert action == RebootNode(node) and fired["reboot_node"] == 1
    assert action_from_json(json.loads(json.dumps({**action.to_json(), "say": action.name}))) == action
    assert machine.cluster.loop.is_up(f"kubelet/{node}") and machine.cluster.loop.is_up(f"proxy/{node}")
    assert all(c.state.name != "CONTAINER_RUNNING" for c in kubelet.runtime.containers.values())
    machine.advance_time(30)
    after = machine.cluster.get("pods", "default", pod.metadata.name)
    assert after.status.phase == "Running" and after.status.container_statuses[0].restart_count == 1
    ready = [sid for sid, sb in kubelet.runtime.sandboxes.items()
             if sb.metadata.name == pod.metadata.name and sb.state.name == "SANDBOX_READY"]
    assert ready and old_sandbox not in ready


def test_reboot_node_refuses_a_machine_whose_kubelet_is_down():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(10_000)
    cluster.crash("node-1")
    with pytest.raises(EventNotEnabled, match="not a node whose kubelet runs now"):
        RebootNode("node-1").apply(cluster)
