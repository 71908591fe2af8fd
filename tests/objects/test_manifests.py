"""Every example manifest and kubectl's dry-run output load, round-trip and validate."""

import pathlib

import attrs
import pytest

from kmodel.objects import (
    Deployment, Node, Pod, decode, dump, dump_yaml, load, load_yaml, parse_quantity, validate, with_defaults,
)

MANIFEST_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples"
#: folders of manifests of custom kinds (declared by CRDs): the API server's to decode, tests/apiserver/test_crd.py
CUSTOM_FOLDERS = ("objects", "operators")
MANIFESTS = sorted(m for m in MANIFEST_DIR.rglob("*.yaml")
                   if m.relative_to(MANIFEST_DIR).parts[0] not in CUSTOM_FOLDERS)

KUBECTL_DRY_RUN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels:
    app: web
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: nginx
        resources: {}
status: {}
"""


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(MANIFEST_DIR)))
def test_manifest_loads_and_round_trips(path):
    objs = load_yaml(path.read_text())
    assert objs
    for obj in objs:
        assert load(dump(obj)) == obj
        assert load_yaml(dump_yaml(obj)) == [obj]
        defaulted = with_defaults(obj)
        assert load(dump(defaulted)) == defaulted
        assert validate(defaulted) == [], [str(e) for e in validate(defaulted)]
        # defaulting is idempotent, and an object defaulted already (one read back from the store) comes back as
        # itself, not as an equal copy: what is keyed on it (the fingerprint memo, validation's memos) still hits
        assert with_defaults(defaulted) is defaulted
        assert with_defaults(load(dump(defaulted))) == defaulted


def test_kubectl_dry_run_output_loads_and_defaults():
    (d,) = load_yaml(KUBECTL_DRY_RUN)
    assert isinstance(d, Deployment)
    assert d.metadata.creation_timestamp is None
    d2 = with_defaults(d)
    assert d2.spec.strategy.type == "RollingUpdate"
    assert d2.spec.strategy.rolling_update.max_surge == "25%"
    assert d2.spec.revision_history_limit == 10 and d2.spec.progress_deadline_seconds == 600
    assert d2.spec.template.spec.containers[0].image_pull_policy == "Always"  # untagged image
    assert [e.field for e in validate(d2)] == ["metadata.namespace"]  # the API server fills it from the URL
    d3 = attrs.evolve(d2, metadata=attrs.evolve(d2.metadata, namespace="default"))
    assert validate(d3) == []


def test_node_capacity_is_exact():
    (node,) = load_yaml((MANIFEST_DIR / "nodes" / "node-big.yaml").read_text())
    assert isinstance(node, Node)
    assert node.status.capacity["cpu"].milli_value() == 16000
    assert node.status.allocatable["cpu"].milli_value() == 15800
    assert node.status.allocatable["memory"].value() == 63 * 2**30
    assert dump(node)["status"]["allocatable"]["cpu"] == "15800m"


def test_objects_are_immutable_values():
    (pod,) = [o for o in load_yaml((MANIFEST_DIR / "nodes" / "static-pod-etcd.yaml").read_text())]
    assert isinstance(pod, Pod)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        pod.metadata.name = "x"
    with pytest.raises(TypeError):
        pod.metadata.labels["a"] = "b"
    assert isinstance(pod.spec.containers, tuple)
    assert hash(pod) == hash(load(dump(pod)))
    renamed = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, name="etcd-2"))
    assert renamed.spec is pod.spec  # shared, not copied


def test_timestamps_are_logical_milliseconds():
    pod = load({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "creationTimestamp": "2024-01-01T00:00:05Z", "deletionTimestamp": "2024-01-01T00:00:05.250Z"}})
    assert pod.metadata.creation_timestamp == 5000
    assert pod.metadata.deletion_timestamp == 5250
    assert dump(pod)["metadata"]["creationTimestamp"] == "2024-01-01T00:00:05Z"
    assert load(dump(pod)) == pod


def test_decode_applies_defaults_and_load_does_not():
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
            "spec": {"ports": [{"port": 80}]}}
    assert load(body).spec.ports[0].protocol == ""
    svc = decode(body)
    assert svc.spec.ports[0].protocol == "TCP" and svc.spec.ports[0].target_port == 80
    assert svc.spec.type == "ClusterIP"


def test_requests_default_to_limits_for_pods():
    pod = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                  "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}})
    assert pod.spec.containers[0].resources.requests["cpu"] == parse_quantity("1")
