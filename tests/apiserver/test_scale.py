"""The scale subresource of the built-in workloads and of custom resources: get, update and every patch type."""

from __future__ import annotations

import pytest

from kmodel.apiserver.wire import PatchBody
from kmodel.objects import dump
from tests.apiserver.conftest import manifest, req
from tests.apiserver.test_crd_subresources import db  # noqa: F401 (the Database fixture)

NOW = 10_000


@pytest.fixture
def cart(api):
    """Deployment shop/cart (4 replicas, selector app=cart)."""
    r = api.handle(req("create", "deployments", "shop", body=dump(manifest("k-deployment-cart.yaml")[0])), now=NOW)
    assert r.code == 201
    return r.body


def scale_req(verb, body=None, resource="deployments", namespace="shop", name="cart", **kw):
    return req(verb, resource, namespace, name, subresource="scale", body=body, **kw)


def test_get_answers_the_deployments_scale(api, cart):
    r = api.handle(scale_req("get"), now=NOW)
    assert r.code == 200
    scale = dump(r.body)
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["metadata"]["name"] == "cart" and scale["metadata"]["uid"] == cart.metadata.uid
    assert scale["metadata"]["resourceVersion"] == cart.metadata.resource_version
    assert scale["spec"] == {"replicas": cart.spec.replicas}
    assert scale["status"] == {"replicas": 0, "selector": "app=cart"}


@pytest.mark.parametrize("patch", [
    {"spec": {"replicas": 5}},
    PatchBody("strategic", {"spec": {"replicas": 5}}),
    PatchBody("json", [{"op": "test", "path": "/spec/replicas", "value": 4},
                       {"op": "replace", "path": "/spec/replicas", "value": 5}]),
], ids=["merge", "strategic", "json"])
def test_every_patch_type_moves_the_parents_replicas(api, cart, patch):
    r = api.handle(scale_req("patch", patch), now=NOW)
    assert r.code == 200, r.body
    assert dump(r.body)["spec"] == {"replicas": 5} and dump(r.body)["kind"] == "Scale"
    stored = api.handle(req("get", "deployments", "shop", "cart"), now=NOW).body
    assert stored.spec.replicas == 5 and stored.metadata.generation == cart.metadata.generation + 1
    assert r.body.metadata.resource_version == stored.metadata.resource_version


