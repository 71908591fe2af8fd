"""The workload controllers' own promises, counted in the store: a ReplicaSet's expectations, a Deployment's
surge bound, Endpoints that name real pods, and the garbage collector's collection of dependents.

The safety invariants here judge a controller's writes, each at the revision it made: the store's history
says what changed (invariants/_history.py), and the audit trail says who wrote it (every record carries the
store revision after its request, so a record whose revision is new made that revision's write). A `_Ledger`
(one per run, in the shared memo) walks both in revision order and keeps a mirror of the pods and ReplicaSets
as of the write being judged.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from kmodel.invariants._crds import custom_kind, established
from kmodel.invariants._history import audit_since, change_feed, condition, name_of, pod_ips
from kmodel.invariants.liveness import _objects
from kmodel.invariants.records import record
from kmodel.invariants.inputs import AUDIT, MODEL_EVENTS, writes
from kmodel.invariants.registry import LIVENESS, SAFETY, SHARED, invariant
from kmodel.invariants._selectors import InvalidSelector, selector_matches
from kmodel.apiserver.customresources import crds
from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.storeview import current_prefix
from kmodel.controllers.deployment_logic import MAX_REPLICAS_ANNOTATION

PODS = "/registry/pods/"
REPLICASETS = "/registry/replicasets/"
ENDPOINTS = "/registry/services/endpoints/"
REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
DEPLOYMENT_CONTROLLER = "system:serviceaccount:kube-system:deployment-controller"
DEPLOYMENT_COMPONENT = "controller/deployment"
REPLICASET_COMPONENT = "controller/replicaset"
#: the resources judged when the garbage collector monitors only the workloads (ClusterConfig.
#: gc_monitors_every_resource off: traces recorded before it monitored every resource), and their owners, by kind
_WORKLOADS = ("deployments", "replicasets", "statefulsets", "pods")
_WORKLOAD_OWNERS = {"Deployment": "deployments", "ReplicaSet": "replicasets", "Pod": "pods"}
#: built-in resources no garbage collector judges: upstream's ignored events, and bindings,
#: selfsubjectaccessreviews and selfsubjectreviews, which are never stored
_NOT_COLLECTED = ("bindings", "events", "selfsubjectaccessreviews", "selfsubjectreviews")


def _controller_uid(obj: Any) -> str:
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return ref.uid
    return ""


def _active(pod: Any) -> bool:
    return pod.metadata.deletion_timestamp is None and pod.status.phase not in ("Succeeded", "Failed")


class _Ledger:
    """The store's writes to pods, ReplicaSets and Endpoints in revision order, each with its writer, and what
    the invariants here remember of them. Read once per step for all of them (see the module docstring)."""

    def __init__(self, memo: dict) -> None:
        self.feed = change_feed(memo, (PODS, REPLICASETS, ENDPOINTS))
        self.audit_pos = 0
        self.prev_revision: Optional[int] = None
        self.writers: dict[int, str] = {}  # revision -> the user whose request wrote it (pending changes only)
        self.rs: dict[str, Any] = {}  # uid -> the ReplicaSet now
        self.rs_rev: dict[str, int] = {}  # uid -> the revision of its last write
        self.rs_pods: dict[str, dict[str, Any]] = {}  # ReplicaSet uid -> {pod key: pod} of the pods it controls
        self.pod_owner: dict[str, str] = {}  # pod key -> its controller's uid
        # ReplicaSet uid -> its last versions: [(revision, spec.replicas)], oldest first
        self.versions: dict[str, list[tuple[int, int]]] = {}
        self.seen_pods: dict[str, list] = {}  # pod uid -> [its IPs, ever Ready]
        self.bad: dict[str, list[str]] = {"expectations": [], "surge": [], "endpoints": []}
        # ReplicaSet key -> the cache revisions its Deployment controller's writes in flight were decided on
        self.pending_views: dict[str, list[int]] = {}
        # ReplicaSet key -> the ReplicaSet versions its controller's pod creates in flight were decided on
        self.pending_creates: dict[str, list[int]] = {}
        self.notes_read: dict[str, tuple[Any, int]] = {}  # controller -> (the component, its notes read)

    def update(self, cluster: Any, memo: dict) -> None:
        records = cluster.audit.records
        end = len(records)
        if self.audit_pos < end:
            prev = self.prev_revision
            for r in audit_since(cluster, memo, self.audit_pos, end):
                if prev is not None and r.revision != prev:
                    self.writers[r.revision] = r.user
                prev = r.revision
            self.prev_revision = prev
            self.audit_pos = end
        self._read_views(cluster)
        for ch in self.feed.read(cluster.store):
            writer = self.writers.pop(ch.rev, "")
            key = ch.key
            if key.startswith(PODS):
                self._pod(ch, writer)
            elif key.startswith(REPLICASETS):
                self._replicaset(ch, writer)
            else:
                self._endpoints(ch)
        if len(self.writers) > 4096:  # writes outside these prefixes: their writers are never asked for
            newest = max(self.writers)
            self.writers = {rev: w for rev, w in self.writers.items() if rev > newest - 1024}

    def _read_views(self, cluster: Any) -> None:
        """The controllers' notes of what each write they sent was decided on (see `_notes`)."""
        components = cluster.loop.components
        for name in cluster.instances(DEPLOYMENT_COMPONENT):  # every controller manager's copy
            self._notes(components.get(name), "rs_write_views", self.pending_views, name)
        for name in cluster.instances(REPLICASET_COMPONENT):
            self._notes(components.get(name), "create_views", self.pending_creates, name)

    def _notes(self, ctrl: Any, attr: str, pending: dict, name: str) -> None:
        """Read what is new in the list `ctrl.<attr>` of (key, revision decided on) into `pending`, in order."""
        if ctrl is None:
            return
        notes = record(ctrl, attr)
        of, pos = self.notes_read.get(name, (None, 0))
        if ctrl is not of:
            pos = 0
        for key, view in notes[pos:]:
            pending.setdefault(key, []).append(view)
        self.notes_read[name] = (ctrl, len(notes))

    def _pod(self, ch: Any, writer: str) -> None:
        key, pod = ch.key, ch.value
        old_owner = self.pod_owner.pop(key, "")
        if old_owner:
            self.rs_pods.get(old_owner, {}).pop(key, None)
        if pod is None:
            return
        seen = self.seen_pods.setdefault(pod.metadata.uid, [set(), False])
        seen[0].update(pod_ips(pod))
        ready = condition(pod, "Ready")
        if ready is not None and ready.status == "True":
            seen[1] = True
        owner = _controller_uid(pod)
        if not owner:
            return
        self.pod_owner[key] = owner
        pods = self.rs_pods.setdefault(owner, {})
        pods[key] = pod
        rs = self.rs.get(owner)
        if ch.prev is not None or writer != REPLICASET_CONTROLLER or rs is None:
            return
        pending = self.pending_creates.get(f"{rs.metadata.namespace}/{rs.metadata.name}")
        view = pending.pop(0) if pending else None  # the oldest create in flight (a failed one: a wider window)
        if view is None:
            return
        # the pods it would count: active, and matching its selector (one that no longer matches is being
        # released, and upstream's claim leaves it out)
        try:
            alive = sum(1 for p in pods.values()
                        if _active(p) and selector_matches(rs.spec.selector, p.metadata.labels))
        except InvalidSelector:
            return
        # the most replicas the ReplicaSet asked for from the version its sync read to now
        asked = max((n for rev, n in self.versions.get(owner, ()) if rev >= view), default=0)
        asked = max(asked, next((n for rev, n in reversed(self.versions.get(owner, ())) if rev <= view), 0))
        if alive > asked:
            self.bad["expectations"].append(
                f"revision {ch.rev}: the ReplicaSet controller created {name_of(key)}, making {alive} live pods of "
                f"ReplicaSet {rs.metadata.namespace}/{rs.metadata.name}, which asked for at most {asked} since "
                f"the version its sync read (revision {view})")

    def _replicaset(self, ch: Any, writer: str) -> None:
        rs, old = ch.value, ch.prev
        if rs is None:
            uid = old.metadata.uid
            self.rs.pop(uid, None)
            self.rs_rev.pop(uid, None)
            self.versions.pop(uid, None)
            return
        uid = rs.metadata.uid
        self.rs[uid] = rs
        self.rs_rev[uid] = ch.rev
        replicas = rs.spec.replicas or 0
        versions = self.versions.setdefault(uid, [])
        versions.append((ch.rev, replicas))
        if len(versions) > 32:
            del versions[:16]
        before = 0 if old is None else (old.spec.replicas or 0)
        if writer != DEPLOYMENT_CONTROLLER:
            return
        pending = self.pending_views.get(name_of(ch.key))
        view = pending.pop(0) if pending else None  # the oldest write in flight (a failed one: a stricter view)
        if replicas <= before or view is None:
            return
        bound = rs.metadata.annotations.get(MAX_REPLICAS_ANNOTATION)
        owner = _controller_uid(rs)
        if bound is None or not owner or not str(bound).isdigit():
            return
        siblings = [s for s in self.rs.values() if _controller_uid(s) == owner]
        if any(self.rs_rev[s.metadata.uid] > view for s in siblings if s.metadata.uid != uid):
            return  # decided on a cache that had not seen the others as they are: upstream does the same
        total = sum(s.spec.replicas or 0 for s in siblings)
        if total > int(bound):
            self.bad["surge"].append(
                f"revision {ch.rev}: the Deployment controller scaled ReplicaSet {name_of(ch.key)} up to {replicas}, "
                f"bringing its Deployment's ReplicaSets to {total} replicas, above spec.replicas + maxSurge = "
                f"{bound}")

    def _endpoints(self, ch: Any) -> None:
        ep = ch.value
        if ep is None:
            return
        for subset in ep.subsets:
            for ready, addresses in ((True, subset.addresses), (False, subset.not_ready_addresses)):
                for address in addresses:
                    ref = address.target_ref
                    if ref is None or ref.kind != "Pod":
                        continue
                    seen = self.seen_pods.get(ref.uid)
                    where = f"revision {ch.rev}: Endpoints {name_of(ch.key)} listed pod {ref.namespace}/{ref.name}"
                    if seen is None:
                        self.bad["endpoints"].append(f"{where} (uid {ref.uid}), which never existed")
                    elif address.ip not in seen[0]:
                        self.bad["endpoints"].append(f"{where} at {address.ip}, an IP the pod never had")
                    elif ready and not seen[1]:
                        self.bad["endpoints"].append(f"{where} as ready, which it never was")


