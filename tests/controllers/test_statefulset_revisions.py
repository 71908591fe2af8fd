"""The StatefulSet controller as Kubernetes 1.31: its history as ControllerRevisions (pkg/controller/history and
stateful_set_control.go's getStatefulSetRevisions / truncateHistory / newVersionedStatefulSetPod), a terminal pod
deleted once and replaced by a later sync (kubernetes/kubernetes#123809), the minReadySeconds re-check one second
after it is due (stateful_set.go updatePod) and a rolling update's delete answered 404 ignored."""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.apiserver.authentication import service_account_name
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch
from kmodel.controllers import statefulset as statefulset_controller
from kmodel.controllers.history import HASH_LABEL, fnv32, go_json, hash_revision, revision_name
from kmodel.controllers.statefulset_logic import (
    REVISION_LABEL, Revisions, Step, history_to_delete, new_revision, plan, revision_patch, update_revision,
)
from kmodel.objects import load, with_defaults

from .cluster_helpers import admin
from .test_statefulset import S, names, statefulset

SA = service_account_name("statefulset-controller")


def image_patch(image: str) -> dict:
    return {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}


def revisions(c: Cluster) -> list[tuple[str, int]]:
    return sorted(((r.metadata.name, r.revision) for r in c.objects("controllerrevisions", "default")),
                  key=lambda nr: nr[1])


def pods(c: Cluster) -> dict[str, tuple[str, str]]:
    """name -> (image, revision label) of the pods not being deleted."""
    return {p.metadata.name: (p.spec.containers[0].image, p.metadata.labels[REVISION_LABEL])
            for p in c.objects("pods", "default") if p.metadata.deletion_timestamp is None}


def running(replicas: int = 3, **spec: Any) -> Cluster:
    c = Cluster(ClusterConfig(nodes=2))
    manifest = statefulset(replicas)
    manifest["spec"].update(spec)
    c.submit(Apply(manifest))
    c.run(60 * S)
    assert len(names(c)) == replicas
    return c


# -- the history's pure parts ----------------------------------------------------------------------------------

def test_the_revision_hash_is_fnv1_of_go_json_then_of_the_collision_count():
    # hash/fnv New32 test vectors: FNV-1 (multiply, then xor), not FNV-1a
    assert fnv32(b"") == 0x811C9DC5 and fnv32(b"a") == 0x050C5D7E
    assert go_json({"b": [1, "<&>"], "a": {}}) == b'{"a":{},"b":[1,"\\u003c\\u0026\\u003e"]}'
    data = {"spec": {"template": {"$patch": "replace"}}}
    assert hash_revision(data, None) != hash_revision(data, 0) != hash_revision(data, 1)
    assert revision_name("x" * 300, "abc") == "x" * 223 + "-abc"


def test_a_revision_holds_the_template_as_a_replace_patch_named_after_its_hash():
    sts = with_defaults(load(statefulset(1)))
    r = new_revision(sts, 1, 0)
    assert r.data["spec"]["template"]["$patch"] == "replace"
    assert r.data["spec"]["template"]["spec"]["containers"][0]["image"] == "app:1"
    assert r.metadata.name == update_revision(sts) == f"web-{r.metadata.labels[HASH_LABEL]}"
    assert r.metadata.labels["app"] == "web" and r.metadata.owner_references[0].kind == "StatefulSet"
    assert revision_patch(sts) == r.data


def test_truncate_history_keeps_the_live_revisions_and_the_newest_limit_of_the_others():
    base = with_defaults(load(statefulset(1)))
    sts = attrs.evolve(base, spec=attrs.evolve(base.spec, revision_history_limit=1))
    history = [attrs.evolve(new_revision(sts, n, 0), metadata=attrs.evolve(new_revision(sts, n, 0).metadata,
                                                                             name=f"web-{n}")) for n in range(1, 6)]
    pod = plan(sts, [], 0).steps[0].creates[0]
    pod = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels={**pod.metadata.labels, REVISION_LABEL: "web-2"}))
    doomed = history_to_delete(sts, [pod], history, history[4], history[4])
    assert [r.metadata.name for r in doomed] == ["web-1", "web-3"]  # web-2 a pod's, web-4 the one kept, web-5 live
    never = attrs.evolve(sts, spec=attrs.evolve(sts.spec, revision_history_limit=-1))
    assert history_to_delete(never, [], history, None, None) == []


