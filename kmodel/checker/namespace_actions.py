"""The namespace family's actions: a user who fills a namespace and deletes it, and a user who writes
ownerReferences by hand.

Theory of operation
-------------------
`NamespaceRoundTrip` is the three commands a user runs to try a namespace out and throw it away, as one step:

    kubectl apply -f team.yaml                 # the Namespace team and its content (CONTENTS)
    sleep N                                    # PAUSES: the content starts (or not yet, with 0)
    kubectl delete namespace team [--cascade]  # Terminating: the namespace controller empties it
    kubectl wait --for=delete namespace/team --timeout=60s   # WAITS: or --wait=false, 0

What it puts in the namespace decides what the namespace controller meets: a Deployment (its ReplicaSet and pod,
which the controllers made and the namespace controller deletes in the background), a bare pod (graceful: the
namespace waits for its termination, the pods estimate), or a pod holding `example.com/hold` (content that blocks:
NamespaceFinalizersRemaining until a user takes the finalizer off, as `remove_finalizer` may later).

`ApplyOwned` is `kubectl apply` of an object whose ownerReferences the user writes (what an operator does for its
own objects): the ConfigMap `owned` in default, or the ClusterRole `owned`, owned by an object that exists (drawn
from what exists: a workload of default or team, a Service, a Node). `OWNER_SHAPES` says how the reference reads:
the owner's own uid, a uid no object has (a dangling owner: the garbage collector deletes the dependent), or
both (the collector removes the dangling reference and keeps the object); with blockOwnerDeletion or without.
A ConfigMap owned by an object of another namespace is judged as upstream does (OwnerRefInvalidNamespace), a
cluster-scoped ClusterRole owned by a namespaced kind is never collected (namespacedOwnerOfClusterScopedObject).
"""

from __future__ import annotations

import copy
import uuid
from typing import Any, ClassVar

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.checker.access_actions import HOLD, TEAM
from kmodel.checker.actions import Action, deployment_manifest, pod_manifest, run_fairly, service_manifest
from kmodel.checker.simpler import Simplest, fewer
from kmodel.cluster import Cluster, Delete
from kmodel.cluster.kubectl import Apply
from kmodel.loop.events import at_least

#: what `NamespaceRoundTrip` applies into the namespace, by row: (a Deployment `shop` with its Service, a bare pod
#: `probe`, a bare pod `probe` holding HOLD)
CONTENTS: tuple[tuple[str, ...], ...] = (
    ("deployment", "service"), ("pod",), ("held-pod",), ("deployment", "held-pod"),
)
#: seconds between the apply and the delete (0: the delete races the controllers still creating content)
PAUSES: tuple[int, ...] = (5, 0, 30)
#: how long kubectl waits for the namespace to go (kubectl delete's default --wait, bounded by --timeout; 0:
#: --wait=false)
WAITS: tuple[int, ...] = (60, 0)
#: DeleteOptions.propagationPolicy of the namespace's delete
POLICIES: tuple[str, ...] = ("", "Background", "Foreground", "Orphan")


def _into(manifest: dict, namespace: str) -> dict:
    out = copy.deepcopy(manifest)
    out["metadata"]["namespace"] = namespace
    return out


def content_manifests(row: int, namespace: str = TEAM) -> list[dict]:
    """The manifests of CONTENTS[row], in `namespace`."""
    out = []
    for what in CONTENTS[row]:
        if what == "deployment":
            out.append(_into(deployment_manifest("shop", 1, 0, False), namespace))
        elif what == "service":
            out.append(_into(service_manifest("shop"), namespace))
        else:
            pod = _into(pod_manifest("probe", "", False), namespace)
            if what == "held-pod":
                pod["metadata"]["finalizers"] = [HOLD]
            out.append(pod)
    return out


def namespace_gone(cluster: Cluster, namespace: str) -> bool:
    return cluster.get("namespaces", "", namespace) is None


@attrs.frozen
class NamespaceRoundTrip(Action):
    """Apply the namespace with CONTENTS[`content`], wait PAUSES[`pause`] seconds, delete it with POLICIES[`policy`],
    wait up to WAITS[`wait`] seconds for it to go (see the module docstring)."""

    kind: ClassVar[str] = "namespace-round-trip"
    simplest: ClassVar[Simplest] = (("content", fewer(0)), ("pause", fewer(0)), ("policy", fewer(0)),
                                    ("wait", fewer(0)))
    content: int = at_least(0, default=0)
    pause: int = at_least(0, default=0)
    policy: int = at_least(0, default=0)
    wait: int = at_least(0, default=0)
    namespace: str = TEAM

    def __attrs_post_init__(self) -> None:
        for field, table in (("content", CONTENTS), ("pause", PAUSES), ("policy", POLICIES), ("wait", WAITS)):
            if getattr(self, field) >= len(table):
                raise ValueError(f"{field} must be below {len(table)}, not {getattr(self, field)}")

    @property
    def name(self) -> str:
        policy = POLICIES[self.policy]
        cascade = f" --cascade={policy.lower()}" if policy else ""
        wait = f"--timeout={WAITS[self.wait]}s" if WAITS[self.wait] else "--wait=false"
        return (f"kubectl apply namespace {self.namespace} with {' and '.join(CONTENTS[self.content])}; "
                f"sleep {PAUSES[self.pause]}; kubectl delete namespace {self.namespace}{cascade} {wait}")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}))
        for manifest in content_manifests(self.content, self.namespace):
            cluster.submit(Apply(manifest))
        run_fairly(cluster, cluster.now + PAUSES[self.pause] * 1000)
        cluster.submit(Delete("namespaces", "", self.namespace, propagation_policy=POLICIES[self.policy]))
        deadline = cluster.now + WAITS[self.wait] * 1000
        while cluster.now < deadline and not namespace_gone(cluster, self.namespace):
            run_fairly(cluster, min(deadline, cluster.now + 1000))


