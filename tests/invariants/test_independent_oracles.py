"""Each invariant that used to share logic with the component it judges now computes its verdict itself: a
mistake planted in that component's logic (monkeypatched, subtly wrong as a real bug would be) is caught, and the
invariant holds on the same scenario with the logic as it is. (tests/invariants/test_oracle_imports.py keeps
invariants/ from importing such logic again.)"""

from __future__ import annotations

import attrs
import pytest

from kmodel.invariants._history import condition
from kmodel.invariants._selectors import InvalidSelector, selector_matches
from kmodel.invariants.registry import REGISTRY
from kmodel.apiserver import authorization, customresources, pipeline, ratcheting, resources, watchcache
from kmodel.checker.crd_actions import DATABASE_CRD, database_manifest
from kmodel.checker.fault_actions import probed_kubelet
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster import kubectl as kubectl_module
from kmodel.cluster.kubectl import Patch
from kmodel.controllers import deployment_logic, endpoints_logic, namespace as namespace_controller
from kmodel.objects import LabelSelector, LabelSelectorRequirement
from kmodel.objects.frozendict import freeze

from tests.invariants.test_invariants import call, manifest

S = 1000


def check(cluster: Cluster, name: str) -> list[str]:
    return list(REGISTRY[name].check(cluster, {}))


# -- converges-endpoints: the Endpoints controller's subsets ----------------------------------------------------

def _a_pod_of_the_web_service_failing_readiness() -> tuple[Cluster, str]:
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    pod = cluster.get("pods", "default", min(p.metadata.name for p in cluster.objects("pods", "default")))
    kubelet = probed_kubelet(cluster, pod.spec.node_name, pod.metadata.name, "web", "readiness")
    kubelet.fail_probe("default", pod.metadata.name, "web", "readiness")
    cluster.run(cluster.now + 30 * S)
    pod = cluster.get("pods", "default", pod.metadata.name)
    assert pod.status.phase == "Running" and condition(pod, "Ready").status == "False"
    return cluster, pod.metadata.uid


def _listed(cluster: Cluster) -> tuple[list[str], list[str]]:
    subsets = cluster.get("endpoints", "default", "storefront").subsets
    return ([a.target_ref.uid for s in subsets for a in s.addresses],
            [a.target_ref.uid for s in subsets for a in s.not_ready_addresses])


def test_converges_endpoints_holds_with_a_running_pod_that_is_not_ready():
    cluster, uid = _a_pod_of_the_web_service_failing_readiness()
    assert uid in _listed(cluster)[1]
    assert check(cluster, "converges-endpoints") == []


def test_converges_endpoints_catches_a_controller_that_takes_running_for_ready(monkeypatch):
    # the mistake: a pod counted ready once it is Running, whatever its Ready condition says
    monkeypatch.setattr(endpoints_logic, "is_pod_ready", lambda pod: pod.status.phase == "Running")
    cluster, uid = _a_pod_of_the_web_service_failing_readiness()
    assert uid in _listed(cluster)[0]  # the mutant lists it among the ready addresses
    [found] = check(cluster, "converges-endpoints")
    assert found.startswith("service default/storefront has Endpoints")
    assert found.endswith("not what its 3 selected pods imply")


# -- converges-replicas: the Deployment controller's new ReplicaSet ---------------------------------------------

def _web_with_a_template_label_added() -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=2))
    cluster.apply(manifest("web-service.yaml"))
    cluster.run(60 * S)
    labels = {"app": "storefront", "tier": "web"}  # the selector (app) still matches: a new template, a rollout
    template = {"metadata": {"labels": labels}}
    cluster.submit(Patch("deployments", "default", "storefront", {"spec": {"template": template}}))
    cluster.run(cluster.now + 120 * S)
    return cluster


def test_converges_replicas_holds_once_a_template_change_rolled_out():
    cluster = _web_with_a_template_label_added()
    assert check(cluster, "converges-replicas") == []
    assert {p.metadata.labels.get("tier") for p in cluster.objects("pods", "default")} == {"web"}


def test_converges_replicas_catches_a_controller_that_compares_only_the_templates_specs(monkeypatch):
    # the mistake: EqualIgnoreHash comparing the pod specs only, so a change of the template's labels finds the
    # old ReplicaSet as the new one and rolls nothing out, while the status says every replica is updated
    monkeypatch.setattr(deployment_logic, "equal_ignore_hash", lambda t1, t2: t1.spec == t2.spec)
    cluster = _web_with_a_template_label_added()
    assert {p.metadata.labels.get("tier") for p in cluster.objects("pods", "default")} == {None}
    [found] = check(cluster, "converges-replicas")
    assert found.startswith("deployment default/storefront has rolled out 3 replicas in ReplicaSet storefront-")
    assert "whose pod template is not the Deployment's (its new ReplicaSet is missing)" in found


# -- replicaset-within-expectations: its own label selector matching ------------------------------------------
# (No planted mistake in the ReplicaSet controller's selector shows through this invariant: a controller that
# misreads its selector releases or adopts pods, and creates fewer, never more, than it asked for; the selector
# only keeps the invariant from counting a pod being released. So the reference is checked against upstream's
# LabelSelectorAsSelector semantics directly.)

