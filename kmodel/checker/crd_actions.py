"""The custom resource family's actions: a CustomResourceDefinition and objects of its kind, through kubectl.

Theory of operation
-------------------
Each action is one kubectl invocation by the admin (`cluster.submit`): kubectl maps a custom kind through
discovery when it runs, so an object applied while the CRD is missing (or after it is deleted) is refused by
kubectl itself (`no matches for kind "Database" ... ensure CRDs are installed first`), and one applied after
the CRD is established goes to the API server, which validates it against the CRD's schema.

* `ApplyCRD`: kubectl apply of the Database CRD in one of `CRD_RELEASES` (applying another is an update of the
  CRD that its stored objects live through): `basic` (`DATABASE_CRD`: namespaced, spec.engine required
  and enumerated, spec.replicas 0..5, status and scale subresources), `example` (`EXAMPLE_CRD`,
  examples/crd.yaml: spec.version, spec.storage, spec.tags, spec.config, status.selector read by the scale
  subresource, a served v1beta1), `tightened` (the example with at most 3 replicas and 2 tags: objects stored
  before keep values the new schema refuses, which an update may leave as they are: validation ratcheting);
* `ApplyCRDAndDatabase`: kubectl apply of a release of the CRD, then of a Database;
* `ApplyDatabase`: kubectl apply of a Database in default with its replicas, in one of `SHAPES`:
  valid, or invalid in one way (the API server's 422, or 400 for an unknown field under kubectl's strict field
  validation), or held by a finalizer; a spec drawn from the stored CRD's schema goes as own_crd_actions.ApplyCustomObject;
* `WriteDatabaseStatus`: kubectl patch --subresource=status of status.replicas (what an operator writes), with
  status.selector at times, or one that also carries spec.replicas (the status subresource ignores every change
  outside status);
* `ScaleDatabase`: kubectl scale (a merge patch of the scale subresource; the schema bounds spec.replicas), or
  kubectl patch --subresource=scale with a merge or a JSON patch, which may send a negative count (ValidateScale's
  422; kubectl scale refuses one before sending);
* `DeleteDatabase`: kubectl delete with a propagation policy;
* `ReleaseDatabase`: kubectl patch of a Database's finalizers to none;
* `DeleteCRD`: kubectl delete of the CRD with a propagation policy: its objects are deleted, then it goes
  (docs/crds.md).
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Optional

import attrs

from kmodel.checker.access_actions import CASCADE, HOLD, one_of
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
#: what ApplyDatabase sends: a valid object first (what a draw shrinks to), then one invalid way each, then a
#: valid one that its operator holds with a finalizer (HOLD: a CRD deleted meanwhile stays Terminating on it)
SHAPES: tuple[str, ...] = ("valid", "negative-replicas", "unsupported-engine", "missing-engine", "unknown-field",
                           "held")
#: the status.selector WriteDatabaseStatus may send (the label selector of the Database's pods)
SELECTOR = "app=database"
#: the Database CRD's releases ApplyCRD applies: the first (what a draw shrinks to), then later ones
CRD_RELEASES: tuple[str, ...] = ("basic", "example", "tightened")
#: the tightened release's bounds: below the example's (MAX_REPLICAS replicas, 3 tags)
TIGHT_REPLICAS, TIGHT_TAGS = 3, 2

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


def _example() -> dict:
    """examples/crd.yaml (tests/checker/test_crd_rules.py keeps the two the same): DATABASE_CRD with spec.version,
    spec.storage, spec.tags, spec.config, status.selector (the scale subresource's labelSelectorPath) and
    status.phase, and a served v1beta1 that stores nothing of its own."""
    crd = copy.deepcopy(DATABASE_CRD)
    v1 = crd["spec"]["versions"][0]
    v1["subresources"]["scale"]["labelSelectorPath"] = ".status.selector"
    properties = v1["schema"]["openAPIV3Schema"]["properties"]
    properties["spec"]["properties"].update({
        "version": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)*$", "maxLength": 10},
        "storage": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 1}},
        "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    })
    properties["status"]["properties"].update({"selector": {"type": "string"},
                                               "phase": {"type": "string", "nullable": True}})
    crd["spec"]["versions"].append({"name": "v1beta1", "served": True, "storage": False, "schema": {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})
    return crd


EXAMPLE_CRD = _example()


def _tightened() -> dict:
    """The example CRD with spec.replicas at most TIGHT_REPLICAS and spec.tags at most TIGHT_TAGS items."""
    crd = copy.deepcopy(EXAMPLE_CRD)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec["replicas"]["maximum"], spec["tags"]["maxItems"] = TIGHT_REPLICAS, TIGHT_TAGS
    return crd


#: each release's manifest, by name
CRDS: dict[str, dict] = {"basic": DATABASE_CRD, "example": EXAMPLE_CRD, "tightened": _tightened()}


def database_manifest(name: str, replicas: int, shape: str = "valid", engine: str = ENGINES[0]) -> dict:
    """A Database named `name` with `engine` and `replicas`, valid or broken the way `shape` says."""
    spec: dict[str, Any] = {"engine": engine, "replicas": replicas}
    if shape == "negative-replicas":
        spec["replicas"] = -1
    elif shape == "unsupported-engine":
        spec["engine"] = "oracle"
    elif shape == "missing-engine":
        del spec["engine"]
    elif shape == "unknown-field":
        spec["size"] = "large"
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if shape == "held":
        metadata["finalizers"] = [HOLD]
    return {"apiVersion": f"{GROUP}/v1", "kind": "Database", "metadata": metadata, "spec": spec}


_database = attrs.field(validator=one_of(DATABASES))


@attrs.frozen
class ApplyCRD(Action):
    """kubectl apply the Database CustomResourceDefinition in its release `release` (the stored one again: an
    unchanged patch; another: an update of the CRD, its schema looser or tighter)."""

    kind: ClassVar[str] = "apply-crd"
    simplest: ClassVar[Simplest] = (("release", earlier(CRD_RELEASES)),)
    release: str = attrs.field(default=CRD_RELEASES[0], validator=one_of(CRD_RELEASES))

    @property
    def name(self) -> str:
        release = "" if self.release == CRD_RELEASES[0] else f" ({self.release})"
        return f"kubectl apply customresourcedefinition {CRD_NAME}{release}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(CRDS[self.release]))


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
class ApplyCRDAndDatabase(Action):
    """kubectl apply of the Database CRD in its release `release`, then kubectl apply of a Database (two
    invocations, as a script runs them: the second maps the kind once the first has made it served), as whoever
    installs the CRD, or ships a new release of it, applies it with the objects it serves. Upgrading, the rule
    sends the Database with the replicas it has stored and the other engine: where the new release refuses those
    replicas (tightened), the update leaves them as they are and validation ratcheting lets it through."""

    kind: ClassVar[str] = "apply-crd-and-database"
    simplest: ClassVar[Simplest] = (("release", earlier(CRD_RELEASES)), ("replicas", default(0)),
                                    ("engine", earlier(ENGINES)))
    release: str = attrs.field(validator=one_of(CRD_RELEASES))
    database: str = _database
    replicas: int = at_least(0, default=attrs.field(default=1, validator=attrs.validators.in_(range(MAX_REPLICAS + 1))))
    engine: str = attrs.field(default=ENGINES[0], validator=one_of(ENGINES))

    @property
    def name(self) -> str:
        return (f"kubectl apply customresourcedefinition {CRD_NAME} ({self.release}); kubectl apply database "
                f"{self.database} ({self.replicas} replicas, {self.engine})")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(CRDS[self.release]))
        cluster.submit(Apply(database_manifest(self.database, self.replicas, engine=self.engine)))


@attrs.frozen
class WriteDatabaseStatus(Action):
    """kubectl patch database --subresource=status: status.replicas (and status.selector when `selector`), as the
    Database's operator reports it."""

    kind: ClassVar[str] = "write-database-status"
    simplest: ClassVar[Simplest] = (("replicas", default(0)), ("spec_replicas", default(None)),
                                    ("selector", default(False)))
    database: str = _database
    replicas: int = at_least(0, default=attrs.field(default=0, validator=attrs.validators.in_(range(MAX_REPLICAS + 1))))
    #: spec.replicas sent in the same status patch (None: none); the status subresource ignores it
    spec_replicas: Optional[int] = attrs.field(default=None, validator=attrs.validators.optional(
        attrs.validators.in_(range(MAX_REPLICAS + 1))))
    #: status.selector SELECTOR sent too (the scale subresource reads it where the CRD names labelSelectorPath)
    selector: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    @property
    def name(self) -> str:
        spec = "" if self.spec_replicas is None else f", spec.replicas={self.spec_replicas}"
        selector = f", status.selector={SELECTOR}" if self.selector else ""
        return (f"kubectl patch database {self.database} --subresource=status (status.replicas={self.replicas}"
                f"{selector}{spec})")

    def apply(self, cluster: Cluster) -> None:
        patch: dict = {"status": {"replicas": self.replicas, **({"selector": SELECTOR} if self.selector else {})}}
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
class ReleaseDatabase(Action):
    """kubectl patch database --type=merge of metadata.finalizers to null: the finalizers taken off by hand, as one
    unsticks a CRD left Terminating on an object whose operator is gone."""

    kind: ClassVar[str] = "release-database"
    database: str = _database

    @property
    def name(self) -> str:
        return f"kubectl patch database {self.database} --type=merge (metadata.finalizers: null)"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch(PLURAL, "default", self.database, {"metadata": {"finalizers": None}}))


@attrs.frozen
class DeleteCRD(Action):
    """kubectl delete the Database CRD, with --cascade when `propagation_policy` is set: every Database is
    deleted, then the CRD goes. The first delete of a CRD leaves the policy aside (apiextensions' registry only
    marks it Terminating); a second, while Databases are left, is the generic one and the policy's finalizer
    (foregroundDeletion, orphan) is the garbage collector's to remove."""

    kind: ClassVar[str] = "delete-crd"
    simplest: ClassVar[Simplest] = (("propagation_policy", default("")),)
    propagation_policy: str = attrs.field(default="", validator=one_of(("", *CASCADE)))

    @property
    def name(self) -> str:
        cascade = f" --cascade={CASCADE[self.propagation_policy]}" if self.propagation_policy else ""
        return f"kubectl delete customresourcedefinition {CRD_NAME}{cascade}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete("customresourcedefinitions", "", CRD_NAME, propagation_policy=self.propagation_policy))
