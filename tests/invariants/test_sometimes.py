"""Sometimes properties (invariants/sometimes.py): each is reached by a run that makes its situation happen,
and not by a quiet cluster; what happened before a property started looking does not count; the checker
counts the examples that reached each and the report flags the ones none did."""

from __future__ import annotations

import json

import attrs
import pytest

from kmodel.invariants.registry import SHARED
from kmodel.invariants.sometimes import SOMETIMES, registered_sometimes
from kmodel.cli import main
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.controllers.shared_informers import SHARED_INFORMERS
from kmodel.loop.events import Partition
from kmodel.objects import load

from tests.invariants.test_invariants import S, _pod, call, manifest, web_cluster

EXPECTED = tuple(sorted((
    "dependent-collected", "endpoint-not-ready", "etcd-unavailable", "informer-relisted", "node-marked-not-ready",
    "node-tainted-no-execute",
    "orphan-pod-collected", "pod-evicted", "pod-rejected-by-kubelet", "pod-unschedulable", "rolling-update",
    "update-conflict",
    # the workload family (invariants/sometimes_workloads.py)
    "cordoned-node-skipped", "manifest-refused", "old-replicaset-revived", "pod-evicted-by-user-taint",
    "pod-released-and-adopted",
    # the access family (invariants/sometimes_access.py)
    "dependent-orphaned", "finalizer-held-then-released", "foreground-deletion-completed",
    "namespace-terminated-with-content", "refused-by-rbac",
    # the fault family (invariants/sometimes_faults.py)
    "apiserver-restarted-under-watches", "informer-tombstone", "liveness-restart", "readiness-flapped",
    "request-retried-after", "timeout-write-applied", "watch-expired-relist",
    # leader election and the pause fault (invariants/sometimes_leader.py), only where something elects
    "leader-handover", "pause-outlived-lease", "two-leaders-acting")))
ELECTION_ONLY = ("leader-handover", "pause-outlived-lease", "two-leaders-acting")


