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

from typing import Any

from kmodel.invariants._history import NODES, PODS
from kmodel.invariants.readers import (ENDPOINTS, GARBAGE_COLLECTOR, NODE_CONTROLLER, POD_GC, REJECTED, REPLICASETS,
                                       SCHEDULER, audited, changes, informers)
# the registry is the sometimes properties' public face, as it was defined here: importing it from this module
# also registers every family's properties (the import below)
from kmodel.invariants.registry import SOMETIMES, Reached, Sometimes, registered_sometimes, sometimes  # noqa: F401
# the other families register their properties on import: importing this module registers them all
from kmodel.invariants import sometimes_access, sometimes_faults, sometimes_leader, sometimes_workloads  # noqa: F401

# -- the properties ----------------------------------------------------------------------------------------

@sometimes("update-conflict", principle="optimistic concurrency")
def update_conflict(cluster: Any, memo: dict) -> bool:
    """An API server refused an update or patch with 409 Conflict: its writer had read a resourceVersion
    that was no longer current, and optimistic concurrency stopped the lost update."""
    return audited(cluster, memo, lambda r: r.code == 409 and r.verb in ("update", "patch"))


@sometimes("etcd-unavailable", principle="the API as the single contract")
def etcd_unavailable(cluster: Any, memo: dict) -> bool:
    """An API server answered a request with 500 because etcd could not be reached: the store's outage
    reached clients only as an answer of the API."""
    return audited(cluster, memo, lambda r: r.code == 500)


@sometimes("node-marked-not-ready", principle="node lifecycle")
def node_marked_not_ready(cluster: Any, memo: dict) -> bool:
    """The node lifecycle controller wrote a node's status (it does only to mark it Ready=Unknown, having
    not heard from its kubelet for the grace period)."""
    return audited(cluster, memo, lambda r: r.user == NODE_CONTROLLER and r.resource == "nodes"
                    and r.subresource == "status" and r.code == 200)


#: the NoExecute taints the node lifecycle controller puts on a node whose Ready condition is Unknown or False
_NODE_HEALTH_TAINTS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")


@sometimes("node-tainted-no-execute", principle="node lifecycle")
def node_tainted_no_execute(cluster: Any, memo: dict) -> bool:
    """A node carried the node lifecycle controller's unreachable or not-ready NoExecute taint, from which taint
    eviction counts each pod's toleration."""
    for change in changes(cluster, memo, NODES):
        node = change.value
        if node is not None and any(t.key in _NODE_HEALTH_TAINTS and t.effect == "NoExecute"
                                    for t in node.spec.taints):
            return True
    return False


@sometimes("pod-evicted", principle="node lifecycle")
def pod_evicted(cluster: Any, memo: dict) -> bool:
    """Taint eviction deleted a pod from a node tainted NoExecute, once the pod's toleration ran out."""
    return audited(cluster, memo, lambda r: r.user == NODE_CONTROLLER and r.verb == "delete"
                    and r.resource == "pods" and r.code == 200)


@sometimes("dependent-collected", principle="level-driven reconciliation")
def dependent_collected(cluster: Any, memo: dict) -> bool:
    """The garbage collector deleted an object whose owners were gone (a ReplicaSet of a deleted Deployment,
    its pods)."""
    return audited(cluster, memo, lambda r: r.user == GARBAGE_COLLECTOR and r.verb == "delete" and r.code == 200)


@sometimes("orphan-pod-collected", principle="node lifecycle")
def orphan_pod_collected(cluster: Any, memo: dict) -> bool:
    """PodGC deleted a pod bound to a node that no longer exists."""
    return audited(cluster, memo, lambda r: r.user == POD_GC and r.verb == "delete" and r.code == 200)


@sometimes("pod-unschedulable", principle="scheduling")
def pod_unschedulable(cluster: Any, memo: dict) -> bool:
    """The scheduler found no node for a pod and wrote it so (its only status write: PodScheduled=False,
    reason Unschedulable)."""
    return audited(cluster, memo, lambda r: r.user == SCHEDULER and r.resource == "pods"
                    and r.subresource == "status" and r.code == 200)


@sometimes("pod-rejected-by-kubelet", principle="scheduling")
def pod_rejected_by_kubelet(cluster: Any, memo: dict) -> bool:
    """A kubelet refused a pod bound to its node at admission (phase Failed, "Pod was rejected: ..."): the
    node, not the scheduler, has the last word on what runs there."""
    for change in changes(cluster, memo, PODS):
        pod = change.value
        if pod is not None and pod.status.phase == "Failed" and pod.status.message.startswith(REJECTED):
            return True
    return False


@sometimes("endpoint-not-ready", principle="network model")
def endpoint_not_ready(cluster: Any, memo: dict) -> bool:
    """A Service's Endpoints listed a pod as not ready (notReadyAddresses): traffic was steered away from a
    pod whose IP the Service still knows."""
    for change in changes(cluster, memo, ENDPOINTS):
        endpoints = change.value
        if endpoints is not None and any(s.not_ready_addresses for s in endpoints.subsets):
            return True
    return False


@sometimes("rolling-update", principle="level-driven reconciliation")
def rolling_update(cluster: Any, memo: dict) -> bool:
    """A Deployment rolled out a new pod template while its old ReplicaSet still had replicas: two
    ReplicaSets of one Deployment wanting pods at once."""
    wanting: dict[str, dict[str, None]] = memo.setdefault("wanting", {})  # owner uid -> {ReplicaSet key}
    for change in changes(cluster, memo, REPLICASETS):
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
    for inf in informers(cluster, memo):  # a loop, not any() over a generator: asked after every step
        if inf.lists >= 2:
            return True
    return False
