"""Protobuf bodies (kmodel.serve.protobuf): each served built-in kind round-trips from a JSON object through
upstream's protobuf messages and the server's decoder to the same JSON object; the rules of Kubernetes' JSON
mapping that a round trip cannot show (Go's encoder writes every value field) hold; bad bodies are 400."""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

import pytest
from google.protobuf.message import Message

from kmodel.apiserver.resources import SERVED as SERVED_RESOURCES
from kmodel.serve.body import BodyError
from kmodel.serve.protobuf import decode, messages, tojson, wire

_FIELDS = json.loads(tojson.JSON_FIELDS.read_text())
META = "k8s.io.apimachinery.pkg.apis.meta.v1"


# -- a JSON object -> protobuf encoder of the test's own, the inverse of Kubernetes' JSON mapping -------------

def _instant(text: str, msg: Message) -> None:
    at = datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    msg.seconds = int(at.timestamp())
    if len(text) > 20:
        msg.nanos = int(text[20:26]) * 1000


def _set_message(msg: Message, value: Any) -> None:
    name = msg.DESCRIPTOR.full_name
    if name in (f"{META}.Time", f"{META}.MicroTime"):
        _instant(value, msg)
    elif name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        msg.string = value
    elif name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        if isinstance(value, str):
            msg.type, msg.strVal = 1, value
        else:
            msg.type, msg.intVal = 0, value
    elif name in ("k8s.io.apimachinery.pkg.runtime.RawExtension", f"{META}.FieldsV1"):
        setattr(msg, msg.DESCRIPTOR.fields_by_number[1].name, json.dumps(value).encode())  # raw, Raw
    else:
        msg.SetInParent()
        _fill(msg, value)


def _scalar(field: Any, value: Any) -> Any:
    return base64.b64decode(value) if field.type == field.TYPE_BYTES else value


def _fill(msg: Message, obj: dict) -> None:
    descriptor = msg.DESCRIPTOR
    inline = [descriptor.fields_by_number[n] for n in _FIELDS.get(descriptor.full_name, {}).get("inline", [])]
    renamed = {j: int(n) for n, j in _FIELDS.get(descriptor.full_name, {}).get("renamed", {}).items()}
    for key, value in obj.items():
        field = descriptor.fields_by_name.get(key)
        if field is None and key in renamed:  # a JSON name that is not the proto name (uid for uID)
            field = descriptor.fields_by_number[renamed[key]]
        if field is None:  # a field of an embedded (json:",inline") struct
            [member] = [f for f in inline if key in f.message_type.fields_by_name]
            _fill(getattr(msg, member.name), {key: value})
            continue
        target = getattr(msg, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            for k, v in value.items():
                if value_field.message_type is not None:
                    _set_message(target[k], v)
                else:
                    target[k] = _scalar(value_field, v)
        elif field.is_repeated:
            for v in value:
                if field.message_type is not None:
                    _set_message(target.add(), v)
                else:
                    target.append(_scalar(field, v))
        elif field.message_type is not None:
            _set_message(target, value)
        else:
            setattr(msg, field.name, _scalar(field, value))


def protobuf_body(obj: dict, type_meta: bool = True) -> bytes:
    """`obj` as client-go's protobuf serializer sends it: the magic, then a runtime.Unknown around its message."""
    message = messages.message_class(messages.full_name(obj["apiVersion"], obj["kind"]))()
    _fill(message, {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
    unknown = messages.message_class(wire.UNKNOWN)()
    if type_meta:
        unknown.typeMeta.apiVersion, unknown.typeMeta.kind = obj["apiVersion"], obj["kind"]
    unknown.raw = message.SerializeToString()
    return wire.MAGIC + unknown.SerializeToString()


# -- one object of each served kind ----------------------------------------------------------------------------

META_FULL = {"name": "x", "namespace": "default", "labels": {"app": "web"}, "annotations": {"a": "b"},
             "uid": "0b9c6e0e-1", "resourceVersion": "42", "generation": 3, "creationTimestamp": "2026-01-02T03:04:05Z",
             "deletionTimestamp": "2026-01-02T03:05:05Z", "deletionGracePeriodSeconds": 0, "finalizers": ["f/x"],
             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-1",
                                  "controller": True, "blockOwnerDeletion": False}],
             "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                                "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]}
