"""Sometimes properties: situations the explorer must reach at least once, or it has not tested what it claims.

An invariant says something must never (safety) or must eventually (liveness) happen. A sometimes property
(stateright's `sometimes`) says something must happen in at least one example: an update refused for a stale
resourceVersion, a node marked unreachable, a pod evicted, an informer relisting after its watch failed. The
invariants are only as strong as the situations they were checked in: a campaign that never reached an
eviction has not checked eviction-timing against one. So the checker counts, for each property, the examples
that reached it, and the report flags one no example reached. Reaching one is never a failure, and missing
one does not fail a run either: it says where the exploration is thin (more examples, more steps, or a rule
that makes the situation likelier).

A property is a function of the cluster and a memo of its own (kept for one example, as an invariant's), true
once the situation has been reached in this example. Like invariants they only read, and incrementally: the
audit trail and the store's history from where they last looked (`kmodel.invariants._history.change_feed`), so a
check costs what the step did. The checker stops asking one in an example once it was reached there.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import attrs

from kmodel.invariants._history import NODES, PODS, audit_since, change_feed
from kmodel.invariants import _paths
from kmodel.invariants.registry import CHECK, SHARED, _first_sentence
from kmodel.client.informer import Informer

Reached = Callable[[Any, dict], bool]

KCM = "system:serviceaccount:kube-system:"
NODE_CONTROLLER = KCM + "node-controller"  # node lifecycle, node IPAM and taint eviction, as upstream
GARBAGE_COLLECTOR = KCM + "generic-garbage-collector"
POD_GC = KCM + "pod-garbage-collector"
SCHEDULER = "system:kube-scheduler"
REPLICASETS = "/registry/replicasets/"
ENDPOINTS = "/registry/services/endpoints/"
#: how a kubelet's admission refusal begins its message (kubelet rejectPod: "Pod was rejected: ...")
REJECTED = "Pod was rejected: "


@attrs.frozen
class Sometimes:
    name: str
    principle: str
    situation: str  # one sentence: what was reached
    reached: Reached = attrs.field(eq=False, repr=False)
    #: reachable only where controller managers or schedulers elect a leader (more than one of either): a run of
    #: one of each neither counts nor lists it
    elections_only: bool = False


SOMETIMES: dict[str, Sometimes] = {}


def sometimes(name: str, *, principle: str, elections_only: bool = False) -> Callable[[Reached], Reached]:
    """Register the decorated function as the sometimes property `name` (its docstring's first sentence says
    what situation it is); `elections_only` for a situation only a cluster that elects leaders can reach."""

    def register(fn: Reached) -> Reached:
        if name in SOMETIMES:
            raise ValueError(f"sometimes property {name!r} is registered twice")
        situation = _first_sentence(fn.__doc__)
        if not situation:
            raise ValueError(f"sometimes property {name!r} needs a docstring saying what situation it is")
        SOMETIMES[name] = Sometimes(name, principle, situation, fn, elections_only)
        return fn

    return register


def registered_sometimes() -> list[Sometimes]:
    """The registered sometimes properties, by name."""
    return [SOMETIMES[name] for name in sorted(SOMETIMES)]


# -- reading what happened ---------------------------------------------------------------------------------

def _new_audit(cluster: Any, memo: dict) -> Any:
    """The audit records handled since this property last looked."""
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    return audit_since(cluster, memo, start, end) if start != end else ()


def _audited(cluster: Any, memo: dict, match: Callable[[Any], bool]) -> bool:
    return any(match(r) for r in _new_audit(cluster, memo))


def _changes(cluster: Any, memo: dict, prefix: str) -> list:
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, (prefix,))
    return feed.read(cluster.store)


def _holds_informers(attr: str, value: Any) -> bool:
    # a controller's `informers` list is empty while it is down
    return type(value) is Informer or (type(value) is list and (attr == "informers" or (
        bool(value) and type(value[0]) is Informer)))


def _informers(cluster: Any, memo: dict) -> list[Informer]:
    """Every informer of every component (`_find_informers`), found once per check of the runner (registry.CHECK)
    for every property that asks in that check: the cluster does not change while they are asked."""
    home = memo.get(SHARED)
    check = home.get(CHECK) if home is not None else None
    if check is None or _paths.REFERENCE:
        return list(_find_informers(cluster, memo))
    found = home.get("informers")
    if found is None or found[0] != check:
        found = home["informers"] = (check, list(_find_informers(cluster, home.setdefault("informers-where", {}))))
    return found[1]


def _find_informers(cluster: Any, memo: dict) -> Iterator[Informer]:
    """Every informer of every component: a controller's list of them, a kubelet's, scheduler's or
    kube-proxy's own attributes. Where they are is found once (and again when components come: a node
    added), as (component, attribute) pairs: a component keeps its informers under the same attributes in
    every life, its restarts replacing the informers, not the attributes."""
    components = cluster.loop.components
    where = memo.get("where")
    if where is None or memo.get("components") != len(components):
        where = memo["where"] = [(components[name], attr) for name in sorted(components)
                                 for attr, value in vars(components[name]).items() if _holds_informers(attr, value)]
        memo["components"] = len(components)
    for component, attr in where:
        value = getattr(component, attr, None)
        client = getattr(component, "client", None)  # a process's shared informers are its SharedInformers'
        if type(value) is Informer:
            if value.client is client:
                yield value
        elif type(value) is list:
            for inf in value:
                if inf.client is client:
                    yield inf


# -- the properties ----------------------------------------------------------------------------------------

@sometimes("update-conflict", principle="optimistic concurrency")
def update_conflict(cluster: Any, memo: dict) -> bool:
    """An API server refused an update or patch with 409 Conflict: its writer had read a resourceVersion
    that was no longer current, and optimistic concurrency stopped the lost update."""
    return _audited(cluster, memo, lambda r: r.code == 409 and r.verb in ("update", "patch"))


@sometimes("etcd-unavailable", principle="the API as the single contract")
def etcd_unavailable(cluster: Any, memo: dict) -> bool:
    """An API server answered a request with 500 because etcd could not be reached: the store's outage
    reached clients only as an answer of the API."""
    return _audited(cluster, memo, lambda r: r.code == 500)


@sometimes("node-marked-not-ready", principle="node lifecycle")
def node_marked_not_ready(cluster: Any, memo: dict) -> bool:
    """The node lifecycle controller wrote a node's status (it does only to mark it Ready=Unknown, having
    not heard from its kubelet for the grace period)."""
    return _audited(cluster, memo, lambda r: r.user == NODE_CONTROLLER and r.resource == "nodes"
                    and r.subresource == "status" and r.code == 200)


#: the NoExecute taints the node lifecycle controller puts on a node whose Ready condition is Unknown or False
_NODE_HEALTH_TAINTS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")


@sometimes("node-tainted-no-execute", principle="node lifecycle")
def node_tainted_no_execute(cluster: Any, memo: dict) -> bool:
    """A node carried the node lifecycle controller's unreachable or not-ready NoExecute taint, from which taint
    eviction counts each pod's toleration."""
    for change in _changes(cluster, memo, NODES):
        node = change.value
        if node is not None and any(t.key in _NODE_HEALTH_TAINTS and t.effect == "NoExecute"
                                    for t in node.spec.taints):
            return True
    return False


