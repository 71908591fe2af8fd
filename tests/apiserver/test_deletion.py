"""DELETE with graceful deletion, finalizers, propagation policies and the namespace lifecycle, through
Pipeline.handle (kmodel/apiserver/deletion.py)."""

from __future__ import annotations

from kmodel.apiserver.resources import RESOURCES, object_key
from kmodel.objects import Node, ObjectMeta, dump
from tests.apiserver.conftest import req

NOW = 10_000


def deployment_body(name="web", ns="shop", finalizers=()):
    meta = {"name": name, "namespace": ns}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def pod_body(name="p", ns="shop", node="", finalizers=()):
    meta = {"name": name, "namespace": ns}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    spec = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def stored(store, resource, ns, name):
    kv = store.range(object_key(RESOURCES[resource], ns, name)).kvs
    return kv[0].value if kv else None


def create(api, resource, ns, body, now=NOW):
    r = api.handle(req("create", resource, ns, body=body), now=now)
    assert r.code == 201, r.body
    return r.body


# --- finalizers ------------------------------------------------------------------------------------------

def test_an_object_with_a_finalizer_stays_deleting_until_the_last_finalizer_goes(api, store):
    create(api, "deployments", "shop", deployment_body(finalizers=("example.com/hold",)))
    r = api.handle(req("delete", "deployments", "shop", "web"), now=NOW + 5)
    assert r.code == 200
    d = stored(store, "deployments", "shop", "web")
    assert d.metadata.deletion_timestamp == NOW + 5 and d.metadata.deletion_grace_period_seconds == 0
    assert d.metadata.generation == 2  # markAsDeleting moves the generation on
    patch = {"metadata": {"finalizers": []}}
    assert api.handle(req("patch", "deployments", "shop", "web", body=patch), now=NOW + 9).code == 200
    assert stored(store, "deployments", "shop", "web") is None


def test_a_second_delete_of_an_object_kept_by_a_finalizer_writes_nothing(api, store):
    create(api, "deployments", "shop", deployment_body(finalizers=("example.com/hold",)))
    api.handle(req("delete", "deployments", "shop", "web"), now=NOW + 5)
    revision = store.revision
    assert api.handle(req("delete", "deployments", "shop", "web"), now=NOW + 8).code == 200
    assert store.revision == revision


def test_a_node_with_a_finalizer_is_kept_too(api, store):
    node = Node(metadata=ObjectMeta(name="n1", finalizers=("example.com/hold",)))
    assert api.handle(req("create", "nodes", body=dump(node)), now=NOW).code == 201
    api.handle(req("delete", "nodes", name="n1"), now=NOW + 1)
    assert stored(store, "nodes", "", "n1").metadata.deletion_timestamp == NOW + 1


# --- graceful and force deletes of pods ------------------------------------------------------------------

def test_a_scheduled_pod_gets_its_grace_period_and_a_shorter_one_moves_the_deadline_back(api, store):
    create(api, "pods", "shop", pod_body(node="node-1"))
    api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=60), now=NOW)
    p = stored(store, "pods", "shop", "p")
    assert (p.metadata.deletion_timestamp, p.metadata.deletion_grace_period_seconds) == (NOW + 60_000, 60)
    api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=10), now=NOW + 1_000)
    p = stored(store, "pods", "shop", "p")
    # counted from the first delete, as rest.BeforeDelete does
    assert (p.metadata.deletion_timestamp, p.metadata.deletion_grace_period_seconds) == (NOW + 10_000, 10)
    revision = store.revision
    api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=20), now=NOW + 2_000)
    assert store.revision == revision  # a longer grace period leaves the pending deletion as it is


def test_a_force_delete_removes_a_running_pod_at_once(api, store):
    create(api, "pods", "shop", pod_body(node="node-1"))
    assert api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=0), now=NOW).code == 200
    assert stored(store, "pods", "shop", "p") is None


def test_a_force_deleted_pod_with_a_finalizer_waits_for_it(api, store):
    create(api, "pods", "shop", pod_body(node="node-1", finalizers=("example.com/hold",)))
    api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=0), now=NOW)
    p = stored(store, "pods", "shop", "p")
    assert (p.metadata.deletion_timestamp, p.metadata.deletion_grace_period_seconds) == (NOW, 0)


def test_a_graceful_pod_with_a_finalizer_is_removed_once_both_are_done(api, store):
    create(api, "pods", "shop", pod_body(node="node-1", finalizers=("example.com/hold",)))
    api.handle(req("delete", "pods", "shop", "p"), now=NOW)
    api.handle(req("patch", "pods", "shop", "p", body={"metadata": {"finalizers": []}}), now=NOW + 1)
    assert stored(store, "pods", "shop", "p") is not None  # its grace period still runs
    api.handle(req("delete", "pods", "shop", "p", grace_period_seconds=0), now=NOW + 2)  # the kubelet's
    assert stored(store, "pods", "shop", "p") is None


