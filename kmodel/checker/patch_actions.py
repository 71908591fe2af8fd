"""The patch action: a user's `kubectl patch <kind> <name> --type=<type> -p '<patch>'` of an object that exists.

Theory of operation
-------------------
`PatchObject` carries the patch document itself, as canonical JSON text (sorted keys, no spaces), so a trace reads
as the command a user typed and replays without the tables below. The tables are what the rule
(kmodel.checker.patch_rules) draws from: per patch type, rows listed simplest first, each a function from the
object's JSON as it is when the rule runs to the document (or None where the row does not fit the kind). They
are made to collide with what is there, which is where the API server's guards are:

* JSON patches (RFC 6902): a `test` of the resourceVersion read at draw time (stale by the time kubectl sends it
  if anything wrote the object in between: 422) or of one before it (422 always), a `remove` of a label that may
  be absent (422), a `test` then `replace` of spec.replicas, a `replace` of a pod's app label (its ReplicaSet
  releases it), of a container's image (a rollout), a `copy` or `move` between labels (absent: 422);
* strategic merge patches: a label, the finalizer `example.com/hold` (a union with the finalizers there), a
  container merged by name (a new image: a rollout; a sidecar added; the sidecar deleted with `$patch: delete`),
  a port merged by containerPort (a host port) or, on a Service, by port, tolerations and a Node's taints (lists
  without a merge key: replaced whole, so a pod's defaulted tolerations go and the update is refused);
* JSON merge patches: a label set or removed, spec.replicas, the finalizers replaced whole, a required field
  nulled (422), the containers list replaced whole (its ports go with it).

A pod's spec is immutable but for images and added tolerations, so most template rows are refused on a pod
(422): those refusals are the point as much as the rollouts.
"""

from __future__ import annotations

import json
from typing import Any, Callable, ClassVar, Optional

import attrs

from kmodel.checker.access_actions import HOLD, _kind, _ns, one_of
from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, one_fewer
from kmodel.checker.statefulset_actions import IMAGES
from kmodel.checker.workload_actions import TAINT_KEY, TAINT_VALUE
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import PATCH_TYPES, Patch

#: the label the rows set, move and remove: the key and value edit_service's canary selector asks for, so a
#: labelled pod can join a Service it was not in
LABEL = "tier"
LABEL_VALUE = "canary"
#: the objects patched that have a pod template; pods have their containers at spec.containers
WORKLOADS = ("deployments", "statefulsets")
TEMPLATED = (*WORKLOADS, "pods")
#: what the rule patches: every kind of the user's objects the checker makes (and the nodes), and the
#: ReplicaSets the Deployment controller makes (a user may relabel or orphan one)
PATCHED = ("deployments", "statefulsets", "pods", "services", "nodes", "replicasets")
#: the annotation a ReplicaSet's scale-down ranks its pods by (lower cost first), and the costs a user sets
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
DELETION_COSTS = ("100", "-100")
#: the name of the container a strategic merge patch adds and deletes
SIDECAR = "sidecar"
#: the pods' containers, and the port the apps listen on
APP_CONTAINER = "app"
APP_PORT = 80


def canonical_json(value: Any) -> str:
    """`value` (a JSON document, or its text) as canonical JSON text: sorted keys, no spaces."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"patch must be JSON text: {exc}") from None
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def fewer_parts(text: str) -> tuple:
    """A patch with one part left out, the first first, while one is left: a JSON patch's operations one at a
    time, or a merge or strategic merge patch's top-level keys (a Simplify of the patch text,
    kmodel.checker.simpler)."""
    doc = json.loads(text)
    if isinstance(doc, list):
        return tuple(canonical_json(list(ops)) for ops in one_fewer(tuple(doc)))
    if isinstance(doc, dict) and len(doc) > 1:
        return tuple(canonical_json({k: v for k, v in doc.items() if k != key}) for key in doc)
    return ()


@attrs.frozen
class PatchObject(Action):
    """kubectl patch `resource` `object` (-n `namespace`) --type=`type` -p '`patch`': the document sent as it is,
    whatever the object has become since it was drawn; the answer (422 for a failed test or a missing path, 409,
    404) is the command's result."""

    kind: ClassVar[str] = "patch-object"
    simplest: ClassVar[Simplest] = (("patch", fewer_parts),)
    resource: str = attrs.field(validator=one_of(PATCHED))
    namespace: str
    object: str
    type: str = attrs.field(validator=one_of(PATCH_TYPES))
    patch: str = attrs.field(converter=canonical_json)

    @property
    def name(self) -> str:
        return (f"kubectl patch {_kind(self.resource)} {self.object}{_ns(self.namespace)} --type={self.type} "
                f"-p '{self.patch}'")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch(self.resource, self.namespace, self.object, json.loads(self.patch), type=self.type))


# -- the tables -------------------------------------------------------------------------------------------------

#: a row's document for an object (its JSON as stored), or None where the row does not fit it
Build = Callable[[dict], Any]


