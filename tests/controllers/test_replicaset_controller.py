"""The ReplicaSet controller as a component: creation, ranking on scale-down, adoption, expectations."""

from __future__ import annotations

import attrs

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Scale
from kmodel.controllers.expectations import EXPECTATIONS_TIMEOUT_MS, Expectations
from kmodel.controllers.replicaset import ReplicaSetController, pod_from_template
from kmodel.loop.events import BreakStream, DelayHead, FailRequest
from kmodel.objects import ObjectMeta, Pod, frozen_map

from .cluster_helpers import admin, live_pods, mark_ready, replicaset, template


def rs_cluster(**kw) -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=("replicaset",), **kw))


def test_creates_pods_from_the_template_with_a_controller_ref_and_reports_status():
    c = rs_cluster()
    c.apply([replicaset(3)])
    c.run(5_000)
    rs = c.get("replicasets", "default", "web")
    pods = live_pods(c)
    assert len(pods) == 3
    for p in pods:
        assert p.metadata.name.startswith("web-") and len(p.metadata.name) == len("web-") + 5
        assert p.metadata.labels == frozen_map({"app": "web"})
        (ref,) = p.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "ReplicaSet", "web", rs.metadata.uid, True, True)
    assert (rs.status.replicas, rs.status.fully_labeled_replicas, rs.status.ready_replicas,
            rs.status.observed_generation) == (3, 3, 0, 1)
    events = [e for e in c.objects("events", "default") if e.reason == "SuccessfulCreate"]
    assert events and all(e.message.startswith("Created pod: web-") for e in events)
    assert {e.message[len("Created pod: "):] for e in events} <= {p.metadata.name for p in pods}


def test_slow_start_batches_of_creates():
    c = rs_cluster()
    ctrl = next(x for x in c.components if isinstance(x, ReplicaSetController))
    outstanding = [0]
    batches: list[int] = []
    real = ctrl.client.request

    def spy(now, out, verb, resource, *, on_done=None, **fields):
        if verb == "create" and resource == "pods":
            if outstanding[0] == 0:
                batches.append(0)
            outstanding[0] += 1
            batches[-1] += 1

            def answered(t, response, o):
                outstanding[0] -= 1
                return on_done(t, response, o) if on_done else None
            return real(now, out, verb, resource, on_done=answered, **fields)
        return real(now, out, verb, resource, on_done=on_done, **fields)

    ctrl.client.request = spy
    c.apply([replicaset(6)])
    c.run(5_000)
    assert batches == [1, 2, 3]
    assert len(live_pods(c)) == 6
    assert ctrl.expectations.satisfied("default/web", c.now)


def test_scale_down_deletes_by_ranking_not_ready_first():
    c = rs_cluster()
    c.apply([replicaset(4)])
    c.run(5_000)
    pods = sorted(live_pods(c), key=lambda p: p.metadata.name)
    keep = [pods[1], pods[3]]
    for p in keep:
        mark_ready(c, p)
    c.run_for(1_000)
    assert c.get("replicasets", "default", "web").status.ready_replicas == 2
    c.submit(Scale("replicasets", "default", "web", 2))
    c.run_for(5_000)
    assert sorted(p.metadata.name for p in live_pods(c)) == sorted(p.metadata.name for p in keep)
    deleted = sorted(e.message for e in c.objects("events", "default") if e.reason == "SuccessfulDelete")
    assert deleted and all(m in (f"Deleted pod: {pods[0].metadata.name}", f"Deleted pod: {pods[2].metadata.name}")
                           for m in deleted)


def test_adopts_a_matching_orphan_and_creates_only_the_rest():
    c = rs_cluster()
    orphan = Pod(metadata=ObjectMeta(name="stray", namespace="default", labels=frozen_map({"app": "web"})),
                 spec=template().spec)
    assert admin(c, "create", "pods", body=orphan).code == 201
    c.apply([replicaset(2)])
    c.run(5_000)
    rs = c.get("replicasets", "default", "web")
    stray = c.get("pods", "default", "stray")
    assert [r.uid for r in stray.metadata.owner_references] == [rs.metadata.uid]
    assert len(live_pods(c)) == 2


class _NoExpectations(Expectations):
    def satisfied(self, key: str, now_ms: int) -> bool:
        return True


