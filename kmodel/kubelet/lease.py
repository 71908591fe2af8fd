"""The node Lease a kubelet renews (pkg/kubelet/nodelease, component-helpers/apimachinery/lease/controller.go).

Theory of operation
-------------------
The kubelet's heartbeat is the Lease kube-node-lease/<node>: holderIdentity <node>, leaseDurationSeconds 40,
renewTime = now, and an ownerReference to its Node (setNodeOwnerFunc), so the garbage collector deletes the
Lease with the Node. The renew interval is 25 % of the duration (10 s). Each renewal updates the Lease the
kubelet last wrote (upstream keeps `latestLease` to skip a GET); with none cached, or after a conflict, it
reads the Lease first (ensureLease), creating it on 404. Failures retry with upstream's backoff: 200 ms
doubling up to 7 s (retryInterval / maxBackoff of the lease controller).

This module holds the pure part: building and renewing the Lease value. The requests are the component's.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Lease, LeaseSpec, ObjectMeta, OwnerReference
from kmodel.objects.fastevolve import evolve

NODE_LEASE_NAMESPACE = "kube-node-lease"
RETRY_INITIAL_MS = 200
RETRY_MAX_MS = 7_000


def node_owner(node: str, node_uid: str) -> tuple:
    """setNodeOwnerFunc: the Lease is owned by its Node (no owner while the Node's uid is unknown)."""
    if not node_uid:
        return ()
    return (OwnerReference(api_version="v1", kind="Node", name=node, uid=node_uid),)


def new_lease(node: str, node_uid: str, now: int, duration_seconds: int) -> Lease:
    """newLease for a Lease that does not exist yet."""
    return Lease(
        metadata=ObjectMeta(name=node, namespace=NODE_LEASE_NAMESPACE, owner_references=node_owner(node, node_uid)),
        spec=LeaseSpec(holder_identity=node, lease_duration_seconds=duration_seconds, renew_time=now))


def renewed(lease: Lease, node: str, node_uid: str, now: int, duration_seconds: int) -> Lease:
    """newLease from a base Lease: same object, this holder, renewTime = now, owner set if missing."""
    meta = lease.metadata
    if not meta.owner_references and node_uid:
        meta = evolve(meta, owner_references=node_owner(node, node_uid))
    return evolve(lease, metadata=meta, spec=evolve(
        lease.spec, holder_identity=node, lease_duration_seconds=duration_seconds, renew_time=now))


def retry_delay_ms(failures: int) -> int:
    """200 ms × 2^(failures-1), at most 7 s."""
    return min(RETRY_INITIAL_MS << min(max(failures - 1, 0), 16), RETRY_MAX_MS)


def lease_holder(lease: Optional[Lease]) -> str:
    return (lease.spec.holder_identity or "") if lease is not None else ""
