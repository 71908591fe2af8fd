"""Simpler variants of actions (kmodel.checker.simpler): each action's own table, fixed orders, always strictly
simpler, so minimization's second pass ends."""

from __future__ import annotations

from kmodel.checker.access_actions import ADMIN, DeleteWith
from kmodel.checker.actions import (
    AddNode, ApplyDeployment, ApplyPod, CrashMidReconcile, Fault, Fire, RemoveNode, RunFair, ScaleDeployment, Settle,
)
from kmodel.checker.simpler import default, describe_change, each, earlier, earlier_node, fewer, one_fewer
from kmodel.checker.workload_actions import NODE_LABELS, LabelNode
from kmodel.loop.events import DelayHead, FailRequest, Partition, Work


def test_numbers_go_down_toward_their_least_value_first():
    assert fewer(0)(5) == (0, 2, 4) and fewer(0)(1) == (0,) and fewer(0)(0) == ()
    assert fewer(1_000, 1_000)(30_000) == (1_000, 15_000, 29_000)  # whole seconds stay whole seconds
    assert fewer(1_000, 1_000)(900) == ()  # already below the least: nothing simpler
    assert fewer(0)(True) == ()  # a flag is no number


def test_domains_go_toward_their_first_entry_and_nodes_toward_the_first_node():
    assert earlier(("a", "b", "c"))("c") == ("a", "b") and earlier(("a", "b"))("z") == ()
    assert earlier_node()("node-3") == ("node-1", "node-2") and earlier_node()("node-1") == ()
    assert earlier_node(unpinned=True)("node-2") == ("", "node-1") and earlier_node(unpinned=True)("") == ()
    assert default(False)(True) == (False,) and default(False)(False) == ()
    assert each(fewer(0))((2, 0, 1)) == ((0, 0, 1), (1, 0, 1), (2, 0, 0))
    assert one_fewer(("a", "b")) == (("b",), ("a",)) and one_fewer(("a",)) == ()


def test_each_action_declares_its_own_simpler_variants_in_a_fixed_order():
    assert list(ScaleDeployment("api", 2).simpler()) == [
        ScaleDeployment("web", 2), ScaleDeployment("api", 0), ScaleDeployment("api", 1)]
    assert list(ApplyDeployment("web", 1, 500, True).simpler()) == [
        ApplyDeployment("web", 0, 500, True), ApplyDeployment("web", 1, 0, True), ApplyDeployment("web", 1, 500, False)]
    assert list(ApplyPod("debug-1", "node-2").simpler()) == [ApplyPod("debug-1", ""), ApplyPod("debug-1", "node-1")]
    assert list(RemoveNode("node-2").simpler()) == [RemoveNode("node-1")]
    assert list(AddNode("8").simpler()) == [AddNode("")]
    assert list(CrashMidReconcile("kubelet/node-1", writes=2).simpler()) == [
        CrashMidReconcile("", writes=2), CrashMidReconcile("kubelet/node-1", writes=1)]
    # fields simplified together: a node label's key and value are one row of NODE_LABELS
    assert list(LabelNode("node-1", *NODE_LABELS[2]).simpler()) == [
        LabelNode("node-1", *NODE_LABELS[0]), LabelNode("node-1", *NODE_LABELS[1])]
    assert list(DeleteWith("pods", "default", "p", 0, "Orphan", "alice").simpler()) == [
        DeleteWith("pods", "default", "p", 0, "Orphan", ADMIN), DeleteWith("pods", "default", "p", None, "Orphan", "alice"),
        DeleteWith("pods", "default", "p", 0, "", "alice")]
    # a settle, the checker's own bounds, and an interleaving have nothing simpler
    assert list(Settle().simpler()) == [] and list(Fire((Work("kubectl"),)).simpler()) == []


def test_a_fault_is_simplified_through_its_event_as_its_rule_could_draw_it():
    assert [f.event.delay_ms for f in Fault(DelayHead("a", "b", 5_000)).simpler()] == [1_000, 3_000, 4_000]
    assert list(Fault(Partition(("a", "b"))).simpler()) == [Fault(Partition(("b",))), Fault(Partition(("a",)))]
    # 504 with the write applied: first not applied; a write applied goes with 504 only, Retry-After with 429 only
    assert list(Fault(FailRequest("c", "s", 504, applied=True)).simpler()) == [Fault(FailRequest("c", "s", 504))]
    assert list(Fault(FailRequest("c", "s", 503)).simpler()) == [
        Fault(FailRequest("c", "s", 429)), Fault(FailRequest("c", "s", 500))]
    assert list(Fault(FailRequest("c", "s", 429, retry_after_seconds=5)).simpler()) == [
        Fault(FailRequest("c", "s", 429))]


def test_always_taking_a_simpler_variant_ends():
    """Every variant is strictly simpler, so simplifying again and again reaches an action with none: here
    taking the last (least simplified) variant every time, the longest way down."""
    for action in (ApplyDeployment("api", 4, 1500, True), RunFair(400_000), Fault(DelayHead("a", "b", 30_000)),
                   LabelNode("node-5", *NODE_LABELS[-1])):
        for _ in range(1_000):
            options = list(action.simpler())
            if not options:
                break
            action = options[-1]
        else:
            raise AssertionError(f"{action.name} is still being simplified after 1,000 steps")


def test_a_simplification_is_described_by_the_fields_it_changed():
    assert describe_change(ScaleDeployment("web", 3), ScaleDeployment("web", 1)) == "scale-deployment: replicas 3 -> 1"
    assert describe_change(Fault(DelayHead("a", "b", 30_000)), Fault(DelayHead("a", "b", 1_000))) == \
        "fault: event.delay_ms 30000 -> 1000"
    assert describe_change(ApplyPod("debug-1", "node-2", True), ApplyPod("debug-1", "", False)) == \
        'apply-pod: node node-2 -> "", host_port true -> false'
