"""Expectations, slow start, the scale-down ranking and ReplicaSet status (ported from
controller_utils_test.go TestControllerExpectations / TestSortingActivePodsWithRanks, replica_set_test.go)."""

import attrs
import pytest

from kmodel.controllers.expectations import EXPECTATIONS_TIMEOUT_MS, Expectations
from kmodel.controllers.pod_state import is_pod_active, is_pod_available, is_pod_ready
from kmodel.controllers.replicaset_logic import (
    calculate_status, get_pods_to_delete, less, rank_pods_on_same_node, replicas_diff, slow_start_batch,
    sort_for_deletion,
)
from kmodel.objects import FrozenDict, ObjectMeta, PodTemplateSpec, ReplicaSet, ReplicaSetSpec

from .helpers import pod


# --- expectations (TestControllerExpectations) ----------------------------------------------------------

def test_expectations_adds_and_dels_then_ttl():
    e = Expectations()
    key = "default/rs"
    assert e.satisfied(key, 0)  # never set
    adds, dels = 10, 10
    e = e.set_expectations(key, adds, dels, now_ms=1000)
    for i in range(adds + 1):
        e = e.creation_observed(key)
        e = e.lower(key, 0, 1)
    assert e.get(key).add == -1 and e.get(key).dele == -1
    assert e.satisfied(key, 1000)
    # raise again: not satisfied until the TTL runs out (strictly more than 5 minutes)
    e = e.raise_(key, 2, 0)
    e = e.set_expectations(key, 1, 0, now_ms=2000)
    assert not e.satisfied(key, 2000)
    assert not e.satisfied(key, 2000 + EXPECTATIONS_TIMEOUT_MS)
    assert e.satisfied(key, 2001 + EXPECTATIONS_TIMEOUT_MS)
    # satisfied only by the TTL (what replicaset-confirm-expired-expectations looks for), not when fulfilled
    assert e.expired_unfulfilled(key, 2001 + EXPECTATIONS_TIMEOUT_MS)
    assert not e.expired_unfulfilled(key, 2000 + EXPECTATIONS_TIMEOUT_MS)
    assert not e.creation_observed(key).expired_unfulfilled(key, 2001 + EXPECTATIONS_TIMEOUT_MS)
    e = e.delete(key)
    assert e.get(key) is None and e.satisfied(key, 0) and not e.expired_unfulfilled(key, 10 ** 9)


def test_uid_tracking_deletions_counted_once():
    e = Expectations().expect_deletions("ns/rs", ["ns/p2", "ns/p1"], now_ms=0)
    assert e.get_uids("ns/rs") == ("ns/p1", "ns/p2")
    assert not e.satisfied("ns/rs", 0)
    e = e.deletion_observed("ns/rs", "ns/p1")
    e = e.deletion_observed("ns/rs", "ns/p1")  # graceful delete then final delete: counted once
    e = e.deletion_observed("ns/rs", "ns/other")
    assert e.get("ns/rs").dele == 1
    e = e.deletion_observed("ns/rs", "ns/p2")
    assert e.satisfied("ns/rs", 0)


# --- diff and slow start ---------------------------------------------------------------------------------

def test_replicas_diff_capped_at_burst():
    assert replicas_diff(0, 3).create == 3
    assert replicas_diff(5, 3).delete == 2
    assert replicas_diff(0, 1200).create == 500
    assert replicas_diff(1200, 0).delete == 500
    assert replicas_diff(3, 3) == replicas_diff(0, 0)


@pytest.mark.parametrize("count, outcomes, batches, successes", [
    (0, (), (), 0),
    (1, (), (1,), 1),
    (10, (), (1, 2, 4, 3), 10),
    (16, (), (1, 2, 4, 8, 1), 16),
    (10, (False,), (1,), 0),
    (10, (True, True, False), (1, 2), 2),
    (10, (True, False, False), (1, 2), 1),
    (10, (True,) * 3 + (False,), (1, 2, 4), 6),
])
def test_slow_start_batch(count, outcomes, batches, successes):
    r = slow_start_batch(count, outcomes)
    assert r.batches == batches
    assert r.successes == successes
    assert r.skipped == count - successes
    assert r.failed == (successes < count)


