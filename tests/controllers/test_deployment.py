"""Deployment arithmetic and a rolling update stepped to completion (ported where possible from
deployment_util_test.go TestResolveFenceposts, sync_test.go TestScale, rolling_test.go)."""

import attrs
import pytest

from kmodel.controllers import deployment_logic as du
from kmodel.controllers.rolling_update import (
    get_replica_set_proportion, is_scaling_event, reconcile_new_replica_set, reconcile_old_replica_sets,
    rollout_rolling, scale,
)

from .helpers import deployment, replicaset


@pytest.mark.parametrize("surge, unavailable, desired, expected", [
    ("0%", "0%", 0, (0, 1)),
    ("39%", "39%", 10, (4, 3)),
    ("oops", "1%", 10, None),
    ("55%", "urg", 10, None),
    (None, "39%", 10, (0, 3)),
    ("39%", None, 10, (4, 0)),
    (None, None, 10, (0, 1)),
    ("25%", "25%", 1, (1, 0)),
    ("25%", "25%", 4, (1, 1)),
    (0, 0, 3, (0, 1)),
    (2, 1, 3, (2, 1)),
])
def test_resolve_fenceposts(surge, unavailable, desired, expected):
    if expected is None:
        with pytest.raises(du.IntOrPercentError):
            du.resolve_fenceposts(surge, unavailable, desired)
    else:
        assert du.resolve_fenceposts(surge, unavailable, desired) == expected


def test_max_unavailable_capped_and_min_available():
    assert du.max_unavailable(deployment(2, surge=0, unavailable=5)) == 2
    assert du.max_unavailable(deployment(0)) == 0
    assert du.max_unavailable(deployment(4, strategy="Recreate")) == 0
    assert du.min_available(deployment(10)) == 8
    assert du.max_surge(deployment(10)) == 3


def test_template_hash_stable_and_ignored_by_equality():
    d = deployment(3)
    h1 = du.compute_hash(d.spec.template)
    assert h1 == du.compute_hash(d.spec.template)
    assert set(h1) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert du.compute_hash(d.spec.template, 1) != h1
    assert du.compute_hash(deployment(3, image="img:2").spec.template) != h1
    rs = du.build_new_replica_set(d, [], [])
    assert rs.metadata.name == f"web-{h1}"
    assert rs.spec.template.metadata.labels["pod-template-hash"] == h1
    assert du.equal_ignore_hash(rs.spec.template, d.spec.template)
    assert du.find_new_replica_set(d, [replicaset("old", 3, image="img:0"), rs]) is rs


def test_find_new_prefers_oldest_and_old_lists():
    d = deployment(3)
    a, b = replicaset("a", 1, created=5), replicaset("b", 0, created=1)
    c = replicaset("c", 2, image="img:0")
    assert du.find_new_replica_set(d, [a, b, c]) is b
    required, all_old = du.find_old_replica_sets(d, [a, b, c])
    assert required == [a, c] and all_old == [a, c]


@pytest.mark.parametrize("strategy, dep, new, surge, olds, expected", [
    # (TestNewRSNewReplicas, adapted) can not scale up: the total is at replicas + surge
    ("RollingUpdate", 1, 0, 1, [2], 0),
    ("RollingUpdate", 6, 2, 10, [3], 6),   # scale up, bounded by replicas
    ("RollingUpdate", 10, 2, 3, [10], 3),  # scale up, bounded by the surge
    ("Recreate", 3, 1, 1, [1], 3),
])
def test_new_rs_new_replicas(strategy, dep, new, surge, olds, expected):
    d = deployment(dep, surge=surge, unavailable=0, strategy=strategy)
    new_rs = replicaset("new", new)
    all_rss = [replicaset(f"old{i}", n, image="img:0") for i, n in enumerate(olds)] + [new_rs]
    assert du.new_rs_new_replicas(d, all_rss, new_rs) == expected