#: the dependents `ApplyOwned` writes: (resource, namespace)
DEPENDENTS: tuple[tuple[str, str], ...] = (("configmaps", "default"), ("clusterroles", ""))
#: the name of the dependent
OWNED = "owned"
#: how ApplyOwned's reference reads: its owner's uid; a uid no object has (dangling); both, the owner's first
OWNER_SHAPES: tuple[str, ...] = ("owner", "dangling", "owner-and-dangling")
#: the namespace of the uids `dangling_uid` makes (any fixed UUID: it only keeps them apart from other uids)
_DANGLING = uuid.UUID("00000000-0000-4000-8000-00000000dead")


def dangling_uid(resource: str, name: str) -> str:
    """The uid of a dangling reference to `name` of `resource`: the owner's name and kind, but no object has this
    uid, as if an earlier object of that name had been deleted. One per owner, never shared between two: uids are
    unique, so two references with one uid and two kinds are not what a cluster holds (and the garbage collector
    keys its graph by uid)."""
    return str(uuid.uuid5(_DANGLING, f"{resource}/{name}"))


def owner_reference(resource: str, name: str, uid: str, block: bool) -> dict:
    """An ownerReference to the object `name` of `resource` with `uid` (blockOwnerDeletion when `block`)."""
    res = RESOURCES[resource]
    ref: dict[str, Any] = {"apiVersion": res.api_version, "kind": res.kind, "name": name, "uid": uid}
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def owned_manifest(dependent: int, owner: tuple[str, str, str], shape: int, block: bool) -> dict:
    """DEPENDENTS[`dependent`] named OWNED, owned by `owner` (resource, name, uid) as OWNER_SHAPES[`shape`] says."""
    resource, name, uid = owner
    refs = []
    if OWNER_SHAPES[shape] != "dangling":
        refs.append(owner_reference(resource, name, uid, block))
    if OWNER_SHAPES[shape] != "owner":
        refs.append(owner_reference(resource, name, dangling_uid(resource, name), block))
    dep_resource, namespace = DEPENDENTS[dependent]
    meta: dict[str, Any] = {"name": OWNED, "ownerReferences": refs}
    if namespace:
        meta["namespace"] = namespace
    manifest: dict[str, Any] = {"apiVersion": RESOURCES[dep_resource].api_version,
                                "kind": RESOURCES[dep_resource].kind, "metadata": meta}
    if dep_resource == "configmaps":
        manifest["data"] = {"owner": f"{resource}/{name}"}
    else:
        manifest["rules"] = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    return manifest


@attrs.frozen
class ApplyOwned(Action):
    """kubectl apply the ConfigMap (or ClusterRole) `owned` with ownerReferences to `owner_resource`
    `owner_namespace`/`owner`, shaped as OWNER_SHAPES[`shape`] (see the module docstring). The owner's uid is read
    when the action runs, as a user reads it (`kubectl get -o jsonpath='{.metadata.uid}'`); an owner gone by then
    is referred to by `dangling_uid`."""

    kind: ClassVar[str] = "apply-owned"
    simplest: ClassVar[Simplest] = (("dependent", fewer(0)), ("shape", fewer(0)))
    owner_resource: str
    owner_namespace: str
    owner: str
    dependent: int = at_least(0, default=0)
    shape: int = at_least(0, default=0)
    block: bool = False

    def __attrs_post_init__(self) -> None:
        if self.owner_resource not in RESOURCES:
            raise ValueError(f"owner_resource must be a resource the API serves, not {self.owner_resource!r}")
        for field, table in (("dependent", DEPENDENTS), ("shape", OWNER_SHAPES)):
            if getattr(self, field) >= len(table):
                raise ValueError(f"{field} must be below {len(table)}, not {getattr(self, field)}")

    @property
    def name(self) -> str:
        dep_resource, namespace = DEPENDENTS[self.dependent]
        where = f" -n {namespace}" if namespace and namespace != "default" else ""
        owner = f"{RESOURCES[self.owner_resource].kind.lower()} {self.owner}"
        if self.owner_namespace:
            owner += f" of {self.owner_namespace}"
        block = ", blockOwnerDeletion" if self.block else ""
        return (f"kubectl apply {RESOURCES[dep_resource].kind.lower()} {OWNED}{where} (owned by {owner}: "
                f"{OWNER_SHAPES[self.shape]}{block})")

    def apply(self, cluster: Cluster) -> None:
        found = cluster.get(self.owner_resource, self.owner_namespace, self.owner)
        uid = found.metadata.uid if found is not None else dangling_uid(self.owner_resource, self.owner)
        cluster.submit(Apply(owned_manifest(self.dependent, (self.owner_resource, self.owner, uid), self.shape,
                                            self.block)))
