"""A controller of your own (an extra component): it authenticates as the service account it names, and RBAC
allows it what its declared `rbac_rules` grant, no more (the cluster installs its role at boot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.apiserver.bootstrap_policy import CONTROLLER_ROLE_PREFIX
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.base import Controller
from kmodel.objects import PolicyRule, load_yaml

S = 1000
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABELER = "system:serviceaccount:kube-system:pod-labeler"


class PodLabeler(Controller):
    """Labels every pod seen=yes (a merge patch per pod that lacks the label)."""

    service_account = "pod-labeler"
    rbac_rules = (PolicyRule(verbs=("patch",), api_groups=("",), resources=("pods",)),)

    def __init__(self, endpoints) -> None:
        super().__init__("controller/pod-labeler", endpoints)

    def setup(self) -> None:
        self.pods = self.informer("pods")

    def sync(self, key, sync, now, out) -> None:
        namespace, name = key.split("/")
        pod = self.pods.indexer.get(namespace, name)
        if pod is not None and pod.metadata.labels.get("seen") != "yes":
            sync.patch(now, out, "pods", name, {"metadata": {"labels": {"seen": "yes"}}}, namespace=namespace)


class UngrantedLabeler(PodLabeler):
    service_account = "ungranted-labeler"
    rbac_rules = ()


def _run(controller_class) -> Cluster:
    config = ClusterConfig(nodes=2)
    cluster = Cluster(config, extra=[controller_class(config.apiserver_names())])
    cluster.apply(load_yaml((EXAMPLES / "web-service.yaml").read_text()))
    cluster.run(60 * S)
    return cluster


def test_an_own_controller_acts_as_its_service_account_within_its_declared_role():
    cluster = _run(PodLabeler)
    assert cluster.get("clusterroles", "", CONTROLLER_ROLE_PREFIX + "pod-labeler") is not None
    pods = [p for p in cluster.objects("pods", "default") if p.metadata.name.startswith("storefront-")]
    assert pods and all(p.metadata.labels.get("seen") == "yes" for p in pods)
    patches = [r for r in cluster.audit.records if r.user == LABELER]
    assert patches and {(r.verb, r.resource, r.code) for r in patches} == {("patch", "pods", 200)}


def test_an_own_controller_is_refused_what_its_role_does_not_grant():
    cluster = _run(UngrantedLabeler)
    refused = [r for r in cluster.audit.records if r.user == LABELER.replace("pod-labeler", "ungranted-labeler")]
    assert refused and {r.code for r in refused} == {403}
    assert not any(p.metadata.labels.get("seen") for p in cluster.objects("pods", "default"))


def test_a_controller_must_name_its_service_account():
    class Anonymous(Controller):
        pass

    with pytest.raises(ValueError, match="Anonymous names no service_account"):
        Anonymous("controller/anonymous", ["apiserver-0"])


def _every_running_pod_labeled(cluster, memo):
    for pod in cluster.objects("pods", "default"):
        if pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None \
                and pod.metadata.labels.get("seen") != "yes":
            yield f"pod {pod.metadata.name} runs without the label seen=yes"


def test_the_checker_explores_a_cluster_with_an_own_controller():
    """The documented plugin path: a machine whose extra component is an own controller, with an invariant of its
    own, explored under faults (its role is installed at boot, in the warmed-up snapshot the examples start from)."""
    from kmodel.invariants.registry import LIVENESS, Invariant
    from kmodel.pytest_plugin import KmodelMachine, _options, kmodel_test

    class Labeled(KmodelMachine):
        config = ClusterConfig(nodes=2)
        extra_invariants = (Invariant("pods-labeled", LIVENESS, "mine", "Running pods carry seen=yes.",
                                      _every_running_pod_labeled),)

        def extra_components(self):
            return [PodLabeler(self.config.apiserver_names())]

    _options.update(seed=4, profile="ci")
    try:
        kmodel_test(Labeled, max_examples=4, stateful_step_count=8)()
    finally:
        _options.update(seed=None, profile="dev")