def test_revisions_and_annotations():
    olds = [replicaset("a", 0, annotations={du.REVISION_ANNOTATION: "3"}),
            replicaset("b", 0, annotations={du.REVISION_ANNOTATION: "1"}),
            replicaset("c", 0, annotations={du.REVISION_ANNOTATION: "x"})]
    assert du.max_revision(olds) == 3 and du.last_revision(olds) == 1 and du.next_revision(olds) == "4"
    d = deployment(5, annotations={"team": "a", du.REVISION_ANNOTATION: "3", du.LAST_APPLIED_ANNOTATION: "{}"})
    rs = replicaset("n", 0)
    rs2, changed = du.set_new_replica_set_annotations(d, rs, "4", exists=False)
    ann = rs2.metadata.annotations
    assert changed and ann == {"team": "a", du.REVISION_ANNOTATION: "4",
                               du.DESIRED_REPLICAS_ANNOTATION: "5", du.MAX_REPLICAS_ANNOTATION: "7"}
    # rollback to an older set: its revision moves up and the old one goes to the history
    rs3 = replicaset("r", 0, annotations={du.REVISION_ANNOTATION: "1", du.REVISION_HISTORY_ANNOTATION: ""})
    rs4, _ = du.set_new_replica_set_annotations(d, rs3, "5", exists=True)
    assert rs4.metadata.annotations[du.REVISION_HISTORY_ANNOTATION] == "1"
    rs5, _ = du.set_new_replica_set_annotations(d, attrs.evolve(rs4, metadata=attrs.evolve(
        rs4.metadata, annotations=rs4.metadata.annotations.set(du.REVISION_ANNOTATION, "5"))), "6", exists=True)
    assert rs5.metadata.annotations[du.REVISION_HISTORY_ANNOTATION] == "1,5"
    assert du.set_deployment_revision(d, "4").metadata.annotations[du.REVISION_ANNOTATION] == "4"


# --- proportional scaling (TestScale) --------------------------------------------------------------------

def _annotated(rs, desired, mx):
    return attrs.evolve(rs, metadata=attrs.evolve(rs.metadata, annotations=rs.metadata.annotations.set(
        du.DESIRED_REPLICAS_ANNOTATION, str(desired)).set(du.MAX_REPLICAS_ANNOTATION, str(mx))))


@pytest.mark.parametrize("old_size, new_size, new_rs, olds, exp_new, exp_olds", [
    (5, 10, 2, [3], 4, [6]),     # proportional scaling: 5 -> 10
    (5, 3, 2, [3], 1, [2]),      # proportional scaling: 5 -> 3
    (9, 4, 8, [1], 4, [0]),      # proportional scaling: 9 -> 4
    (7, 10, 2, [3, 2], 3, [4, 3]),   # proportional scaling: 7 -> 10
    (13, 8, 2, [7, 3, 1], 1, [4, 2, 1]),  # proportional scaling: 13 -> 8
])
def test_proportional_scale(old_size, new_size, new_rs, olds, exp_new, exp_olds):
    d = deployment(new_size, surge=0, unavailable=0)
    new = _annotated(replicaset("new", new_rs, created=100, available=0), old_size, old_size)
    old = [_annotated(replicaset(f"old{i}", n, created=10 * (len(olds) - i), image=f"img:0{i}"), old_size, old_size)
           for i, n in enumerate(olds)]
    assert is_scaling_event(d, new, old)
    writes = {w.rs.metadata.name: w.rs for w in scale(d, new, old)}
    get = lambda rs: writes.get(rs.metadata.name, rs).spec.replicas  # noqa: E731
    assert get(new) == exp_new
    assert [get(o) for o in old] == exp_olds
    for rs in writes.values():
        assert rs.metadata.annotations[du.DESIRED_REPLICAS_ANNOTATION] == str(new_size)


def test_proportion_bounds():
    d = deployment(10, surge=0, unavailable=0)
    rs = _annotated(replicaset("a", 5), 5, 5)
    assert get_replica_set_proportion(rs, d, 3, 0) == 3      # min(fraction 5, allowed 3)
    assert get_replica_set_proportion(rs, d, 3, 3) == 0
    assert get_replica_set_proportion(replicaset("z", 0), d, 3, 0) == 0


def test_scale_single_active_and_saturated():
    d = deployment(5)
    only = replicaset("only", 3)
    (w,) = scale(d, only, [replicaset("idle", 0, image="img:0")])
    assert w.rs.spec.replicas == 5 and w.operation == "up"
    sat = _annotated(replicaset("new", 5), 5, 7)
    ws = scale(d, sat, [replicaset("old", 2, image="img:0")])
    assert [(w.rs.metadata.name, w.new) for w in ws] == [("old", 0)]


