"""The server-side printers' cells (kmodel.serve.printers, kmodel.serve.tables) against the cases of upstream's
printers.go (Kubernetes 1.32), the JSONPath subset of CRD printer columns, and the Accept header's negotiation."""

from __future__ import annotations

from typing import Any

import pytest

from kmodel.apiserver.customresources import resource_for
from kmodel.apiserver.resources import RESOURCES
from kmodel.objects import load
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.unstructured import CustomObject
from kmodel.serve import jsonpath, negotiation, printers, tables

NOW = 600_000  # ten minutes of logical time


def pod(status: dict, *, deleting: bool = False, containers: int = 1, init: int = 0) -> Any:
    meta: dict = {"name": "p", "creationTimestamp": "2024-01-01T00:00:00Z"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:09:00Z"
    return load({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                 "spec": {"containers": [{"name": f"c{i}", "image": "i"} for i in range(containers)],
                          "initContainers": [{"name": f"i{i}", "image": "i"} for i in range(init)]},
                 "status": status})


RUNNING = {"name": "c0", "ready": True, "restartCount": 0, "image": "i", "imageID": "",
           "state": {"running": {"startedAt": "2024-01-01T00:00:01Z"}}}


@pytest.mark.parametrize("status, deleting, expected", [
    ({"phase": "Pending"}, False, ["0/1", "Pending", "0"]),
    ({"phase": "Running", "containerStatuses": [RUNNING]}, False, ["1/1", "Running", "0"]),
    ({"phase": "Running", "containerStatuses": [{**RUNNING, "ready": False}]}, False, ["0/1", "Running", "0"]),
    ({"phase": "Pending", "containerStatuses": [{**RUNNING, "ready": False,
                                                 "state": {"waiting": {"reason": "ContainerCreating"}}}]},
     False, ["0/1", "ContainerCreating", "0"]),
    ({"phase": "Running", "containerStatuses": [{**RUNNING, "restartCount": 2, "lastState": {"terminated": {
        "exitCode": 1, "finishedAt": "2024-01-01T00:08:00Z"}}}]}, False, ["1/1", "Running", "2 (2m ago)"]),
    ({"phase": "Failed", "containerStatuses": [{**RUNNING, "ready": False, "state": {"terminated": {
        "exitCode": 137, "signal": 9}}}]}, False, ["0/1", "Signal:9", "0"]),
    ({"phase": "Succeeded", "containerStatuses": [{**RUNNING, "ready": False, "state": {"terminated": {
        "exitCode": 0, "reason": "Completed"}}}]}, True, ["0/1", "Completed", "0"]),
    ({"phase": "Running", "containerStatuses": [RUNNING]}, True, ["1/1", "Terminating", "0"]),
    ({"phase": "Running", "reason": "NodeLost", "containerStatuses": [RUNNING]}, True, ["1/1", "Unknown", "0"]),
    ({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]},
     False, ["0/1", "SchedulingGated", "0"]),
])
def test_pod_ready_status_and_restarts(status: dict, deleting: bool, expected: list) -> None:
    row = printers.pod_row(pod(status, deleting=deleting), NOW)
    assert row[1:4] == expected and row[4] == "10m"


def test_pod_status_while_init_containers_run() -> None:
    waiting = {**RUNNING, "name": "i0", "ready": False, "state": {"waiting": {"reason": "PodInitializing"}}}
    assert printers.pod_row(pod({"phase": "Pending", "initContainerStatuses": [waiting]}, init=2), NOW)[2] == \
        "Init:0/2"
    crashing = {**waiting, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    assert printers.pod_row(pod({"phase": "Pending", "initContainerStatuses": [crashing]}, init=1), NOW)[2] == \
        "Init:CrashLoopBackOff"
    failed = {**waiting, "state": {"terminated": {"exitCode": 2}}}
    assert printers.pod_row(pod({"phase": "Pending", "initContainerStatuses": [failed]}, init=1), NOW)[2] == \
        "Init:ExitCode:2"


def event(**fields: Any) -> Any:
    return load({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e.1", "namespace": "default"},
                 "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{web}"},
                 "reason": "Pulled", "message": " pulled \n", "type": "Normal", **fields})


def test_event_cells() -> None:
    seen = event(firstTimestamp="2024-01-01T00:01:00Z", lastTimestamp="2024-01-01T00:08:00Z", count=3,
                 source={"component": "kubelet", "host": "node-1"})
    assert printers.event_row(seen, NOW) == ["2m", "Normal", "Pulled", "pod/web-0", "spec.containers{web}",
                                             "kubelet, node-1", "pulled", "9m", 3, "e.1"]
    # the events.k8s.io shape: eventTime, no count, the reporting controller as the source
    new_api = event(eventTime="2024-01-01T00:05:00.000000Z", reportingComponent="scheduler")
    assert printers.event_row(new_api, NOW)[:1] + printers.event_row(new_api, NOW)[5:9] == \
        ["5m", "scheduler", "pulled", "5m", 1]
    assert printers.event_row(event(involvedObject={"kind": "Node"}), NOW)[3] == "node"


