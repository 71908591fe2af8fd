"""NodeAffinity's required and preferred node affinity terms (upstream's TestNodeAffinity cases, in short): the
filter, the score, the scheduler's choice, the kubelet's admission and the API's validation."""

from __future__ import annotations

import attrs

from kmodel.kubelet.admission import admit
from kmodel.objects import (
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm,
    decode, validate,
)
from kmodel.scheduler.framework import NodeInfo
from kmodel.scheduler.plugins import nodeaffinity
from kmodel.scheduler.schedule_one import schedule_pod

from .helpers import allocatable, node, pod

REASON = "node(s) didn't match Pod's node affinity/selector"


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def term(*exprs: NodeSelectorRequirement, fields=()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=exprs, match_fields=tuple(fields))


def with_affinity(p, required=None, preferred=()):
    na = NodeAffinity(required_during_scheduling_ignored_during_execution=(
        NodeSelector(node_selector_terms=tuple(required)) if required is not None else None),
        preferred_during_scheduling_ignored_during_execution=tuple(preferred))
    return attrs.evolve(p, spec=attrs.evolve(p.spec, affinity=Affinity(node_affinity=na)))


def fits(p, labels=None, name="n1") -> bool:
    return nodeaffinity.filter(p, NodeInfo(node(name, labels=labels or {}))) is None


def test_required_terms_operators():
    labels = {"zone": "a", "gpu": "2"}
    assert fits(with_affinity(pod(), [term(req("zone", "In", "a", "b"))]), labels)
    assert not fits(with_affinity(pod(), [term(req("zone", "In", "b"))]), labels)
    assert fits(with_affinity(pod(), [term(req("zone", "NotIn", "b"))]), labels)
    assert fits(with_affinity(pod(), [term(req("disk", "NotIn", "ssd"))]), labels)  # absent: not in
    assert fits(with_affinity(pod(), [term(req("gpu", "Exists"))]), labels)
    assert not fits(with_affinity(pod(), [term(req("gpu", "DoesNotExist"))]), labels)
    assert fits(with_affinity(pod(), [term(req("gpu", "Gt", "1"))]), labels)
    assert not fits(with_affinity(pod(), [term(req("gpu", "Lt", "2"))]), labels)
    assert not fits(with_affinity(pod(), [term(req("zone", "Gt", "1"))]), labels)  # "a" is no integer
    assert not fits(with_affinity(pod(), [term(req("gpu", "Gt", "x"))]), labels)  # unparsable: no match


def test_terms_are_ored_expressions_anded_and_an_empty_term_matches_nothing():
    labels = {"zone": "a", "disk": "ssd"}
    both = term(req("zone", "In", "a"), req("disk", "In", "hdd"))
    assert not fits(with_affinity(pod(), [both]), labels)
    assert fits(with_affinity(pod(), [both, term(req("disk", "Exists"))]), labels)
    assert not fits(with_affinity(pod(), [term()]), labels)
    assert not fits(with_affinity(pod(), []), labels)  # no term at all: nothing matches


def test_match_fields_name_the_node():
    by_name = term(fields=[req("metadata.name", "In", "n1")])
    assert fits(with_affinity(pod(), [by_name]), name="n1")
    assert not fits(with_affinity(pod(), [by_name]), name="n2")
    assert fits(with_affinity(pod(), [term(fields=[req("metadata.name", "NotIn", "n1")])]), name="n2")


def test_node_selector_and_required_affinity_must_both_match():
    p = with_affinity(pod(node_selector={"zone": "a"}), [term(req("disk", "Exists"))])
    assert fits(p, {"zone": "a", "disk": "ssd"})
    status = nodeaffinity.filter(p, NodeInfo(node("n1", labels={"zone": "a"})))
    assert status is not None and status.reasons == (REASON,)
    assert not fits(p, {"disk": "ssd"})


def test_preferred_terms_score_by_weight_and_steer_the_scheduler():
    p = with_affinity(pod(), preferred=[
        PreferredSchedulingTerm(weight=10, preference=term(req("disk", "In", "ssd"))),
        PreferredSchedulingTerm(weight=5, preference=term(req("zone", "In", "a"))),
        PreferredSchedulingTerm(weight=0, preference=term(req("zone", "In", "a"))),  # weight 0: skipped
    ])
    room = allocatable(4000, 8 << 30, 10)
    infos = [NodeInfo(node("n1", room)), NodeInfo(node("n2", room, labels={"zone": "a"})),
             NodeInfo(node("n3", room, labels={"zone": "a", "disk": "ssd"}))]
    scores = [nodeaffinity.score(p, ni) for ni in infos]
    assert scores == [0, 5, 15] and nodeaffinity.normalize_score(scores) == [0, 33, 100]
    assert schedule_pod(p, infos).suggested_host == "n3"
    assert schedule_pod(pod(), infos).suggested_host == "n1"  # no preference: the first of equals


def test_the_kubelet_refuses_a_pod_whose_required_affinity_its_node_does_not_match():
    p = with_affinity(pod(), [term(req("zone", "In", "b"))])
    room = allocatable(4000, 8 << 30, 10)
    rejection = admit(p, [], node("n1", room, labels={"zone": "a"}))
    assert rejection is not None and rejection.reason == "NodeAffinity"
    assert admit(p, [], node("n1", room, labels={"zone": "b"})) is None


def test_validation_of_node_affinity():
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {
        "containers": [{"name": "a", "image": "i"}],
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In"}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 101, "preference": {"matchFields": [{"key": "spec.x", "operator": "Exists"}]}}]}}}}
    errors = {(e.field, e.body()) for e in validate(decode(manifest))}
    base = "spec.affinity.nodeAffinity."
    assert errors == {
        (base + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
         "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
        (base + "preferredDuringSchedulingIgnoredDuringExecution[0].weight",
         "Invalid value: 101: must be in the range 1-100"),
        (base + "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].operator",
         'Invalid value: "Exists": not a valid selector operator'),
        (base + "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].key",
         'Invalid value: "spec.x": not a valid field selector key'),
    }
    manifest["spec"]["affinity"]["nodeAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
    [error] = validate(decode(manifest))
    assert error.body() == "Required value: must have at least one node selector term"
