"""The custom resource family's actions: a CustomResourceDefinition and objects of its kind, through kubectl.

Theory of operation
-------------------
Each action is one kubectl invocation by the admin (`cluster.submit`): kubectl maps a custom kind through
discovery when it runs, so an object applied while the CRD is missing (or after it is deleted) is refused by
kubectl itself (`no matches for kind "Database" ... ensure CRDs are installed first`), and one applied after
the CRD is established goes to the API server, which validates it against the CRD's schema.

* `ApplyCRD`: kubectl apply of the Database CRD (`DATABASE_CRD`, the example of docs/crds.md: namespaced,
  spec.engine required and enumerated, spec.replicas 0..5, status and scale subresources);
* `ApplyDatabase`: kubectl apply of a Database in default, in one of `SHAPES`: valid, or invalid in one way
  (the API server's 422, or 400 for an unknown field under kubectl's strict field validation);
* `WriteDatabaseStatus`: kubectl patch --subresource=status of status.replicas (what an operator writes), or
  one that also carries spec.replicas (the status subresource ignores every change outside status);
* `ScaleDatabase`: kubectl scale (a merge patch of the scale subresource; the schema bounds spec.replicas), or
  kubectl patch --subresource=scale with a merge or a JSON patch, which may send a negative count (ValidateScale's
  422; kubectl scale refuses one before sending);
* `DeleteDatabase`: kubectl delete with a propagation policy;
* `DeleteCRD`: kubectl delete of the CRD: its objects are deleted, then it goes (docs/crds.md).
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import attrs

from kmodel.checker.access_actions import CASCADE, one_of
from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default, earlier
from kmodel.cluster import Cluster, Delete, Scale
from kmodel.cluster.kubectl import Apply, Patch
from kmodel.loop.events import at_least

GROUP = "example.com"
PLURAL = "databases"
CRD_NAME = f"{PLURAL}.{GROUP}"
#: the Databases the checker applies (in the default namespace)
DATABASES: tuple[str, ...] = ("orders", "users")
ENGINES: tuple[str, ...] = ("postgres", "mysql")
MAX_REPLICAS = 5
#: how ScaleDatabase sends the count: kubectl scale first (what a draw shrinks to), then kubectl patch
#: --subresource=scale with a merge patch, and with a JSON patch
SCALE_WAYS: tuple[str, ...] = ("scale", "merge", "json")
#: what ApplyDatabase sends: a valid object first (what a draw shrinks to), then one invalid way each
SHAPES: tuple[str, ...] = ("valid", "negative-replicas", "unsupported-engine", "missing-engine", "unknown-field")

DATABASE_CRD: dict = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": GROUP, "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "database", "kind": "Database", "shortNames": ["db"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                     "statusReplicasPath": ".status.replicas"}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "required": ["engine"], "properties": {
                    "engine": {"type": "string", "enum": list(ENGINES)},
                    "replicas": {"type": "integer", "minimum": 0, "maximum": MAX_REPLICAS, "default": 1},
                }},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}},
            }}},
        }],
    },
}


def database_manifest(name: str, replicas: int, shape: str = "valid") -> dict:
    """A Database named `name` with `replicas`, valid or broken the way `shape` says."""
    spec: dict[str, Any] = {"engine": ENGINES[0], "replicas": replicas}
    if shape == "negative-replicas":
        spec["replicas"] = -1
    elif shape == "unsupported-engine":
        spec["engine"] = "oracle"
    elif shape == "missing-engine":
        del spec["engine"]
    elif shape == "unknown-field":
        spec["size"] = "large"
    return {"apiVersion": f"{GROUP}/v1", "kind": "Database", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


_database = attrs.field(validator=one_of(DATABASES))


@attrs.frozen
class ApplyCRD(Action):
    """kubectl apply the Database CustomResourceDefinition (again: an unchanged patch)."""

    kind: ClassVar[str] = "apply-crd"

    @property
    def name(self) -> str:
        return f"kubectl apply customresourcedefinition {CRD_NAME}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(DATABASE_CRD))


@attrs.frozen
class ApplyDatabase(Action):
    """kubectl apply a Database (refused by kubectl while no CRD serves it; by the API server when `shape`
    breaks its schema)."""

    kind: ClassVar[str] = "apply-database"
    simplest: ClassVar[Simplest] = (("shape", earlier(SHAPES)), ("replicas", default(0)))
    database: str = _database
    replicas: int = at_least(0, default=attrs.field(default=1, validator=attrs.validators.in_(range(MAX_REPLICAS + 1))))
    shape: str = attrs.field(default="valid", validator=one_of(SHAPES))

    @property
    def name(self) -> str:
        broken = "" if self.shape == "valid" else f", {self.shape}"
        return f"kubectl apply database {self.database} ({self.replicas} replicas{broken})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(database_manifest(self.database, self.replicas, self.shape)))


@attrs.frozen
class WriteDatabaseStatus(Action):
    """kubectl patch database --subresource=status: status.replicas, as the Database's operator reports it."""

    kind: ClassVar[str] = "write-database-status"
    simplest: ClassVar[Simplest] = (("replicas", default(0)), ("spec_replicas", default(None)))
    database: str = _database
    replicas: int = at_least(0, default=attrs.field(default=0, validator=attrs.validators.in_(range(MAX_REPLICAS + 1))))
    #: spec.replicas sent in the same status patch (None: none); the status subresource ignores it
    spec_replicas: Optional[int] = attrs.field(default=None, validator=attrs.validators.optional(
        attrs.validators.in_(range(MAX_REPLICAS + 1))))

    @property
    def name(self) -> str:
        spec = "" if self.spec_replicas is None else f", spec.replicas={self.spec_replicas}"
        return f"kubectl patch database {self.database} --subresource=status (status.replicas={self.replicas}{spec})"

    def apply(self, cluster: Cluster) -> None:
        patch: dict = {"status": {"replicas": self.replicas}}
        if self.spec_replicas is not None:
            patch["spec"] = {"replicas": self.spec_replicas}
        cluster.submit(Patch(PLURAL, "default", self.database, patch, subresource="status"))


