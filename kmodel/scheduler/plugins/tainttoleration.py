"""TaintToleration: a node's NoSchedule and NoExecute taints must be tolerated; PreferNoSchedule ones only score.

A port of pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go and of the toleration helpers in
k8s.io/api/core/v1/toleration.go and k8s.io/component-helpers/scheduling/corev1/helpers.go.

Theory of operation
-------------------
Toleration.ToleratesTaint: an empty toleration effect matches every effect, otherwise the effects must be equal;
an empty key matches every key, otherwise the keys must be equal; operator "" or Equal needs equal values,
Exists matches any value, any other operator matches nothing. Filter walks the node's taints in order, keeping
NoSchedule and NoExecute ones, and rejects (UnschedulableAndUnresolvable) at the first taint no toleration
tolerates, naming it: `node(s) had untolerated taint {<key>: <value>}` (the text of Kubernetes 1.25 to 1.32).

Node readiness, as the real scheduler sees it: the scheduler does not read node conditions. The node lifecycle
controller (TaintNodesByCondition) puts node.kubernetes.io/not-ready or node.kubernetes.io/unreachable on the
node with effect NoSchedule (and, for eviction, NoExecute) when Ready is False or Unknown. The DefaultToleration
Seconds admission plugin gives every pod tolerations for those two keys with effect NoExecute only, so they do
not tolerate the NoSchedule taint and the node is filtered here with the reason
`node(s) had untolerated taint {node.kubernetes.io/not-ready: }`. A node that is not ready but not yet tainted
(the controller has not noticed) is schedulable, exactly as in a real cluster. Likewise spec.unschedulable comes
with the node.kubernetes.io/unschedulable:NoSchedule taint; NodeUnschedulable runs first and reports it.

Score counts the node's PreferNoSchedule taints the pod does not tolerate (tolerations with effect "" or
PreferNoSchedule only), and NormalizeScore reverses it onto 0..100: fewer untolerated taints, higher score.

Differences from upstream: since Kubernetes 1.33 the reason no longer names the taint (`node(s) had untolerated
taint(s)`); the model keeps the text of 1.25-1.32, the releases it follows, which most recorded clusters show. The
comparison operators (Lt/Gt) and CEL tolerations of later releases are not modelled.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from kmodel.objects import Pod, Taint, Toleration
from kmodel.scheduler.framework import Code, NodeInfo, Status

NAME = "TaintToleration"

TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
TOLERATION_OP_EQUAL = "Equal"
TOLERATION_OP_EXISTS = "Exists"

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

MAX_NODE_SCORE = 100


def err_reason_untolerated(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", TOLERATION_OP_EQUAL):
        return toleration.value == taint.value
    return op == TOLERATION_OP_EXISTS


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """TolerationsTolerateTaint: some toleration tolerates the taint."""
    return any(tolerates_taint(t, taint) for t in tolerations)


def do_not_schedule_taint(taint: Taint) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute taints."""
    return taint.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], include=do_not_schedule_taint
) -> Optional[Taint]:
    """FindMatchingUntoleratedTaint: the first included taint that no toleration tolerates, or None."""
    for taint in taints:
        if include is not None and not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001 (upstream's name)
    """Filter: None when the pod tolerates every NoSchedule/NoExecute taint, else the rejection."""
    taint = find_matching_untolerated_taint(node_info.taints, pod.spec.tolerations)
    if taint is None:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err_reason_untolerated(taint), plugin=NAME)


def pre_score(pod: Pod) -> list[Toleration]:
    """PreScore: the pod's tolerations that can tolerate a PreferNoSchedule taint, once per scheduling cycle."""
    return [t for t in pod.spec.tolerations if t.effect in ("", TAINT_EFFECT_PREFER_NO_SCHEDULE)]


def score(pod: Pod, node_info: NodeInfo, tolerations: Optional[Sequence[Toleration]] = None) -> int:
    """Score (before normalisation): the number of PreferNoSchedule taints the pod does not tolerate; pass
    `tolerations` (pre_score(pod)) to compute them once per cycle, as PreScore does."""
    taints = node_info.taints
    if not taints:
        return 0
    if tolerations is None:
        tolerations = pre_score(pod)
    return sum(
        1
        for taint in taints
        if taint.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint)
    )


def default_normalize_score(scores: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """helper.DefaultNormalizeScore: scale onto 0..max_priority (reversed if asked), in integers as upstream."""
    max_count = max(scores, default=0)
    if max_count == 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    out = []
    for s in scores:
        s = max_priority * s // max_count
        out.append(max_priority - s if reverse else s)
    return out


def normalize_score(scores: list[int]) -> list[int]:
    return default_normalize_score(scores, reverse=True)
