"""The API-depth actions: requests a user sends that reach the API server's rarer decisions, through kubectl.

Theory of operation
-------------------
The other families send what a cluster's owner usually sends; these send what a user sends on a bad day, each
as upstream (release-1.31) answers it:

* `ApplyGadgetCRD`, `DeleteGadgetCRD`: kubectl apply and delete of the Gadget CustomResourceDefinition
  (`gadget_crd`), whose schema uses what
  real CRDs use: an int-or-string port, a nullable note, a defaulted count, a name bounded in length and
  pattern, a ratio with exclusive bounds, a bounded list of tags, a map of short labels (additionalProperties),
  a free-form `extra` (x-kubernetes-preserve-unknown-fields), an embedded resource `template`, a list of ports
  keyed by port. `strict` applies the same CRD with tighter bounds (a name of at most 3 characters, at most 2
  tags): an operator tightening a schema, after which the Gadgets stored under the loose one no longer
  validate, and an update that leaves their invalid fields as they are is let through (validation ratcheting).
  Two rivals ask for its names: one of another group for the same plural, one of the same group for the same
  kind; neither is accepted while the Gadget CRD holds them, and each gets them once it is deleted;
* `ApplyGadget`: kubectl apply (client-side, or --server-side) of a Gadget in default, its spec one of
  `GADGET_SPECS`: valid in every way the schema allows, or invalid in one (422 with the schema's message, 400
  for a field the schema does not declare under kubectl's strict field validation);
* `PatchGadget`: kubectl patch of a Gadget, a row of `GADGET_PATCHES`: merge patches that change one field and
  leave the others (ratcheting), JSON patches at list indices, at "-", at a missing path, a `test` that fails,
  a `move` and a `copy` within the spec, a finalizer set and removed, and a strategic merge patch (415: custom
  objects have no merge keys);
* `ODD_PATCHES` (sent as `PatchObject`, kmodel.checker.patch_actions): JSON patches whose operations meet the
  edges of RFC 6902 (an escaped pointer, an index past the end, a move into a list, an unknown op, a pointer
  without its slash) and strategic merge patches that use the directives kubectl writes ($patch: replace,
  $retainKeys, $setElementOrder, $deleteFromPrimitiveList);
* `ODD_BODIES` (sent as `SendRequest`, kmodel.checker.collide_actions): a create whose body has a field of the
  wrong JSON type (a string for a number, a fraction for an int32, a number past int32, a list for a map, a
  number for a time), a null, an unknown field, no kind: what the API server's decoder refuses with 400 and Go's
  message, or lets through (an integral float, a null); a namespace other than the request's (400); the
  access reviews `kubectl auth can-i` and `kubectl auth whoami` send, as the admin or alice.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any, ClassVar

import attrs

from kmodel.checker.access_actions import HOLD, one_of
from kmodel.checker.actions import Action
from kmodel.checker.patch_actions import PatchRow, canonical_json, fewer_parts
from kmodel.checker.simpler import Simplest, default, earlier
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import PATCH_TYPES, Apply, Delete, Patch

GROUP = "example.com"
PLURAL = "gadgets"
KIND = "Gadget"
CRD_NAME = f"{PLURAL}.{GROUP}"
#: the Gadgets the checker applies (in the default namespace): two, so that a patch meets one applied or not
GADGETS: tuple[str, ...] = ("g1", "g2")
#: the bounds of the loose and the strict schema: a name of 5 characters and 3 tags pass the first, not the second
NAME_MAX = {False: 8, True: 3}
TAGS_MAX = {False: 3, True: 2}


#: the CRDs applied: the Gadget CRD with loose or strict bounds, a rival of another group that asks for the same
#: plural (PluralConflict while the Gadget CRD holds it), and one of the same group that asks for the same kind
#: under another plural (KindConflict); each is accepted once the CRD holding its names is deleted
CRD_VARIANTS: tuple[str, ...] = ("loose", "strict", "rival", "kind-rival")
_VARIANT_NAMES = {"loose": (GROUP, PLURAL), "strict": (GROUP, PLURAL), "rival": ("example.org", PLURAL),
                  "kind-rival": (GROUP, "gizmos")}


def crd_name(variant: str) -> str:
    group, plural = _VARIANT_NAMES[variant]
    return f"{plural}.{group}"


def gadget_crd(strict: bool = False, variant: str = "") -> dict:
    """The Gadget CRD, with the loose bounds or (`strict`) the tight ones; `variant` (a `CRD_VARIANTS` entry)
    picks its bounds, group and plural instead."""
    if variant:
        strict = variant == "strict"
    group, plural = _VARIANT_NAMES[variant or "loose"]
    spec_schema = {
        "type": "object", "required": ["size"], "properties": {
            "size": {"type": "string", "enum": ["small", "large"]},
            "port": {"x-kubernetes-int-or-string": True},
            "note": {"type": "string", "nullable": True},
            "count": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX[strict], "pattern": "^[a-z]+$"},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1,
                      "exclusiveMaximum": True},
            "tags": {"type": "array", "maxItems": TAGS_MAX[strict], "items": {"type": "string"},
                     "x-kubernetes-list-type": "set"},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 5}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                         "x-kubernetes-preserve-unknown-fields": True},
            "ports": {"type": "array", "minItems": 1, "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port"],
                      "items": {"type": "object", "required": ["port"], "properties": {
                          "port": {"type": "integer"}, "name": {"type": "string"}}}},
        }}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": KIND},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                              "spec": spec_schema,
                              "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}],
        },
    }


_EMBEDDED = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t", "labels": {"a": "b"}},
             "data": {"k": "v"}}
#: Gadget specs by shape, valid ones first (what a draw shrinks to), then each invalid in one way
GADGET_SPECS: dict[str, Any] = {
    "plain": {"size": "small"},
    "full": {"size": "large", "port": "http", "note": "n", "count": 2, "name": "abc", "ratio": 0.5,
             "tags": ["a", "b"], "labels": {"k": "v"}, "extra": {"any": {"deep": [1, "x", None]}},
             "template": _EMBEDDED, "ports": [{"port": 80, "name": "web"}]},
    "numeric-port": {"size": "small", "port": 8080, "count": 3.0},
    "null-note-and-count": {"size": "small", "note": None, "count": None},
    # valid under the loose schema, not the strict one: what ratcheting lets an update keep
    "loose-only": {"size": "small", "name": "abcde", "tags": ["a", "b", "c"]},
    # the same with a keyed list and a map beside it: what an update under the strict bounds correlates item by
    # item (ports by port) and key by key (labels) to decide what it left as it was
    "loose-only-lists": {"size": "small", "name": "abcde", "tags": ["a", "b", "c"],
                         "ports": [{"port": 80, "name": "web"}, {"port": 443}], "labels": {"k": "v"}},
    "embedded-extra-metadata": {"size": "small", "template": {**_EMBEDDED, "metadata": {"name": "t", "bogus": 1}}},
    "bool-port": {"size": "small", "port": True},
    "long-name": {"size": "small", "name": "abcdefghijk"},
    "bad-name": {"size": "small", "name": "Abc"},
    "empty-name": {"size": "small", "name": ""},
    "ratio-at-bounds": {"size": "small", "ratio": 1},
    "ratio-zero": {"size": "small", "ratio": 0},
    "fraction-count": {"size": "small", "count": 2.5},
    "string-count": {"size": "small", "count": "3"},
    "count-out-of-range": {"size": "small", "count": 11},
    "too-many-tags": {"size": "small", "tags": ["a", "b", "c", "d"]},
    "tags-not-a-list": {"size": "small", "tags": "a"},
    "null-size": {"size": None},
    "huge": {"size": "huge"},
    "long-label": {"size": "small", "labels": {"k": "longer"}},
    "number-label": {"size": "small", "labels": {"k": 1}},
    "embedded-without-kind": {"size": "small", "template": {"apiVersion": "v1", "metadata": {"name": "t"}}},
    "embedded-bad-names": {"size": "small", "template": {"apiVersion": "v1/", "kind": "Config_Map",
                                                         "metadata": {"name": "Bad_Name"}}},
    "port-without-port": {"size": "small", "ports": [{"name": "web"}]},
    "no-ports": {"size": "small", "ports": []},
    "unknown-field": {"size": "small", "colour": "red"},
    # a mistake in every field at once: validation lists them all (one draw takes every check of the schema)
    "many-mistakes": {"size": "huge", "port": True, "note": 5, "count": 2.5, "name": "Abcdefghijkl", "ratio": 0,
                      "tags": ["a", "b", "c", "d"], "labels": {"k": "longer", "n": 1}, "ports": [{"name": "web"}],
                      "extra": "flat"},
    "spec-not-an-object": "small",
}
SHAPES: tuple[str, ...] = tuple(GADGET_SPECS)
#: the shapes the loose schema stores (the strict one refuses loose-only: a Gadget that ratchets)
VALID_SHAPES: tuple[str, ...] = ("plain", "full", "numeric-port", "null-note-and-count", "loose-only",
                                 "loose-only-lists")
#: the Gadget tighten_gadget_schema stores under the loose bounds before it tightens them
TIGHTENED = ("g2", "loose-only-lists")
#: what tighten_gadget_schema's user sends to the Gadget stored under the loose bounds once they are tightened,
#: (type, document), simplest first: a field it leaves alone (the name and tags, too long now, are as stored:
#: ratcheted, 200), a keyed list's item named and one added (the others correlate by their key), a label
#: changed past the bound (422), a tag added (the set list changed: 422), the tags replaced by the same (200), the
#: tags dropped and the name shortened (valid again)
TIGHTENED_PATCHES: tuple[tuple[str, Any], ...] = (
    ("merge", {"spec": {"count": 4}}),
    ("json", [{"op": "add", "path": "/spec/ports/1/name", "value": "tls"},
              {"op": "add", "path": "/spec/ports/-", "value": {"port": 8080}}]),
    ("merge", {"spec": {"labels": {"k": "longer", "j": "v"}}}),
    ("json", [{"op": "add", "path": "/spec/tags/-", "value": "d"}]),
    ("json", [{"op": "replace", "path": "/spec/tags", "value": ["a", "b", "c"]}]),
    ("merge", {"spec": {"tags": None, "name": "ab"}}),
)


def gadget_manifest(name: str, shape: str = "plain") -> dict:
    """The Gadget `name` in default, its spec the shape `shape` names."""
    return {"apiVersion": f"{GROUP}/v1", "kind": KIND, "metadata": {"name": name, "namespace": "default"},
            "spec": copy.deepcopy(GADGET_SPECS[shape])}


_variant = attrs.field(default="loose", validator=one_of(CRD_VARIANTS))


@attrs.frozen
class ApplyGadgetCRD(Action):
    """kubectl apply a Gadget CustomResourceDefinition: with the loose or the strict bounds, or a rival's."""

    kind: ClassVar[str] = "apply-gadget-crd"
    simplest: ClassVar[Simplest] = (("variant", earlier(CRD_VARIANTS)),)
    variant: str = _variant

    @property
    def name(self) -> str:
        return f"kubectl apply customresourcedefinition {crd_name(self.variant)} ({self.variant})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(gadget_crd(variant=self.variant)))