class Watcher:
    """Every sometimes property, looking from now on (as the checker's sessions do after the warm-up)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        shared: dict = {}
        self.memos = {p.name: {SHARED: shared} for p in registered_sometimes()}
        self.seen: set[str] = set()
        self.look()  # what happened so far is read and dropped
        self.seen.clear()

    def look(self) -> set[str]:
        for p in registered_sometimes():
            if p.name not in self.seen and p.reached(self.cluster, self.memos[p.name]):
                self.seen.add(p.name)
        return set(self.seen)

    def run(self, seconds: int, step: int = 5) -> set[str]:
        """Run the cluster, looking every `step` seconds (the checker looks after every action)."""
        end = self.cluster.now + seconds * S
        while self.cluster.now < end:
            self.cluster.run(min(end, self.cluster.now + step * S))
            self.look()
        return set(self.seen)


@pytest.fixture
def web() -> tuple[Cluster, Watcher]:
    cluster = web_cluster()
    return cluster, Watcher(cluster)


def test_every_property_is_registered_with_its_principle_and_situation():
    assert tuple(sorted(SOMETIMES)) == tuple(sorted(EXPECTED))
    for p in registered_sometimes():
        assert p.principle and p.situation.endswith(".") and len(p.situation) < 300, p.name
    assert {p.name for p in registered_sometimes() if p.elections_only} == {
        "leader-handover", "pause-outlived-lease", "two-leaders-acting"}


def test_a_cluster_of_one_of_each_does_not_count_the_election_properties():
    from kmodel.checker.machine import KmodelMachine
    from kmodel.cluster.config import ClusterConfig

    one = {p.name for p in KmodelMachine.sometimes_list()}
    elected = type("Elected", (KmodelMachine,), {"config": ClusterConfig(controller_managers=2)})
    two = {p.name for p in elected.sometimes_list()}
    assert two - one == {"leader-handover", "pause-outlived-lease", "two-leaders-acting"}


def test_a_quiet_cluster_reaches_none(web):
    cluster, watcher = web
    assert watcher.run(120) == set()


def test_a_partitioned_node_is_marked_then_its_pods_unready_then_evicted(web):
    cluster, watcher = web
    cluster.partition("node-2")
    seen = watcher.run(60)
    # 40 s of grace: node lifecycle marks the node Ready=Unknown and its pods not ready (out of the Endpoints)
    assert {"node-marked-not-ready", "endpoint-not-ready", "node-tainted-no-execute"} <= seen
    assert "pod-evicted" not in seen
    # the not-ready taint's toleration (300 s) runs out: taint eviction deletes the pods; they are replaced
    seen = watcher.run(330)
    assert "pod-evicted" in seen
    assert "etcd-unavailable" not in seen and "orphan-pod-collected" not in seen


def test_a_stale_update_meets_a_conflict(web):
    cluster, watcher = web
    deployment = cluster.get("deployments", "default", "storefront")
    stale = attrs.evolve(deployment, metadata=attrs.evolve(deployment.metadata, resource_version="2"))
    assert call(cluster, "update", "deployments", "default", "storefront", body=stale).code == 409
    assert watcher.look() == {"update-conflict"}


def test_an_api_server_cut_off_from_etcd_answers_500(web):
    cluster, watcher = web
    cluster.loop.step(Partition(("etcd",)))  # both replicas' requests to it now time out after 7 s
    cluster.apply([load(_pod("late", "node-1"))])
    assert "etcd-unavailable" in watcher.run(20)


def test_deleting_a_deployment_lets_the_garbage_collector_collect_its_replicaset(web):
    cluster, watcher = web
    cluster.submit(Delete("deployments", "default", "storefront"))
    assert "dependent-collected" in watcher.run(30)


def test_a_removed_machines_pods_are_collected_by_podgc(web):
    cluster, watcher = web
    cluster.remove_node("node-1")
    assert "orphan-pod-collected" in watcher.run(90)


def test_a_pod_too_big_for_any_node_is_unschedulable_and_one_pinned_there_is_rejected(web):
    cluster, watcher = web
    big = _pod("big", "", cpu="100")
    del big["spec"]["nodeName"]
    cluster.apply([load(big)])
    assert watcher.run(10) == {"pod-unschedulable"}
    cluster.apply([load(_pod("pinned", "node-1", cpu="100"))])  # around the scheduler: the kubelet refuses it
    assert "pod-rejected-by-kubelet" in watcher.run(10)


def test_a_new_template_rolls_out_beside_the_old_replicaset(web):
    cluster, watcher = web
    objects = manifest("web-service.yaml")
    deployment = next(o for o in objects if type(o).__name__ == "Deployment")
    spec = deployment.spec
    container = attrs.evolve(spec.template.spec.containers[0], image="nginx:1.28-alpine")
    template = attrs.evolve(spec.template, spec=attrs.evolve(spec.template.spec, containers=(container,)))
    cluster.apply([attrs.evolve(deployment, spec=attrs.evolve(spec, template=template))])
    assert "rolling-update" in watcher.run(30)


def test_an_informer_whose_connection_is_given_up_on_relists(web):
    cluster, watcher = web
    # a restart first: kube-controller-manager's shared informers start a new life, once the new process has
    # taken its Lease over (the crashed holder's lease runs out first: a leader handover to itself, restarted)
    cluster.crash("kube-controller-manager")
    cluster.restart("kube-controller-manager")
    assert watcher.run(30) == {"leader-handover"}  # a first list in a new life is no relist
    cluster.partition(SHARED_INFORMERS)
    # the HTTP/2 health check gives up after 30 + 15 s; the watch ends with an error; after the heal, a relist
    watcher.run(60)
    cluster.heal(SHARED_INFORMERS)
    assert "informer-relisted" in watcher.run(60)


def test_the_checker_counts_examples_reaching_each_and_the_report_flags_those_none_reached(tmp_path, capsys):
    folder = tmp_path / "r"
    # every fix on: without them seed 1 ends on an upstream bug the model reproduces (restart-no-time-travel)
    assert main(["check", "--seed", "1", "--examples", "30", "--fix", "all", "--report", str(folder)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("situations reached: ")]
    report = json.loads((folder / "report.json").read_text())
    counted = {entry["name"]: entry for entry in report["sometimes"]}
    # a lone kube-controller-manager and kube-scheduler have no standby: leader election's are not counted
    assert tuple(sorted(counted)) == tuple(n for n in EXPECTED if n not in ELECTION_ONLY)
    run = report["figures"]["examples_run"]  # Hypothesis may run a few more than asked
    assert all(0 <= e["examples"] <= run for e in counted.values())
    reached = [e for e in counted.values() if e["examples"]]
    assert len(reached) >= 5 and all(1 <= e["first_example"] <= run for e in reached)
    missed = sorted(e["name"] for e in counted.values() if not e["examples"])
    assert said == [f"situations reached: {len(reached)}/{len(counted)} sometimes properties"
                    + (f" (never: {', '.join(missed)})" if missed else "")]
    md = (folder / "report.md").read_text()
    assert "## Situations reached" in md
    for e in counted.values():
        status = "**NEVER REACHED**" if e["examples"] == 0 else "ok"
        assert f"| {status} | `{e['name']}` |" in md


def test_a_machine_without_the_registered_invariants_counts_no_sometimes_property():
    from kmodel.checker.run import CheckOptions, run_campaign

    from tests.checker.conftest import SmallMachine

    result = run_campaign(CheckOptions(examples=3, steps=5, seed=2, nodes=2), machine=SmallMachine)
    assert result.sometimes == () and result.stats.reached == {}


def test_looking_costs_nothing_once_everything_was_reached_and_the_warmup_never_counts():
    from kmodel.checker.session import Session

    session = Session(ClusterConfig(nodes=2), [])
    session.cluster.apply(manifest("web-service.yaml"))
    session.cluster.run(30 * S)
    deployment = session.cluster.get("deployments", "default", "storefront")
    stale = attrs.evolve(deployment, metadata=attrs.evolve(deployment.metadata, resource_version="2"))
    assert call(session.cluster, "update", "deployments", "default", "storefront", body=stale).code == 409
    session.look_for([SOMETIMES["update-conflict"]])  # the conflict came before: it does not count
    session.check_safety(0)
    assert session.reached == {} and len(session.unreached) == 1
    assert call(session.cluster, "update", "deployments", "default", "storefront", body=stale).code == 409
    session.check_safety(1)
    assert session.reached == {"update-conflict": 1} and session.unreached == []
    assert session.stats.reached == {"update-conflict": 1}
