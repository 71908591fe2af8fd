"""NodeAffinity: spec.nodeSelector and spec.affinity.nodeAffinity (Filter on the required part, Score on the
preferred terms).

A port of pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go and of the matching in
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (Kubernetes 1.28-1.32).

Theory of operation
-------------------
RequiredNodeAffinity: a node fits when every key/value of spec.nodeSelector is among its labels (an AND of
equalities) *and*, when the pod has requiredDuringSchedulingIgnoredDuringExecution, one of its node selector
terms matches (terms are ORed). A term matches when all its matchExpressions match the node's labels and all its
matchFields match the node's fields (only metadata.name); a term with neither matches no node. Operators: In
(label present, value among the values), NotIn (absent, or value not among them), Exists, DoesNotExist, Gt and
Lt (label present, both integers, compared); a term whose requirement cannot be parsed (Gt with a value that is
no integer) does not match. Rejection: UnschedulableAndUnresolvable, `node(s) didn't match Pod's node
affinity/selector`. The kubelet's admission runs the same match (`matches_required`).

Score: the sum of the weights of the preferred terms the node matches (terms of weight 0 skipped);
NormalizeScore scales onto 0..100 (DefaultNormalizeScore, not reversed). The default profile weighs it 2.

Differences from upstream: the plugin's own arguments (addedAffinity) are not modelled; PreFilter's shortcut
for terms that name nodes by metadata.name (a PreFilterResult) is not modelled, which only changes which nodes
a FitError message counts.
"""

from __future__ import annotations

from typing import Optional, Sequence

from kmodel.objects import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from kmodel.scheduler.framework import Code, NodeInfo, Status
from kmodel.scheduler.plugins.tainttoleration import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
OBJECT_NAME_FIELD = "metadata.name"


def _int(value: str) -> Optional[int]:
    """strconv.ParseInt(value, 10, 64), or None."""
    try:
        n = int(value, 10)
    except ValueError:
        return None
    return n if -(1 << 63) <= n < (1 << 63) and value.strip() == value and "_" not in value else None


def requirement_matches(req: NodeSelectorRequirement, values: dict) -> Optional[bool]:
    """Does the requirement match a node whose labels (or fields) are `values`? None when it cannot be parsed
    (labels.NewRequirement's errors: the term is skipped)."""
    op, have = req.operator, values.get(req.key)
    if op == "In":
        return have is not None and have in req.values if req.values else None
    if op == "NotIn":
        return have is None or have not in req.values if req.values else None
    if op == "Exists":
        return have is not None if not req.values else None
    if op == "DoesNotExist":
        return have is None if not req.values else None
    if op in ("Gt", "Lt"):
        if len(req.values) != 1:
            return None
        bound = _int(req.values[0])
        if bound is None:
            return None
        n = _int(have) if have is not None else None
        if n is None:
            return False
        return n > bound if op == "Gt" else n < bound
    return None


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """nodeSelectorTerm.match: every expression over the labels, every field over {metadata.name}; an empty
    term, or one that cannot be parsed, matches nothing."""
    if not term.match_expressions and not term.match_fields:
        return False
    labels = node.metadata.labels
    for req in term.match_expressions:
        if not requirement_matches(req, labels):
            return False
    if term.match_fields:
        for req in term.match_fields:
            if req.key != OBJECT_NAME_FIELD or req.operator not in ("In", "NotIn") or len(req.values) != 1:
                return False  # nodeSelectorRequirementsAsFieldSelector refuses it
        fields = {OBJECT_NAME_FIELD: node.metadata.name} if node.metadata.name else {}
        if fields and not all(requirement_matches(req, fields) for req in term.match_fields):
            return False
    return True


def matches_node_selector(pod: Pod, node_info: NodeInfo) -> bool:
    """The nodeSelector half: every key/value of spec.nodeSelector among the node's labels."""
    selector = pod.spec.node_selector
    if not selector:
        return True
    node = node_info.node
    labels = node.metadata.labels if node is not None else {}
    for key, value in selector.items():
        if labels.get(key) != value:
            return False
    return True


def _node_affinity(pod: Pod):
    affinity = pod.spec.affinity
    return affinity.node_affinity if affinity is not None else None


def matches_required(pod: Pod, node_info: NodeInfo) -> bool:
    """RequiredNodeAffinity.Match: the nodeSelector and, if any, one of the required node selector terms."""
    if not matches_node_selector(pod, node_info):
        return False
    na = _node_affinity(pod)
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if required is None:
        return True
    node = node_info.node
    if node is None:
        return False
    return any(term_matches(term, node) for term in required.node_selector_terms)


def filter(pod: Pod, node_info: NodeInfo) -> Optional[Status]:  # noqa: A001
    if matches_required(pod, node_info):
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD, plugin=NAME)


def score(pod: Pod, node_info: NodeInfo) -> int:
    """Score: the summed weights of the preferred terms the node matches."""
    na = _node_affinity(pod)
    node = node_info.node
    if na is None or node is None:
        return 0
    return sum(term.weight for term in na.preferred_during_scheduling_ignored_during_execution
               if term.weight != 0 and term_matches(term.preference, node))


def has_preferences(pod: Pod) -> bool:
    """Whether the pod has preferred terms at all (without, every node scores 0 and scoring can be skipped)."""
    na = _node_affinity(pod)
    return na is not None and bool(na.preferred_during_scheduling_ignored_during_execution)


def normalize_score(scores: Sequence[int]) -> list[int]:
    """NormalizeScore: DefaultNormalizeScore(MaxNodeScore, reverse=false)."""
    return default_normalize_score(list(scores), reverse=False)