@attrs.frozen
class DeleteGadgetCRD(Action):
    """kubectl delete a Gadget CustomResourceDefinition: its objects are deleted first (a finalizer on one holds
    the CRD), and a rival waiting for its names gets them."""

    kind: ClassVar[str] = "delete-gadget-crd"
    simplest: ClassVar[Simplest] = (("variant", earlier(CRD_VARIANTS)),)
    variant: str = _variant

    @property
    def name(self) -> str:
        return f"kubectl delete customresourcedefinition {crd_name(self.variant)}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete("customresourcedefinitions", "", crd_name(self.variant)))


@attrs.frozen
class ApplyGadget(Action):
    """kubectl apply (--server-side when `server_side`) a Gadget of the shape `shape` (refused by kubectl while
    no CRD serves it, by the API server when the shape breaks the schema)."""

    kind: ClassVar[str] = "apply-gadget"
    simplest: ClassVar[Simplest] = (("shape", earlier(SHAPES)), ("server_side", default(False)))
    gadget: str = attrs.field(validator=one_of(GADGETS))
    shape: str = attrs.field(default="plain", validator=one_of(SHAPES))
    server_side: bool = False

    @property
    def name(self) -> str:
        return f"kubectl apply{' --server-side' if self.server_side else ''} gadget {self.gadget} ({self.shape})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(gadget_manifest(self.gadget, self.shape), server_side=self.server_side))