@attrs.frozen
class PatchRow:
    """One row of a patch table: what it does, in words, and how it is built from the object patched."""

    what: str
    build: Build


def _resource(obj: dict) -> str:
    return {"Deployment": "deployments", "StatefulSet": "statefulsets", "Pod": "pods", "Service": "services",
            "Node": "nodes", "ReplicaSet": "replicasets"}.get(obj.get("kind", ""), "")


def _labels(obj: dict) -> dict:
    return obj.get("metadata", {}).get("labels") or {}


def _rv(obj: dict) -> str:
    return str(obj.get("metadata", {}).get("resourceVersion", ""))


def _pod_spec_path(obj: dict) -> list[str]:
    """Where the object's pod spec is: spec.template.spec of a workload, spec of a pod, [] for none."""
    resource = _resource(obj)
    return ["spec", "template", "spec"] if resource in WORKLOADS else ["spec"] if resource == "pods" else []


def _pod_spec(obj: dict) -> dict:
    spec: Any = obj
    for part in _pod_spec_path(obj):
        spec = spec.get(part) or {}
    return spec


def _nested(path: list[str], leaf: dict) -> dict:
    """{path[0]: {path[1]: ... leaf}}."""
    for part in reversed(path):
        leaf = {part: leaf}
    return leaf


def _other_image(obj: dict) -> str:
    """The image the app container does not run now (IMAGES' other one)."""
    current = next((c.get("image") for c in _pod_spec(obj).get("containers", []) if c.get("name") == APP_CONTAINER),
                   IMAGES[0])
    return IMAGES[1] if current == IMAGES[0] else IMAGES[0]


def _label_op(obj: dict, value: str = LABEL_VALUE) -> dict:
    """The JSON patch operation that sets the label: into the labels there are, or as the whole map if none."""
    if _labels(obj):
        return {"op": "add", "path": f"/metadata/labels/{LABEL}", "value": value}
    return {"op": "add", "path": "/metadata/labels", "value": {LABEL: value}}


def _next_replicas(obj: dict) -> int:
    """1, 2, 3, 1, ...: a replica count other than the one there."""
    return int(obj.get("spec", {}).get("replicas") or 0) % 3 + 1


def _workloads_only(build: Build) -> Build:
    return lambda obj: build(obj) if _resource(obj) in WORKLOADS else None


def _templated_only(build: Build) -> Build:
    return lambda obj: build(obj) if _resource(obj) in TEMPLATED else None


def _containers_path(obj: dict) -> str:
    return "/" + "/".join([*_pod_spec_path(obj), "containers"])


def _containers_patch(obj: dict, containers: list) -> dict:
    return _nested(_pod_spec_path(obj), {"containers": containers})


JSON_PATCHES: tuple[PatchRow, ...] = (
    PatchRow("add the label", lambda obj: [_label_op(obj)]),
    PatchRow("test the resourceVersion read now, then add the label",
             lambda obj: [{"op": "test", "path": "/metadata/resourceVersion", "value": _rv(obj)}, _label_op(obj)]),
    PatchRow("test a resourceVersion before the one read now (stale: 422)",
             lambda obj: [{"op": "test", "path": "/metadata/resourceVersion",
                           "value": str(max(0, int(_rv(obj) or 0) - 1))}, _label_op(obj, "stale")]),
    PatchRow("remove the label (422 where it is absent)",
             lambda obj: [{"op": "remove", "path": f"/metadata/labels/{LABEL}"}]),
    PatchRow("test the replicas read now, then replace them", _workloads_only(lambda obj: [
        {"op": "test", "path": "/spec/replicas", "value": obj.get("spec", {}).get("replicas")},
        {"op": "replace", "path": "/spec/replicas", "value": _next_replicas(obj)}])),
    PatchRow("replace a pod's app label (its ReplicaSet releases it; 422 where it has none)",
             lambda obj: [{"op": "replace", "path": "/metadata/labels/app", "value": LABEL_VALUE}]
             if _resource(obj) == "pods" else None),
    PatchRow("replace the first container's image", _templated_only(lambda obj: [
        {"op": "replace", "path": f"{_containers_path(obj)}/0/image", "value": _other_image(obj)}])),
    PatchRow("copy the app label to the label (422 where there is no app label)",
             lambda obj: [{"op": "copy", "from": "/metadata/labels/app", "path": f"/metadata/labels/{LABEL}"}]),
    PatchRow("move the app label to the label (422 where there is no app label)",
             lambda obj: [{"op": "move", "from": "/metadata/labels/app", "path": f"/metadata/labels/{LABEL}"}]),
    PatchRow("remove the first finalizer (422 where there is none)",
             lambda obj: [{"op": "remove", "path": "/metadata/finalizers/0"}]),
)

