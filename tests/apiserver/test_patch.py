"""JSON patch and strategic merge patch (kmodel/apiserver/patch.py)."""

from __future__ import annotations

import pytest

from kmodel.apiserver.patch import PatchError, json_patch, strategic_merge_patch

POD = {"metadata": {"name": "p", "finalizers": ["a"], "labels": {"x": "1"}},
       "spec": {"containers": [{"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}],
                                "ports": [{"containerPort": 80}]},
                               {"name": "side", "image": "busybox"}]}}


def test_strategic_merge_merges_lists_by_their_merge_keys() -> None:
    out = strategic_merge_patch(POD, {"spec": {"containers": [
        {"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}], "ports": [{"containerPort": 81}]},
        {"name": "new", "image": "x"}]}})
    containers = out["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("web", "nginx:2"), ("side", "busybox"), ("new", "x")]
    assert [e["name"] for e in containers[0]["env"]] == ["A", "B"]
    assert [p["containerPort"] for p in containers[0]["ports"]] == [80, 81]
    assert POD["spec"]["containers"][0]["image"] == "nginx:1"  # the target is left as it was


def test_strategic_merge_directives() -> None:
    deleted = strategic_merge_patch(POD, {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}})
    assert [c["name"] for c in deleted["spec"]["containers"]] == ["web"]
    replaced = strategic_merge_patch(POD, {"metadata": {"labels": {"$patch": "replace", "y": "2"}}})
    assert replaced["metadata"]["labels"] == {"y": "2"}
    union = strategic_merge_patch(POD, {"metadata": {"finalizers": ["b", "a"]}})
    assert union["metadata"]["finalizers"] == ["a", "b"]
    removed = strategic_merge_patch(POD, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert removed["metadata"]["finalizers"] == []
    ordered = strategic_merge_patch(POD, {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "web"}]}})
    assert [c["name"] for c in ordered["spec"]["containers"]] == ["side", "web"]
    nulled = strategic_merge_patch(POD, {"metadata": {"labels": None}})
    assert "labels" not in nulled["metadata"]


def test_service_ports_merge_by_port() -> None:
    svc = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}}
    out = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "targetPort": 8443}]}})
    assert out["spec"]["ports"] == [{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}]


def test_json_patch_operations() -> None:
    out = json_patch(POD, [
        {"op": "add", "path": "/metadata/labels/y", "value": "2"},
        {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:3"},
        {"op": "remove", "path": "/spec/containers/1"},
        {"op": "copy", "from": "/metadata/name", "path": "/metadata/labels/name"},
        {"op": "move", "from": "/metadata/labels/x", "path": "/metadata/labels/z"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "b"},
        {"op": "test", "path": "/metadata/name", "value": "p"},
    ])
    assert out["metadata"]["labels"] == {"y": "2", "name": "p", "z": "1"}
    assert [c["image"] for c in out["spec"]["containers"]] == ["nginx:3"]
    assert out["metadata"]["finalizers"] == ["a", "b"]


@pytest.mark.parametrize("ops, code", [
    ([{"op": "test", "path": "/metadata/name", "value": "q"}], 422),
    ([{"op": "replace", "path": "/spec/nothing/x", "value": 1}], 422),
    ([{"op": "frobnicate", "path": "/a"}], 400),
    ({"op": "add"}, 400),
])
def test_json_patch_refusals(ops: object, code: int) -> None:
    with pytest.raises(PatchError) as info:
        json_patch(POD, ops)
    assert info.value.code == code