@attrs.frozen
class PatchGadget(Action):
    """kubectl patch gadget `gadget` --type=`type` -p '`patch`' (the document as canonical JSON text)."""

    kind: ClassVar[str] = "patch-gadget"
    simplest: ClassVar[Simplest] = (("patch", fewer_parts),)
    gadget: str = attrs.field(validator=one_of(GADGETS))
    type: str = attrs.field(validator=one_of(PATCH_TYPES))
    patch: str = attrs.field(converter=canonical_json)

    @property
    def name(self) -> str:
        return f"kubectl patch gadget {self.gadget} --type={self.type} -p '{self.patch}'"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch(PLURAL, "default", self.gadget, json.loads(self.patch), type=self.type))


#: patches of a Gadget, (type, document), simplest first: a merge patch of the count alone (an update that leaves
#: every other field as stored: ratcheted), the name set past the strict bound, the note nulled, JSON patches at
#: a list's end, its index, past it, a failing test, a move and a copy between fields, the embedded template's
#: kind replaced, and a strategic merge patch (415)
GADGET_PATCHES: tuple[tuple[str, Any], ...] = (
    ("merge", {"spec": {"count": 4}}),
    ("merge", {"spec": {"name": "abcd", "note": None}}),
    ("merge", {"metadata": {"labels": {"tier": "canary"}}}),
    ("json", [{"op": "add", "path": "/spec/tags/-", "value": "z"}]),
    ("json", [{"op": "replace", "path": "/spec/tags/0", "value": "y"}]),
    ("json", [{"op": "add", "path": "/spec/tags/9", "value": "x"}]),
    ("json", [{"op": "test", "path": "/spec/size", "value": "small"}, {"op": "replace", "path": "/spec/size",
                                                                        "value": "large"}]),
    ("json", [{"op": "copy", "from": "/spec/size", "path": "/spec/note"}]),
    ("json", [{"op": "move", "from": "/spec/note", "path": "/spec/name"}]),
    ("json", [{"op": "remove", "path": "/spec/ports/0"}]),
    ("json", [{"op": "replace", "path": "/spec/template/kind", "value": "Secret"}]),
    ("merge", {"metadata": {"finalizers": [HOLD]}}),
    ("merge", {"metadata": {"finalizers": None}}),
    ("strategic", {"spec": {"count": 5}}),
)