POD_SPEC = {
    "containers": [{"name": "web", "image": "nginx:1.27", "command": ["nginx"], "args": ["-g", "daemon off;"],
                    "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"},
                            {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "b",
                                                                            "optional": False}}}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                    "livenessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 1},
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/x", "readOnly": True}],
                    "imagePullPolicy": "IfNotPresent"}],
    "volumes": [{"name": "config", "configMap": {"name": "cm", "defaultMode": 420}},
                {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 0, "nodeSelector": {"disk": "ssd"},
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                          "topologyKey": "kubernetes.io/hostname"}}]}},
    "hostNetwork": True, "priority": 0, "nodeName": "node-1",
}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
CONDITION = {"type": "Available", "status": "True", "reason": "R", "message": "m",
             "lastTransitionTime": "2026-01-02T03:04:05Z"}
RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"], "resourceNames": ["p"]},
         {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]
SUBJECTS = [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"},
            {"kind": "ServiceAccount", "name": "default", "namespace": "default"}]
ROLE_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}

SAMPLES: dict[tuple[str, str], dict] = {
    ("v1", "Pod"): {"metadata": META_FULL, "spec": POD_SPEC, "status": {
        "phase": "Running", "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}], "hostIP": "10.0.0.1",
        "startTime": "2026-01-02T03:04:05Z", "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}],
        "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.27",
                               "imageID": "", "started": True,
                               "state": {"running": {"startedAt": "2026-01-02T03:04:05Z"}}}]}},
    ("v1", "Namespace"): {"metadata": {"name": "team", "labels": {"kubernetes.io/metadata.name": "team"}},
                          "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    ("v1", "Node"): {"metadata": {"name": "node-1"}, "spec": {
        "podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "unschedulable": True,
        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                    "timeAdded": "2026-01-02T03:04:05Z"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3900m"},
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-02T03:04:05Z"}],
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"kubeletVersion": "v1.31.0", "machineID": "", "systemUUID": "", "bootID": "",
                                "kernelVersion": "", "osImage": "", "containerRuntimeVersion": "",
                                "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}},
    ("v1", "Service"): {"metadata": {"name": "web", "namespace": "default"}, "spec": {
        "selector": {"app": "web"}, "type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
        "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "http"},
                  {"name": "metrics", "protocol": "TCP", "port": 9090, "targetPort": 9090}],
        "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"},
        "status": {"loadBalancer": {}}},
    ("v1", "Endpoints"): {"metadata": {"name": "web", "namespace": "default"}, "subsets": [{
        "addresses": [{"ip": "10.244.1.5", "nodeName": "node-1",
                       "targetRef": {"kind": "Pod", "name": "web-1", "namespace": "default", "uid": "u"}}],
        "notReadyAddresses": [{"ip": "10.244.2.5"}], "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}]},
    ("v1", "ConfigMap"): {"metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "b", "empty": ""},
                          "binaryData": {"bin": base64.b64encode(b"\x00\x01\xff").decode()}, "immutable": False},
    ("v1", "Event"): {"metadata": {"name": "web.1", "namespace": "default"},
                      "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default"},
                      "reason": "Scheduled", "message": "assigned", "source": {"component": "scheduler"},
                      "firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:04:06Z", "count": 2,
                      "type": "Normal", "eventTime": "2026-01-02T03:04:05.123456Z", "reportingComponent": "s",
                      "reportingInstance": "s-1", "action": "Binding"},
    ("v1", "Binding"): {"metadata": {"name": "web-1", "namespace": "default"},
                        "target": {"kind": "Node", "name": "node-1", "apiVersion": "v1"}},
    ("v1", "Secret"): {"metadata": {"name": "s", "namespace": "default"}, "type": "Opaque",
                       "data": {"p": base64.b64encode(b"q").decode()}, "immutable": True},
    ("v1", "ServiceAccount"): {"metadata": {"name": "sa", "namespace": "default"},
                               "secrets": [{"name": "sa-token"}], "automountServiceAccountToken": False},
    ("apps/v1", "Deployment"): {"metadata": META_FULL, "spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE, "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600, "paused": True,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}}},
        "status": {"observedGeneration": 3, "replicas": 2, "readyReplicas": 1, "conditions": [
            {**CONDITION, "lastUpdateTime": "2026-01-02T03:04:05Z"}]}},
    ("apps/v1", "ReplicaSet"): {"metadata": META_FULL, "spec": {"replicas": 2, "selector": SELECTOR,
                                                                  "template": TEMPLATE},
                                "status": {"replicas": 2, "fullyLabeledReplicas": 2, "conditions": [CONDITION]}},
    ("apps/v1", "StatefulSet"): {"metadata": META_FULL, "spec": {
        "replicas": 3, "selector": SELECTOR, "template": TEMPLATE, "serviceName": "web",
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
        "ordinals": {"start": 0}},
        "status": {"replicas": 3, "currentRevision": "web-1", "updateRevision": "web-2", "collisionCount": 0}},
    ("apps/v1", "ControllerRevision"): {"metadata": {"name": "web-1", "namespace": "default"}, "revision": 2,
                                        "data": {"spec": {"template": {"$patch": "replace", **TEMPLATE}}}},
    ("batch/v1", "Job"): {"metadata": {"name": "j", "namespace": "default"}, "spec": {
        "completions": 3, "parallelism": 0, "backoffLimit": 6, "ttlSecondsAfterFinished": 0,
        "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}},
        "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}},
        "status": {"active": 1, "startTime": "2026-01-02T03:04:05Z", "conditions": [
            {"type": "Complete", "status": "True", "lastProbeTime": "2026-01-02T03:04:05Z"}]}},
    ("scheduling.k8s.io/v1", "PriorityClass"): {"metadata": {"name": "batch"}, "value": 0,
                                                "description": "jobs", "preemptionPolicy": "Never"},
    ("coordination.k8s.io/v1", "Lease"): {"metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
                                          "spec": {"holderIdentity": "node-1_x", "leaseDurationSeconds": 15,
                                                   "acquireTime": "2026-01-02T03:04:05.000000Z",
                                                   "renewTime": "2026-01-02T03:04:07.250000Z",
                                                   "leaseTransitions": 0}},
    ("discovery.k8s.io/v1", "EndpointSlice"): {"metadata": {"name": "web-abc", "namespace": "default"},
                                               "addressType": "IPv4", "endpoints": [{
                                                   "addresses": ["10.244.1.5"], "nodeName": "node-1",
                                                   "conditions": {"ready": True, "serving": True,
                                                                  "terminating": False}}],
                                               "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
    ("rbac.authorization.k8s.io/v1", "Role"): {"metadata": {"name": "r", "namespace": "default"}, "rules": RULES},
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): {"metadata": {"name": "r"}, "rules": RULES,
                                                      "aggregationRule": {"clusterRoleSelectors": [SELECTOR]}},
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): {"metadata": {"name": "b", "namespace": "default"},
                                                      "subjects": SUBJECTS, "roleRef": ROLE_REF},
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): {"metadata": {"name": "b"}, "subjects": SUBJECTS,
                                                             "roleRef": ROLE_REF},
    # what `kubectl auth can-i list deployments.apps` sends: every unset string and status.denied left out,
    # status.allowed (no omitempty) kept at false
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {"metadata": {}, "spec": {"resourceAttributes": {
        "namespace": "default", "verb": "list", "group": "apps", "resource": "deployments"}},
        "status": {"allowed": False}},
    # what `kubectl auth whoami` sends is {"metadata": {}, "status": {"userInfo": {}}}; the answer's fields here
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {"metadata": {}, "status": {"userInfo": {
        "username": "alice", "groups": ["system:authenticated"]}}},
    # what `kubectl create token` sends, with the boundObjectRef the server refuses (its uid is proto name uID)
    ("authentication.k8s.io/v1", "TokenRequest"): {"metadata": {}, "spec": {
        "audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600,
        "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "u-1"}}},
    ("events.k8s.io/v1", "Event"): {"metadata": {"name": "e", "namespace": "default"},
                                    "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/c",
                                    "reportingInstance": "c-0", "action": "Sync", "reason": "Synced",
                                    "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                                    "note": "done", "type": "Normal",
                                    "series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:01.000000Z"}},
    ("v1", "DeleteOptions"): {"gracePeriodSeconds": 0, "propagationPolicy": "Foreground", "orphanDependents": False,
                              "preconditions": {"uid": "u-1", "resourceVersion": "7"}, "dryRun": ["All"]},
}
#: served kinds that take no protobuf body: upstream's CRDs live in apiextensions-apiserver (not vendored)
NOT_VENDORED = {("apiextensions.k8s.io/v1", "CustomResourceDefinition")}
SERVED = sorted({(r.api_version, r.kind) for r in SERVED_RESOURCES.values() if r.crd is None} - NOT_VENDORED)


