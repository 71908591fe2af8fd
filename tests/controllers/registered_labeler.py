"""A controller of one's own that joins the model by its registration (tests/controllers/test_registration.py
names it by its import path, as `kmodel check --component` does)."""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.registry import SAFETY, Invariant
from kmodel.invariants.sometimes import Sometimes
from kmodel.component.registry import component, controller
from kmodel.controllers.base import Controller
from kmodel.objects import Namespace, ObjectMeta, PolicyRule


def _no_pod_of_the_labeled_namespace_unlabeled(cluster: Any, memo: dict) -> Iterator[str]:
    for pod in cluster.objects("pods", "labeled"):
        if pod.status.phase == "Running" and pod.metadata.labels.get("seen") != "yes":
            yield f"pod labeled/{pod.metadata.name} runs without the label seen=yes"


EVERY_POD_SEEN = Invariant("labeled-pods-seen", SAFETY, "labeler", "Every running pod of namespace labeled is seen.",
                           _no_pod_of_the_labeled_namespace_unlabeled)


def _a_pod_labeled(cluster: Any, memo: dict) -> bool:
    return any(p.metadata.labels.get("seen") == "yes" for p in cluster.objects("pods"))


POD_LABELED = Sometimes("pod-labeled", "labeler", "The labeler labeled a pod.", _a_pod_labeled)


@controller("pod-labeler", service_account="pod-labeler", invariants=(EVERY_POD_SEEN,), sometimes=(POD_LABELED,),
            rbac_rules=(PolicyRule(verbs=("patch",), api_groups=("",), resources=("pods",)),),
            boot_objects=(Namespace(metadata=ObjectMeta(name="labeled")),))
class PodLabeler(Controller):
    """Labels every pod seen=yes (a merge patch per pod that lacks the label)."""

    def setup(self) -> None:
        self.pods = self.informer("pods")

    def sync(self, key, sync, now, out) -> None:
        namespace, name = key.split("/")
        pod = self.pods.indexer.get(namespace, name)
        if pod is not None and pod.metadata.labels.get("seen") != "yes":
            sync.patch(now, out, "pods", name, {"metadata": {"labels": {"seen": "yes"}}}, namespace=namespace)


@component("lonely")
def make_nothing(ctx: Any) -> list:
    """A component factory that builds nothing (a registration without a service account)."""
    return []


def not_registered(ctx: Any) -> list:
    return []