def _absent_map(obj: dict, field: str, empty: Any) -> list[dict]:
    """The JSON patch operation that adds metadata.`field` as `empty` where the object has none (an `add` of a
    member that exists replaces it: the annotations or finalizers there would go), else none."""
    return [] if obj.get("metadata", {}).get(field) else [{"op": "add", "path": f"/metadata/{field}", "value": empty}]


def _pod_or_none(build: Any) -> Any:
    return lambda obj: build(obj) if obj.get("kind") == "Pod" else None


def _workload_or_none(build: Any) -> Any:
    return lambda obj: build(obj) if obj.get("kind") in ("Deployment", "StatefulSet") else None


#: JSON patches and strategic merge patches at the edges of their specs, on the objects the patch rule patches
ODD_PATCHES: tuple[tuple[str, PatchRow], ...] = (
    ("json", PatchRow("add an annotation whose key has a slash (an escaped pointer)", lambda obj: [
        *_absent_map(obj, "annotations", {}),
        {"op": "add", "path": "/metadata/annotations/example.com~1note", "value": "x"}])),
    ("json", PatchRow("test the whole object's kind through the root's child, then replace a label", lambda obj: [
        {"op": "test", "path": "/kind", "value": obj.get("kind")},
        {"op": "add", "path": "/metadata/labels/tier", "value": "canary"}])),
    ("json", PatchRow("add the finalizer at the end of the list (`-`)", lambda obj: [
        *_absent_map(obj, "finalizers", []), {"op": "add", "path": "/metadata/finalizers/-", "value": HOLD}])),
    ("json", PatchRow("add the finalizer at the list's front (index 0; 422 where there is no list)", lambda obj: [
        {"op": "add", "path": "/metadata/finalizers/0", "value": HOLD}])),
    ("json", PatchRow("add the finalizer at an index past the list's end (422)", lambda obj: [
        *_absent_map(obj, "finalizers", []), {"op": "add", "path": "/metadata/finalizers/5", "value": HOLD}])),
    ("json", PatchRow("remove the first container's second port (422 where there is none)", _workload_or_none(
        lambda obj: [{"op": "remove", "path": "/spec/template/spec/containers/0/ports/1"}]))),
    ("json", PatchRow("copy the first container's image into a label (a list index in `from`)", _pod_or_none(
        lambda obj: [{"op": "copy", "from": "/spec/containers/0/name", "path": "/metadata/labels/tier"}]))),
    ("json", PatchRow("move a label under a missing parent (422)", lambda obj: [
        {"op": "move", "from": "/metadata/labels/app", "path": "/metadata/missing/app"}])),
    ("json", PatchRow("an operation JSON patch does not have (400)", lambda obj: [
        {"op": "increment", "path": "/spec/replicas"}])),
    ("json", PatchRow("a pointer without its leading slash (400)", lambda obj: [
        {"op": "add", "path": "metadata/labels/tier", "value": "canary"}])),
    ("json", PatchRow("an operation without its path (400)", lambda obj: [{"op": "add", "value": "x"}])),
    ("json", PatchRow("a document that is no list of operations (400)", lambda obj: {"op": "add"})),
    ("strategic", PatchRow("labels replaced whole ($patch: replace on the map)", lambda obj: {
        "metadata": {"labels": {"$patch": "replace", **(obj.get("metadata", {}).get("labels") or {}),
                                "tier": "canary"}}})),
    ("strategic", PatchRow("the finalizer taken out ($deleteFromPrimitiveList)", lambda obj: {
        "metadata": {"$deleteFromPrimitiveList/finalizers": [HOLD]}})),
    ("strategic", PatchRow("the containers reordered ($setElementOrder) with the app's image", _workload_or_none(
        lambda obj: {"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
            "containers": [{"name": "app", "image": "nginx:1.26"}, {"name": "sidecar", "image": "nginx:1.25"}]}}}}))),
    ("strategic", PatchRow("the rollout strategy switched, its old keys dropped ($retainKeys)", lambda obj: {
        "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
        if obj.get("kind") == "Deployment" else None)),
    ("strategic", PatchRow("the containers replaced whole ($patch: replace in the list)", _workload_or_none(
        lambda obj: {"spec": {"template": {"spec": {"containers": [
            {"$patch": "replace"}, {"name": "app", "image": "nginx:1.25"}]}}}}))),
    ("strategic", PatchRow("the annotations map deleted ($patch: delete on the map)", lambda obj: {
        "metadata": {"annotations": {"$patch": "delete"}}})),
    ("strategic", PatchRow("a document that is no object (400)", lambda obj: ["not", "a", "map"])),
)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