# --- pod state -------------------------------------------------------------------------------------------

def test_pod_active_ready_available():
    assert is_pod_active(pod("a"))
    assert not is_pod_active(pod("a", phase="Succeeded"))
    assert not is_pod_active(pod("a", phase="Failed"))
    assert not is_pod_active(pod("a", deleted=5))
    p = pod("a", ready=True, ready_at=10_000)
    assert is_pod_ready(p) and not is_pod_ready(pod("b", ready=False)) and not is_pod_ready(pod("c"))
    assert is_pod_available(p, 0, 10_000)
    assert not is_pod_available(p, 5, 15_000)   # strictly before
    assert is_pod_available(p, 5, 15_001)
    assert not is_pod_available(pod("d", ready=True, ready_at=None), 5, 10**9)


# --- the ranking (TestSortingActivePodsWithRanks) --------------------------------------------------------

NOW = 1_000_000_000


def _ranked_pods():
    """Pods in the order upstream's test expects (most preferred for deletion first), with ranks."""
    then, now = NOW - 3_600_000, NOW  # then = an hour ago
    return [
        (pod("unscheduled", phase="Pending", created=then), 0),
        (pod("scheduled-pending", node="n1", phase="Pending", created=then), 0),
        (pod("unknown", node="n1", phase="Unknown", created=then), 0),
        (pod("running-not-ready", node="n1", ready=False, created=then), 0),
        (pod("ready-low-cost", node="n1", ready=True, ready_at=then, created=then,
             annotations={"controller.kubernetes.io/pod-deletion-cost": "-5"}), 1),
        (pod("ready-rank-2", node="n1", ready=True, ready_at=then, created=then), 2),
        (pod("ready-recently", node="n2", ready=True, ready_at=now - 1000, created=then), 1),
        (pod("ready-restarted", node="n2", ready=True, ready_at=then, created=then, restarts=3), 1),
        (pod("ready-newer", node="n2", ready=True, ready_at=then, created=now - 1000), 1),
        (pod("ready-older", node="n2", ready=True, ready_at=then, created=then - 100_000_000), 1),
    ]


def test_ranking_pairwise_and_sorted():
    items = _ranked_pods()
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            (pi, ri), (pj, rj) = items[i], items[j]
            assert less(pi, pj, ri, rj, NOW), (pi.metadata.name, pj.metadata.name)
            assert not less(pj, pi, rj, ri, NOW), (pj.metadata.name, pi.metadata.name)
    shuffled = list(reversed(items))
    out = sort_for_deletion([p for p, _ in shuffled], [r for _, r in shuffled], NOW)
    assert [p.metadata.name for p in out] == [p.metadata.name for p, _ in items]


def test_logarithmic_buckets_use_uid_tiebreak():
    # 10 s and 12 s ago fall in the same log2 bucket of nanoseconds (2^33 ns ~ 8.6 s .. 17 s).
    a = pod("a", node="n", ready=True, ready_at=NOW - 10_000, uid="2")
    b = pod("b", node="n", ready=True, ready_at=NOW - 12_000, uid="1")
    assert less(b, a, 1, 1, NOW) and not less(a, b, 1, 1, NOW)
    # Without the gate: the more recently ready one goes first.
    assert less(a, b, 1, 1, NOW, logarithmic_scale_down=False)


def test_invalid_deletion_cost_counts_as_zero():
    a = pod("a", node="n", annotations={"controller.kubernetes.io/pod-deletion-cost": "abc"}, created=5)
    b = pod("b", node="n", annotations={"controller.kubernetes.io/pod-deletion-cost": "0"}, created=5)
    assert not less(a, b, 0, 0, NOW) and not less(b, a, 0, 0, NOW)