def _ledger(cluster: Any, memo: dict) -> _Ledger:
    home = memo.get(SHARED, memo)
    ledger = home.get("workload-ledger")
    if ledger is None:
        ledger = home["workload-ledger"] = _Ledger(memo)
    ledger.update(cluster, memo)
    return ledger


@invariant("replicaset-within-expectations", kind=SAFETY, principle="level-driven reconciliation",
           reads=(AUDIT, writes(PODS, REPLICASETS, ENDPOINTS), MODEL_EVENTS,))
def replicaset_within_expectations(cluster: Any, memo: dict) -> Iterator[str]:
    """The ReplicaSet controller never creates a pod that leaves a ReplicaSet with more live pods than it asked
    for (the most spec.replicas it had from the version the controller's sync read to the create), counted in
    the store: its active pods that match its selector.

    This is what the controller's expectations are for: it does not act on a ReplicaSet again until its
    informers have seen the creations and deletions it made, so a stale cache never makes it create twice."""
    yield from _ledger(cluster, memo).bad["expectations"]


@invariant("rollout-within-surge", kind=SAFETY, principle="level-driven reconciliation",
           reads=(AUDIT, writes(PODS, REPLICASETS, ENDPOINTS), MODEL_EVENTS,))
def rollout_within_surge(cluster: Any, memo: dict) -> Iterator[str]:
    """The Deployment controller never scales a ReplicaSet up beyond its Deployment's surge bound: after its
    scale-up, the Deployment's ReplicaSets want at most spec.replicas + maxSurge pods in all (the bound it
    wrote on that ReplicaSet as deployment.kubernetes.io/max-replicas), counted in the store, when the cache its
    sync decided on held the Deployment's other ReplicaSets as the store did.

    The controller keeps no expectations of its own writes (upstream's neither): acting on a cache that has not
    seen a ReplicaSet it created a moment ago, it creates or scales another as if the first did not exist, and
    the bound does not hold. That is upstream's behaviour, so such a write is not judged."""
    yield from _ledger(cluster, memo).bad["surge"]