#: what a user pastes by hand as a Secret's .dockerconfigjson, each a way Go's json.Unmarshal into a map refuses
#: (a single quote, a missing colon or comma, an element after an array's, a raw newline, an escape Go does not
#: know, the end of the input, a list, a bool, a number, a string, data after the document, NaN), and a null
#: (a map without an error: stored)
DOCKER_CONFIGS: tuple[str, ...] = (
    "{'auths': {}}", '{"auths" {}}', '{"auths": {} "x": 1}', '{"auths": [{"a": 1} 2]}', '"line\nbreak"', '"\\q"',
    '{"auths":', "[1]", "true", "1", '"text"', "null", "{} x", "NaN",
)
_POD_MISTAKES = {
    "restartPolicy": "Sometimes",
    "tolerations": [{"key": "dedicated", "operator": "Exists", "value": "infra"}],
    "containers": [
        {"name": "app", "image": "nginx:1.25",
         "ports": [{"name": "Web_Port", "containerPort": 80}, {"name": "Web_Port", "containerPort": 81},
                   {"name": "-web--", "containerPort": 82}, {"name": "12345678901234567", "containerPort": 83},
                   {"name": '"web"', "containerPort": 84}],
         "livenessProbe": {"periodSeconds": 5},
         "resources": {"requests": {"example.com/dongle": "1"}, "limits": {"example.com/dongle": "2"}}},
        {"name": "app", "image": ""}, {"name": "side.car", "image": "nginx:1.25"}]}