@sometimes("pod-evicted", principle="node lifecycle")
def pod_evicted(cluster: Any, memo: dict) -> bool:
    """Taint eviction deleted a pod from a node tainted NoExecute, once the pod's toleration ran out."""
    return _audited(cluster, memo, lambda r: r.user == NODE_CONTROLLER and r.verb == "delete"
                    and r.resource == "pods" and r.code == 200)


@sometimes("dependent-collected", principle="level-driven reconciliation")
def dependent_collected(cluster: Any, memo: dict) -> bool:
    """The garbage collector deleted an object whose owners were gone (a ReplicaSet of a deleted Deployment,
    its pods)."""
    return _audited(cluster, memo, lambda r: r.user == GARBAGE_COLLECTOR and r.verb == "delete" and r.code == 200)


@sometimes("orphan-pod-collected", principle="node lifecycle")
def orphan_pod_collected(cluster: Any, memo: dict) -> bool:
    """PodGC deleted a pod bound to a node that no longer exists."""
    return _audited(cluster, memo, lambda r: r.user == POD_GC and r.verb == "delete" and r.code == 200)


@sometimes("pod-unschedulable", principle="scheduling")
def pod_unschedulable(cluster: Any, memo: dict) -> bool:
    """The scheduler found no node for a pod and wrote it so (its only status write: PodScheduled=False,
    reason Unschedulable)."""
    return _audited(cluster, memo, lambda r: r.user == SCHEDULER and r.resource == "pods"
                    and r.subresource == "status" and r.code == 200)