@pytest.mark.parametrize("api_version,kind", SERVED + [("v1", "DeleteOptions"),
                                                      ("authentication.k8s.io/v1", "TokenRequest")])
def test_each_served_kind_round_trips_to_the_same_json(api_version: str, kind: str) -> None:
    assert (api_version, kind) in SAMPLES, f"add a sample {kind} to SAMPLES"
    obj = {"apiVersion": api_version, "kind": kind, **SAMPLES[(api_version, kind)]}
    assert decode(protobuf_body(obj), "v1", "Unused") == obj


def test_a_body_without_type_meta_takes_the_endpoints_kind() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", **SAMPLES[("v1", "ConfigMap")]}
    assert decode(protobuf_body(obj, type_meta=False), "v1", "ConfigMap") == obj


def _decoded(name: str, build: Any) -> dict:
    msg = messages.message_class(name)()
    build(msg)
    return tojson.message_json(msg)


def test_go_value_fields_at_zero_are_left_out_as_encoding_json_leaves_them_out() -> None:
    """Go's protobuf encoder writes every value field, zero or not: a value scalar tagged omitempty at its zero
    is left out, a pointer's zero and a value tagged without omitempty stay, a zero Time is null."""
    def build(d: Any) -> None:
        d.metadata.name, d.metadata.namespace, d.metadata.generation = "x", "", 0  # value fields, omitempty
        d.metadata.creationTimestamp.SetInParent()  # metav1.Time{}: null
        d.spec.replicas, d.spec.minReadySeconds, d.spec.paused = 0, 0, False  # *int32, int32, bool (omitempty)
        d.spec.template.spec.containers.add(name="c", image="i", workingDir="")

    assert _decoded("k8s.io.api.apps.v1.Deployment", build) == {
        "metadata": {"name": "x", "creationTimestamp": None},
        "spec": {"replicas": 0, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}

    def ref(r: Any) -> None:  # RoleRef's fields are tagged without omitempty
        r.roleRef.apiGroup, r.roleRef.kind, r.roleRef.name = "", "ClusterRole", "view"

    assert _decoded("k8s.io.api.rbac.v1.RoleBinding", ref) == {
        "roleRef": {"apiGroup": "", "kind": "ClusterRole", "name": "view"}}


def test_special_types_take_their_go_json_form() -> None:
    def build(p: Any) -> None:
        p.metadata.creationTimestamp.seconds, p.metadata.creationTimestamp.nanos = 1767323045, 999_999_999
        c = p.spec.containers.add(name="c")
        c.resources.limits["memory"].string = "128Mi"
        c.ports.add(containerPort=0)

    assert _decoded("k8s.io.api.core.v1.Pod", build) == {
        "metadata": {"creationTimestamp": "2026-01-02T03:04:05Z"},  # whole seconds: nanos dropped
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 0}],
                                 "resources": {"limits": {"memory": "128Mi"}}}]}}
    micro = messages.message_class(f"{META}.MicroTime")(seconds=1767323045, nanos=123_456_789)
    assert tojson.message_json(micro) == "2026-01-02T03:04:05.123456Z"


