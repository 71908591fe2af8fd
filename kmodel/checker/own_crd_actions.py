"""Actions on the objects of a CRD that a component of the cluster brings (an operator's own kind).

Theory of operation
-------------------
A component's registration may create a CustomResourceDefinition at boot (`boot_objects`, see
kmodel/component/registry.py): the kind its operator serves. `own_kinds(components)` reads each such CRD into a
`CustomKind` (its group, storage version, names, scope, schema, subresources, and the names of the objects the
checker acts on: the boot objects' own, then `EXTRA_NAMES`). The rules of own_crd_rules.py draw from it;
each action here carries everything it sends (the resource, the object, its content as canonical JSON), so a
trace replays without the CRD's description:

* `ApplyCustomObject`: kubectl apply of an object with a drawn spec (a create, or an update of one stored: a
  merge patch, so the spec may change within the schema or outside it, refused with 422, or 400 for an
  unknown field under strict field validation);
* `WriteCustomStatus`: kubectl patch --subresource=status with a drawn status;
* `ScaleCustomObject`: kubectl scale (only for a CRD with the scale subresource);
* `DeleteCustomObject`: kubectl delete with a propagation policy;
* `DeleteOwnCRD`: kubectl delete of the CustomResourceDefinition itself: the API server deletes every object of
  the kind, then the CRD. Nothing creates it again: the cluster applies a component's boot objects once, when it
  boots, and an operator does not install its own CRD (kopf's, and most, leave that to whoever deploys them), so
  the kind stays unserved for the rest of the example.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Optional, Sequence

import attrs

from kmodel.checker.access_actions import CASCADE, one_of
from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default
from kmodel.cluster import Cluster, Delete, Scale
from kmodel.cluster.kubectl import Apply, Patch
from kmodel.component.registry import own_registrations
from kmodel.loop.events import at_least

#: object names the checker uses besides those of the component's own boot objects of the kind
EXTRA_NAMES: tuple[str, ...] = ("alpha", "beta")
#: at most this many names per kind
MAX_NAMES = 3
#: the namespace of the objects of a namespaced kind
NAMESPACE = "default"
#: kubectl scale's replicas (past what most schemas allow, to exercise their maximum)
MAX_SCALE = 6


@attrs.frozen
class CustomKind:
    """A custom kind a component's CRD declares, as the checker's rules use it (see the module docstring)."""

    group: str
    version: str  # the storage version
    plural: str
    kind: str
    namespaced: bool
    schema: dict = attrs.field(eq=False, repr=False)
    status: bool  # the status subresource
    scale: bool  # the scale subresource
    names: tuple[str, ...]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def namespace(self) -> str:
        return NAMESPACE if self.namespaced else ""

    @property
    def crd_name(self) -> str:
        """The name of the CustomResourceDefinition that serves the kind (<plural>.<group>)."""
        return f"{self.plural}.{self.group}"

    def part(self, name: str) -> dict:
        """The schema of a top-level property (spec, status), {} when it declares none."""
        return (self.schema.get("properties") or {}).get(name) or {}


def kind_of_crd(crd: dict, objects: Sequence[dict]) -> Optional[CustomKind]:
    """The CustomKind a CRD manifest declares (None without a served storage version), its names taken from
    `objects` of its kind first."""
    spec = crd.get("spec") or {}
    storage = next((v for v in spec.get("versions") or [] if v.get("storage") and v.get("served")), None)
    if storage is None:
        return None
    names_of = spec.get("names") or {}
    group, kind = spec.get("group", ""), names_of.get("kind", "")
    own = [(o.get("metadata") or {}).get("name", "") for o in objects
           if o.get("kind") == kind and str(o.get("apiVersion", "")).startswith(group + "/")]
    names = tuple(dict.fromkeys([n for n in own if n] + list(EXTRA_NAMES)))[:MAX_NAMES]
    subresources = storage.get("subresources") or {}
    return CustomKind(group, storage["name"], names_of.get("plural", ""), kind, spec.get("scope") == "Namespaced",
                      ((storage.get("schema") or {}).get("openAPIV3Schema") or {}), "status" in subresources,
                      "scale" in subresources, names)


def own_kinds(components: Sequence[str]) -> list[CustomKind]:
    """The custom kinds the CRDs of the components a configuration names declare (their registrations' boot
    objects), in component order, each once."""
    found: dict[str, CustomKind] = {}
    for registration in own_registrations(components):
        objects = [o for o in registration.boot_objects if isinstance(o, dict)]
        for crd in objects:
            if crd.get("kind") == "CustomResourceDefinition" and str(crd.get("apiVersion", "")).startswith(
                    "apiextensions.k8s.io/"):
                kind = kind_of_crd(crd, objects)
                if kind is not None:
                    found.setdefault(kind.crd_name, kind)
    return list(found.values())


def canonical(value: Any) -> str:
    """The JSON text an action carries a drawn value as (sorted keys: one text per value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _where(resource: str, namespace: str, name: str) -> str:
    return f"{resource}/{namespace}/{name}" if namespace else f"{resource}/{name}"


@attrs.frozen
class ApplyCustomObject(Action):
    """kubectl apply an object of a component's custom kind, with the drawn `content` (JSON: spec and whatever
    else beside metadata)."""

    kind: ClassVar[str] = "apply-custom-object"
    simplest: ClassVar[Simplest] = (("content", default("{}")),)
    api_version: str
    object_kind: str
    namespace: str
    object_name: str
    content: str = "{}"

    @property
    def name(self) -> str:
        return f"kubectl apply {self.object_kind.lower()} {self.object_name} {self.content}"

    def apply(self, cluster: Cluster) -> None:
        metadata = {"name": self.object_name, **({"namespace": self.namespace} if self.namespace else {})}
        cluster.submit(Apply({"apiVersion": self.api_version, "kind": self.object_kind, "metadata": metadata,
                              **json.loads(self.content)}))


@attrs.frozen
class WriteCustomStatus(Action):
    """kubectl patch --subresource=status of an object of a component's custom kind (`status`: JSON)."""

    kind: ClassVar[str] = "write-custom-status"
    simplest: ClassVar[Simplest] = (("status", default("{}")),)
    resource: str
    namespace: str
    object_name: str
    status: str = "{}"

    @property
    def name(self) -> str:
        return (f"kubectl patch {_where(self.resource, self.namespace, self.object_name)} --subresource=status "
                f"{self.status}")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch(self.resource, self.namespace, self.object_name, {"status": json.loads(self.status)},
                             subresource="status"))


