"""merge-patch-applied (invariants/patches.py) holds on merge patches of every shape the rules send, and catches a
merge patch the API server applies wrongly (mistakes planted in kmodel/apiserver/patch.py, which it never calls)."""

from __future__ import annotations

import copy

import pytest

from kmodel.apiserver import patch as patch_module
from kmodel.checker.actions import ApplyDeployment, ApplyService
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Patch
from kmodel.invariants.patches import unmet
from kmodel.invariants.registry import REGISTRY

#: merge patches of every kind the checker sends: a label set and removed, a field set and nulled, lists replaced
PATCHES = (
    ("services", "default", "web", {"metadata": {"labels": {"tier": "canary"}}}),
    ("services", "default", "web", {"metadata": {"labels": {"tier": None}}}),
    ("nodes", "", "node-1", {"spec": {"unschedulable": True}}),
    ("nodes", "", "node-1", {"spec": {"unschedulable": None}}),
    ("nodes", "", "node-1", {"spec": {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}}),
    ("nodes", "", "node-1", {"spec": {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoExecute"}]}}),
    ("nodes", "", "node-1", {"spec": {"taints": None}}),
    ("deployments", "default", "web", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.26"}]}}}}),
    ("deployments", "default", "web", {"metadata": {"finalizers": ["example.com/hold"]}}),
    ("deployments", "default", "web", {"metadata": {"finalizers": None}}),
    ("services", "default", "web", {"spec": {"selector": {"app": "web", "tier": None},
                                             "ports": [{"port": 8080, "targetPort": 80, "protocol": "TCP"}]}}),
)


def patched_cluster(all_accepted: bool = True) -> tuple[Cluster, dict]:
    """Web's Deployment and Service, then every patch of PATCHES, the invariant asked after each (and each patch
    asked to have been accepted, unless a planted mistake may make the API server refuse some)."""
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 2).apply(cluster)
    ApplyService("web").apply(cluster)
    cluster.run(15_000)
    memo: dict = {}
    found = []
    for resource, ns, name, doc in PATCHES:
        cluster.submit(Patch(resource, ns, name, copy.deepcopy(doc)))
        cluster.run_for(2_000)
        assert cluster.kubectl.results[-1].ok or not all_accepted, cluster.kubectl.results[-1].response.body
        found += list(REGISTRY["merge-patch-applied"].check(cluster, memo))
    return cluster, {"found": found}


def test_merge_patch_applied_holds_for_every_shape_of_merge_patch():
    _, out = patched_cluster()
    assert out["found"] == []


def test_the_reference_reading_of_rfc_7386():
    obj = {"metadata": {"labels": {"a": "1"}, "resourceVersion": "9"},
           "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "replicas": 0}}
    assert list(unmet({"metadata": {"labels": {"a": "1", "b": None}, "resourceVersion": "3"},
                       "spec": {"ports": [{"port": 80}], "replicas": 0, "paused": False}}, obj)) == []
    assert list(unmet({"metadata": {"labels": {"a": None}}}, obj)) == ["metadata.labels.a is '1', which the patch nulled"]
    assert list(unmet({"spec": {"ports": [{"port": 80}, {"port": 53}]}}, obj)) == [
        "spec.ports is [{'port': 80, 'protocol': 'TCP'}], not the patch's [{'port': 80}, {'port': 53}]"]
    assert list(unmet({"spec": {"replicas": 2}}, obj)) == ["spec.replicas is 0, not the patch's 2"]


def _nulls_ignored(target, patch):
    """A merge patch that forgets RFC 7386's null: the key stays."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is not None:
            out[key] = _nulls_ignored(out.get(key), value)
    return out


def _old_lists_kept(target, patch):
    """The real merge patch, except that a list the target has survives a patch that replaces it (at any depth)."""
    return _keep_lists(target, patch_module.merge_patch(target, patch))


def _keep_lists(old, new):
    if isinstance(old, list) and isinstance(new, list):
        return old
    if isinstance(old, dict) and isinstance(new, dict):
        return {key: _keep_lists(old.get(key), value) for key, value in new.items()}
    return new


@pytest.mark.parametrize("mistake, caught", [
    (_nulls_ignored, "which the patch nulled"),
    (_old_lists_kept, "not the patch's"),
])
def test_merge_patch_applied_catches_a_mistake_in_the_api_servers_merge_patch(monkeypatch, mistake, caught):
    # the pipeline holds its own reference to the function (kmodel.apiserver.pipeline imports it by name)
    from kmodel.apiserver import pipeline

    assert pipeline.merge_patch is patch_module.merge_patch
    monkeypatch.setattr(pipeline, "merge_patch", mistake)
    _, out = patched_cluster(all_accepted=False)
    assert any(caught in f for f in out["found"]), out["found"]
    assert all(f.startswith("kubectl's merge patch of ") for f in out["found"])