def _selector(match_labels: dict, *expressions: tuple) -> LabelSelector:
    return LabelSelector(match_labels=freeze(match_labels), match_expressions=tuple(
        LabelSelectorRequirement(key=k, operator=op, values=tuple(values)) for k, op, values in expressions))


@pytest.mark.parametrize("selector, labels, selected", [
    (None, {"app": "web"}, False),  # nil selects nothing
    (_selector({}), {}, True),  # empty selects everything
    (_selector({"app": "web"}), {"app": "web", "tier": "x"}, True),
    (_selector({"app": "web"}), {"app": "db"}, False),
    (_selector({"app": "web"}), {}, False),
    (_selector({}, ("tier", "In", ["a", "b"])), {"tier": "b"}, True),
    (_selector({}, ("tier", "In", ["a", "b"])), {}, False),
    (_selector({}, ("tier", "NotIn", ["a"])), {}, True),
    (_selector({}, ("tier", "NotIn", ["a"])), {"tier": "a"}, False),
    (_selector({}, ("tier", "Exists", [])), {"tier": ""}, True),
    (_selector({}, ("tier", "DoesNotExist", [])), {"tier": ""}, False),
    (_selector({"app": "web"}, ("tier", "NotIn", ["canary"])), {"app": "web", "tier": "canary"}, False),
])
def test_the_selector_reference_follows_label_selector_as_selector(selector, labels, selected):
    assert selector_matches(selector, labels) is selected


def test_the_selector_reference_refuses_an_unknown_operator_whatever_the_labels():
    with pytest.raises(InvalidSelector, match='"Gt" is not a valid label selector operator'):
        selector_matches(_selector({"app": "web"}, ("n", "Gt", ["1"])), {"app": "db"})


# -- crd-objects-removed: where the API server stores a CRD's objects --------------------------------------------

def _database_cluster() -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    cluster.apply([DATABASE_CRD])
    cluster.run(2 * S)
    cluster.apply([database_manifest("orders", 2)])
    cluster.run(cluster.now + 2 * S)
    assert [o.metadata.name for o in cluster.objects("databases", "default")] == ["orders"]
    return cluster


def test_crd_objects_removed_and_scoped_hold_for_objects_where_upstream_stores_them():
    cluster = _database_cluster()
    assert cluster.store.peek("/registry/example.com/databases/default/orders")
    assert check(cluster, "crd-objects-removed") == []
    assert check(cluster, "custom-objects-scoped") == []


def test_crd_objects_removed_catches_an_api_server_storing_under_the_singular_name(monkeypatch):
    # the mistake: the storage prefix built from spec.names.singular instead of the plural, everywhere the API
    # server (and the components) look a CRD's Resource up
    right = customresources.resource_for
    made: dict = {}

    def singular(crd):
        res = right(crd)
        got = made.get(id(res))
        if got is None or got[0] is not res:
            prefix = f"/registry/{crd.spec.group}/{crd.spec.names.singular}"
            got = made[id(res)] = (res, attrs.evolve(res, prefix=prefix))
        return got[1]

    for module in (customresources, watchcache, namespace_controller, kubectl_module):
        monkeypatch.setattr(module, "resource_for", singular)
    cluster = _database_cluster()
    assert cluster.store.peek("/registry/example.com/database/default/orders")
    assert check(cluster, "crd-objects-removed") == [
        "/registry/example.com/database/default/orders is stored, but no Established CRD serves it"]


@pytest.mark.parametrize("status", ["False", "Unknown"])
def test_crd_objects_removed_counts_a_crd_as_established_only_when_the_condition_is_true(status):
    cluster = _database_cluster()
    key = "/registry/apiextensions.k8s.io/customresourcedefinitions/databases.example.com"
    crd = cluster.store.peek(key)[0].value
    conditions = tuple(attrs.evolve(c, status=status) if c.type == "Established" else c for c in crd.status.conditions)
    cluster.store.put(key, attrs.evolve(crd, status=attrs.evolve(crd.status, conditions=conditions)))
    assert check(cluster, "crd-objects-removed") == [
        "/registry/example.com/databases/default/orders is stored, but no Established CRD serves it"]


# -- rbac-enforced: the API group a request names ---------------------------------------------------------------

_EVENTS_READER = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": "event-reader", "namespace": "default"},
                  "rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["list"]}]}
_ALICE_READS_EVENTS = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                       "metadata": {"name": "alice-reads-events", "namespace": "default"},
                       "subjects": [{"kind": "User", "name": "alice"}],
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "event-reader"}}


def _alice_lists_events_of_both_groups() -> tuple[Cluster, list[int]]:
    """alice may list core events (group ""), not those of group events.k8s.io."""
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(2 * S)
    assert call(cluster, "create", "roles", "default", body=_EVENTS_READER).code == 201
    assert call(cluster, "create", "rolebindings", "default", body=_ALICE_READS_EVENTS).code == 201
    codes = [call(cluster, "list", resource, "default", token="alice-token").code
             for resource in ("events", "events.events.k8s.io")]
    return cluster, codes