def test_map_keys_come_sorted_as_encoding_json_writes_them() -> None:
    def build(cm: Any) -> None:
        for key in ("zeta", "alpha", "Mid", "beta"):
            cm.data[key] = key

    assert list(_decoded("k8s.io.api.core.v1.ConfigMap", build)["data"]) == ["Mid", "alpha", "beta", "zeta"]


@pytest.mark.parametrize("ns,text", [(0, "0s"), (1, "1ns"), (1500, "1.5µs"), (1_500_000, "1.5ms"),
                                     (90 * 10**9, "1m30s"), (3_600 * 10**9, "1h0m0s"),
                                     (3_723_500_000_000, "1h2m3.5s"), (-2 * 10**9, "-2s")])
def test_durations_print_as_go_prints_them(ns: int, text: str) -> None:
    assert tojson.go_duration(ns) == text


@pytest.mark.parametrize("raw,message", [
    (b"\x0a\x02v1", "it must start with b'k8s\\x00'"),
    (wire.MAGIC + b"\xff\xff\xff", "could not be decoded as protobuf"),
    (wire.MAGIC + b"\x0a\x10\x0a\x02v1\x12\x0aWidgetKind", 'no kind "WidgetKind" is registered for version "v1"'),
    (wire.MAGIC + b"\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x1a\x04gzip",
     'contentEncoding "gzip" is not supported'),
])
def test_bad_bodies_are_400_with_what_is_wrong(raw: bytes, message: str) -> None:
    with pytest.raises(BodyError) as info:
        decode(raw, "v1", "ConfigMap")
    assert info.value.status.code == 400 and message in info.value.status.message