def service(**spec: Any) -> Any:
    return load({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec})


def test_service_cells() -> None:
    cluster_ip = service(type="ClusterIP", clusterIPs=["10.96.0.10"], selector={"b": "2", "a": "1"},
                         ports=[{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}])
    assert printers.service_row(cluster_ip, NOW) == ["s", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP",
                                                     "<unknown>", "a=1,b=2"]
    node_port = service(type="NodePort", clusterIPs=["10.96.0.11"], externalIPs=["1.2.3.4"],
                        ports=[{"port": 80, "nodePort": 30080, "protocol": "TCP"}])
    assert printers.service_row(node_port, NOW)[3:5] == ["1.2.3.4", "80:30080/TCP"]
    assert printers.service_row(service(type="LoadBalancer"), NOW)[2:6] == ["<none>", "<pending>", "<none>",
                                                                             "<unknown>"]
    assert printers.service_row(service(type="ExternalName", externalName="db.example"), NOW)[3] == "db.example"


def test_endpoints_show_three_addresses_then_how_many_more() -> None:
    addresses = [{"ip": f"10.0.0.{i}"} for i in range(1, 5)]
    ep = load({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
               "subsets": [{"addresses": addresses, "ports": [{"port": 80}]}, {"addresses": [{"ip": "fd00::1"}],
                                                                               "ports": [{"port": 81}]}]})
    assert printers.endpoints_row(ep, NOW)[1] == "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more..."
    headless = load({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
                     "subsets": [{"addresses": [{"ip": "fd00::1"}]}]})
    assert printers.endpoints_row(headless, NOW)[1] == "fd00::1"
    assert printers.endpoints_row(load({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"}}),
                                  NOW)[1] == "<none>"


def test_node_status_roles_and_selectors() -> None:
    node = load({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": "n", "labels": {"node-role.kubernetes.io/control-plane": "",
                                                      "kubernetes.io/role": "edge"}},
                 "spec": {"unschedulable": True},
                 "status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert printers.node_row(node, NOW)[1:3] == ["NotReady,SchedulingDisabled", "control-plane,edge"]
    no_conditions = load({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert printers.node_row(no_conditions, NOW)[1:3] == ["Unknown", "<none>"]
    rs = load({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}, "matchExpressions": [
                   {"key": "tier", "operator": "In", "values": ["web", "api"]},
                   {"key": "canary", "operator": "DoesNotExist"}]},
                        "template": {"spec": {"containers": [{"name": "x", "image": "ix"},
                                                             {"name": "y", "image": "iy"}]}}}})
    assert printers.replicaset_row(rs, NOW)[1:] == [2, 0, 0, "<unknown>", "x,y", "ix,iy",
                                                    "app=a,!canary,tier in (api,web)"]


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True}]}}


def widget_resource(columns: list | None) -> Any:
    crd = load({**CRD, "spec": {**CRD["spec"], "versions": [
        {"name": "v1", "served": True, "storage": True, **({"additionalPrinterColumns": columns} if columns else {})}
    ]}})
    return resource_for(crd)


