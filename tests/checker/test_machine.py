"""The state machine and campaigns: violations are found, shrunk, traced and replayed; runs are deterministic;
the fault classes are reachable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kmodel.invariants.registry import REGISTRY
from kmodel.checker.actions import ApplyDeployment, Fault, RunFair, Settle
from kmodel.checker.machine import DELAYS_MS, UNTIL_NEXT_TIMER
from kmodel.checker.action_json import action_from_json
from kmodel.checker.replay import replay
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import InvariantViolation, Session
from kmodel.checker.trace import read_trace, write_trace
from kmodel.cli import main
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import DelayHead, Work

from tests.checker.conftest import GROWS, IDLE, NO_WEB, PlantedMachine, SmallMachine

ROOT = Path(__file__).resolve().parents[2]


def test_a_planted_violation_is_found_shrunk_and_replayed(tmp_path, monkeypatch):
    result = run_campaign(CheckOptions(examples=30, steps=6, seed=4, nodes=2), machine=PlantedMachine)
    trace = result.failure
    assert trace is not None and trace.violation.invariant == "no-web-deployment"
    assert trace.expect == {"fail": "no-web-deployment"}
    assert trace.boot_revision == Session(ClusterConfig(nodes=2), []).boot_revision == 49  # written into the file
    kinds = [a.kind for a in trace.actions]
    assert kinds[0] == "run" and "apply-deployment" in kinds and len(kinds) <= 5, kinds
    again = replay(trace, invariants=[GROWS, NO_WEB, IDLE])
    assert again.violation is not None and again.violation.invariant == "no-web-deployment"
    assert again.violation.step == trace.violation.step
    assert any(label.startswith("create deployments") for _, _, _, label in again.messages)
    # the CLI replays it with the registered invariants: plant ours among them
    monkeypatch.setitem(REGISTRY, NO_WEB.name, NO_WEB)
    path = write_trace(trace, tmp_path / "t.json")
    assert read_trace(path).boot_revision == 49
    assert main(["replay", "--quiet", str(path)]) == 1


def test_a_clean_campaign_counts_checks_and_rules():
    result = run_campaign(CheckOptions(examples=8, steps=15, seed=3, nodes=2), machine=SmallMachine)
    assert result.failure is None
    stats = result.stats
    assert stats.examples >= 8 and stats.checks["revision-grows"] > stats.examples
    assert stats.checks["kubectl-idle"] >= stats.examples  # every example ends with a settle
    assert stats.rules["settle"] >= stats.examples and stats.rules["warmup"] == stats.examples
    assert stats.events > 1000


def digest_in_subprocess(hashseed: str, options: str = "examples=4, steps=8, seed=7, nodes=2") -> str:
    """The trace digest, steps and topologies drawn of a SmallMachine campaign of these CheckOptions, run in a
    new interpreter under this PYTHONHASHSEED."""
    script = (
        "from kmodel.checker.run import CheckOptions, run_campaign\n"
        "from tests.checker.conftest import SmallMachine\n"
        f"r = run_campaign(CheckOptions({options}), machine=SmallMachine)\n"
        "print(r.stats.trace_digest(), r.stats.steps, sorted(r.stats.topologies.items()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_the_same_seed_gives_the_same_trace_digest_under_any_hash_seed():
    digests = {digest_in_subprocess(h) for h in ("0", "1", "2")}
    assert len(digests) == 1, digests


def test_a_lagging_watch_cache_serves_stale_state():
    """Stale reads from a lagging replica are reachable: hold etcd -> apiserver-1 while apiserver-0 keeps up."""
    session = Session(ClusterConfig(nodes=1, apiservers=2), [GROWS])
    session.execute(RunFair(15_000))
    session.execute(ApplyDeployment("web", 1))
    loop = session.cluster.loop
    for _ in range(200):  # let kubectl's create reach the store, but do not deliver etcd's watch yet
        if loop.network.has_in_flight("etcd", "apiserver-1"):
            break
        enabled = [e for e in loop.enabled_events() if not (getattr(e, "src", "") == "etcd")]
        loop.step(enabled[0])
    assert loop.network.has_in_flight("etcd", "apiserver-1")
    session.execute(Fault(DelayHead("etcd", "apiserver-1", 60_000)))
    session.execute(RunFair(2_000))
    lagging, current = session.cluster.replicas[1].cache, session.cluster.replicas[0].cache
    store_rev = session.cluster.store.revision
    assert current.resource_version == store_rev
    assert lagging.resource_version < store_rev


def test_mid_reconcile_crash_candidates_exist():
    """A reconciling component with a write in flight (or its answer on the way) is offered to
    crash_mid_reconcile, each controller on its own; API servers, etcd and kube-proxy never are."""
    machine = SmallMachine()
    machine.session.execute(ApplyDeployment("web", 2))
    loop = machine.cluster.loop
    seen = set()
    for _ in range(300):
        seen.update(machine.mid_reconcile())
        enabled = loop.enabled_events()
        if not enabled:
            break
        loop.step(enabled[0])
    assert {"controller/deployment", "controller/replicaset", "scheduler"} <= seen, seen
    assert not any(n.startswith(("apiserver", "etcd", "proxy/")) for n in seen), seen


def test_the_pytest_plugin_runs_a_user_machine():
    from kmodel.pytest_plugin import _options, kmodel_test

    class Users(SmallMachine):
        extra_invariants = (GROWS,)

    _options.update(seed=4, profile="ci")
    try:
        kmodel_test(Users, max_examples=3, stateful_step_count=5)()
    finally:
        _options.update(seed=None, profile="dev")


def test_the_pytest_plugins_campaign_profile_brings_the_campaign_rules_as_kmodel_check_does():
    from kmodel.checker.machine import LongWaits
    from kmodel.pytest_plugin import _options, kmodel_test

    seen = []

    class Users(SmallMachine):
        def teardown(self) -> None:
            seen.append(isinstance(self, LongWaits))
            super().teardown()

    for name in ("campaign", "dev"):
        _options.update(seed=4, profile=name)
        try:
            kmodel_test(Users, max_examples=2, stateful_step_count=3)()
        finally:
            _options.update(seed=None, profile="dev")
        assert seen and set(seen) == {name == "campaign"}, name
        seen.clear()


def test_a_fault_rule_with_nothing_of_its_kind_injects_the_next_kind_that_has_something():
    machine = SmallMachine()
    stats = machine.stats
    before = dict(stats.rules)
    assert machine.restartable() == [] and not machine.cluster.network.partitioned
    assert not machine.cluster.network.has_in_flight_anywhere and machine.failable() == []
    # nothing down, partitioned, in flight or running: the first kind in FAULTS order that has a candidate,
    # cutting one component off the network
    machine.restart(0)
    assert stats.rules["partition"] == before.get("partition", 0) + 1 and machine.cluster.network.partitioned
    machine.heal(0)  # now there is a partition to heal
    assert stats.rules["heal"] == before.get("heal", 0) + 1 and not machine.cluster.network.partitioned
    machine.lag_watch_cache(0, 0)  # always possible: slow etcd's watch link to a replica
    assert machine.cluster.network.held_until("etcd", "apiserver-0") is not None
    machine.crash(0)
    assert len(machine.cluster.loop.down_components()) == 1
    machine.restart(0)  # now there is something to restart
    assert machine.cluster.loop.down_components() == [] and stats.rules["restart"] == before.get("restart", 0) + 1
    actions = len(machine.session.actions)
    machine.drop_message(0)  # always something
    assert len(machine.session.actions) == actions + 1
    machine.compact(40)
    assert machine.cluster.store.compact_revision > 0


def test_a_removed_machine_is_never_restarted_and_its_unsent_requests_are_lost():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.session.execute(ApplyDeployment("web", 2))
    # run until node-1's kubelet has a request on its way to an API server
    loop = cluster.loop
    for _ in range(2000):
        if any(src == "kubelet/node-1" for src, _ in cluster.network.nonempty_links()):
            break
        loop.step(loop.enabled_events()[0])
    assert any(src == "kubelet/node-1" for src, _ in cluster.network.nonempty_links())
    machine.remove_node(0)  # node-1
    assert cluster.removed_nodes == ["node-1"] and cluster.nodes == ["node-2"]
    assert not any(src.endswith("/node-1") for src, _ in cluster.network.nonempty_links())
    assert {"kubelet/node-1", "proxy/node-1"} <= set(loop.down_components())
    for i in range(8):
        machine.restart(i)  # falls through to other faults, never restarts node-1's components
        assert not loop.is_up("kubelet/node-1") and not loop.is_up("proxy/node-1")
    machine.session.execute(Settle(60_000, check_at_once=True))
    assert not loop.is_up("kubelet/node-1") and cluster.get("nodes", "", "node-1") is None


def test_rule_steps_count_the_rules_run():
    result = run_campaign(CheckOptions(examples=3, steps=5, seed=3, nodes=2), machine=SmallMachine)
    stats = result.stats
    rules_run = stats.steps - stats.rules["warmup"] - stats.examples  # minus warmups and teardown settles
    # each action a rule ran is counted under the rule's name, and a rule runs at least one action: several for
    # some (an etcd client's session of requests, a rule that first installs what it acts on, lag_watch_cache's
    # Work then delay), so the rule steps are at most the actions
    assert rules_run == sum(n for name, n in stats.rules.items() if name not in ("warmup", "settle"))
    assert 0 < stats.rule_steps <= rules_run
    assert stats.rule_steps < rules_run  # this seed's etcd sessions ran several requests each


def test_bare_pods_are_placed_by_the_scheduler_or_pinned_and_their_spec_cannot_move():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.apply_pod("debug-1", 0, False)  # index 0: no node, the scheduler places it
    machine.apply_pod("debug-2", 2, True)  # index 2: the second node, hostPort 8080
    machine.advance_time(5)
    placed, pinned = cluster.get("pods", "default", "debug-1"), cluster.get("pods", "default", "debug-2")
    assert placed.spec.node_name in cluster.nodes and placed.status.phase == "Running"
    assert pinned.spec.node_name == cluster.nodes[1] and pinned.status.phase == "Running"
    assert pinned.spec.containers[0].ports[0].host_port == 8080 and not pinned.metadata.owner_references
    names = [a.name for a in machine.session.actions[-3:-1]]
    assert names == ["kubectl apply pod debug-1", f"kubectl apply pod debug-2 on {cluster.nodes[1]} (hostPort 8080)"]
    machine.apply_pod("debug-2", 1, True)  # another node: a pod's spec is immutable, the apply is refused
    machine.advance_time(1)
    assert cluster.kubectl.results[-1].response.code == 422
    assert cluster.get("pods", "default", "debug-2").spec.node_name == cluster.nodes[1]
    machine.delete_pod("debug-2")
    machine.advance_time(30)  # the kubelet stops it within its grace period, then the pod is gone
    assert cluster.get("pods", "default", "debug-2") is None
    assert machine.stats.rules["apply_pod"] >= 3 and machine.stats.rules["delete_pod"] >= 1


def test_the_checkers_settle_is_bounded_by_events_per_node_and_round_trips():
    machine = SmallMachine()
    settle = machine._settle()
    assert settle.max_events == SmallMachine.settle_events_per_node * len(machine.cluster.nodes) == 20_000
    assert action_from_json(json.loads(json.dumps(settle.to_json()))) == settle


def test_only_long_runs_get_the_rule_that_lets_minutes_pass():
    # campaigns add LongWaits' wait_long (a node left unreachable that long has its pods evicted); dev and ci
    # keep the rules their seeds were recorded with
    campaign = run_campaign(CheckOptions(examples=12, steps=12, seed=4, nodes=2, profile="campaign"),
                            machine=SmallMachine)
    dev = run_campaign(CheckOptions(examples=12, steps=12, seed=4, nodes=2), machine=SmallMachine)
    assert campaign.stats.rules.get("wait_long", 0) > 0 and "wait_long" not in dev.stats.rules
    assert "lose_node" not in dev.stats.rules
    # SmallMachine's 60 s settles are shorter than an eviction takes: it never loses a node for good
    assert "lose_node" not in campaign.stats.rules


def test_long_runs_lose_at_most_two_machines_and_only_with_settles_long_enough():
    from kmodel.checker.machine import LOST_NODE_SETTLE_MS, MAX_LOST_NODES, LongWaits

    class Probe:  # just what the precondition reads
        node_removal = True
        settle_bound_ms = LongWaits.settle_bound_ms

        class cluster:
            nodes = ["node-1", "node-2"]
            lost_nodes: list = []

    can = LongWaits._can_lose_node
    assert can(Probe())
    Probe.cluster.nodes = ["node-1"]
    assert not can(Probe())  # one machine left: it stays
    Probe.cluster.nodes = ["node-1", "node-2", "node-3"]
    Probe.cluster.lost_nodes = ["node-4"] * MAX_LOST_NODES
    assert not can(Probe())
    Probe.cluster.lost_nodes = []
    Probe.settle_bound_ms = LOST_NODE_SETTLE_MS - 1
    assert not can(Probe())
    Probe.settle_bound_ms, Probe.node_removal = LOST_NODE_SETTLE_MS, False
    assert not can(Probe())


def test_a_long_runs_settle_outwaits_the_default_rate_limiters_longest_back_off():
    # after twenty minutes of failed syncs a controller's next try can be 1,000 s away (upstream's design): a
    # settle that gave up sooner would report upstream's own back-off as a cluster that never converges
    from kmodel.checker.machine import KmodelMachine, LongWaits
    from kmodel.client.workqueue import MAX_DELAY_MS

    assert MAX_DELAY_MS == 1_000_000
    assert LongWaits.settle_bound_ms >= MAX_DELAY_MS + 120_000
    assert KmodelMachine.settle_bound_ms == 600_000  # dev and ci keep theirs


def test_a_machine_that_sets_its_own_settle_bound_keeps_it_in_long_runs():
    from kmodel.checker.machine import LongWaits
    from kmodel.checker.run import run_campaign as run

    seen = []

    class Mine(SmallMachine):  # settle_bound_ms = 60_000, its own
        def teardown(self) -> None:
            seen.append((type(self).settle_bound_ms, isinstance(self, LongWaits)))
            super().teardown()

    run(CheckOptions(examples=2, steps=3, seed=2, nodes=2, profile="campaign"), machine=Mine)
    assert seen and set(seen) == {(60_000, True)}


def test_the_closing_settle_is_counted_apart_for_the_benchmark():
    machine = type("CountedMachine", (SmallMachine,), {"stats": None, "dispose_sessions": False})()
    stats = machine.stats
    machine.apply_deployment("web", 2, 0, False, False)
    machine.settle()  # a settle rule: not the closing one
    assert stats.closing_settle_events == 0 and stats.closing_settle_seconds == 0.0
    machine.apply_deployment("web", 3, 0, False, False)  # one more pod to schedule and start: the closing settle has work
    before = machine.session.events_applied
    machine.teardown()
    assert stats.closing_settle_events == machine.session.events_applied - before > 0
    assert stats.closing_settle_seconds > 0.0


def test_every_example_aims_hypothesis_at_the_rare_situations_it_reached(monkeypatch):
    import kmodel.checker.machine as machine_module

    scores: list[tuple[float, str]] = []
    monkeypatch.setattr(machine_module, "target", lambda value, label: scores.append((value, label)))
    result = run_campaign(CheckOptions(examples=6, steps=10, seed=3, nodes=2), machine=SmallMachine)
    assert result.failure is None
    assert len(scores) >= 6 and {label for _, label in scores} == {"rare situations reached"}
    assert all(score >= 0 for score, _ in scores)


def test_a_link_delayed_until_the_next_timer_is_released_at_the_instant_that_timer_falls_due():
    machine = SmallMachine()
    machine.session.execute(ApplyDeployment("web", 2))
    loop = machine.cluster.loop
    while not machine._nonempty_links():  # noqa: SLF001 - the rule's own candidates
        loop.step(loop.enabled_events()[0])
    src, dst = machine._nonempty_links()[0]  # noqa: SLF001
    now, due = machine.cluster.now, loop.clock.next_due()
    assert due is not None
    machine.delay_link(0, UNTIL_NEXT_TIMER)
    event = machine.session.actions[-1].event
    assert event == DelayHead(src, dst, max(1, due - now))
    assert loop.network.held_until(src, dst) == max(now + 1, due)
    # the other draws keep their fixed holds
    machine.delay_link(0, 1)
    assert machine.session.actions[-1].event.delay_ms == DELAYS_MS[1]



def test_crash_cut_off_takes_a_process_a_partition_cut_off_else_crashes_as_before():
    machine = SmallMachine()
    loop, network = machine.cluster.loop, machine.cluster.network
    crashes = machine.stats.rules.get("crash", 0)
    assert machine.cut_off_crashable() == []
    machine.crash(0, True)  # nothing cut off: the first crashable process, as crash(0) does
    assert loop.down_components() == [machine._processes(loop.components)[0]]
    machine.restart(0)
    endpoints = network.endpoints
    machine.partition([endpoints.index("scheduler")])
    assert machine.cut_off_crashable() == ["scheduler"]
    machine.crash(5, True)  # whatever the index: the one cut off
    assert loop.down_components() == ["scheduler"] and network.partitioned
    assert machine.stats.rules["crash"] == crashes + 2
    machine.teardown()
