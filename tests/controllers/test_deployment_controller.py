"""The Deployment controller with the ReplicaSet controller and the GC: create, scale, roll out, delete."""

from __future__ import annotations

import attrs

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete, Scale
from kmodel.controllers.deployment_logic import POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION

from .cluster_helpers import deployment, is_ready, live_pods, mark_ready, run_checked

WORKLOADS = ("deployment", "replicaset", "garbagecollector")


def cluster() -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=WORKLOADS))


def ready_all(c: Cluster) -> None:
    for p in live_pods(c):
        if not is_ready(p):
            mark_ready(c, p)


def test_a_deployment_of_4_yields_one_replicaset_and_4_owned_pods():
    c = cluster()
    c.apply([deployment(4)])
    c.run(5_000)
    d = c.get("deployments", "default", "web")
    (rs,) = c.objects("replicasets", "default")
    h = rs.metadata.labels[POD_TEMPLATE_HASH_LABEL]
    assert rs.metadata.name == f"web-{h}"
    (ref,) = rs.metadata.owner_references
    assert (ref.kind, ref.uid, ref.controller) == ("Deployment", d.metadata.uid, True)
    assert rs.metadata.annotations[REVISION_ANNOTATION] == "1"
    assert rs.spec.selector.match_labels[POD_TEMPLATE_HASH_LABEL] == h
    pods = live_pods(c)
    assert len(pods) == 4
    assert all(p.metadata.owner_references[0].uid == rs.metadata.uid for p in pods)
    assert all(p.metadata.labels[POD_TEMPLATE_HASH_LABEL] == h for p in pods)
    s = d.status
    assert (s.observed_generation, s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas) == (
        1, 4, 4, 0, 0)
    avail = next(x for x in s.conditions if x.type == "Available")
    assert (avail.status, avail.reason) == ("False", "MinimumReplicasUnavailable")
    events = [e.message for e in c.objects("events", "default") if e.reason == "ScalingReplicaSet"]
    assert events == [f"Scaled up replica set web-{h} from 0 to 4"]
    # ready pods make it Available
    ready_all(c)
    c.run_for(2_000)
    d = c.get("deployments", "default", "web")
    assert d.status.available_replicas == 4
    avail = next(x for x in d.status.conditions if x.type == "Available")
    assert (avail.status, avail.reason) == ("True", "MinimumReplicasAvailable")
    prog = next(x for x in d.status.conditions if x.type == "Progressing")
    assert prog.reason == "NewReplicaSetAvailable"


def test_scale_up_then_down_deletes_not_ready_pods_first():
    c = cluster()
    c.apply([deployment(4)])
    c.run(5_000)
    c.submit(Scale("deployments", "default", "web", 6))
    c.run_for(5_000)
    assert len(live_pods(c)) == 6
    (rs,) = c.objects("replicasets", "default")
    assert rs.spec.replicas == 6
    keep = sorted(live_pods(c), key=lambda p: p.metadata.name)[2:4]
    for p in keep:
        mark_ready(c, p)
    c.submit(Scale("deployments", "default", "web", 2))
    c.run_for(5_000)
    assert sorted(p.metadata.name for p in live_pods(c)) == sorted(p.metadata.name for p in keep)
    d = c.get("deployments", "default", "web")
    assert (d.status.replicas, d.status.ready_replicas, d.status.observed_generation) == (2, 2, 3)


def test_rolling_update_respects_max_surge_and_max_unavailable_at_every_step():
    c = cluster()
    c.apply([deployment(4, surge=1, unavailable=1)])
    c.run(5_000)
    ready_all(c)
    c.run_for(2_000)
    (old_rs,) = c.objects("replicasets", "default")

    def check() -> None:
        rss = c.objects("replicasets", "default")
        assert sum(r.spec.replicas for r in rss) <= 4 + 1  # maxSurge
        assert sum(1 for p in live_pods(c) if is_ready(p)) >= 4 - 1  # maxUnavailable

    c.apply([deployment(4, image="nginx:2", surge=1, unavailable=1)])
    for _ in range(20):
        run_checked(c, c.now + 2_000, check)
        not_ready = [p for p in live_pods(c) if not is_ready(p)]
        if not not_ready:
            break
        mark_ready(c, not_ready[0])  # one pod at a time becomes ready, as slow kubelets would report
    run_checked(c, c.now + 5_000, check)
    rss = {r.metadata.name: r for r in c.objects("replicasets", "default")}
    assert len(rss) == 2
    new_rs = next(r for r in rss.values() if r.metadata.name != old_rs.metadata.name)
    assert (new_rs.spec.replicas, rss[old_rs.metadata.name].spec.replicas) == (4, 0)
    assert new_rs.metadata.annotations[REVISION_ANNOTATION] == "2"
    assert all(p.metadata.owner_references[0].uid == new_rs.metadata.uid for p in live_pods(c))
    assert all(p.spec.containers[0].image == "nginx:2" for p in live_pods(c))
    d = c.get("deployments", "default", "web")
    assert (d.status.updated_replicas, d.status.available_replicas, d.status.observed_generation) == (4, 4, 2)


def test_deleting_the_deployment_removes_its_replicaset_and_pods():
    c = cluster()
    c.apply([deployment(3)])
    c.run(5_000)
    assert len(c.objects("replicasets", "default")) == 1 and len(live_pods(c)) == 3
    c.submit(Delete("deployments", "default", "web"))
    c.run_for(10_000)
    assert c.objects("deployments", "default") == []
    assert c.objects("replicasets", "default") == []
    assert c.objects("pods", "default") == []
    deletes = [(r.user, r.resource) for r in c.audit if r.verb == "delete" and r.code == 200]
    assert ("system:serviceaccount:kube-system:generic-garbage-collector", "replicasets") in deletes
    assert ("system:serviceaccount:kube-system:generic-garbage-collector", "pods") in deletes


def test_two_syncs_converge_without_flapping():
    c = cluster()
    c.apply([deployment(2)])
    c.run(5_000)
    before = len(c.audit)
    c.run_for(60_000)
    # (the leader elections renew their Leases every 2 s: writes by design, not a controller flapping)
    writes = [r for r in list(c.audit)[before:] if r.verb in ("create", "update", "patch", "delete")
              and r.resource != "leases"]
    assert writes == []