def test_custom_resource_columns_and_cells() -> None:
    res = widget_resource([
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
        {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
        {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"},
        {"name": "Zone", "type": "string", "jsonPath": ".metadata.labels.topology\\.kubernetes\\.io/zone",
         "priority": 1},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
        {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
        {"name": "Started", "type": "date", "jsonPath": ".status.started"},
        {"name": "Bad", "type": "date", "jsonPath": ".status.bad"}])
    obj = CustomObject("example.com/v1", "Widget",
                       ObjectMeta(name="w", labels={"topology.kubernetes.io/zone": "z1"}),
                       {"spec": {"replicas": 3.0, "ratio": 1, "on": True, "tags": ["a", "b"]},
                        "status": {"conditions": [{"type": "Synced", "status": "False"},
                                                  {"type": "Ready", "status": "True"}],
                                   "started": "2024-01-01T00:07:00Z", "bad": "yesterday"}})
    table = tables.table(res, [obj], NOW)
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]][:3] == \
        [("Name", "string", 0), ("Replicas", "integer", 0), ("Ratio", "number", 0)]
    assert table["rows"][0]["cells"] == ["w", 3, 1.0, True, '["a","b"]', "z1", "True", None, "3m", "<invalid>"]


def test_a_custom_resource_without_columns_has_age_and_crds_have_created_at() -> None:
    obj = CustomObject("example.com/v1", "Widget", ObjectMeta(name="w", creation_timestamp=NOW - 61_000))
    table = tables.table(widget_resource(None), [obj], NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["w", "61s"]
    crd = load({**CRD, "metadata": {**CRD["metadata"], "creationTimestamp": "2024-01-01T00:00:01.250Z"}})
    crds = tables.table(RESOURCES["customresourcedefinitions"], [crd], NOW)
    assert crds["rows"][0]["cells"] == ["widgets.example.com", "2024-01-01T00:00:01Z"]


@pytest.mark.parametrize("path, found", [
    (".a.b", 1), ("{.a.b}", 1), (".l[1].n", "y"), (".l[*].n", "x"), (".l[?(@.n==\"y\")].v", 2), (".l[5]", None),
    (".a.missing", None), ("a.b", None), (".l[?(@.n!=\"y\")]", None),
])
def test_jsonpath_subset(path: str, found: Any) -> None:
    doc = {"a": {"b": 1}, "l": [{"n": "x", "v": 1}, {"n": "y", "v": 2}]}
    value = jsonpath.first(doc, path)
    assert (None if value is jsonpath.MISSING else value) == found


@pytest.mark.parametrize("accept, kind", [
    ("", ""), ("application/json", ""), ("*/*", ""),
    ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
     "application/json", "Table"),  # kubectl get
    ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
     "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", "PartialObjectMetadataList"),
    ("application/json;as=Table;g=meta.k8s.io;v=v1beta1,application/json", ""),
])
def test_negotiation_takes_the_first_choice_served(accept: str, kind: str) -> None:
    assert negotiation.conversion(accept) == kind


def test_negotiation_refuses_only_conversions() -> None:
    with pytest.raises(negotiation.NotAcceptable) as info:
        negotiation.conversion("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1")
    assert info.value.status.code == 406
    # protobuf alone: the server encodes no protobuf (upstream's 406 for a media type it does not serve)
    with pytest.raises(negotiation.NotAcceptable):
        negotiation.conversion("application/vnd.kubernetes.protobuf")
    assert negotiation.conversion("application/vnd.kubernetes.protobuf,application/json") == ""  # kubectl's


def _job(spec: dict, status: dict, *, deleting: bool = False) -> Any:
    meta: dict = {"name": "j", "creationTimestamp": "2024-01-01T00:00:00Z"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:09:00Z"
    return load({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                 "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}, **spec},
                 "status": status})


def _cond(kind: str, status: str = "True") -> dict:
    return {"type": kind, "status": status}


@pytest.mark.parametrize("spec, status, deleting, expected", [
    ({"completions": 3}, {}, False, ["Running", "0/3", ""]),
    ({"completions": 3}, {"succeeded": 1, "startTime": "2024-01-01T00:05:00Z"}, False, ["Running", "1/3", "5m"]),
    ({"completions": 1}, {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                          "completionTime": "2024-01-01T00:00:12Z",
                          "conditions": [_cond("SuccessCriteriaMet"), _cond("Complete")]}, False,
     ["Complete", "1/1", "12s"]),
    ({"completions": 1}, {"conditions": [_cond("FailureTarget"), _cond("Failed")]}, True, ["Failed", "0/1", ""]),
    ({"completions": 1}, {"conditions": [_cond("FailureTarget")]}, False, ["FailureTarget", "0/1", ""]),
    ({"completions": 1}, {"conditions": [_cond("Complete", "False")]}, True, ["Terminating", "0/1", ""]),
    ({"parallelism": 2}, {"succeeded": 1}, False, ["Running", "1/1 of 2", ""]),
    ({"parallelism": 1}, {}, False, ["Running", "0/1", ""]),
])
def test_job_status_completions_and_duration(spec: dict, status: dict, deleting: bool, expected: list) -> None:
    row = printers.job_row(_job(spec, status, deleting=deleting), NOW)
    assert row[1:4] == expected and row[4] == "10m" and row[5:7] == ["c", "busybox"]


def test_secret_and_service_account_rows() -> None:
    secret = load({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"a": "eA==", "b": "eQ=="},
                   "metadata": {"name": "s", "creationTimestamp": "2024-01-01T00:00:00Z"}})
    columns, row = printers.PRINTERS["secrets"]
    assert [c["name"] for c in columns] == ["Name", "Type", "Data", "Age"]
    assert row(secret, NOW) == ["s", "Opaque", 2, "10m"]
    sa = load({"apiVersion": "v1", "kind": "ServiceAccount", "secrets": [{"name": "t"}],
               "metadata": {"name": "default", "creationTimestamp": "2024-01-01T00:00:00Z"}})
    columns, row = printers.PRINTERS["serviceaccounts"]
    assert [c["name"] for c in columns] == ["Name", "Secrets", "Age"]
    assert row(sa, NOW) == ["default", 1, "10m"]
