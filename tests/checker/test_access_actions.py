"""The access family's actions and rules: namespaces, deletes with options, finalizers, RBAC, other users."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.access_actions import (
    HOLD, AddFinalizer, ApplyBinding, ApplyInNamespace, ApplyRole, CreateNamespace, DeleteWith, RemoveFinalizer,
)
from kmodel.checker.access_rules import ADMIN_DRAWS, DELETABLE, user_of
from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment
from kmodel.cluster import Cluster, ClusterConfig

from .conftest import SmallMachine

ACCESS_EXAMPLES = [
    CreateNamespace(), CreateNamespace("team", "alice"), CreateNamespace("team", pod_security="baseline"),
    ApplyInNamespace("team", "deployments"), ApplyInNamespace("default", "pods", "builder"),
    ApplyInNamespace("team", "pods", host_port=True), DeleteWith("namespaces", "", "team"),
    DeleteWith("deployments", "default", "web", 0, "Foreground", "bob"), DeleteWith("pods", "team", "probe", 60),
    AddFinalizer("nodes", "", "node-1"), RemoveFinalizer("services", "team", "shop", "alice"),
    RemoveFinalizer("deployments", "default", "web", finalizer="foregroundDeletion"),
    ApplyRole("team", "edit"), ApplyRole(""), ApplyBinding("team", "alice", True), ApplyBinding("", "builder"),
]


@pytest.mark.parametrize("action", ACCESS_EXAMPLES, ids=lambda a: a.name)
def test_json_round_trip(action):
    again = action_from_json(json.loads(json.dumps(action.to_json())))
    assert again == action and again.stable_json() == action.stable_json()


def test_names_read_as_kubectl_commands():
    assert DeleteWith("deployments", "team", "shop", 0, "Orphan", "bob").name == \
        "kubectl delete deployment shop -n team --cascade=orphan --force --grace-period=0 --as bob"
    assert ApplyBinding("team", "builder", True).name == \
        "kubectl apply rolebinding builder-app-access -n team (builder -> clusterrole app-access)"


@pytest.mark.parametrize("data, message", [
    ({"name": "delete-with", "resource": "pods", "namespace": "", "object": "x", "user": "eve"},
     "user must be one of 'admin', 'alice', 'bob', 'builder', not 'eve'"),
    ({"name": "delete-with", "resource": "pods", "namespace": "", "object": "x", "propagation_policy": "Up"},
     "propagation_policy must be one of"),
    ({"name": "delete-with", "resource": "pods", "namespace": "", "object": "x", "grace_period_seconds": -1},
     "grace_period_seconds must be at least 0"),
    ({"name": "apply-role", "namespace": "", "level": "root"}, "level must be one of 'edit', 'view'"),
    ({"name": "apply-in-namespace", "namespace": "team", "resource": "nodes"}, "resource must be one of"),
])
def test_bad_access_actions_are_refused_in_one_line(data, message):
    with pytest.raises(ValueError, match=message) as info:
        action_from_json(data)
    assert "\n" not in str(info.value)


def test_user_draws_shrink_to_the_admin_and_reach_every_other_user():
    assert user_of(0) == "admin" and user_of(ADMIN_DRAWS - 1) == "admin"
    assert {user_of(i) for i in range(ADMIN_DRAWS, 64)} == {"alice", "bob", "builder"}


# -- what the actions do, on a small cluster --------------------------------------------------------------

def small() -> Cluster:
    c = Cluster(ClusterConfig(nodes=1))
    c.run(10_000)
    return c


def last(c: Cluster):
    return c.kubectl.results[-1].response


def test_a_user_without_rights_is_refused_with_upstreams_message_audited_with_its_name():
    c = small()
    CreateNamespace().apply(c)
    c.run_for(1_000)
    revision = c.store.revision
    ApplyInNamespace("team", "pods", "alice").apply(c)
    c.run_for(1_000)
    assert last(c).code == 403
    assert last(c).body.message == ('pods "probe" is forbidden: User "alice" cannot get resource "pods" in API group "" '
                                    'in the namespace "team"')  # kubectl apply reads first
    # nothing was written but the leader elections' renewals of their Leases
    elections = {f"/registry/leases/kube-system/{name}" for name in ("kube-controller-manager", "kube-scheduler")}
    before, after = ({kv.key: kv.mod_revision for kv in c.store.peek("/", "\0", revision=rev)
                      if kv.key not in elections} for rev in (revision, c.store.revision))
    assert c.get("pods", "team", "probe") is None and after == before and c.store.revision > revision
    refused = [r for r in c.audit.records if r.user == "alice"]
    assert refused and all(r.code == 403 for r in refused)


def test_a_namespace_enforcing_baseline_refuses_a_pod_with_a_host_port_and_admits_one_without():
    c = small()
    CreateNamespace(pod_security="baseline").apply(c)
    c.run_for(1_000)
    assert c.get("namespaces", "", "team").metadata.labels["pod-security.kubernetes.io/enforce"] == "baseline"
    ApplyInNamespace("team", "pods", host_port=True).apply(c)
    c.run_for(1_000)
    assert last(c).code == 403 and 'violates PodSecurity "baseline:latest": hostPort' in last(c).body.message
    assert c.get("pods", "team", "probe") is None
    ApplyInNamespace("team", "pods").apply(c)
    c.run_for(1_000)
    assert last(c).code == 201 and c.get("pods", "team", "probe") is not None


def test_host_port_is_for_pods_only():
    with pytest.raises(ValueError, match="host_port applies to pods only"):
        ApplyInNamespace("team", "services", host_port=True)


def test_a_binding_grants_a_role_and_deleting_it_takes_the_right_away():
    c = small()
    for action in (CreateNamespace(), ApplyRole("team", "edit"), ApplyBinding("team", "alice")):
        action.apply(c)
    c.run_for(1_000)
    ApplyInNamespace("team", "deployments", "alice").apply(c)
    c.run_for(20_000)
    assert last(c).code == 201 and c.get("deployments", "team", "shop") is not None
    assert c.objects("pods", "team")  # the controllers made its pod
    DeleteWith("rolebindings", "team", "alice-app-access").apply(c)
    c.run_for(1_000)
    DeleteWith("deployments", "team", "shop", user="alice").apply(c)
    c.run_for(1_000)
    assert last(c).code == 403 and c.get("deployments", "team", "shop") is not None


def test_a_view_role_lets_the_service_account_read_but_not_write_cluster_wide():
    c = small()
    ApplyRole("", "view").apply(c)
    ApplyBinding("", "builder").apply(c)
    c.run_for(1_000)
    ApplyInNamespace("default", "services", "builder").apply(c)  # reads (allowed), then creates (refused)
    c.run_for(1_000)
    assert last(c).code == 403
    assert 'User "system:serviceaccount:default:builder" cannot create resource "services"' in last(c).body.message


def test_a_finalizer_keeps_a_deleted_object_until_it_is_removed():
    c = small()
    ApplyInNamespace("default", "deployments").apply(c)
    c.run_for(5_000)
    AddFinalizer("deployments", "default", "shop").apply(c)
    c.run_for(1_000)
    DeleteWith("deployments", "default", "shop").apply(c)
    c.run_for(5_000)
    held = c.get("deployments", "default", "shop")
    assert held is not None and held.metadata.deletion_timestamp is not None and held.metadata.finalizers == (HOLD,)
    RemoveFinalizer("deployments", "default", "shop").apply(c)
    c.run_for(5_000)
    assert c.get("deployments", "default", "shop") is None


def test_a_finalizer_on_a_node_keeps_it_deleting():
    c = small()
    AddFinalizer("nodes", "", "node-1").apply(c)
    c.run_for(1_000)
    DeleteWith("nodes", "", "node-1").apply(c)
    c.run_for(1_000)
    node = c.get("nodes", "", "node-1")
    assert node is not None and node.metadata.deletion_timestamp is not None


def test_a_graceful_delete_waits_for_the_kubelet_and_a_forced_one_does_not():
    c = small()
    ApplyInNamespace("default", "pods").apply(c)
    c.run_for(10_000)
    DeleteWith("pods", "default", "probe", 60).apply(c)
    c.run_for(0)
    pod = c.get("pods", "default", "probe")
    assert pod is None or pod.metadata.deletion_grace_period_seconds == 60  # the kubelet stops it at once
    ApplyInNamespace("default", "pods").apply(c)
    c.run_for(10_000)
    c.crash("node-1")  # no kubelet to confirm: a graceful delete waits, a forced one does not
    DeleteWith("pods", "default", "probe", 60).apply(c)
    c.run_for(5_000)
    assert c.get("pods", "default", "probe").metadata.deletion_timestamp is not None
    DeleteWith("pods", "default", "probe", 0).apply(c)
    c.run_for(1_000)
    assert c.get("pods", "default", "probe") is None


def test_a_namespace_deleted_with_content_is_emptied_and_goes():
    c = small()
    for action in (CreateNamespace(), ApplyInNamespace("team", "deployments"), ApplyInNamespace("team", "services")):
        action.apply(c)
    c.run_for(20_000)
    assert c.objects("pods", "team")
    DeleteWith("namespaces", "", "team").apply(c)
    c.run_for(60_000)
    assert c.get("namespaces", "", "team") is None and not c.objects("pods", "team")


# -- the rules fire ---------------------------------------------------------------------------------------

def test_every_access_rule_does_what_it_draws():
    machine = SmallMachine()
    cluster = machine.cluster
    machine.create_namespace(0, 0)
    machine.apply_in_namespace(0, 0, 0)
    machine.advance_time(10)
    machine.apply_role(1, 1, 0)
    machine.apply_binding(1, 0, False, 0)
    machine.add_finalizer(0, 0)
    machine.advance_time(1)
    machine.delete_with_options(0, 0, 2, 2, 0)
    machine.remove_finalizer(0, 0)
    machine.delete_rbac(0, ADMIN_DRAWS)  # as alice: refused
    machine.delete_namespace(0, 3)  # --cascade=orphan: the garbage collector removes the orphan finalizer
    machine.advance_time(30)
    kinds = [a.kind for a in machine.session.actions]
    for kind in ("create-namespace", "apply-in-namespace", "apply-role", "apply-binding", "add-finalizer",
                 "delete-with", "remove-finalizer"):
        assert kind in kinds
    for rule in ("create_namespace", "apply_in_namespace", "apply_role", "apply_binding", "add_finalizer",
                 "delete_with_options", "remove_finalizer", "delete_rbac", "delete_namespace"):
        assert machine.stats.rules[rule] >= 1, rule
    assert cluster.get("namespaces", "", "team") is None
    assert any(r.user == "alice" and r.code == 403 for r in cluster.audit.records)


def test_delete_with_options_draws_the_kind_first_so_owners_are_not_outnumbered_by_their_pods():
    machine = SmallMachine()
    machine.session.execute(ApplyDeployment("web", 3))
    machine.advance_time(30)
    assert [r for r, _, _ in machine._deletable()].count("pods") == 3
    for i in range(3):  # whatever the index, the kind drawn names a ReplicaSet: web's only one
        machine.delete_with_options(DELETABLE.index("replicasets"), i, 0, 3, 0)
        assert machine.session.actions[-1].resource == "replicasets"
    machine.delete_with_options(DELETABLE.index("statefulsets"), 0, 0, 0, 0)  # no StatefulSet: any object
    assert machine.session.actions[-1].resource == "deployments"


def test_remove_finalizer_takes_off_a_finalizer_a_component_put_there():
    # a Deployment deleted in the foreground waits for its ReplicaSet, which a held pod keeps; the user takes
    # foregroundDeletion off by hand: the Deployment goes at once; its ReplicaSet, deleted in the foreground too,
    # still waits for the held pod
    machine = SmallMachine()
    cluster = machine.cluster
    machine.session.execute(ApplyDeployment("web", 1))
    machine.advance_time(30)
    pod = next(p for p in cluster.objects("pods", "default"))
    machine.session.execute(AddFinalizer("pods", "default", pod.metadata.name))
    machine.advance_time(2)
    machine.delete_with_options(DELETABLE.index("deployments"), 0, 0, 2, 0)  # --cascade=foreground
    machine.advance_time(10)
    assert cluster.get("deployments", "default", "web").metadata.finalizers == ("foregroundDeletion",)
    candidates = [(r, o.metadata.name, f) for r, _, o, f in machine._finalized()]
    assert ("deployments", "web", "foregroundDeletion") in candidates and ("pods", pod.metadata.name, HOLD) in \
        candidates
    machine.remove_finalizer(candidates.index(("deployments", "web", "foregroundDeletion")), 0)
    assert machine.session.actions[-1] == RemoveFinalizer("deployments", "default", "web",
                                                          finalizer="foregroundDeletion")
    machine.advance_time(10)
    assert cluster.get("deployments", "default", "web") is None
    [rs] = cluster.objects("replicasets", "default")
    assert rs.metadata.deletion_timestamp is not None and rs.metadata.finalizers == ("foregroundDeletion",)


def test_the_namespace_rules_draw_a_pod_security_level_and_a_host_port_pod_it_refuses():
    machine = SmallMachine()
    machine.create_namespace(0, 1)
    machine.apply_in_namespace(0, 3, 0)
    machine.advance_time(2)
    created, applied = machine.session.actions[-3:-1]
    assert created == CreateNamespace("team", pod_security="baseline")
    assert applied == ApplyInNamespace("team", "pods", host_port=True)
    assert machine.cluster.get("pods", "team", "probe") is None  # refused by Pod Security admission
    assert any(r.code == 403 and r.resource == "pods" for r in machine.cluster.audit.records)


def _statefulset_machine() -> tuple[SmallMachine, int]:
    """A machine whose StatefulSet db runs two pods; the kind delete_with_options draws to name db."""
    machine = SmallMachine()
    machine.apply_statefulset(2, True, 0)
    machine.advance_time(30)
    return machine, DELETABLE.index("statefulsets")


def _db_pods(cluster: Cluster) -> dict:
    return {p.metadata.name: p for p in cluster.objects("pods") if p.metadata.name.startswith("db-")}


def test_a_statefulset_deleted_with_orphan_leaves_its_pods_for_the_next_one_to_adopt():
    machine, i = _statefulset_machine()
    cluster = machine.cluster
    before = _db_pods(cluster)
    assert sorted(before) == ["db-0", "db-1"]
    machine.delete_with_options(i, 0, 0, 3, 0)  # --cascade=orphan
    machine.advance_time(30)
    assert cluster.get("statefulsets", "default", "db") is None
    orphans = _db_pods(cluster)
    assert {n: p.metadata.uid for n, p in orphans.items()} == {n: p.metadata.uid for n, p in before.items()}
    assert all(not p.metadata.owner_references for p in orphans.values())
    machine.apply_statefulset(2, True, 0)
    machine.advance_time(30)
    db = cluster.get("statefulsets", "default", "db")
    adopted = _db_pods(cluster)
    # the very same pods (not made again), each now controlled by the new set
    assert {n: p.metadata.uid for n, p in adopted.items()} == {n: p.metadata.uid for n, p in before.items()}
    assert all([r.uid for r in p.metadata.owner_references] == [db.metadata.uid] for p in adopted.values())


@pytest.mark.parametrize("policy", [1, 2])  # Background, Foreground
def test_a_statefulset_deleted_with_a_cascade_takes_its_pods_with_it(policy):
    machine, i = _statefulset_machine()
    machine.delete_with_options(i, 0, 0, policy, 0)
    machine.advance_time(60)
    assert machine.cluster.get("statefulsets", "default", "db") is None and not _db_pods(machine.cluster)