def test_rbac_enforced_holds_for_a_role_on_core_events_only():
    cluster, codes = _alice_lists_events_of_both_groups()
    assert codes == [200, 403]
    assert check(cluster, "rbac-enforced") == []


def test_rbac_enforced_catches_an_api_server_that_forgets_a_group_versions_group(monkeypatch):
    # the mistake: a group-qualified resource name resolved to the stored resource (core events), so the request
    # is authorized against the core group
    def forgetful(name):
        found = resources.RESOURCES.get(name) or resources.GROUP_VERSIONS.get(name)
        return resources.RESOURCES.get(found.name, found) if found is not None else None

    for module in (pipeline, authorization):
        monkeypatch.setattr(module, "served_resource", forgetful)
    cluster, codes = _alice_lists_events_of_both_groups()
    assert codes == [200, 200]
    [found] = check(cluster, "rbac-enforced")
    assert "list default/events.events.k8s.io" in found and "from alice" in found


# -- rbac-enforced: the Node authorizer's static rules ----------------------------------------------------------

def _node_1_reads(resources_: tuple[str, ...]) -> tuple[Cluster, list[int]]:
    """node-1's kubelet identity lists each resource in `resources_` in the default namespace."""
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(2 * S)
    return cluster, [call(cluster, "list", resource, "default", token="node-node-1-token").code
                     for resource in resources_]


def test_rbac_enforced_holds_for_what_upstreams_node_rules_give_a_node():
    cluster, codes = _node_1_reads(("pods", "services", "endpoints", "namespaces"))
    # NodeRules: pods and services may be read; endpoints only fetched one by one ("get"), namespaces not at all
    assert codes == [200, 200, 403, 403]
    assert check(cluster, "rbac-enforced") == []


def test_rbac_enforced_catches_a_node_authorizer_that_lets_a_node_list_secrets(monkeypatch):
    # the mistake: secrets added to the nodes' read rule, so a kubelet reads every secret of the cluster (upstream
    # gives a node only the secrets its pods reference, through the Node authorizer's graph)
    widened = authorization.NODE_RULES + (authorization._rule(authorization._READ, ("secrets",)),)
    monkeypatch.setattr(authorization, "NODE_RULES", widened)
    cluster, codes = _node_1_reads(("secrets",))
    assert codes == [200]
    [found] = check(cluster, "rbac-enforced")
    assert "list default/secrets" in found and "system:node:node-1" in found

# -- custom-objects-valid: the API server's validation ratcheting of set lists ------------------------------------

def _orders_with_a_long_tag_under_a_tightened_set() -> Cluster:
    """Database orders stored with spec.tags ["toolong", "b"], then its CRD tightened to tags of at most 3
    characters (an `x-kubernetes-list-type: set`)."""
    from tests.invariants.test_crd_invariants import with_tags_set
    cluster = _database_cluster()
    cluster.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [with_tags_set(10)]}}])
    cluster.run(cluster.now + 2 * S)
    cluster.submit(Patch("databases", "default", "orders", {"spec": {"tags": ["toolong", "b"]}}))
    cluster.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [with_tags_set(3)]}}])
    cluster.run(cluster.now + 2 * S)
    assert list(cluster.get("databases", "default", "orders").spec["tags"]) == ["toolong", "b"]
    return cluster


def test_custom_objects_valid_holds_when_the_api_server_refuses_a_changed_set_with_an_old_invalid_item():
    cluster = _orders_with_a_long_tag_under_a_tightened_set()
    memo: dict = {}
    assert list(REGISTRY["custom-objects-valid"].check(cluster, memo)) == []
    cluster.submit(Patch("databases", "default", "orders", {"spec": {"tags": ["toolong", "c"]}}))
    cluster.run(cluster.now + 2 * S)
    assert cluster.kubectl.results[-1].response.code == 422  # upstream: a changed set ratchets no item
    assert list(REGISTRY["custom-objects-valid"].check(cluster, memo)) == []


def test_custom_objects_valid_catches_a_ratcheting_that_correlates_set_items_by_index(monkeypatch):
    """The planted mistake: the API server's ratcheting ignores `x-kubernetes-list-type`, so it correlates a set's
    items by index and lets an invalid item that kept its place through a changed set. The oracle, which matched
    set items by index before, judged that write valid too."""
    cluster = _orders_with_a_long_tag_under_a_tightened_set()
    memo: dict = {}
    assert list(REGISTRY["custom-objects-valid"].check(cluster, memo)) == []
    monkeypatch.setattr(ratcheting, "LIST_TYPE", "x-kubernetes-list-type-ignored")
    cluster.submit(Patch("databases", "default", "orders", {"spec": {"tags": ["toolong", "c"]}}))
    cluster.run(cluster.now + 2 * S)
    assert cluster.kubectl.results[-1].response.code == 200
    [message] = REGISTRY["custom-objects-valid"].check(cluster, memo)
    assert message.endswith("breaks its CRD's schema: spec.tags.0: 'toolong' is too long")