@attrs.frozen
class ScaleCustomObject(Action):
    """kubectl scale of an object of a component's custom kind with the scale subresource."""

    kind: ClassVar[str] = "scale-custom-object"
    simplest: ClassVar[Simplest] = (("replicas", default(0)),)
    resource: str
    namespace: str
    object_name: str
    replicas: int = at_least(0, default=attrs.field(default=0, validator=attrs.validators.in_(range(MAX_SCALE + 1))))

    @property
    def name(self) -> str:
        return f"kubectl scale {_where(self.resource, self.namespace, self.object_name)} --replicas={self.replicas}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Scale(self.resource, self.namespace, self.object_name, self.replicas))


@attrs.frozen
class DeleteCustomObject(Action):
    """kubectl delete of an object of a component's custom kind, with --cascade when `propagation_policy` is
    set."""

    kind: ClassVar[str] = "delete-custom-object"
    simplest: ClassVar[Simplest] = (("propagation_policy", default("")),)
    resource: str
    namespace: str
    object_name: str
    propagation_policy: str = attrs.field(default="", validator=one_of(("", *CASCADE)))

    @property
    def name(self) -> str:
        cascade = f" --cascade={CASCADE[self.propagation_policy]}" if self.propagation_policy else ""
        return f"kubectl delete {_where(self.resource, self.namespace, self.object_name)}{cascade}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete(self.resource, self.namespace, self.object_name,
                              propagation_policy=self.propagation_policy))


@attrs.frozen
class DeleteOwnCRD(Action):
    """kubectl delete of the CustomResourceDefinition of a component's custom kind (`crd`: its name): every object
    of the kind is deleted, then the CRD goes."""

    kind: ClassVar[str] = "delete-own-crd"
    crd: str

    @property
    def name(self) -> str:
        return f"kubectl delete customresourcedefinition {self.crd}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete("customresourcedefinitions", "", self.crd))
