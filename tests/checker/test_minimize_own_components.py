"""Replay-based minimization of a machine with a controller of its own: each replay rebuilds the cluster with
fresh copies of it and checks the machine's own invariant, so a planted bug in the controller shrinks."""

from __future__ import annotations

from kmodel.checker.actions import ApplyDeployment, ApplyPod, ApplyService, RunFair, ScaleDeployment
from kmodel.checker.minimize import minimize_trace
from kmodel.checker.run import trace_of
from kmodel.checker.session import InvariantViolation, Session
from kmodel.cluster import ClusterConfig
from kmodel.controllers.base import Controller
from kmodel.objects import PolicyRule
from kmodel.invariants.registry import SAFETY, Invariant

CONFIG = ClusterConfig(nodes=1, apiservers=1)


class WebLabeler(Controller):
    """Meant to label the pods of app web tier=front; its planted bug: it labels every Deployment's pods."""

    service_account = "web-labeler"
    rbac_rules = (PolicyRule(verbs=("patch",), api_groups=("",), resources=("pods",)),)

    def __init__(self, endpoints) -> None:
        super().__init__("controller/web-labeler", endpoints)

    def setup(self) -> None:
        self.pods = self.informer("pods")

    def sync(self, key, sync, now, out) -> None:
        namespace, name = key.split("/")
        pod = self.pods.indexer.get(namespace, name)
        if pod is not None and "app" in pod.metadata.labels and pod.metadata.labels.get("tier") != "front":
            sync.patch(now, out, "pods", name, {"metadata": {"labels": {"tier": "front"}}}, namespace=namespace)


def _only_web_is_front(cluster, memo):
    for pod in cluster.objects("pods", "default"):
        if pod.metadata.labels.get("tier") == "front" and pod.metadata.labels.get("app") != "web":
            yield f"pod {pod.metadata.name} of app {pod.metadata.labels.get('app')} is labeled tier=front"


ONLY_WEB = Invariant("only-web-is-front", SAFETY, "test", "Only the pods of app web are tier=front.",
                     _only_web_is_front)
PREFIX = (ApplyDeployment("web", 1), RunFair(15_000))
NOISE = (ApplyService("web"), ScaleDeployment("web", 2), RunFair(5_000), ApplyPod("debug-1", ""), RunFair(5_000),
         ApplyService("api"), RunFair(3_000))
CAUSE = (ApplyDeployment("api", 1), RunFair(30_000))


def _labelers() -> list:
    return [WebLabeler(CONFIG.apiserver_names())]


def _failing_trace():
    session = Session(CONFIG, [ONLY_WEB], extra_components=_labelers())
    try:
        for action in PREFIX + NOISE + CAUSE:
            session.execute(action)
    except InvariantViolation:
        return trace_of(session)
    raise AssertionError("the planted bug was not reached")


def test_a_planted_bug_in_an_own_controller_shrinks_through_replay_minimization():
    trace = _failing_trace()
    assert len(trace.actions) == len(PREFIX + NOISE + CAUSE)
    minimized = minimize_trace(trace, keep_prefix=len(PREFIX), invariants=[ONLY_WEB], components=_labelers,
                               simplify=False)
    assert minimized.replays > 0
    assert minimized.trace.violation.invariant == "only-web-is-front"
    # every noise action is cut: the prefix, the api Deployment and the run that lets the labeler act are left
    assert minimized.trace.actions == PREFIX + CAUSE


def test_without_its_components_the_replays_do_not_fail_and_nothing_is_cut():
    trace = _failing_trace()
    minimized = minimize_trace(trace, keep_prefix=len(PREFIX), invariants=[ONLY_WEB], simplify=False)
    assert minimized.trace is trace and minimized.cut_actions == len(trace.actions)