def test_scale_refreshes_stale_annotations_of_a_right_sized_set_only_with_the_fix():
    """Upstream's scale() returns when the active set's size matches, leaving a stale desired-replicas annotation
    (so every sync stays a scaling event); the deployment-refresh-annotations fix writes the annotations."""
    d = deployment(1)
    stale = _annotated(replicaset("only", 1), 2, 3)  # sized for 1, annotated for 2
    assert is_scaling_event(d, stale, [])
    assert scale(d, stale, []) == ()
    (w,) = scale(d, stale, [], refresh_annotations=True)
    assert w.new == w.old == 1 and w.operation == "" and not w.scaled
    assert w.rs.metadata.annotations[du.DESIRED_REPLICAS_ANNOTATION] == "1"
    assert not is_scaling_event(d, w.rs, [])
    fresh = _annotated(replicaset("only", 1), 1, 2)  # max-replicas 1 + surge 1 (25% of 1, rounded up)
    assert scale(d, fresh, [], refresh_annotations=True) == ()


# --- rolling update ---------------------------------------------------------------------------------------

def test_reconcile_old_cleans_unhealthy_first():
    # rolling_test.go TestDeploymentController_cleanupUnhealthyReplicas flavour: 10 replicas, old set with
    # 3 unavailable pods is trimmed by those first.
    d = deployment(10, surge=0, unavailable=2)
    new = replicaset("new", 0, created=50)
    old = replicaset("old", 10, available=7, image="img:0")
    r = reconcile_old_replica_sets([old, new], [old], new, d)
    # maxScaledDown = 10 - 8 - 0 = 2: cleanup takes 2 unhealthy; then available 7 <= 8 -> no more.
    assert r.scaled and [(w.old, w.new) for w in r.writes] == [(10, 8)]


def test_reconcile_new_scales_down_when_above():
    d = deployment(3)
    new = replicaset("new", 5)
    r = reconcile_new_replica_set([new], new, d)
    assert r.scaled and r.writes[0].new == 3 and r.writes[0].operation == "down"


def _apply(rss, writes):
    by = {w.rs.metadata.name: w.rs for w in writes}
    return [by.get(rs.metadata.name, rs) for rs in rss]


def _rs_controller_tick(rss):
    """Plain in-memory ReplicaSet controllers + kubelets: status.replicas follows spec immediately, and
    pods created in the previous tick are available now (availability lags one tick)."""
    out = []
    for rs in rss:
        avail = min(rs.spec.replicas, rs.status.replicas)
        out.append(attrs.evolve(rs, status=attrs.evolve(rs.status, replicas=rs.spec.replicas,
                                                        ready_replicas=avail, available_replicas=avail)))
    return out


@pytest.mark.parametrize("replicas, surge, unavailable", [
    (10, "25%", "25%"), (3, 1, 0), (5, 0, 1), (1, "25%", "25%"), (7, "50%", "10%"),
])
def test_rolling_update_to_completion(replicas, surge, unavailable):
    d = deployment(replicas, surge=surge, unavailable=unavailable, image="img:2", generation=2)
    old = _annotated(replicaset("web-old", replicas, created=0, image="img:1"), replicas,
                     replicas + du.max_surge(d))
    new = du.build_new_replica_set(d, [old], [old])
    new = attrs.evolve(new, metadata=attrs.evolve(new.metadata, uid="uid-new", creation_timestamp=100))
    rss = [old, new]
    max_total = replicas + du.max_surge(d)
    min_avail = replicas - du.max_unavailable(d)
    for step in range(100):
        total_spec = sum(rs.spec.replicas for rs in rss)
        assert total_spec <= max_total
        assert sum(rs.status.available_replicas for rs in rss) >= min_avail
        new_rs = du.find_new_replica_set(d, rss)
        olds = [rs for rs in rss if rs is not new_rs]
        status = du.calculate_status(rss, new_rs, d, now_ms=step)
        if du.deployment_complete(d, status):
            break
        result = rollout_rolling(d, new_rs, olds)
        rss = _rs_controller_tick(_apply(rss, result.writes))
    else:
        pytest.fail("rollout did not complete")
    assert [rs.spec.replicas for rs in rss] == [0, replicas]
    assert status.conditions[-1].reason == du.MINIMUM_REPLICAS_AVAILABLE
    assert status.updated_replicas == replicas and status.unavailable_replicas == 0


def test_calculate_status_unavailable():
    d = deployment(4, surge=0, unavailable=1)
    rss = [replicaset("a", 4, available=2)]
    st = du.calculate_status(rss, rss[0], d, now_ms=5)
    assert (st.replicas, st.available_replicas, st.unavailable_replicas, st.observed_generation) == (4, 2, 2, 1)
    (c,) = st.conditions
    assert (c.type, c.status, c.reason) == ("Available", "False", du.MINIMUM_REPLICAS_UNAVAILABLE)
    assert not du.deployment_complete(d, st)