# --- propagation policies --------------------------------------------------------------------------------

def test_orphan_and_foreground_put_their_finalizers_on_the_owner(api, store):
    create(api, "deployments", "shop", deployment_body("a"))
    create(api, "deployments", "shop", deployment_body("b"))
    api.handle(req("delete", "deployments", "shop", "a", propagation_policy="Orphan"), now=NOW)
    api.handle(req("delete", "deployments", "shop", "b", propagation_policy="Foreground"), now=NOW)
    assert stored(store, "deployments", "shop", "a").metadata.finalizers == ("orphan",)
    assert stored(store, "deployments", "shop", "b").metadata.finalizers == ("foregroundDeletion",)
    assert stored(store, "deployments", "shop", "b").metadata.deletion_timestamp == NOW


def test_background_removes_at_once_and_a_later_policy_replaces_the_finalizer(api, store):
    create(api, "deployments", "shop", deployment_body("a"))
    api.handle(req("delete", "deployments", "shop", "a", propagation_policy="Background"), now=NOW)
    assert stored(store, "deployments", "shop", "a") is None
    create(api, "deployments", "shop", deployment_body("b", finalizers=("example.com/hold",)))
    api.handle(req("delete", "deployments", "shop", "b", propagation_policy="Orphan"), now=NOW)
    api.handle(req("delete", "deployments", "shop", "b", propagation_policy="Foreground"), now=NOW + 1)
    assert stored(store, "deployments", "shop", "b").metadata.finalizers == ("example.com/hold", "foregroundDeletion")


def test_an_unknown_propagation_policy_is_invalid_and_changes_nothing(api, store):
    create(api, "deployments", "shop", deployment_body("a"))
    revision = store.revision
    r = api.handle(req("delete", "deployments", "shop", "a", propagation_policy="Sideways"), now=NOW)
    assert r.code == 422
    assert 'propagationPolicy: Unsupported value: "Sideways"' in r.body.message
    assert store.revision == revision


# --- namespaces ------------------------------------------------------------------------------------------

def namespace_body(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_a_new_namespace_carries_the_kubernetes_finalizer(api, store):
    ns = create(api, "namespaces", "", namespace_body("team"))
    assert ns.spec.finalizers == ("kubernetes",) and ns.status.phase == "Active"


def test_deleting_a_namespace_makes_it_terminating_and_refuses_new_content(api, store):
    create(api, "namespaces", "", namespace_body("team"))
    assert api.handle(req("delete", "namespaces", name="team"), now=NOW).code == 200
    ns = stored(store, "namespaces", "", "team")
    assert ns.metadata.deletion_timestamp == NOW and ns.status.phase == "Terminating"
    r = api.handle(req("create", "pods", "team", body=pod_body(ns="team")), now=NOW + 1)
    assert (r.code, r.body.message) == (403, 'pods "p" is forbidden: unable to create new content in namespace '
                                             'team because it is being terminated')
    assert api.audit.records[-1].decision == "allow"  # refused by admission, not by authorization
    refused = api.handle(req("create", "pods", "team", token="bob-token", body=pod_body(ns="team")), now=NOW + 1)
    assert refused.code == 403
    assert (api.audit.records[-1].user, api.audit.records[-1].decision) == ("bob", "forbid")
    # a second delete waits for the finalizer
    api.handle(req("delete", "namespaces", name="team"), now=NOW + 2)
    assert stored(store, "namespaces", "", "team") is not None


def test_an_update_keeps_spec_finalizers_and_finalize_removes_the_namespace(api, store):
    create(api, "namespaces", "", namespace_body("team"))
    ns = stored(store, "namespaces", "", "team")
    emptied = dump(ns)
    emptied["spec"]["finalizers"] = []
    assert api.handle(req("update", "namespaces", name="team", body=emptied), now=NOW).code == 200
    assert stored(store, "namespaces", "", "team").spec.finalizers == ("kubernetes",)
    api.handle(req("delete", "namespaces", name="team"), now=NOW)
    ns = dump(stored(store, "namespaces", "", "team"))
    ns["spec"]["finalizers"] = []
    r = api.handle(req("update", "namespaces", name="team", subresource="finalize", body=ns), now=NOW + 1)
    assert r.code == 200, r.body
    assert stored(store, "namespaces", "", "team") is None


def test_finalizing_a_namespace_not_being_deleted_keeps_it(api, store):
    create(api, "namespaces", "", namespace_body("team"))
    ns = dump(stored(store, "namespaces", "", "team"))
    ns["spec"]["finalizers"] = []
    api.handle(req("update", "namespaces", name="team", subresource="finalize", body=ns), now=NOW)
    assert stored(store, "namespaces", "", "team").spec.finalizers == ()
