"""Sometimes properties of the user's workload edits (kmodel/checker/workload_rules.py): situations those rules
exist to reach. Registered with the others (invariants/sometimes.py imports this module at its end).
"""

from __future__ import annotations

from typing import Any

from kmodel.invariants._history import PODS
from kmodel.invariants.readers import NODE_CONTROLLER, REPLICASETS, SCHEDULER, audited, changes, new_audit
from kmodel.invariants.registry import sometimes

#: the user kubectl acts as (the admin token's user)
KUBECTL_USER = "admin"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


@sometimes("manifest-refused", principle="the API as the single contract")
def manifest_refused(cluster: Any, memo: dict) -> bool:
    """An API server refused a user's write with 422 Invalid: validation stopped a manifest sent by mistake
    before it reached the store."""
    return audited(cluster, memo, lambda r: r.code == 422 and r.user == KUBECTL_USER
                    and r.verb in ("create", "update", "patch"))


def _controller_uid(pod: Any) -> str:
    return next((ref.uid for ref in pod.metadata.owner_references if ref.controller), "")


@sometimes("pod-released-and-adopted", principle="level-driven reconciliation")
def pod_released_and_adopted(cluster: Any, memo: dict) -> bool:
    """A pod its ReplicaSet released (its labels edited out of the selector) was adopted again once its labels
    matched: ownership follows the labels both ways (ClaimPods)."""
    released: dict[str, None] = memo.setdefault("released", {})  # pod uids that lost their controller
    for change in changes(cluster, memo, PODS):
        before, after = change.prev, change.value
        if before is None or after is None:
            continue
        uid = after.metadata.uid
        if _controller_uid(before) and not _controller_uid(after):
            released[uid] = None
        elif uid in released and _controller_uid(after):
            return True
    return False


@sometimes("old-replicaset-revived", principle="level-driven reconciliation")
def old_replicaset_revived(cluster: Any, memo: dict) -> bool:
    """A Deployment went back to an earlier template (kubectl rollout undo, or the old manifest applied again):
    the ReplicaSet of that template became its newest again, its revision annotation moving up."""
    for change in changes(cluster, memo, REPLICASETS):
        before, after = change.prev, change.value
        if before is None or after is None:
            continue
        old = before.metadata.annotations.get(REVISION_ANNOTATION, "")
        new = after.metadata.annotations.get(REVISION_ANNOTATION, "")
        if old.isdigit() and new.isdigit() and int(new) > int(old):
            return True
    return False


@sometimes("cordoned-node-skipped", principle="scheduling")
def cordoned_node_skipped(cluster: Any, memo: dict) -> bool:
    """The scheduler bound a pod to another node while a node was cordoned (spec.unschedulable): a cordoned node
    takes no new pods."""
    bound = [r for r in new_audit(cluster, memo) if r.user == SCHEDULER and r.subresource == "binding"
             and r.code < 300]
    if not bound:
        return False
    cordoned = {n.metadata.name for n in cluster.objects("nodes") if n.spec.unschedulable}
    if not cordoned:
        return False
    for record in bound:
        pod = cluster.get("pods", record.namespace, record.name)
        if pod is not None and pod.spec.node_name and pod.spec.node_name not in cordoned:
            return True
    return False


@sometimes("pod-evicted-by-user-taint", principle="node lifecycle")
def pod_evicted_by_user_taint(cluster: Any, memo: dict) -> bool:
    """Taint eviction deleted a pod from a node a user had tainted NoExecute (kubectl taint), not the node
    lifecycle controller: the same eviction, for a taint no controller put there."""

    node_of: dict[str, str] = memo.setdefault("node_of", {})  # namespace/name -> the node it was bound to
    for change in changes(cluster, memo, PODS):
        pod = change.value if change.value is not None else change.prev
        if pod is not None and pod.spec.node_name:
            node_of[f"{pod.metadata.namespace}/{pod.metadata.name}"] = pod.spec.node_name
    evicted = [r for r in new_audit(cluster, memo) if r.user == NODE_CONTROLLER and r.verb == "delete"
               and r.resource == "pods" and r.code == 200]
    if not evicted:
        return False
    nodes = {n.metadata.name: n for n in cluster.objects("nodes")}
    for record in evicted:
        node = nodes.get(node_of.get(f"{record.namespace}/{record.name}", ""))
        if node is not None and any(t.effect == "NoExecute" and not t.key.startswith("node.kubernetes.io/")
                                    for t in node.spec.taints):
            return True
    return False