class _Forgetful(ReplicaSetController):
    def _init_memory(self) -> None:
        super()._init_memory()
        self.expectations = _NoExpectations()


def _stale_pod_cache_run(ctrl, replicas: int = 3, before_apply=None):
    """The RS informer watches a fresh replica, the pod informer a replica whose etcd feed is held back (a minute
    from the set's apply on); `before_apply(cluster)` runs just before the apply."""
    c = Cluster(ClusterConfig(nodes=1, apiservers=2, components=()), extra=[ctrl])
    c.run(1_000)
    c.loop.step(BreakStream(ctrl.rs_informer.watch_stream))  # the client fails over to apiserver-1
    c.run_for(2_000)
    assert ctrl.client.endpoint == "apiserver-1"
    if before_apply is not None:
        before_apply(c)
    c.apply([replicaset(replicas)])
    while not c.network.has_in_flight("etcd", "apiserver-0"):
        assert c.loop.run_fair(c.now + 1_000, max_events=1)
    c.loop.step(DelayHead("etcd", "apiserver-0", 60_000))
    c.run_for(20_000)
    return c, ctrl


def test_expectations_prevent_double_creation_from_a_stale_pod_cache():
    c, ctrl = _stale_pod_cache_run(ReplicaSetController(["apiserver-0", "apiserver-1"]))
    assert len(ctrl.pod_informer.list()) == 0  # the controller still sees no pods ...
    assert c.get("replicasets", "default", "web").status.observed_generation == 1  # ... and has synced again
    assert len(live_pods(c)) == 3
    assert ctrl.expectations.get("default/web").add == 3
    c.run_for(60_000)
    assert len(live_pods(c)) == 3
    assert c.get("replicasets", "default", "web").status.replicas == 3
    assert ctrl.expectations.satisfied("default/web", c.now)


def test_without_expectations_the_stale_cache_creates_twice():
    c, _ = _stale_pod_cache_run(_Forgetful(["apiserver-0", "apiserver-1"]))
    assert len(live_pods(c)) > 3


def test_pod_from_template():
    rs = attrs.evolve(replicaset(1), metadata=attrs.evolve(replicaset(1).metadata, uid="u1"))
    p = pod_from_template(rs)
    assert p.metadata.generate_name == "web-" and p.metadata.owner_references[0].uid == "u1"
    assert p.spec == rs.spec.template.spec


def _first_create_times_out(stored: bool, fix: bool):
    """A ReplicaSet of one replica whose controller's first create is answered 504, the pod `stored` or not, while
    the pod informer's replica lags a minute (`_stale_pod_cache_run`); with the
    replicaset-expect-timed-out-creations fix on or off."""
    ctrl = ReplicaSetController(["apiserver-0", "apiserver-1"], expect_timed_out_creations=fix)
    return _stale_pod_cache_run(ctrl, replicas=1, before_apply=lambda c: c.loop.step(
        FailRequest(ctrl.name, "apiserver-1", 504, applied=stored)))


def test_a_create_answered_504_that_was_stored_is_made_again_upstream_but_not_with_the_fix():
    c, ctrl = _first_create_times_out(stored=True, fix=False)
    assert len(ctrl.create_views) == 2  # un-expected at once, so the retry trusts a cache without the pod
    c, ctrl = _first_create_times_out(stored=True, fix=True)
    assert len(ctrl.create_views) == 1 and len(live_pods(c)) == 1  # its ADDED observed the creation
    c.run_for(EXPECTATIONS_TIMEOUT_MS)
    assert len(ctrl.create_views) == 1 and len(live_pods(c)) == 1


def test_with_the_fix_a_create_answered_504_that_was_not_stored_is_made_once_the_expectations_expire():
    c, ctrl = _first_create_times_out(stored=False, fix=True)
    assert len(ctrl.create_views) == 1 and live_pods(c) == []  # still expected: it may have been stored
    c.run_for(EXPECTATIONS_TIMEOUT_MS)
    assert len(ctrl.create_views) == 2 and len(live_pods(c)) == 1  # the sync that came back made it
    c, ctrl = _first_create_times_out(stored=False, fix=False)
    assert len(ctrl.create_views) == 2 and len(live_pods(c)) == 1  # upstream makes it again at once