_SLICE = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice"}
_RBAC = "rbac.authorization.k8s.io"
#: a namespace enforcing Pod Security baseline that the odd objects create (201, then 409), and a pod in it that
#: uses the host's network, a host port and a privileged container (403 naming all three)
RESTRICTED = "restricted"
#: a row of ODD_BODIES whose body is a tuple of (resource, body): `kubectl create -f <dir>/` of those, one request
#: each (a directory of manifests written by hand), in the namespace a manifest names, else default
DIRECTORY = "-f"
#: creates of kinds a user seldom writes by hand, each with several mistakes at once (validation reports them
#: all, in upstream's order): one request takes many of validation's decisions; sent together, as one directory
_SCHEDULING = "scheduling.k8s.io/v1"
_ODD_POD_SPEC = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
ODD_OBJECTS: tuple[tuple[str, Any], ...] = (
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd-spec"}, "spec": _POD_MISTAKES}),
    # PriorityClasses a cluster administrator gets wrong (a reserved name, a value past what users may give, an
    # unknown policy), a second global default (403), and pods naming a class that is not there or bringing a
    # priority of their own (403, Priority admission)
    ("priorityclasses", {"apiVersion": _SCHEDULING, "kind": "PriorityClass", "metadata": {"name": "system-odd"},
                         "value": 5}),
    ("priorityclasses", {"apiVersion": _SCHEDULING, "kind": "PriorityClass", "metadata": {"name": "odd-huge"},
                         "value": 1_000_000_001, "preemptionPolicy": "Sometimes"}),
    ("priorityclasses", {"apiVersion": _SCHEDULING, "kind": "PriorityClass", "metadata": {"name": "odd-default"},
                         "value": 100, "globalDefault": True}),
    ("priorityclasses", {"apiVersion": _SCHEDULING, "kind": "PriorityClass", "metadata": {"name": "odd-rival"},
                         "value": 50, "globalDefault": True}),
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd-class"},
              "spec": {**_ODD_POD_SPEC, "priorityClassName": "gold"}}),
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd-priority"},
              "spec": {**_ODD_POD_SPEC, "priority": 7}}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "odd-type"},
                  "spec": {"type": "Bogus", "selector": {"app": "web"}}}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "odd-node-port"},
                  "spec": {"type": "ClusterIP", "selector": {"app": "web"},
                           "ports": [{"name": "web", "port": 80, "nodePort": 30080}, {"name": "web", "port": 81}]}}),
    ("endpointslices", {**_SLICE, "metadata": {"name": "odd-slice"}, "addressType": "IPv4",
                        "endpoints": [{"addresses": ["127.0.0.1"], "hostname": "Web_1"}, {"addresses": []},
                                      {"addresses": ["fd00::1"]}],
                        "ports": [{"name": "web", "port": 80, "protocol": "TCP"},
                                  {"name": "web", "port": 81, "protocol": "TCP"}]}),
    ("endpointslices", {**_SLICE, "metadata": {"name": "odd-fqdn"}, "addressType": "FQDN",
                        "endpoints": [{"addresses": ["web.default.svc", "Not_A_Name"]}]}),
    ("endpointslices", {**_SLICE, "metadata": {"name": "odd-address-type"}, "addressType": "IPv5",
                        "endpoints": [{"addresses": ["10.0.0.1"]}]}),
    ("endpoints", {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "odd-endpoints"},
                   "subsets": [{"addresses": [{"ip": "10.0.0", "hostname": "Web_1"}, {"ip": "127.0.0.1"},
                                              {"ip": "0.0.0.0"}],
                                "ports": [{"port": 80}, {"port": 81}]}, {"ports": [{"port": 80}]}]}),
    ("customresourcedefinitions", {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "labels": {"a/b/c": "x"}},
        "spec": {"group": "example.org", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True},
                              {"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                                  "type": "object",
                                  "properties": {"spec": {"properties": {"size": {"type": "string"}}}}}}}]}}),
    ("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": RESTRICTED, "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}),
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd-host", "namespace": RESTRICTED},
              "spec": {"hostNetwork": True, "containers": [
                  {"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80, "hostPort": 80}],
                   "securityContext": {"privileged": True}}]}}),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"app": "web"}},
                    "data": {"mode": "a"}}),
    ("secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "odd-basic-auth"},
                 "type": "kubernetes.io/basic-auth", "data": {}}),
    ("secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "odd-tls"},
                 "type": "kubernetes.io/tls", "data": {"tls.crt": _b64("x")}}),
    ("leases", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "odd-lease"},
                "spec": {"holderIdentity": "me", "leaseDurationSeconds": 0, "leaseTransitions": -1}}),
    ("roles", {"apiVersion": f"{_RBAC}/v1", "kind": "Role", "metadata": {"name": "odd-role"},
               "rules": [{"apiGroups": [""], "resources": ["pods"]},
                         {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
    ("rolebindings", {"apiVersion": f"{_RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "odd-binding"},
                      "roleRef": {"apiGroup": _RBAC, "kind": "Secret", "name": ""},
                      "subjects": [{"kind": "User", "name": "alice", "apiGroup": _RBAC}]}),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "odd-owners", "finalizers": ["a/b/c"],
        "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""},
                            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1",
                             "controller": True},
                            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "u2",
                             "controller": True}]},
        "data": {"mode": "a"}, "binaryData": {"mode": _b64("a")}}),
)
#: the dockerconfigjson Secrets of DOCKER_CONFIGS, as a directory a user created them from
DOCKER_SECRETS: tuple[tuple[str, Any], ...] = tuple(
    ("secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"odd-docker-{n}"},
                 "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": _b64(text)}})
    for n, text in enumerate(DOCKER_CONFIGS))

