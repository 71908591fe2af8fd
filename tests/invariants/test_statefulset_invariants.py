"""The StatefulSet invariants, each holding on a run where it should and failing on a state that breaks it."""

from __future__ import annotations

from pathlib import Path

import attrs

from kmodel.invariants.registry import LIVENESS, REGISTRY, SAFETY, registered
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.config import DEFAULT_COMPONENTS
from kmodel.cluster.kubectl import Delete, Scale
from kmodel.controllers import statefulset_logic
from kmodel.controllers.statefulset_logic import new_pod
from kmodel.objects import load_yaml

from tests.invariants.test_invariants import call

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
S = 1000
STATEFULSET_INVARIANTS = ("statefulset-one-pod-per-identity", "statefulset-ordered-ready", "statefulset-pods-at-their-revision")


def example() -> list:
    return load_yaml((EXAMPLES / "statefulset.yaml").read_text())


def check(cluster: Cluster, name: str, memo: dict) -> list[str]:
    return list(REGISTRY[name].check(cluster, memo))


def stepped(cluster: Cluster, until_ms: int, memos: dict) -> list:
    """Run to `until_ms` one event at a time, checking every safety invariant after each."""
    found = []
    while cluster.now < until_ms and cluster.loop.enabled_events():
        cluster.loop.step(cluster.loop.enabled_events()[0])
        for inv in registered(SAFETY):
            found += [(inv.name, m) for m in inv.check(cluster, memos.setdefault(inv.name, {}))]
    return found


def test_the_guarantees_hold_while_a_set_comes_up_scales_down_and_up_and_converges():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(example())
    memos: dict = {}
    assert stepped(cluster, 40 * S, memos) == []
    assert [p.metadata.name for p in cluster.objects("pods", "default")] == ["web-0", "web-1", "web-2"]
    cluster.submit(Scale("statefulsets", "default", "web", 1))
    assert stepped(cluster, cluster.now + 60 * S, memos) == []
    cluster.submit(Scale("statefulsets", "default", "web", 2))
    assert stepped(cluster, cluster.now + 40 * S, memos) == []
    for inv in registered(LIVENESS):
        assert list(inv.check(cluster, {})) == [], inv.name


def test_one_pod_per_identity_fails_when_a_pod_on_an_unreachable_node_is_force_deleted():
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(example())
    cluster.submit(Scale("statefulsets", "default", "web", 1))
    cluster.run(30 * S)
    memo: dict = {}
    assert check(cluster, "statefulset-one-pod-per-identity", memo) == []
    old = cluster.get("pods", "default", "web-0")
    cluster.partition(old.spec.node_name)  # its kubelet keeps running the container, cut off from the API
    cluster.run(cluster.now + 60 * S)  # the node is unreachable and tainted: nothing new is scheduled there
    assert check(cluster, "statefulset-one-pod-per-identity", memo) == []
    cluster.submit(Delete("pods", "default", "web-0", grace_period_seconds=0))  # kubectl delete --force
    cluster.run(cluster.now + 30 * S)
    new = cluster.get("pods", "default", "web-0")
    assert new is not None and new.metadata.uid != old.metadata.uid and new.status.phase == "Running"
    [message] = check(cluster, "statefulset-one-pod-per-identity", memo)
    assert "default/web-0" in message and old.metadata.uid in message and new.metadata.uid in message


def test_ordered_ready_fails_when_an_ordinal_is_created_before_the_lower_one_is_ready():
    cluster = Cluster(ClusterConfig(nodes=1, components=tuple(c for c in DEFAULT_COMPONENTS if c != "statefulset")))
    cluster.apply(example())
    cluster.run(5 * S)
    memo: dict = {}
    assert check(cluster, "statefulset-ordered-ready", memo) == []
    sts = cluster.get("statefulsets", "default", "web")
    assert call(cluster, "create", "pods", "default", body=new_pod(sts, 0)).code == 201
    assert call(cluster, "create", "pods", "default", body=new_pod(sts, 1)).code == 201  # web-0 not yet running
    [message] = check(cluster, "statefulset-ordered-ready", memo)
    assert "default/web-1" in message and "web-0" in message


def test_converges_statefulsets_fails_while_the_set_lacks_its_pods_and_holds_once_they_run():
    cluster = Cluster(ClusterConfig(nodes=2, components=tuple(c for c in DEFAULT_COMPONENTS if c != "statefulset")))
    cluster.apply(example())
    cluster.run(30 * S)
    [message] = check(cluster, "converges-statefulsets", {})
    assert message == "StatefulSet default/web: pod web-0 is missing"
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(example())
    cluster.run(40 * S)
    assert check(cluster, "converges-statefulsets", {}) == []


def _evicted_from_its_node(cut_off: str) -> tuple[Cluster, str]:
    """A set of 3 on 3 nodes whose web-1's node is lost for good (`cut_off` "lose") or partitioned from the rest
    ("partition") until taint eviction has marked web-1 for deletion (300 s of tolerationSeconds after the
    unreachable taint): the pod stays Terminating, since no kubelet confirms it stopped."""
    cluster = Cluster(ClusterConfig(nodes=3))
    cluster.apply(example())
    cluster.run(40 * S)
    node = cluster.get("pods", "default", "web-1").spec.node_name
    if cut_off == "lose":
        cluster.lose_node(node)
    else:
        cluster.partition(f"kubelet/{node}")
    cluster.run(cluster.now + 420 * S)
    pod = cluster.get("pods", "default", "web-1")
    assert pod.metadata.deletion_timestamp is not None and pod.spec.node_name == node
    return cluster, node


