"""Node lifecycle invariants: nothing is declared dead, or evicted, before its time."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from invariants._history import LEASES, NODES, HistoryReader, condition, name_of, node_key
from invariants.registry import SAFETY, invariant

NODE_LEASES = LEASES + "kube-node-lease/"
TAINT_MANAGER_REASON = "DeletionByTaintManager"
WRITE_VERBS = ("create", "update", "patch")


def _no_execute(node: Any) -> list:
    return [t for t in node.spec.taints if t.effect == "NoExecute"] if node is not None else []


def _tolerates(tol: Any, taint: Any) -> bool:
    if tol.effect and tol.effect != taint.effect:
        return False
    if not tol.key:
        return tol.operator == "Exists"
    if tol.key != taint.key:
        return False
    return tol.operator == "Exists" or tol.value == taint.value


def eviction_due(pod: Any, taints: list, since: int) -> Optional[int]:
    """The earliest time taint eviction may delete `pod` on a node tainted `taints` (NoExecute) since `since`:
    at once if a taint is not tolerated, else `since` + the smallest finite tolerationSeconds used; None when
    every taint is tolerated forever (the pod must never be evicted)."""
    start = max(since, pod.metadata.creation_timestamp or 0)
    seconds = []
    for taint in taints:
        used = [t for t in pod.spec.tolerations if _tolerates(t, taint)]
        if not used:
            return start
        seconds.extend(t.toleration_seconds for t in used if t.toleration_seconds is not None)
    if not seconds:
        return None
    return start + max(0, min(seconds)) * 1000


@invariant("eviction-timing", kind=SAFETY, principle="node lifecycle")
def eviction_timing(cluster: Any, memo: dict) -> Iterator[str]:
    """No pod is evicted by taint eviction before its toleration of its node's NoExecute taint ran out (counted
    from when the node became tainted), and no node is marked Ready=Unknown before the grace period has passed
    since its last heartbeat (Lease renewal or status).

    Reads the store's history (nodes, node leases) and the audit trail (the evictions, with their times)."""
    grace = cluster.config.node_monitor_grace_period_ms
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = HistoryReader((NODES, NODE_LEASES))
        memo["bad"] = []
        memo["tainted_since"] = {}
        memo["renewed"] = {}
    bad: list = memo["bad"]
    tainted_since: dict[str, int] = memo["tainted_since"]
    records = cluster.audit.records
    start = memo.get("pos", 0)
    memo["pos"] = len(records)
    new_records = records[start:]
    # when each lease write was committed (writes are synchronous calls to etcd: the audit time is the commit's)
    committed_at = {r.revision: r.time for r in new_records
                    if r.resource == "leases" and r.code < 300 and r.verb in WRITE_VERBS}
    # node name -> (renewTime, commit time) of its Lease as of the change being read. A renewal counts as a
    # heartbeat only once it is committed before the mark: one held on the wire past the grace period and
    # committed in the mark's own millisecond is one the controller cannot have seen (found by the checker).
    renewed: dict[str, tuple[Optional[int], Optional[int]]] = memo["renewed"]
    for ch in reader.read(cluster.store):
        if not ch.key.startswith(NODES):
            lease_of = ch.key[len(NODE_LEASES):]
            if ch.value is None:
                renewed.pop(lease_of, None)
            else:
                renewed[lease_of] = (ch.value.spec.renew_time, committed_at.get(ch.rev))
            continue
        name = ch.key[len(NODES):]
        taints = _no_execute(ch.value)
        if not taints:
            tainted_since.pop(name, None)
        elif name not in tainted_since:
            tainted_since[name] = min(t.time_added or 0 for t in taints)
        if ch.value is None or ch.prev is None:
            continue
        new, old = condition(ch.value, "Ready"), condition(ch.prev, "Ready")
        if new is None or new.status != "Unknown" or (old is not None and old.status == "Unknown"):
            continue
        at = new.last_transition_time
        heard = [ch.prev.metadata.creation_timestamp or 0]
        if old is not None and old.last_heartbeat_time is not None:
            heard.append(old.last_heartbeat_time)
        renew_time, commit_time = renewed.get(name, (None, None))
        if renew_time is not None and (at is None or commit_time is None or commit_time < at):
            heard.append(renew_time)
        # a heartbeat written in the very millisecond of the mark is concurrent with the controller's decision:
        # it cannot have seen it (found by the checker: a stalled kubelet renewing just as it is marked)
        if at is not None:
            heard = [h for h in heard if h < at] or [0]
        last = max(heard)
        if at is not None and at < last + grace:
            bad.append(f"node {name} was marked Ready=Unknown at {at} ms, {at - last} ms after its last heartbeat "
                       f"at {last} ms (grace period {grace} ms)")
    keys = cluster.store._keys  # noqa: SLF001 (reads at a revision without going on the store's history)
    for r in new_records:
        if r.verb != "delete" or r.resource != "pods" or r.subresource or r.code >= 300:
            continue
        key = f"/registry/pods/{r.namespace}/{r.name}"
        kv = keys.at(key, r.revision) or keys.at(key, r.revision - 1)
        if kv is None:
            continue
        pod = kv.value
        target = condition(pod, "DisruptionTarget")
        if target is None or target.reason != TAINT_MANAGER_REASON or target.status != "True":
            continue  # not a taint eviction
        node_kv = keys.at(node_key(pod.spec.node_name), r.revision) if pod.spec.node_name else None
        taints = _no_execute(node_kv.value if node_kv is not None else None)
        if not taints:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms by taint eviction, but its node "
                       f"{pod.spec.node_name or '(none)'} had no NoExecute taint")
            continue
        since = tainted_since.get(pod.spec.node_name, min(t.time_added or 0 for t in taints))
        due = eviction_due(pod, taints, since)
        if due is None:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms though it tolerates its node's taints "
                       f"{', '.join(t.key for t in taints)} forever")
        elif r.time < due:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms, before its toleration of "
                       f"{', '.join(t.key for t in taints)} on {pod.spec.node_name} (tainted at {since} ms) ran "
                       f"out at {due} ms")
    yield from bad