def test_a_pod_below_the_partition_is_planned_from_the_current_revision():
    old = with_defaults(load(statefulset(3)))
    current = new_revision(old, 1, 0)
    new = with_defaults(load({**statefulset(3), "spec": {**statefulset(3)["spec"], "updateStrategy": {
        "type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}}))
    new = attrs.evolve(new, spec=attrs.evolve(new.spec, template=attrs.evolve(
        new.spec.template, spec=attrs.evolve(new.spec.template.spec, containers=(attrs.evolve(
            new.spec.template.spec.containers[0], image="app:2"),)))))
    update = new_revision(new, 2, 0)
    p = plan(attrs.evolve(new, spec=attrs.evolve(new.spec, pod_management_policy="Parallel")), [], 0,
             Revisions(current, update, 0))
    made = {pod.metadata.name: (pod.spec.containers[0].image, pod.metadata.labels[REVISION_LABEL])
            for pod in p.steps[0].creates}
    assert made == {"web-0": ("app:1", current.metadata.name), "web-1": ("app:1", current.metadata.name),
                    "web-2": ("app:2", update.metadata.name)}


def test_only_the_rolling_updates_delete_takes_a_404_for_done():
    sts = with_defaults(load(statefulset(1)))
    pod = plan(sts, [], 0).steps[0].creates[0]
    old = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels={**pod.metadata.labels, REVISION_LABEL: "web-old"}))
    from kmodel.objects import PodCondition, PodStatus
    old = attrs.evolve(old, status=PodStatus(phase="Running", conditions=(PodCondition(type="Ready", status="True"),)))
    [step] = plan(sts, [old], 0).steps
    assert step.deletes == (old,) and step.gone_is_done
    one = attrs.evolve(sts, spec=attrs.evolve(sts.spec, replicas=0))
    [step] = plan(one, [old], 0).steps  # a scale-down's delete: a 404 fails the sync, as upstream's
    assert not step.gone_is_done


# -- the controller ------------------------------------------------------------------------------------------

def test_the_first_sync_creates_one_revision_that_status_and_pods_name():
    c = running(2)
    sts = c.get("statefulsets", "default", "web")
    [(name, number)] = revisions(c)
    assert number == 1 and name == sts.status.current_revision == sts.status.update_revision == update_revision(sts)
    [r] = c.objects("controllerrevisions", "default")
    ref = r.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("StatefulSet", "web", sts.metadata.uid, True)
    assert sts.status.collision_count == 0
    assert {rev for _, rev in pods(c).values()} == {name}


def test_a_template_change_adds_a_revision_and_a_rollback_renumbers_the_old_one():
    c = running(2)
    first = revisions(c)[0][0]
    c.submit(Patch("statefulsets", "default", "web", image_patch("app:2")))
    c.run(c.now + 120 * S)
    sts = c.get("statefulsets", "default", "web")
    second = sts.status.update_revision
    assert revisions(c) == [(first, 1), (second, 2)] and sts.status.current_revision == second
    assert set(pods(c).values()) == {("app:2", second)}
    c.submit(Patch("statefulsets", "default", "web", image_patch("app:1")))  # what rollout undo sends
    c.run(c.now + 120 * S)
    sts = c.get("statefulsets", "default", "web")
    assert revisions(c) == [(second, 2), (first, 3)]  # no new revision: the old one comes last
    assert sts.status.update_revision == sts.status.current_revision == first
    assert set(pods(c).values()) == {("app:1", first)}


def test_a_deleted_pod_below_the_partition_comes_back_at_the_current_revision():
    c = running(3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    first = revisions(c)[0][0]
    c.submit(Patch("statefulsets", "default", "web", image_patch("app:2")))
    c.run(c.now + 120 * S)
    second = c.get("statefulsets", "default", "web").status.update_revision
    assert pods(c) == {"web-0": ("app:1", first), "web-1": ("app:1", first), "web-2": ("app:2", second)}
    old_uid = c.get("pods", "default", "web-0").metadata.uid
    c.submit(Delete("pods", "default", "web-0"))
    c.run(c.now + 120 * S)
    assert c.get("pods", "default", "web-0").metadata.uid != old_uid
    assert pods(c)["web-0"] == ("app:1", first)  # upstream: the current revision, not the set's new template
    sts = c.get("statefulsets", "default", "web")
    assert (sts.status.current_revision, sts.status.current_replicas, sts.status.updated_replicas) == (first, 2, 1)


def test_the_history_is_cut_to_revision_history_limit():
    c = running(1, revisionHistoryLimit=1)
    for image in ("app:2", "app:3", "app:4"):
        c.submit(Patch("statefulsets", "default", "web", image_patch(image)))
        c.run(c.now + 60 * S)
    sts = c.get("statefulsets", "default", "web")
    kept = revisions(c)
    assert len(kept) == 2 and kept[-1] == (sts.status.update_revision, 4)  # the live one and one more
    deletes = [r for r in c.audit.records if r.user == SA and r.verb == "delete" and r.resource == "controllerrevisions"]
    # two deleted; a sync whose cache still held a deleted one deletes it again and fails on the 404, as
    # upstream's truncateHistory does (the retry finds the cache caught up)
    assert sorted({r.name for r in deletes if r.code == 200}) == sorted({r.name for r in deletes})
    assert len({r.name for r in deletes}) == 2 and {r.code for r in deletes} <= {200, 404}


def test_an_orphaned_revision_the_selector_matches_is_adopted():
    c = running(1)
    [r] = c.objects("controllerrevisions", "default")
    c.submit(Delete("statefulsets", "default", "web", propagation_policy="Orphan"))
    c.run(c.now + 30 * S)
    orphan = c.get("controllerrevisions", "default", r.metadata.name)
    assert orphan is not None and orphan.metadata.owner_references == ()
    c.submit(Apply(statefulset(1)))
    c.run(c.now + 30 * S)
    sts = c.get("statefulsets", "default", "web")
    adopted = c.get("controllerrevisions", "default", r.metadata.name)
    assert adopted.metadata.owner_references[0].uid == sts.metadata.uid
    assert revisions(c) == [(r.metadata.name, 1)] and sts.status.update_revision == r.metadata.name


def test_a_name_taken_by_other_data_is_a_collision_and_the_next_name_is_tried():
    c = Cluster(ClusterConfig(nodes=2))
    sts = with_defaults(load(statefulset(1)))
    squatter = attrs.evolve(new_revision(sts, 1, 0), data={"spec": {"template": {"$patch": "replace"}}})
    squatter = attrs.evolve(squatter, metadata=attrs.evolve(squatter.metadata, owner_references=(), labels={}))
    assert admin(c, "create", "controllerrevisions", body=squatter).code == 201
    c.submit(Apply(statefulset(1)))
    c.run(60 * S)
    sts = c.get("statefulsets", "default", "web")
    # the name of collision count 0 is taken by other data: the revision is created under count 1's
    assert sts.status.update_revision == revision_name("web", hash_revision(revision_patch(sts), 1))
    assert c.get("controllerrevisions", "default", sts.status.update_revision).revision == 1
    assert c.get("controllerrevisions", "default", squatter.metadata.name).data == squatter.data
    assert {rev for _, rev in pods(c).values()} == {sts.status.update_revision}


def test_a_failed_pod_is_deleted_once_and_replaced_only_after_it_is_gone():
    """kubernetes/kubernetes#123809: a Failed pod held by a finalizer is deleted once (no second delete while it
    terminates), no Recreating* event is recorded, and its replacement is created once the object is gone."""
    c = running(1)
    pod = c.get("pods", "default", "web-0")
    assert admin(c, "patch", "pods", name="web-0", body={"metadata": {"finalizers": ["example.com/hold"]}}).code == 200
    pod = c.get("pods", "default", "web-0")
    failed = attrs.evolve(pod, status=attrs.evolve(pod.status, phase="Failed"))
    assert admin(c, "update", "pods", name="web-0", subresource="status", body=failed).code == 200
    c.run(c.now + 60 * S)
    held = c.get("pods", "default", "web-0")
    assert held.metadata.uid == pod.metadata.uid and held.metadata.deletion_timestamp is not None
    deletes = [r for r in c.audit.records if r.user == SA and r.verb == "delete" and r.name == "web-0"]
    assert len(deletes) == 1
    assert admin(c, "patch", "pods", name="web-0", body={"metadata": {"finalizers": None}}).code == 200
    c.run(c.now + 60 * S)
    new = c.get("pods", "default", "web-0")
    assert new.metadata.uid != pod.metadata.uid and new.status.phase == "Running"
    reasons = {e.reason for e in c.objects("events", "default") if e.involved_object.kind == "StatefulSet"}
    assert not reasons & {"RecreatingFailedPod", "RecreatingTerminatedPod"}
    creates = [r for r in c.audit.records if r.user == SA and r.verb == "create" and r.resource == "pods"]
    assert all(r.code == 201 for r in creates)  # never an AlreadyExists: no create while the old one existed


def test_a_pod_turning_ready_brings_the_set_back_a_second_after_min_ready_seconds(monkeypatch):
    delays: list[int] = []
    real = statefulset_controller.StatefulSetController._update_pod

    def spy(self, now, old, cur, out):
        add_after = self.queue.add_after

        def recorded(t, o, key, delay):
            delays.append(delay)
            return add_after(t, o, key, delay)
        self.queue.add_after = recorded
        try:
            real(self, now, old, cur, out)
        finally:
            self.queue.add_after = add_after
    monkeypatch.setattr(statefulset_controller.StatefulSetController, "_update_pod", spy)
    running(1, minReadySeconds=5)
    assert delays == [6 * S]  # (minReadySeconds + 1 s): the Go controller's guard against AddAfter skew


def test_a_rolling_updates_delete_answered_404_does_not_fail_the_sync(monkeypatch):
    c = running(1)
    real_plan = statefulset_controller.plan
    failed_syncs: list[bool] = []

    def ghost_delete(gone_is_done: bool):
        def planned(sts, pods, now, revisions=None, **switches):
            decided = real_plan(sts, pods, now, revisions, **switches)
            ghost = attrs.evolve(pods[0], metadata=attrs.evolve(pods[0].metadata, name="web-7"))
            return attrs.evolve(decided, steps=(Step(deletes=(ghost,), gone_is_done=gone_is_done),))
        return planned

    controller = next(comp for comp in c.components if isinstance(comp, statefulset_controller.StatefulSetController))
    finished = controller._sync_finished

    def watch(now, out, sync):
        failed_syncs.append(sync.failed)
        return finished(now, out, sync)
    monkeypatch.setattr(controller, "_sync_finished", watch)
    for gone_is_done in (True, False):
        monkeypatch.setattr(statefulset_controller, "plan", ghost_delete(gone_is_done))
        failed_syncs.clear()
        c.submit(Patch("statefulsets", "default", "web", {"metadata": {"labels": {"try": str(gone_is_done).lower()}}}))
        c.run(c.now + 2 * S)
        assert failed_syncs and failed_syncs[0] is (not gone_is_done)
    events = [e for e in c.objects("events", "default") if e.reason == "FailedDelete"]
    assert events and "delete Pod web-7 in StatefulSet web failed error" in events[0].message
