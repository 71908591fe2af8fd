"""What the Accept header converts an answer to, through the official Python client against `kmodel serve`:
metadata-only reads (PartialObjectMetadata[List], as client-go's metadata client and the garbage collector ask),
Tables with the object each row carries (includeObject), watches of Tables and of metadata, a custom resource's
printer columns, refusals (406, 400), and what a delete answers for each kind."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, dynamic  # noqa: E402

from .kube_client import api_client, eventually, raw  # noqa: E402

META = "g=meta.k8s.io;v=v1"
PARTIAL_LIST = f"application/json;as=PartialObjectMetadataList;{META}"
PARTIAL = f"application/json;as=PartialObjectMetadata;{META}"
TABLE = f"application/json;as=Table;{META}"
#: what client-go's metadata client sends for a list: protobuf first, which this server passes over
METADATA_CLIENT_LIST = (f"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;{META},"
                        f"{PARTIAL_LIST},application/json")


@pytest.fixture(scope="module")
def core(served: Any) -> client.CoreV1Api:
    """The admin's typed client of the core group; `dynamic.DynamicClient(core.api_client)` is its dynamic one."""
    return client.CoreV1Api(api_client(served.kubeconfig))


def test_pods_and_nodes_listed_as_partial_object_metadata_through_the_dynamic_client(core: client.CoreV1Api) -> None:
    dyn = dynamic.DynamicClient(core.api_client)
    core.create_namespaced_pod("default", client.V1Pod(
        metadata=client.V1ObjectMeta(name="meta-only", labels={"app": "meta"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")])))
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    # the served cluster runs in real time: a write (a binding, a status, a Lease renewal) may land between the two
    # lists, so they are compared once both read the same revision
    for _ in range(20):
        listed = dyn.get(pods, namespace="default", header_params={"Accept": PARTIAL_LIST})
        full = core.list_namespaced_pod("default")
        if listed.metadata.resourceVersion == full.metadata.resource_version:
            break
    assert (listed.kind, listed.apiVersion) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert listed.metadata.resourceVersion == full.metadata.resource_version
    assert [i.metadata.name for i in listed.items] == [p.metadata.name for p in full.items]
    item = next(i for i in listed.items if i.metadata.name == "meta-only")
    assert (item.kind, item.apiVersion) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert item.metadata.labels.app == "meta" and item.metadata.uid
    assert set(item.to_dict()) == {"kind", "apiVersion", "metadata"}  # no spec, no status
    node_list = dyn.get(nodes, header_params={"Accept": METADATA_CLIENT_LIST})
    assert node_list.kind == "PartialObjectMetadataList"
    assert sorted(i.metadata.name for i in node_list.items) == ["node-1", "node-2", "node-3"]
    assert all(set(i.to_dict()) == {"kind", "apiVersion", "metadata"} for i in node_list.items)
    one = dyn.get(nodes, name="node-1", header_params={"Accept": PARTIAL})
    assert (one.kind, one.metadata.name) == ("PartialObjectMetadata", "node-1")


def test_pages_of_partial_object_metadata_keep_the_continue_token(served: Any, core: client.CoreV1Api) -> None:
    for i in range(3):
        core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=f"paged-{i}", labels={"set": "paged"})))
    status, text = raw(served, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=set%3Dpaged&limit=2",
                       accept=PARTIAL_LIST)
    page = json.loads(text)
    assert status == 200 and [i["metadata"]["name"] for i in page["items"]] == ["paged-0", "paged-1"]
    assert page["metadata"]["remainingItemCount"] == 1 and page["metadata"]["continue"]


def test_conversions_that_do_not_fit_are_not_acceptable(served: Any) -> None:
    status, text = raw(served, "GET", "/api/v1/nodes", accept=PARTIAL)
    body = json.loads(text)
    assert (status, body["reason"]) == (406, "NotAcceptable")
    assert body["message"] == "you requested PartialObjectMetadata, but the requested object is a list " \
                              "(*core.NodeList)"
    status, text = raw(served, "GET", "/api/v1/nodes/node-1", accept=PARTIAL_LIST)
    assert status == 406 and "is not a list (*core.Node)" in json.loads(text)["message"]
    status, text = raw(served, "GET", "/api/v1/nodes", accept=f"application/json;as=Shape;{META}")
    assert (status, json.loads(text)["message"]) == \
        (406, "only the following media types are accepted: application/json")
    # a choice the server cannot serve is passed over for the next one
    status, text = raw(served, "GET", "/api/v1/nodes", accept=f"application/json;as=Shape;{META},application/json")
    assert status == 200 and json.loads(text)["kind"] == "NodeList"


def test_table_rows_carry_what_include_object_asks(served: Any, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="tabled"), data={"a": "1", "b": "2"}))
    path = "/api/v1/namespaces/default/configmaps/tabled"
    status, text = raw(served, "GET", path, accept=TABLE)
    table = json.loads(text)
    assert status == 200 and table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    (row,) = table["rows"]
    assert row["cells"][:2] == ["tabled", 2]
    assert row["object"]["kind"] == "PartialObjectMetadata" and "data" not in row["object"]
    assert table["metadata"]["resourceVersion"] == row["object"]["metadata"]["resourceVersion"]
    whole = json.loads(raw(served, "GET", path + "?includeObject=Object", accept=TABLE)[1])["rows"][0]["object"]
    assert whole["kind"] == "ConfigMap" and whole["data"] == {"a": "1", "b": "2"}
    assert json.loads(raw(served, "GET", path + "?includeObject=None", accept=TABLE)[1])["rows"][0]["object"] is None
    status, text = raw(served, "GET", path + "?includeObject=All", accept=TABLE)
    assert (status, json.loads(text)["message"]) == (400, 'unrecognized includeObject value: "All"')