STRATEGIC_PATCHES: tuple[PatchRow, ...] = (
    PatchRow("set the label", lambda obj: {"metadata": {"labels": {LABEL: LABEL_VALUE}}}),
    PatchRow("add the finalizer (a union with those there)", lambda obj: {"metadata": {"finalizers": [HOLD]}}),
    PatchRow("the app container's image, merged by name", _templated_only(lambda obj: _containers_patch(
        obj, [{"name": APP_CONTAINER, "image": _other_image(obj)}]))),
    PatchRow("a sidecar container added", _templated_only(lambda obj: _containers_patch(
        obj, [{"name": SIDECAR, "image": IMAGES[0]}]))),
    PatchRow("the sidecar container deleted ($patch: delete)", _templated_only(lambda obj: _containers_patch(
        obj, [{"name": SIDECAR, "$patch": "delete"}]))),
    PatchRow("a host port on the app's port, merged by containerPort", _templated_only(lambda obj: _containers_patch(
        obj, [{"name": APP_CONTAINER, "ports": [{"containerPort": APP_PORT, "hostPort": 8080}]}]))),
    PatchRow("a DNS port merged by port into a Service's (unnamed beside another: 422)",
             lambda obj: {"spec": {"ports": [{"port": 53, "protocol": "UDP", "targetPort": 53}]}}
             if _resource(obj) == "services" else None),
    PatchRow("a toleration (the list replaced whole: a pod's defaulted ones go, 422)",
             _templated_only(lambda obj: _nested(_pod_spec_path(obj), {"tolerations": [
                 {"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE, "effect": "NoSchedule"}]}))),
    PatchRow("a Node's taints replaced whole by one",
             lambda obj: {"spec": {"taints": [{"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoSchedule"}]}}
             if _resource(obj) == "nodes" else None),
    PatchRow("remove the label (null)", lambda obj: {"metadata": {"labels": {LABEL: None}}}),
    PatchRow("the app container's image with the containers' order ($setElementOrder, as kubectl apply sends it)",
             _templated_only(lambda obj: _nested(_pod_spec_path(obj), {
                 "$setElementOrder/containers": [{"name": c.get("name")} for c in _pod_spec(obj).get("containers", [])],
                 "containers": [{"name": APP_CONTAINER, "image": _other_image(obj)}]}))),
    PatchRow("add the finalizer with the finalizers' order ($setElementOrder)",
             lambda obj: {"metadata": {"$setElementOrder/finalizers": [HOLD], "finalizers": [HOLD]}}),
    PatchRow("the labels replaced whole ($patch: replace) by the app label and the label",
             _workloads_only(lambda obj: {"metadata": {"labels": {
                 "$patch": "replace", **({"app": _labels(obj)["app"]} if "app" in _labels(obj) else {}),
                 LABEL: LABEL_VALUE}}})),
)


def _required_nulled(obj: dict) -> Optional[dict]:
    """A merge patch that nulls a field validation requires (422), for each kind that has one to null."""
    resource = _resource(obj)
    if resource in WORKLOADS:
        return {"spec": {"selector": None}}
    if resource == "pods":
        return {"spec": {"containers": None}}
    if resource == "services":
        return {"spec": {"ports": None}}
    return None


MERGE_PATCHES: tuple[PatchRow, ...] = (
    PatchRow("set the label", lambda obj: {"metadata": {"labels": {LABEL: LABEL_VALUE}}}),
    PatchRow("remove the label", lambda obj: {"metadata": {"labels": {LABEL: None}}}),
    PatchRow("set the replicas", _workloads_only(lambda obj: {"spec": {"replicas": _next_replicas(obj)}})),
    PatchRow("replace the finalizers whole by one", lambda obj: {"metadata": {"finalizers": [HOLD]}}),
    PatchRow("null a required field (422)", _required_nulled),
    PatchRow("replace the containers list whole (its ports go)", _templated_only(lambda obj: _containers_patch(
        obj, [{"name": APP_CONTAINER, "image": _other_image(obj)}]))),
    # kubectl annotate pod P controller.kubernetes.io/pod-deletion-cost=C: its ReplicaSet deletes cheaper pods first
    *(PatchRow(f"annotate a pod with pod-deletion-cost {cost}", (lambda c: lambda obj: {
        "metadata": {"annotations": {POD_DELETION_COST: c}}} if _resource(obj) == "pods" else None)(cost))
      for cost in DELETION_COSTS),
    PatchRow("remove the ownerReferences (orphaned: its controller adopts it again if its labels still match)",
             lambda obj: {"metadata": {"ownerReferences": None}} if obj.get("metadata", {}).get("ownerReferences")
             else None),
)

#: the table of each patch type, in PATCH_TYPES' order
PATCH_TABLES: dict[str, tuple[PatchRow, ...]] = {
    "json": JSON_PATCHES, "merge": MERGE_PATCHES, "strategic": STRATEGIC_PATCHES}


def rows_for(patch_type: str, obj: dict) -> list[tuple[PatchRow, Any]]:
    """The rows of `patch_type`'s table that fit `obj` (its JSON), each with its document, in the table's order."""
    out = []
    for row in PATCH_TABLES[patch_type]:
        doc = row.build(obj)
        if doc is not None:
            out.append((row, doc))
    return out
