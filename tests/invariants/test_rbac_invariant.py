"""rbac-enforced as an independent oracle: it matches RBAC rules and subjects itself (invariants/_rbac.py), so
a mistake planted in the API server's authorizer is caught."""

from __future__ import annotations

import pytest

from kmodel.invariants._rbac import rule_allows, subject_applies
from kmodel.invariants.registry import REGISTRY
from kmodel.apiserver import authorization
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.objects.rbac import PolicyRule, Subject

from tests.invariants.test_invariants import _pod, call

READER = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
          "metadata": {"name": "pod-reader", "namespace": "default"},
          "rules": [{"apiGroups": [""], "resources": ["pods", "*/scale"], "verbs": ["get", "list"]}]}
BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": "alice-reads-pods", "namespace": "default"},
           "subjects": [{"kind": "User", "name": "alice"}],
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}}


def _alice_reads_pods() -> tuple[Cluster, dict]:
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(2_000)
    assert call(cluster, "create", "roles", "default", body=READER).code == 201
    assert call(cluster, "create", "rolebindings", "default", body=BINDING).code == 201
    return cluster, {}


def check(cluster: Cluster, memo: dict) -> list[str]:
    return list(REGISTRY["rbac-enforced"].check(cluster, memo))


def test_rbac_enforced_holds_for_what_a_role_grants_and_refuses():
    cluster, memo = _alice_reads_pods()
    assert call(cluster, "list", "pods", "default", token="alice-token").code == 200
    assert call(cluster, "create", "pods", "default", body=_pod("p", ""), token="alice-token").code == 403
    assert check(cluster, memo) == []


@pytest.mark.parametrize("name, mistake", [
    ("verb_matches", lambda rule, verb: True),  # forgets the verbs
    ("resource_matches", lambda rule, resource, subresource: any(  # takes "*/scale" for any subresource
        r in ("*", resource) or r.startswith("*/") for r in rule.resources)),
])
def test_rbac_enforced_catches_a_mistake_in_the_authorizers_rule_matching(monkeypatch, name, mistake):
    monkeypatch.setattr(authorization, name, mistake)
    cluster, memo = _alice_reads_pods()
    if name == "verb_matches":
        assert call(cluster, "create", "pods", "default", body=_pod("p", ""), token="alice-token").code == 201
        target = "create default/pods"
    else:
        assert call(cluster, "create", "pods", "default", body=_pod("p", ""), token="admin-token").code == 201
        assert call(cluster, "get", "pods", "default", "p", subresource="status", token="alice-token").code == 200
        target = "get default/pods/p/status"
    [message] = check(cluster, memo)
    assert "alice" in message and target in message


def test_the_reference_matches_wildcards_subresources_names_and_service_accounts():
    rule = PolicyRule(verbs=("get",), api_groups=("apps",), resources=("deployments/scale",), resource_names=("web",))
    assert rule_allows(rule, "get", "apps", "deployments", "scale", "web")
    assert not rule_allows(rule, "get", "apps", "deployments", "", "web")
    assert not rule_allows(rule, "get", "apps", "deployments", "scale", "api")
    star = PolicyRule(verbs=("*",), api_groups=("*",), resources=("*/status",))
    assert rule_allows(star, "update", "", "pods", "status", "") and not rule_allows(star, "update", "", "pods", "", "")
    sa = Subject(kind="ServiceAccount", name="builder")
    assert subject_applies(sa, "system:serviceaccount:ci:builder", (), "ci")
    assert not subject_applies(sa, "system:serviceaccount::builder", (), "")  # no namespace: nobody