@invariant("endpoints-list-real-pods", kind=SAFETY, principle="network model",
           reads=(AUDIT, writes(PODS, REPLICASETS, ENDPOINTS), MODEL_EVENTS,))
def endpoints_list_real_pods(cluster: Any, memo: dict) -> Iterator[str]:
    """Endpoints never list a pod that never existed, or at an IP it never had, and never list as ready
    (addresses) a pod that was never Ready.

    A pod deleted a moment ago may still be listed (the endpoints controller acts on its informer's view, and
    `converges-endpoints` judges the end state); a pod that never was, or never was ready, never may."""
    yield from _ledger(cluster, memo).bad["endpoints"]


@invariant("dependents-collected", kind=LIVENESS, principle="level-driven reconciliation")
def dependents_collected(cluster: Any, memo: dict) -> Iterator[str]:
    """Once the cluster has settled, every ownerReference of an object not being deleted names an owner that
    exists where the reference says: an object of the reference's kind (at that apiVersion), in the dependent's
    namespace (or cluster-scoped, for a cluster-scoped kind), of the reference's name, and with its uid. An
    owner re-created under the same name is not the old owner, and an owner of that uid in another namespace,
    or under another name or kind, is no owner (upstream's garbage collector collects such dependents).

    Judged over every built-in resource the API can delete but events, and every custom resource an Established
    CRD not being deleted serves now (at any served version), as dependents and as owners. Not judged: an owner
    of a kind the API does not serve now (the GC cannot tell such an owner is gone: upstream's retries the
    dependent for ever), and a namespaced owner of a cluster-scoped dependent (upstream's never collects it: such
    a reference never resolves)."""
    config = cluster.config
    every = config.gc_monitors_every_resource
    resources = tuple(n for n in RESOURCES if n not in _NOT_COLLECTED) if every else _WORKLOADS
    custom = _served_custom_resources(cluster) if every and config.gc_monitors_custom_resources else {}
    objects: dict[str, list] = {resource: _objects(cluster, memo, resource) for resource in resources}
    for res in {res.name: res for res in custom.values()}.values():
        objects[res.name] = [kv.value for kv in current_prefix(cluster.store, res.prefix + "/")]
    # resource -> (namespace, name) -> uid: where each owner is; and uid -> where it is, to say so
    located = {resource: {(o.metadata.namespace, o.metadata.name): o.metadata.uid for o in found}
               for resource, found in objects.items()}
    where_uid = {o.metadata.uid: f"{resource} {_path(o)}" for resource, found in objects.items() for o in found}
    mapped = {(res.api_version, res.kind): res for res in RESOURCES.values()} if every else {}
    mapped.update(custom)
    for resource, found in objects.items():
        for obj in found:
            meta = obj.metadata
            if meta.deletion_timestamp is not None:
                continue
            for ref in meta.owner_references:
                if every:
                    res = mapped.get((ref.api_version, ref.kind))
                    if res is None or res.name not in located:
                        continue
                    if res.namespaced and not meta.namespace:
                        continue
                    owners, namespace = res.name, meta.namespace if res.namespaced else ""
                else:
                    owners, namespace = _WORKLOAD_OWNERS.get(ref.kind), meta.namespace
                    if owners is None:
                        continue
                if located[owners].get((namespace, ref.name)) == ref.uid:
                    continue
                said = (f"{resource} {_path(obj)} still names {ref.kind} {ref.name} (uid {ref.uid}) as its owner, "
                        "which is gone")
                elsewhere = where_uid.get(ref.uid)
                yield said if elsewhere is None else (
                    f"{said} from {namespace or 'the cluster'} (that uid is {elsewhere}: an owner is looked up where "
                    "its reference names it)")


def _path(obj: Any) -> str:
    m = obj.metadata
    return f"{m.namespace}/{m.name}" if m.namespace else m.name


def _served_custom_resources(cluster: Any) -> dict[tuple[str, str], Any]:
    """The Resource of each custom kind an Established CRD not being deleted serves, by (apiVersion, kind) of
    each served version: an ownerReference names its owner's kind at one of them (the objects are stored at
    one)."""
    served = {}
    for crd in crds(cluster.store):
        if established(crd) and crd.metadata.deletion_timestamp is None:
            res = custom_kind(crd)
            for version in crd.spec.versions:
                if version.served:
                    served[(f"{res.group}/{version.name}", res.kind)] = res
    return served