#: bodies whose fields have a shape or JSON type the decoder meets rarely, each refused with 400 and Go's message
#: or let through (an integral float), as a client sends them one after the other (`kubectl create --raw` of each):
#: a fraction, a number past int32, a string or a bool where a number is, a list where a map is, a number where a
#: time is, an unknown field (strict), a fractional targetPort, a null item and a string port, no kind, a kind that
#: is a number, a pod with a wrong type in seven fields (Go reports the first, in the document's order, and reads on)
DECODE_BODIES: tuple[tuple[str, Any], ...] = (
    ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "odd-float"},
                     "spec": {"replicas": 0.0, "selector": {"matchLabels": {"app": "odd"}}, "template": {
                         "metadata": {"labels": {"app": "odd"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}),
    ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "odd-fraction"},
                     "spec": {"replicas": 2.5}}),
    ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "odd-big"},
                     "spec": {"replicas": 2 ** 40}}),
    ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "odd-string"},
                     "spec": {"replicas": "3"}}),
    ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "odd-bool"},
                     "spec": {"paused": "yes", "replicas": True}}),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "odd-list"}, "data": ["a"]}),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "odd-time",
                                                                          "creationTimestamp": 5}}),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "odd-unknown"},
                    "data": {"a": "b"}, "colour": "red"}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "odd-target"},
                  "spec": {"ports": [{"port": 80, "targetPort": 8080.5}]}}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "odd-ports"},
                  "spec": {"ports": [None, {"port": "80"}]}}),
    ("configmaps", {"apiVersion": "v1", "metadata": {"name": "odd-kindless"}}),
    ("configmaps", {"apiVersion": "v1", "kind": 7, "metadata": {"name": "odd-kind"}}),
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd-types", "annotations": {"a": 1},
                                                             "labels": "x"},
              "spec": {"containers": {"name": "app"}, "hostNetwork": "yes", "nodeName": ["node-1"], "priority": True,
                       "tolerations": [True]}}),
)

