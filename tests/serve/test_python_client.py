"""The official Python client (`kubernetes` from PyPI) against `kmodel serve`: each test asserts the server's
answers (codes, reasons, causes, resourceVersions, events)."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from .kube_client import api_client, eventually, raw  # noqa: E402


@pytest.fixture(scope="module")
def core(served: Any) -> client.CoreV1Api:
    return client.CoreV1Api(api_client(served.kubeconfig))


@pytest.fixture(scope="module")
def apps(served: Any) -> client.AppsV1Api:
    return client.AppsV1Api(api_client(served.kubeconfig))


def configmap(name: str, labels: dict | None = None, data: dict | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels or {}), data=data or {"k": "v"})


def failure(call: Callable[[], Any]) -> tuple[int, dict]:
    with pytest.raises(ApiException) as info:
        call()
    return info.value.status, json.loads(info.value.body)


def test_create_get_and_resource_versions(core: client.CoreV1Api) -> None:
    created, code, _ = core.create_namespaced_config_map_with_http_info("default", configmap("one"))
    assert code == 201
    assert created.metadata.uid and int(created.metadata.resource_version) > 0
    got, code, _ = core.read_namespaced_config_map_with_http_info("one", "default")
    assert code == 200
    assert got.metadata.resource_version == created.metadata.resource_version and got.data == {"k": "v"}
    status, body = failure(lambda: core.create_namespaced_config_map("default", configmap("one")))
    assert status == 409 and body["reason"] == "AlreadyExists" and body["details"]["name"] == "one"


def test_list_with_selectors_and_pages(core: client.CoreV1Api) -> None:
    for i in range(5):
        core.create_namespaced_config_map("default", configmap(f"page-{i}", {"set": "pages", "i": str(i)}))
    core.create_namespaced_config_map("default", configmap("other", {"set": "other"}))
    names, token, rvs = [], None, set()
    while True:
        page = core.list_namespaced_config_map("default", label_selector="set=pages", limit=2, _continue=token)
        names += [c.metadata.name for c in page.items]
        rvs.add(page.metadata.resource_version)
        token = page.metadata._continue
        assert len(page.items) <= 2
        if not token:
            break
    assert names == [f"page-{i}" for i in range(5)]
    assert len(rvs) == 1  # every page reports the first page's resourceVersion
    selected = core.list_namespaced_config_map("default", label_selector="set=pages,i in (1,3)")
    assert [c.metadata.name for c in selected.items] == ["page-1", "page-3"]
    by_name = core.list_namespaced_config_map("default", field_selector="metadata.name=other")
    assert [c.metadata.name for c in by_name.items] == ["other"]
    status, body = failure(lambda: core.list_namespaced_config_map("default", label_selector="a in (b"))
    assert status == 400 and body["reason"] == "BadRequest"


def test_watch_and_resume(core: client.CoreV1Api) -> None:
    start = core.list_namespaced_config_map("default").metadata.resource_version
    made = core.create_namespaced_config_map("default", configmap("watched"))
    changed = core.patch_namespaced_config_map("watched", "default", {"data": {"k": "w"}})
    w = watch.Watch()
    seen = []
    for event in w.stream(core.list_namespaced_config_map, "default", resource_version=start,
                          field_selector="metadata.name=watched", timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.resource_version))
        if len(seen) == 2:
            w.stop()
    assert seen == [("ADDED", made.metadata.resource_version), ("MODIFIED", changed.metadata.resource_version)]
    # resumed from the ADDED event's resourceVersion: only what came after it
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, "default", resource_version=made.metadata.resource_version,
                          field_selector="metadata.name=watched", timeout_seconds=5):
        assert (event["type"], event["object"].metadata.resource_version) == \
            ("MODIFIED", changed.metadata.resource_version)
        w.stop()


def test_watch_from_an_expired_resource_version_is_gone(served: Any, core: client.CoreV1Api) -> None:
    status, text = raw(served, "GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
    assert status == 200
    line = json.loads(text.splitlines()[0])
    assert line["type"] == "ERROR"
    assert line["object"]["code"] == 410 and line["object"]["reason"] == "Expired"
    assert line["object"]["message"].startswith("too old resource version: 1 (")
    # the Python client's watch raises it as a 410 ApiException
    with pytest.raises(ApiException) as info:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1",
                                      timeout_seconds=2):
            pass
    assert info.value.status == 410


def test_stale_update_conflicts(core: client.CoreV1Api) -> None:
    made = core.create_namespaced_config_map("default", configmap("stale"))
    core.patch_namespaced_config_map("stale", "default", {"data": {"k": "new"}})
    made.data = {"k": "mine"}
    status, body = failure(lambda: core.replace_namespaced_config_map("stale", "default", made))
    assert status == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on configmaps "stale": the object has been modified; '
                               'please apply your changes to the latest version and try again')


def test_invalid_object_has_causes(core: client.CoreV1Api) -> None:
    status, body = failure(lambda: core.create_namespaced_config_map("default", configmap("Bad_Name")))
    assert status == 422 and body["reason"] == "Invalid"
    assert body["details"]["kind"] == "ConfigMap" and body["details"]["name"] == "Bad_Name"
    assert [c["field"] for c in body["details"]["causes"]] == ["metadata.name"]
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"


def test_forbidden_without_a_role_binding_and_not_found(served: Any, core: client.CoreV1Api) -> None:
    bob = client.CoreV1Api(api_client(served.kubeconfig, "bob"))
    status, body = failure(lambda: bob.list_namespaced_pod("default"))
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == ('pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the '
                               'namespace "default"')
    status, body = failure(lambda: core.read_namespaced_config_map("nowhere", "default"))
    assert status == 404 and body["reason"] == "NotFound"
    assert body["message"] == 'configmaps "nowhere" not found' and body["details"] == {"name": "nowhere",
                                                                                      "kind": "configmaps"}


def deployment(name: str, replicas: int = 1) -> client.V1Deployment:
    labels = {"app": name}
    containers = [client.V1Container(name="web", image="nginx:1.27", env=[client.V1EnvVar(name="A", value="1")]),
                  client.V1Container(name="side", image="busybox:1.36")]
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(replicas=replicas, selector=client.V1LabelSelector(match_labels=labels),
                                     template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels),
                                                                       spec=client.V1PodSpec(containers=containers))))


def test_patch_in_each_format(served: Any, apps: client.AppsV1Api) -> None:
    apps.create_namespaced_deployment("default", deployment("patched"))

    def patch(body: Any, content_type: str) -> dict:
        status, text = raw(served, "PATCH", "/apis/apps/v1/namespaces/default/deployments/patched", body=body,
                           content_type=content_type)
        assert status == 200, text
        return json.loads(text)

    merged = patch({"metadata": {"labels": {"tier": "front"}}}, "application/merge-patch+json")
    assert merged["metadata"]["labels"] == {"tier": "front"}
    # strategic: the container named "web" is merged by its name, "side" stays, env merges by name
    strategic = patch({"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.28", "env": [{"name": "B", "value": "2"}]}]}}}},
        "application/strategic-merge-patch+json")
    containers = strategic["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("web", "nginx:1.28"), ("side", "busybox:1.36")]
    assert [e["name"] for e in containers[0]["env"]] == ["A", "B"]
    # a merge patch of the same list replaces it whole
    replaced = patch({"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "x:1"}]}}}},
                     "application/merge-patch+json")
    assert [c["name"] for c in replaced["spec"]["template"]["spec"]["containers"]] == ["only"]
    jsonpatched = patch([{"op": "replace", "path": "/spec/replicas", "value": 2},
                         {"op": "add", "path": "/metadata/labels/extra", "value": "yes"}],
                        "application/json-patch+json")
    assert jsonpatched["spec"]["replicas"] == 2 and jsonpatched["metadata"]["labels"]["extra"] == "yes"
    assert int(jsonpatched["metadata"]["resourceVersion"]) > int(replaced["metadata"]["resourceVersion"])
    # the official client's own patch method sends a strategic merge patch for a dict body
    scaled = apps.patch_namespaced_deployment("patched", "default", {"spec": {"replicas": 3}})
    assert scaled.spec.replicas == 3
    status, text = raw(served, "PATCH", "/apis/apps/v1/namespaces/default/deployments/patched",
                       body=[{"op": "test", "path": "/spec/replicas", "value": 9}],
                       content_type="application/json-patch+json")
    body = json.loads(text)
    assert status == 422 and body["reason"] == "Invalid"


def owned_replicasets(apps: client.AppsV1Api, name: str) -> list:
    return [rs for rs in apps.list_namespaced_replica_set("default", label_selector=f"app={name}").items]


@pytest.mark.parametrize("policy", ["Orphan", "Background", "Foreground"])
def test_deletion_with_each_propagation_policy(apps: client.AppsV1Api, policy: str) -> None:
    name = f"del-{policy.lower()}"
    made = apps.create_namespaced_deployment("default", deployment(name))
    assert eventually(lambda: owned_replicasets(apps, name))
    status, body = failure(lambda: apps.delete_namespaced_deployment(
        name, "default", body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-its-uid"))))
    assert status == 409 and body["reason"] == "Conflict" and "Precondition failed: UID" in body["message"]
    apps.delete_namespaced_deployment(name, "default", propagation_policy=policy,
                                      body=client.V1DeleteOptions(
                                          preconditions=client.V1Preconditions(uid=made.metadata.uid)))
    gone = eventually(lambda: not apps.list_namespaced_deployment(
        "default", field_selector=f"metadata.name={name}").items)
    assert gone
    if policy == "Orphan":
        replicasets = owned_replicasets(apps, name)
        assert len(replicasets) == 1 and not replicasets[0].metadata.owner_references
    else:
        assert eventually(lambda: not owned_replicasets(apps, name))


def test_delete_collection_and_graceful_pod_deletion(core: client.CoreV1Api) -> None:
    for i in range(3):
        core.create_namespaced_config_map("default", configmap(f"bulk-{i}", {"set": "bulk"}))
    deleted = core.delete_collection_namespaced_config_map("default", label_selector="set=bulk")
    assert deleted.status == "Success" or deleted is not None
    assert not core.list_namespaced_config_map("default", label_selector="set=bulk").items


def test_status_scale_and_binding_subresources(served: Any, core: client.CoreV1Api, apps: client.AppsV1Api) -> None:
    made = apps.create_namespaced_deployment("default", deployment("scaled", replicas=1))
    scale = apps.read_namespaced_deployment_scale("scaled", "default")
    assert (scale.spec.replicas, scale.metadata.name) == (1, "scaled")
    scaled = apps.patch_namespaced_deployment_scale("scaled", "default", {"spec": {"replicas": 2}})
    assert scaled.spec.replicas == 2
    assert int(scaled.metadata.resource_version) > int(made.metadata.resource_version)
    assert apps.read_namespaced_deployment("scaled", "default").spec.replicas == 2
    # a pod nobody schedules (a scheduler name no scheduler has), so nothing but this test writes it
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="unbound"),
                       spec=client.V1PodSpec(scheduler_name="by-hand",
                                             containers=[client.V1Container(name="c", image="busybox")]))
    core.create_namespaced_pod("default", pod)
    # a status update changes the status only
    current = core.read_namespaced_pod_status("unbound", "default")
    current.status.message = "set by hand"
    current.spec.active_deadline_seconds = 30
    updated = core.replace_namespaced_pod_status("unbound", "default", current)
    assert updated.status.message == "set by hand" and updated.spec.active_deadline_seconds is None
    # pods/binding by hand, then once more: 409
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "unbound"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    status, text = raw(served, "POST", "/api/v1/namespaces/default/pods/unbound/binding", body=binding)
    assert status == 201 and json.loads(text)["status"] == "Success"
    assert core.read_namespaced_pod("unbound", "default").spec.node_name == "node-1"
    status, text = raw(served, "POST", "/api/v1/namespaces/default/pods/unbound/binding", body=binding)
    assert status == 409 and json.loads(text)["message"] == \
        'Operation cannot be fulfilled on pods/binding "unbound": pod unbound is already assigned to node "node-1"'