def test_converges_statefulsets_leaves_an_identity_whose_pod_is_stranded_on_a_lost_node_and_judges_one_cut_off():
    cluster, _ = _evicted_from_its_node("lose")
    assert check(cluster, "converges-statefulsets", {}) == []  # upstream's set waits on it too, for good
    cluster, _ = _evicted_from_its_node("partition")  # its machine is still in the cluster: judged
    [message] = check(cluster, "converges-statefulsets", {})
    assert message.startswith("StatefulSet default/web: pod web-1 is ")


# -- the oracles are the invariants' own: a mistake planted in the controller's helpers is caught -------------

def test_ordered_ready_catches_a_controller_that_takes_every_pod_for_ready(monkeypatch):
    """The controller's readiness checks with a planted mistake: they take every pod for Ready, so web-1 is
    created while web-0 runs but its readiness probe has not passed. The invariant reads the Ready condition
    itself: it catches the create."""
    monkeypatch.setattr(statefulset_logic, "is_pod_ready", lambda pod: True)
    monkeypatch.setattr(statefulset_logic, "is_pod_available", lambda pod, min_ready_seconds, now: True)
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(example())
    found = stepped(cluster, 40 * S, {})
    ordered = [m for name, m in found if name == "statefulset-ordered-ready"]
    assert ordered and "created default/web-1 of OrderedReady set web" in ordered[0]


def test_converges_statefulsets_catches_a_controller_that_reads_zero_replicas_as_unset(monkeypatch):
    """statefulset_logic.replicas_of with a planted mistake (`or 1`: a set scaled to 0 keeps one pod). The
    invariant reads spec.replicas itself: web-0 is one pod too many."""
    monkeypatch.setattr(statefulset_logic, "replicas_of", lambda sts: sts.spec.replicas or 1)
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(example())
    cluster.run(40 * S)
    cluster.submit(Scale("statefulsets", "default", "web", 0))
    cluster.run(cluster.now + 60 * S)
    assert [p.metadata.name for p in cluster.objects("pods", "default")] == ["web-0"]
    found = check(cluster, "converges-statefulsets", {})
    assert found[0] == "StatefulSet default/web wants 0 pods but also has web-0"


def test_ordered_ready_reads_the_identity_from_the_sets_own_name():
    """A pod the set controls whose name is not `<set>-<ordinal>` is no identity of the set (upstream's
    isMemberOf): its create is not judged as an ordinal."""
    cluster = Cluster(ClusterConfig(nodes=1, components=tuple(c for c in DEFAULT_COMPONENTS if c != "statefulset")))
    cluster.apply(example())
    cluster.run(5 * S)
    memo: dict = {}
    sts = cluster.get("statefulsets", "default", "web")
    stray = new_pod(sts, 3)
    stray = attrs.evolve(stray, metadata=attrs.evolve(stray.metadata, name="web-x-3"))
    assert call(cluster, "create", "pods", "default", body=stray).code == 201
    assert check(cluster, "statefulset-ordered-ready", memo) == []


def _partitioned_rollout(memos: dict) -> tuple[Cluster, list]:
    """web of 3 pods, partition 2, a new image: web-2 is updated; then web-0 is deleted and made again."""
    from kmodel.cluster.kubectl import Apply, Patch
    from tests.controllers.test_statefulset import statefulset
    cluster = Cluster(ClusterConfig(nodes=2))
    manifest = statefulset(3)
    manifest["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    cluster.submit(Apply(manifest))
    found = stepped(cluster, 40 * S, memos)
    cluster.submit(Patch("statefulsets", "default", "web",
                         {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}))
    found += stepped(cluster, cluster.now + 60 * S, memos)
    cluster.submit(Delete("pods", "default", "web-0"))
    found += stepped(cluster, cluster.now + 60 * S, memos)
    return cluster, found


def test_pods_at_their_revision_holds_through_a_partitioned_rollout_and_a_pod_made_again_below_it():
    cluster, found = _partitioned_rollout({})
    assert found == []
    images = {p.metadata.name: p.spec.containers[0].image for p in cluster.objects("pods", "default")}
    assert images == {"web-0": "app:1", "web-1": "app:1", "web-2": "app:2"}


def test_pods_at_their_revision_fails_when_a_pod_below_the_partition_is_made_from_the_update_revision(monkeypatch):
    """The mistake of the model before ControllerRevisions, planted again: every pod from the update revision."""
    monkeypatch.setattr(statefulset_logic, "at_current_revision", lambda sts, ordinal: False)
    cluster, found = _partitioned_rollout({})
    assert {name for name, _ in found} == {"statefulset-pods-at-their-revision"}
    [message] = {message for _, message in found}  # reported again at every step after it
    assert "created default/web-0 of set web at revision" in message and "no version of the set gave ordinal 0" \
        in message and "partitions [2]" in message


def test_pods_at_their_revision_fails_when_a_pod_is_labelled_with_a_revision_of_other_images(monkeypatch):
    """A pod built from the set's template but labelled with the current revision (a mistake in new_pod)."""
    real = statefulset_logic.new_pod
    monkeypatch.setattr(statefulset_logic, "new_pod",
                        lambda sts, ordinal, template=None, revision=None: real(sts, ordinal, None, revision))
    cluster, found = _partitioned_rollout({})
    assert {name for name, _ in found} == {"statefulset-pods-at-their-revision"}
    [message] = {message for _, message in found}
    assert "labelled revision" in message and "with images ['app:2'], but that revision saved ['app:1']" in message