@sometimes("pod-rejected-by-kubelet", principle="scheduling")
def pod_rejected_by_kubelet(cluster: Any, memo: dict) -> bool:
    """A kubelet refused a pod bound to its node at admission (phase Failed, "Pod was rejected: ..."): the
    node, not the scheduler, has the last word on what runs there."""
    for change in _changes(cluster, memo, PODS):
        pod = change.value
        if pod is not None and pod.status.phase == "Failed" and pod.status.message.startswith(REJECTED):
            return True
    return False


@sometimes("endpoint-not-ready", principle="network model")
def endpoint_not_ready(cluster: Any, memo: dict) -> bool:
    """A Service's Endpoints listed a pod as not ready (notReadyAddresses): traffic was steered away from a
    pod whose IP the Service still knows."""
    for change in _changes(cluster, memo, ENDPOINTS):
        endpoints = change.value
        if endpoints is not None and any(s.not_ready_addresses for s in endpoints.subsets):
            return True
    return False


@sometimes("rolling-update", principle="level-driven reconciliation")
def rolling_update(cluster: Any, memo: dict) -> bool:
    """A Deployment rolled out a new pod template while its old ReplicaSet still had replicas: two
    ReplicaSets of one Deployment wanting pods at once."""
    wanting: dict[str, dict[str, None]] = memo.setdefault("wanting", {})  # owner uid -> {ReplicaSet key}
    for change in _changes(cluster, memo, REPLICASETS):
        rs = change.value
        for owner in (change.prev, rs):
            if owner is not None:
                for ref in owner.metadata.owner_references:
                    wanting.setdefault(ref.uid, {}).pop(change.key, None)
        if rs is None or not rs.spec.replicas:
            continue
        for ref in rs.metadata.owner_references:
            if ref.controller and ref.kind == "Deployment":
                keys = wanting.setdefault(ref.uid, {})
                keys[change.key] = None
                if len(keys) >= 2:
                    return True
    return False


@sometimes("informer-relisted", principle="watch, not poll")
def informer_relisted(cluster: Any, memo: dict) -> bool:
    """An informer listed again within one life of its process (its watch failed: an error event, a 410 for a
    compacted resourceVersion, a connection given up on), the reflector's recovery from missed events."""
    for inf in _informers(cluster, memo):  # a loop, not any() over a generator: asked after every step
        if inf.lists >= 2:
            return True
    return False


# the workload edits' properties live beside these, and register on import
import kmodel.invariants.sometimes_workloads  # noqa: E402,F401
from kmodel.invariants import sometimes_access  # noqa: E402,F401  (registers the access family's properties)
# the fault family's properties register themselves here (they use the helpers above)
from kmodel.invariants import sometimes_faults  # noqa: E402,F401
from kmodel.invariants import sometimes_leader  # noqa: E402,F401  (leader election and the pause fault)