@pytest.mark.parametrize("resource", ["replicasets", "statefulsets"])
def test_replicasets_and_statefulsets_serve_scale_too(api, resource):
    kind = {"replicasets": "ReplicaSet", "statefulsets": "StatefulSet"}[resource]
    body = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "w"}}, "serviceName": "w",
                     "template": {"metadata": {"labels": {"app": "w"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    if resource == "replicasets":
        del body["spec"]["serviceName"]
    assert api.handle(req("create", resource, "shop", body=body), now=NOW).code == 201
    r = api.handle(scale_req("patch", {"spec": {"replicas": 2}}, resource=resource, name="w"), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"] == {"replicas": 2}
    assert api.handle(req("get", resource, "shop", "w"), now=NOW).body.spec.replicas == 2


def test_an_update_takes_only_the_replicas_and_its_resource_version_is_a_precondition(api, cart):
    scale = dump(api.handle(scale_req("get"), now=NOW).body)
    scale["spec"]["replicas"] = 1
    scale["status"] = {"replicas": 9, "selector": "app=other"}
    r = api.handle(scale_req("update", scale), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"] == {"replicas": 1} and dump(r.body)["status"]["replicas"] == 0
    r = api.handle(scale_req("update", scale), now=NOW)  # the resourceVersion it read is stale now
    assert r.code == 409 and "the object has been modified" in r.body.message
    del scale["metadata"]["resourceVersion"]
    scale["spec"]["replicas"] = 2
    assert api.handle(scale_req("update", scale), now=NOW).code == 200  # no precondition: unconditional


def test_a_negative_or_mistyped_replicas_is_refused_and_nothing_is_written(api, cart):
    r = api.handle(scale_req("patch", {"spec": {"replicas": -1}}), now=NOW)
    assert r.code == 422
    assert r.body.message == ('Scale.autoscaling "cart" is invalid: spec.replicas: Invalid value: -1: must be greater '
                              'than or equal to 0')
    r = api.handle(scale_req("patch", {"spec": {"replicas": "two"}}), now=NOW)
    assert r.code == 400 and "cannot unmarshal string" in r.body.message
    stored = api.handle(req("get", "deployments", "shop", "cart"), now=NOW).body
    assert stored.metadata.resource_version == cart.metadata.resource_version


def test_a_patch_setting_a_stale_resource_version_or_another_uid_conflicts(api, cart):
    r = api.handle(scale_req("patch", {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 4}}), now=NOW)
    assert r.code == 409 and "the object has been modified" in r.body.message
    r = api.handle(scale_req("patch", {"metadata": {"uid": "not-cart"}, "spec": {"replicas": 4}}), now=NOW)
    assert r.code == 409
    assert r.body.message == (f'Operation cannot be fulfilled on deployments/scale.apps "cart": Precondition failed: '
                              f'UID in precondition: not-cart, UID in object meta: {cart.metadata.uid}')


def test_a_json_patch_that_fails_its_test_is_refused(api, cart):
    patch = PatchBody("json", [{"op": "test", "path": "/spec/replicas", "value": 9}])
    r = api.handle(scale_req("patch", patch), now=NOW)
    assert r.code == 422 and r.body.reason == "Invalid"


def test_scale_is_authorized_as_the_subresource(api, cart):
    """An API server authorizes patch of deployments/scale, not the parent's patch: a user whose Role names only
    deployments may patch the Deployment and not its scale."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]}]}
    assert api.handle(req("create", "roles", "shop", body=role), now=NOW).code == 201
    (binding,) = manifest("k-rolebinding-alice.yaml")
    assert api.handle(req("create", "rolebindings", "shop", body=dump(binding)), now=NOW).code == 201
    r = api.handle(req("patch", "deployments", "shop", "cart", body={"spec": {"replicas": 1}}, token="alice-token"),
                   now=NOW)
    assert r.code == 200
    r = api.handle(scale_req("patch", {"spec": {"replicas": 2}}, token="alice-token"), now=NOW)
    assert r.code == 403 and 'cannot patch resource "deployments/scale"' in r.body.message


def test_apply_of_a_scale_is_refused_with_a_message(api, cart):
    r = api.handle(scale_req("patch", PatchBody("apply", {"spec": {"replicas": 2}})), now=NOW)
    assert r.code == 415 and "not served by the model" in r.body.message


def test_a_custom_resources_scale_takes_merge_and_json_patches_but_not_strategic(api, db):
    r = api.handle(scale_req("patch", {"spec": {"replicas": 4}}, resource="databases", namespace="default",
                             name="orders"), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"] == {"replicas": 4}
    r = api.handle(scale_req("patch", PatchBody("json", [{"op": "replace", "path": "/spec/replicas", "value": 2}]),
                             resource="databases", namespace="default", name="orders"), now=NOW)
    assert r.code == 200 and dump(r.body)["spec"] == {"replicas": 2}
    r = api.handle(scale_req("patch", PatchBody("strategic", {"spec": {"replicas": 3}}), resource="databases",
                             namespace="default", name="orders"), now=NOW)
    assert r.code == 415
    stored = api.handle(req("get", "databases", "default", "orders"), now=NOW).body
    assert dump(stored)["spec"]["replicas"] == 2


def test_a_custom_resources_scale_patch_past_the_schemas_maximum_is_invalid(api, db):
    r = api.handle(scale_req("patch", {"spec": {"replicas": 6}}, resource="databases", namespace="default",
                             name="orders"), now=NOW)
    assert r.code == 422 and "spec.replicas in body should be less than or equal to 5" in r.body.message