@attrs.frozen
class ScaleDatabase(Action):
    """kubectl scale database --replicas (0..MAX_REPLICAS + 1: the last is past the schema's maximum), or kubectl
    patch database --subresource=scale with a merge or a JSON patch of spec.replicas (-1..MAX_REPLICAS + 1: a
    negative count is ValidateScale's 422)."""

    kind: ClassVar[str] = "scale-database"
    simplest: ClassVar[Simplest] = (("way", earlier(SCALE_WAYS)), ("replicas", default(0)))
    database: str = _database
    replicas: int = at_least(-1, default=attrs.field(default=0,
                                                     validator=attrs.validators.in_(range(-1, MAX_REPLICAS + 2))))
    way: str = attrs.field(default="scale", validator=one_of(SCALE_WAYS))

    def __attrs_post_init__(self) -> None:
        if self.way == "scale" and self.replicas < 0:
            raise ValueError(f"scale-database: kubectl scale takes no negative count ({self.replicas}); patch it "
                             f"(way merge or json) to send one")

    @property
    def name(self) -> str:
        if self.way == "scale":
            return f"kubectl scale database {self.database} --replicas={self.replicas}"
        return (f"kubectl patch database {self.database} --subresource=scale --type={self.way} "
                f"(spec.replicas={self.replicas})")

    def apply(self, cluster: Cluster) -> None:
        if self.way == "scale":
            cluster.submit(Scale(PLURAL, "default", self.database, self.replicas))
        elif self.way == "merge":
            cluster.submit(Patch(PLURAL, "default", self.database, {"spec": {"replicas": self.replicas}},
                                 subresource="scale"))
        else:
            cluster.submit(Patch(PLURAL, "default", self.database,
                                 [{"op": "replace", "path": "/spec/replicas", "value": self.replicas}],
                                 subresource="scale", type="json"))


@attrs.frozen
class DeleteDatabase(Action):
    """kubectl delete database, with --cascade when `propagation_policy` is set."""

    kind: ClassVar[str] = "delete-database"
    simplest: ClassVar[Simplest] = (("propagation_policy", default("")),)
    database: str = _database
    propagation_policy: str = attrs.field(default="", validator=one_of(("", *CASCADE)))

    @property
    def name(self) -> str:
        cascade = f" --cascade={CASCADE[self.propagation_policy]}" if self.propagation_policy else ""
        return f"kubectl delete database {self.database}{cascade}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete(PLURAL, "default", self.database, propagation_policy=self.propagation_policy))


@attrs.frozen
class DeleteCRD(Action):
    """kubectl delete the Database CRD: every Database is deleted, then the CRD goes."""

    kind: ClassVar[str] = "delete-crd"

    @property
    def name(self) -> str:
        return f"kubectl delete customresourcedefinition {CRD_NAME}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete("customresourcedefinitions", "", CRD_NAME))