def _watch_events(served: Any, core: client.CoreV1Api, name: str, accept: str, act: Any) -> list[dict]:
    """The events a watch of the ConfigMap `name` (from the list's resourceVersion before `act()`, so that nothing
    is missed) sends in its 15 s of logical time, while `act()` runs."""
    start = core.list_namespaced_config_map("default").metadata.resource_version
    path = (f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={start}&timeoutSeconds=15"
            f"&fieldSelector=metadata.name%3D{name}")
    lines: list[dict] = []

    def read() -> None:
        status, text = raw(served, "GET", path, accept=accept)
        assert status == 200
        lines.extend(json.loads(line) for line in text.splitlines() if line)

    reader = threading.Thread(target=read)
    reader.start()
    act()
    reader.join(timeout=30)
    return lines


def test_a_watch_of_tables_sends_one_row_per_event_and_the_columns_once(served: Any, core: client.CoreV1Api) -> None:
    def act() -> None:
        core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="watched-table"), data={"k": "v"}))
        core.delete_namespaced_config_map("watched-table", "default")

    events = _watch_events(served, core, "watched-table", TABLE, act)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    first, second = (e["object"] for e in events)
    assert first["kind"] == second["kind"] == "Table"
    assert [c["name"] for c in first["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert second["columnDefinitions"] is None
    assert [r["cells"][:2] for r in first["rows"]] == [["watched-table", 1]]
    assert first["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_a_metadata_only_watch_sends_partial_object_metadata(served: Any, core: client.CoreV1Api) -> None:
    made = lambda: core.create_namespaced_config_map("default", client.V1ConfigMap(  # noqa: E731
        metadata=client.V1ObjectMeta(name="watched-meta"), data={"k": "v"}))
    (event,) = _watch_events(served, core, "watched-meta", PARTIAL, made)
    assert event["type"] == "ADDED" and event["object"]["kind"] == "PartialObjectMetadata"
    assert event["object"]["metadata"]["name"] == "watched-meta" and "data" not in event["object"]


PRINTED_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}},
                           "additionalPrinterColumns": [
                               {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                               {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
                               {"name": "Ready", "type": "string",
                                "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                               {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}


def test_custom_resources_print_their_crds_columns(served: Any) -> None:
    status, _ = raw(served, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=PRINTED_CRD)
    assert status == 201
    path = "/apis/example.com/v1/namespaces/default/widgets"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"size": 3, "color": "blue"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert eventually(lambda: raw(served, "POST", path, body=widget)[0] == 201)
    table = json.loads(raw(served, "GET", path, accept=TABLE)[1])
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]] == \
        [("Name", "string", 0), ("Size", "integer", 0), ("Color", "string", 1), ("Ready", "string", 0),
         ("Age", "date", 0)]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["w1", 3, "blue", "True"] and row["cells"][4].endswith("s")
    crds = json.loads(raw(served, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                          accept=TABLE)[1])
    assert [c["name"] for c in crds["columnDefinitions"]] == ["Name", "Created At"]
    (crd_row,) = crds["rows"]
    assert crd_row["cells"][0] == "widgets.example.com"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", crd_row["cells"][1])  # RFC 3339, whole seconds


def test_deletes_answer_as_the_registry_shapes_them(served: Any) -> None:
    """The generic registry answers a delete with a Status naming the object, except for the kinds that return the
    deleted object (pods, services, namespaces) and for an object that finalizers keep: that object, with its
    deletionTimestamp, 202 when the client asked for orphanDependents=false."""
    cms = "/api/v1/namespaces/default/configmaps"
    made = json.loads(raw(served, "POST", cms, body={"metadata": {"name": "short-lived"}})[1])
    status, text = raw(served, "DELETE", f"{cms}/short-lived")
    assert (status, json.loads(text)) == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "short-lived", "kind": "configmaps", "uid": made["metadata"]["uid"]}})
    for name, options, code in (("held", None, 200), ("held-orphaning", {"orphanDependents": False}, 202)):
        raw(served, "POST", cms, body={"metadata": {"name": name, "finalizers": ["example.com/hold"]}})
        status, text = raw(served, "DELETE", f"{cms}/{name}", body=options)
        held = json.loads(text)
        assert (status, held["kind"]) == (code, "ConfigMap") and held["metadata"]["deletionTimestamp"]
        raw(served, "PATCH", f"{cms}/{name}", body={"metadata": {"finalizers": None}},
            content_type="application/merge-patch+json")
    pods = "/api/v1/namespaces/default/pods"
    raw(served, "POST", pods, body={"metadata": {"name": "unbound-delete"},
                                     "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "i"}]}})
    status, text = raw(served, "DELETE", f"{pods}/unbound-delete")
    assert (status, json.loads(text)["kind"]) == (200, "Pod")
    services = "/api/v1/namespaces/default/services"
    raw(served, "POST", services, body={"metadata": {"name": "gone"}, "spec": {"ports": [{"port": 80}]}})
    assert json.loads(raw(served, "DELETE", f"{services}/gone")[1])["kind"] == "Service"
