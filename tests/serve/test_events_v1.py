"""events.k8s.io/v1 Events served beside core/v1 Events, one storage under two group versions (kube-apiserver's
pkg/registry/events/rest), with the official Python client's EventsV1Api and kubectl 1.32: create, list, watch,
patch, the strict validation of events.k8s.io/v1, field selectors in its own field names, RBAC per group,
discovery, and `kubectl get events.events.k8s.io` / `kubectl events`."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from .kube_client import api_client, grant, raw
from .test_kubectl import MIN_MINOR, kubectl, kubectl_minor

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

needs_kubectl = pytest.mark.skipif(kubectl_minor() < MIN_MINOR, reason=f"needs kubectl 1.{MIN_MINOR} or later")
V1 = "/apis/events.k8s.io/v1"
NOON = datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone.utc)


def _namespace(served: Any, name: str) -> None:
    """A namespace of the test's own: only events.k8s.io/v1 Events in it, which carry the eventTime the Python
    client's EventsV1Event requires (a core Event listed through events.k8s.io/v1 has eventTime null, which the
    client refuses against a real cluster too)."""
    core = client.CoreV1Api(api_client(served.kubeconfig))
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))


def _event(name: str, namespace: str, note: str = "synced") -> Any:
    return client.EventsV1Event(
        metadata=client.V1ObjectMeta(name=name), event_time=NOON, type="Normal", reason="Synced", action="Reconcile",
        note=note, reporting_controller="example.com/operator", reporting_instance="operator-0",
        regarding=client.V1ObjectReference(kind="ConfigMap", name="settings", namespace=namespace))


def test_an_event_created_through_events_v1_reads_the_same_through_core_v1(served: Any) -> None:
    _namespace(served, "ev-same")
    events = client.EventsV1Api(api_client(served.kubeconfig))
    created = events.create_namespaced_event("ev-same", _event("e1", "ev-same"))
    assert (created.note, created.regarding.name, created.reporting_controller) == \
        ("synced", "settings", "example.com/operator")
    assert [e.metadata.name for e in events.list_namespaced_event("ev-same").items] == ["e1"]
    stored = client.CoreV1Api(api_client(served.kubeconfig)).read_namespaced_event("e1", "ev-same")
    assert (stored.message, stored.involved_object.name, stored.reporting_component, stored.action) == \
        ("synced", "settings", "example.com/operator", "Reconcile")
    code, text = raw(served, "GET", f"{V1}/namespaces/ev-same/events/e1")
    doc = json.loads(text)
    assert code == 200 and doc["apiVersion"] == "events.k8s.io/v1"
    assert "message" not in doc and "involvedObject" not in doc and doc["regarding"]["kind"] == "ConfigMap"
    assert doc["deprecatedFirstTimestamp"] is None  # metav1.Time is a struct: upstream writes it as null


def test_a_core_event_reads_through_events_v1_with_its_fields_renamed(served: Any) -> None:
    core = client.CoreV1Api(api_client(served.kubeconfig))
    core.create_namespaced_event("default", client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="legacy"), message="old style", reason="Pulled", count=3, type="Normal",
        involved_object=client.V1ObjectReference(kind="Pod", name="p", namespace="default"),
        source=client.V1EventSource(component="kubelet", host="node-1")))
    code, text = raw(served, "GET", f"{V1}/namespaces/default/events/legacy")
    doc = json.loads(text)
    assert code == 200
    assert (doc["note"], doc["regarding"]["name"], doc["deprecatedCount"], doc["deprecatedSource"]) == \
        ("old style", "p", 3, {"component": "kubelet", "host": "node-1"})
    assert doc["eventTime"] is None


def test_a_watch_through_events_v1_streams_events_v1_objects(served: Any) -> None:
    _namespace(served, "ev-watch")
    events = client.EventsV1Api(api_client(served.kubeconfig))
    events.create_namespaced_event("ev-watch", _event("w1", "ev-watch", note="first"))
    seen = []
    stream = watch.Watch()
    for item in stream.stream(events.list_namespaced_event, "ev-watch", timeout_seconds=5):
        seen.append((item["type"], item["object"].note))
        stream.stop()
    assert seen == [("ADDED", "first")]


def test_a_series_patch_through_events_v1_is_applied_in_its_own_field_names(served: Any) -> None:
    _namespace(served, "ev-patch")
    client.EventsV1Api(api_client(served.kubeconfig)).create_namespaced_event("ev-patch", _event("p1", "ev-patch"))
    patch = {"series": {"count": 2, "lastObservedTime": "2024-01-01T12:00:05.000000Z"}}
    code, text = raw(served, "PATCH", f"{V1}/namespaces/ev-patch/events/p1", body=patch,
                     content_type="application/merge-patch+json")
    assert code == 200 and json.loads(text)["series"]["count"] == 2
    code, text = raw(served, "PATCH", f"{V1}/namespaces/ev-patch/events/p1", body={"note": "changed"},
                     content_type="application/merge-patch+json")
    assert code == 422 and "message: Invalid value" in json.loads(text)["message"]  # immutable, named as upstream


def test_events_v1_refuses_what_its_strict_validation_refuses(served: Any) -> None:
    body = {"metadata": {"name": "bad"}, "note": "x" * 1025, "type": "Normal", "eventTime": "2024-01-01T00:00:00Z",
            "reportingController": "example.com/operator", "deprecatedCount": 2}
    code, text = raw(served, "POST", f"{V1}/namespaces/default/events", body=body)
    status = json.loads(text)
    assert code == 422 and status["details"]["group"] == "events.k8s.io"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert fields == ["reportingInstance", "action", "reason", "message", "count"]
    # the same Event without eventTime is a legacy one for core/v1, which takes it
    legacy = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "fine"}, "message": "x",
              "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}
    assert raw(served, "POST", "/api/v1/namespaces/default/events", body=legacy)[0] == 201
    code, text = raw(served, "POST", f"{V1}/namespaces/default/events", body={"metadata": {"name": "x"},
                                                                              "message": "core name"})
    assert code == 400 and 'unknown field "message"' in json.loads(text)["message"]


def test_a_field_selector_names_events_v1_fields(served: Any) -> None:
    _namespace(served, "ev-select")
    events = client.EventsV1Api(api_client(served.kubeconfig))
    events.create_namespaced_event("ev-select", _event("s1", "ev-select"))
    assert [e.metadata.name for e in events.list_namespaced_event(
        "ev-select", field_selector="regarding.name=settings,reportingController=example.com/operator").items] == ["s1"]
    assert events.list_namespaced_event("ev-select", field_selector="regarding.name=other").items == []


def test_rbac_decides_per_group(served: Any) -> None:
    """A Role over core events lets bob read them through core/v1 only: events.k8s.io is another API group."""
    grant(served, "core-events", client.RbacV1Subject(kind="User", name="bob", api_group="rbac.authorization.k8s.io"),
          client.V1PolicyRule(api_groups=[""], resources=["events"], verbs=["list"]))
    assert raw(served, "GET", "/api/v1/namespaces/default/events", user="bob")[0] == 200
    code, text = raw(served, "GET", f"{V1}/namespaces/default/events", user="bob")
    assert code == 403 and 'cannot list resource "events" in API group "events.k8s.io"' in json.loads(text)["message"]
    with pytest.raises(ApiException) as refused:
        client.EventsV1Api(api_client(served.kubeconfig, "bob")).list_namespaced_event("default")
    assert refused.value.status == 403


def test_discovery_lists_events_in_both_groups(served: Any) -> None:
    doc = json.loads(raw(served, "GET", V1)[1])
    assert [r["name"] for r in doc["resources"]] == ["events"] and doc["groupVersion"] == "events.k8s.io/v1"
    groups = [g["name"] for g in json.loads(raw(served, "GET", "/apis")[1])["groups"]]
    assert "events.k8s.io" in groups


@needs_kubectl
def test_kubectl_gets_events_v1_with_upstreams_columns(served: Any) -> None:
    _namespace(served, "ev-kubectl")
    client.EventsV1Api(api_client(served.kubeconfig)).create_namespaced_event("ev-kubectl", _event("k1", "ev-kubectl"))
    table = kubectl(served, "get", "events.events.k8s.io", "-n", "ev-kubectl").stdout.splitlines()
    assert table[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert table[1].split()[1:] == ["Normal", "Synced", "configmap/settings", "synced"]
    as_json = json.loads(kubectl(served, "get", "events.events.k8s.io", "k1", "-n", "ev-kubectl", "-o", "json").stdout)
    assert as_json["apiVersion"] == "events.k8s.io/v1" and as_json["note"] == "synced"
    listed = kubectl(served, "events", "-n", "ev-kubectl").stdout.splitlines()
    assert listed[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert listed[1].split()[1:] == ["Normal", "Synced", "ConfigMap/settings", "synced"]  # kubectl's own printer


def test_the_audit_trails_name_for_events_v1_reads_as_its_group_for_rbac():
    """The RBAC oracle (invariants/contract.py) reads audited requests, which name events.k8s.io/v1 Events by their
    group-qualified name."""
    from kmodel.apiserver.authorization import attributes_for

    a = attributes_for("list", "events.events.k8s.io", "default", "", "")
    assert (a.resource, a.api_group) == ("events", "events.k8s.io")
    assert attributes_for("list", "events", "default", "", "").api_group == ""