#: what `kubectl auth can-i` (of a resource, of a URL, of neither: 422) and `kubectl auth whoami` send, one after
#: the other
ACCESS_REVIEWS: tuple[tuple[str, Any], ...] = (
    ("selfsubjectaccessreviews", {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                  "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}),
    ("selfsubjectaccessreviews", {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                  "spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}),
    ("selfsubjectaccessreviews", {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                  "spec": {}}),
    ("selfsubjectreviews", {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
)

#: what a create sends on the wire: a ConfigMap with nulls, the directory of `DECODE_BODIES`, a ConfigMap of
#: another namespace than the request's, the access reviews, then the directories of `ODD_OBJECTS` and
#: `DOCKER_SECRETS`. Few rows, each directory one: the rule runs a few dozen times a campaign, and every
#: directory is many of the decoder's and validation's decisions at once, so each should come up in every run
ODD_BODIES: tuple[tuple[str, Any], ...] = (
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "odd-null", "labels": None},
                    "data": {"a": "b", "c": None}}),
    (DIRECTORY, DECODE_BODIES),
    ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "odd-elsewhere",
                                                                          "namespace": "team"}}),
    (DIRECTORY, ACCESS_REVIEWS),
    (DIRECTORY, ODD_OBJECTS),
    (DIRECTORY, DOCKER_SECRETS),
)
#: the directories the admin sends whoever is drawn: manifests a user with rights writes; alice sends the other
#: rows (her writes refused, 403; her reviews answered)
ADMIN_DIRECTORIES: tuple[Any, ...] = (DECODE_BODIES, ODD_OBJECTS, DOCKER_SECRETS)

#: who sends each row: the admin, and alice for the access reviews (kubectl auth can-i, kubectl auth whoami as
#: a user with no rights of her own)
ODD_BODY_ACTORS: tuple[str, ...] = ("admin", "alice")
#: the resources whose requests name no namespace
CLUSTER_SCOPED_BODIES: tuple[str, ...] = ("selfsubjectaccessreviews", "selfsubjectreviews", "customresourcedefinitions",
                                          "namespaces", "priorityclasses")