def test_get_pods_to_delete_prefers_doubled_up_nodes():
    # TestGetPodsToDelete "various pod phases and conditions, diff = len(pods)" and the rank cases.
    p1 = pod("p1", node="n1", ready=True, ready_at=0)
    p2 = pod("p2", node="n1", ready=True, ready_at=0)
    p3 = pod("p3", node="n2", ready=True, ready_at=0)
    related = [p1, p2, p3, pod("other-rs", node="n2", ready=True)]
    assert rank_pods_on_same_node([p1, p2, p3], related) == [2, 2, 2]
    related = [p1, p2, p3]
    assert rank_pods_on_same_node([p1, p2, p3], related) == [2, 2, 1]
    out = get_pods_to_delete([p3, p1, p2], related, 1, NOW)
    assert out[0].metadata.name in ("p1", "p2")
    # diff == len: returned as given, unsorted
    assert get_pods_to_delete([p3, p1], related, 2, NOW) == [p3, p1]


# --- status ----------------------------------------------------------------------------------------------

def _rs(replicas=3, min_ready=0):
    return ReplicaSet(metadata=ObjectMeta(name="rs", namespace="default", generation=4),
                      spec=ReplicaSetSpec(replicas=replicas, min_ready_seconds=min_ready,
                                          template=PodTemplateSpec(metadata=ObjectMeta(
                                              labels=FrozenDict({"app": "web", "tier": "fe"})))))


def test_calculate_status_counts():
    rs = _rs(min_ready=10)
    pods = [
        pod("a", labels={"app": "web", "tier": "fe", "x": "y"}, ready=True, ready_at=0),
        pod("b", labels={"app": "web"}, ready=True, ready_at=95_000),
        pod("c", labels={"app": "web", "tier": "fe"}, ready=False),
    ]
    st = calculate_status(rs, pods, None, now_ms=100_000)
    assert (st.replicas, st.fully_labeled_replicas, st.ready_replicas, st.available_replicas) == (3, 2, 2, 1)
    assert st.observed_generation == 4 and st.conditions == ()


def test_calculate_status_failure_condition():
    rs = _rs(replicas=5)
    st = calculate_status(rs, [pod("a")], "pods is forbidden", now_ms=7)
    (c,) = st.conditions
    assert (c.type, c.status, c.reason, c.message, c.last_transition_time) == (
        "ReplicaFailure", "True", "FailedCreate", "pods is forbidden", 7)
    rs2 = attrs.evolve(rs, status=st)
    assert calculate_status(rs2, [pod("a")], "again", now_ms=9).conditions == st.conditions
    assert calculate_status(rs2, [pod("a")], None, now_ms=9).conditions == ()


def test_a_timed_out_create_is_marked_on_its_record_and_goes_with_it():
    e = Expectations().expect_creations("ns/rs", 1, 0).mark_timed_out("ns/rs")
    assert e.waits_on_timed_out("ns/rs", 1_000) and e.expires_in("ns/rs", 1_000) == 299_001
    assert not e.waits_on_timed_out("ns/rs", 300_001)  # expired: satisfied
    assert not e.creation_observed("ns/rs").waits_on_timed_out("ns/rs", 1_000)  # observed: satisfied
    assert not e.delete("ns/rs").waits_on_timed_out("ns/rs", 1_000)  # the set deleted: the mark with it
    assert not e.expect_creations("ns/rs", 1, 2_000).waits_on_timed_out("ns/rs", 2_000)  # a new record
    assert Expectations().mark_timed_out("ns/rs") == Expectations()


def test_a_deletion_cost_with_a_plus_sign_or_leading_zero_counts_as_zero():
    """validFirstDigit: '+10' and '008' are invalid (strconv.ParseInt alone would take them)."""
    for text in ("+10", "008"):
        a = pod("a", node="n", annotations={"controller.kubernetes.io/pod-deletion-cost": text}, created=5)
        b = pod("b", node="n", annotations={"controller.kubernetes.io/pod-deletion-cost": "0"}, created=5)
        assert not less(a, b, 0, 0, NOW) and not less(b, a, 0, 0, NOW)
