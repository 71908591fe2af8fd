"""Node lifecycle invariants: nothing is declared dead, or evicted, before its time."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Iterator, Optional

from kmodel.invariants._history import NODES, PODS, audit_since, change_feed, condition, is_terminal, name_of, node_key
from kmodel.invariants.records import record
from kmodel.invariants.inputs import AUDIT, MODEL_EVENTS, writes
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.apiserver.authentication import service_account_name

NODE_LIFECYCLE = "controller/nodelifecycle"
TAINT_EVICTION = "controller/tainteviction"
TAINT_MANAGER_REASON = "DeletionByTaintManager"


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


def _heard(cluster: Any, memo: dict) -> list[tuple[dict[str, list[int]], list[int]]]:
    """The node lifecycle controller's heard log (see kmodel/controllers/nodelifecycle.py), read from where the
    last check stopped: node -> times a heartbeat change of it reached the controller's informers, and the
    times the controller (re)started. Both lists are in time order. One view per controller manager's copy of
    the controller (with several, a mark is judged by the most lenient: the store does not say which wrote it,
    and a leader woken from a pause runs beside the new one for a while)."""
    return [_view(memo, name, log, "heard", lambda t, node: (node, t))
            for name, log in _logs(cluster, NODE_LIFECYCLE)]


def _logs(cluster: Any, controller: str) -> list[tuple[str, list]]:
    """(copy, its `heard` log) of every controller manager's copy of `controller` (each declares the record)."""
    components = cluster.loop.components
    return [(name, record(c, "heard")) for name in cluster.instances(controller)
            if (c := components.get(name)) is not None]


def _view(memo: dict, name: str, log: list, key: str, entry: Any) -> tuple[dict, list[int]]:
    """One copy's view (node -> its entries, start times), brought up to date with what is new in its log."""
    views = memo.setdefault(key, {})
    by_node, starts = views.setdefault(name, ({}, []))
    pos = memo.get((key, name), 0)
    for row in log[pos:]:
        node, value = entry(*row)
        if node is None:
            starts.append(row[0])
        else:
            by_node.setdefault(node, []).append(value)
    memo[(key, name)] = len(log)
    return by_node, starts


def _last_heard(times: list[int], starts: list[int], at: int) -> Optional[int]:
    """The last time before `at` a heartbeat change reached the controller process that was running at `at`
    (one that started later knew nothing of it; one that ran earlier is gone)."""
    j = bisect_left(starts, at)
    life = starts[j - 1] if j else None
    i = bisect_left(times, at)
    if i == 0:
        return None
    last = times[i - 1]
    return last if life is None or last >= life else None


def _taint_eviction_view(cluster: Any, memo: dict) -> list[tuple[dict[str, list[tuple[int, tuple]]], list[int]]]:
    """Taint eviction's heard log (see kmodel/controllers/tainteviction.py), read from where the last check
    stopped: node -> (time, its NoExecute taints) each time the controller's informer delivered a change of
    them, and the times the controller (re)started. Both in time order. One view per controller manager's copy
    (see `_heard`)."""
    return [_view(memo, name, log, "te_heard", lambda t, node, taints: (node, (t, taints)))
            for name, log in _logs(cluster, TAINT_EVICTION)]


def _taints_seen(heard: list[tuple[int, tuple]], starts: list[int], at: int) -> tuple:
    """The NoExecute taints of a node as the taint eviction process running at `at` saw it then: the last change
    its informer delivered before `at` in that process's life, or one delivered at that very instant (the
    order within an instant is unknown, so a taint seen then counts)."""
    j = bisect_right(starts, at)
    life = starts[j - 1] if j else 0
    seen: tuple = ()
    for t, taints in heard:
        if t > at:
            break
        if t < life:
            continue
        if t < at:
            seen = taints
        elif taints:
            return taints
    return seen


def _tainted_since_in_view(heard: list[tuple[int, tuple]], starts: list[int], at: int) -> Optional[int]:
    """When the node's NoExecute taints, as the taint eviction process running at `at` saw them, last went from
    none to some: the start of the stretch, up to `at`, in which that process saw the node tainted without a
    break (None: it did not see it tainted at `at`). A process that started later saw the taint first at its
    start, as upstream counts a toleration from when its controller first saw the pod on a tainted node."""
    j = bisect_right(starts, at)
    life = starts[j - 1] if j else 0
    since: Optional[int] = None
    for t, taints in heard:
        if t > at:
            break
        if t < life:
            continue
        if not taints:
            since = None
        elif since is None:
            since = t
    return since


#: whom taint eviction's requests authenticate as: the node-controller service account, which node lifecycle and
#: node IPAM share (neither deletes a pod)
TAINT_EVICTION_USER = service_account_name("node-controller")


def _at(store: Any, key: str, revision: int) -> Any:
    """The live KeyValue of `key` as of `revision` (None if absent then, or `revision` < 1), read with
    `Store.peek`, which does not go on the store's history."""
    kvs = store.peek(key, revision=revision) if revision > 0 else []
    return kvs[0] if kvs else None


@invariant("eviction-timing", kind=SAFETY, principle="node lifecycle",
           reads=(AUDIT, writes(NODES), MODEL_EVENTS))
def eviction_timing(cluster: Any, memo: dict) -> Iterator[str]:
    """No pod is evicted by taint eviction before its toleration of its node's NoExecute taint ran out (counted
    from when the node became tainted), and no node is marked Ready=Unknown by the node lifecycle controller
    before the grace period has passed since that controller last heard from it: since a heartbeat change
    (Lease renewal, Ready lastHeartbeatTime) reached its informers, or, for a node that never posted Ready,
    since the node's creation (startup grace period).

    Upstream's guarantee, nothing stronger: tryUpdateNodeHealth measures the grace period from probeTimestamp,
    its own clock when a monitor pass *noticed* a heartbeat change in its caches (pkg/controller/nodelifecycle/
    node_lifecycle_controller.go), so a renewal committed but not yet delivered to it (a lagging informer,
    watch cache or link) does not count: upstream marks a live node Unknown then, and so may the model. Likewise
    taint eviction evicts by its informer's view: a pod evicted after its node's NoExecute taint was removed in
    the store is judged by the taints taint eviction had seen when it decided (its heard log, at the time of
    the DisruptionTarget condition it wrote), not flagged for a removal not delivered to it yet; and the
    toleration is counted from the earlier of the store's latest taint and the start of the stretch in which
    taint eviction saw the node tainted without a break (a removal and re-add it never saw restarts nothing
    upstream).

    Reads the store's history (nodes), the two controllers' heard logs and the audit trail (the evictions)."""
    grace = cluster.config.node_monitor_grace_period_ms
    startup_grace = cluster.config.node_startup_grace_period_ms
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (NODES,))
        memo["bad"] = []
        memo["tainted_since"] = {}
        memo["gone"] = {}  # node deleted while tainted -> (its NoExecute taints, tainted since)
        memo["started"] = set()  # (key, uid) of every pod an accepted delete has started terminating
    bad: list = memo["bad"]
    tainted_since: dict[str, int] = memo["tainted_since"]
    gone: dict[str, tuple] = memo["gone"]
    started: set = memo["started"]
    records = cluster.audit.records
    start = memo.get("pos", 0)
    memo["pos"] = len(records)
    new_records = audit_since(cluster, memo, start, len(records))
    heard = _heard(cluster, memo)

    def node_changed(ch: Any) -> None:
        name = ch.key[len(NODES):]
        taints = _no_execute(ch.value)
        if ch.value is None and ch.prev is not None and name in tainted_since:
            # deleted while tainted: taint eviction's timers for its pods run on (upstream's handleNodeUpdate
            # forgets the node, not the pods' scheduled evictions), so keep what they were counted from
            gone[name] = (_no_execute(ch.prev), tainted_since[name])
        elif ch.value is not None:
            gone.pop(name, None)
        if not taints:
            tainted_since.pop(name, None)
        elif name not in tainted_since:
            tainted_since[name] = min(t.time_added or 0 for t in taints)
        if ch.value is None or ch.prev is None:
            return
        new, old = condition(ch.value, "Ready"), condition(ch.prev, "Ready")
        if new is None or new.status != "Unknown" or (old is not None and old.status == "Unknown"):
            return
        at = new.last_transition_time
        if at is None:
            return
        # The mark is an update carrying the cached resourceVersion: ch.prev is the Node the controller judged.
        # A node that never posted Ready gets the startup grace period (probeTimestamp starts at its creation).
        period = startup_grace if old is None else grace
        created = ch.prev.metadata.creation_timestamp or 0
        since, what = created, "its creation"
        lasts = [_last_heard(by_node.get(name, []), starts, at) for by_node, starts in heard]
        if lasts and all(last is not None and last > created for last in lasts):
            since, what = min(lasts), "a heartbeat change of it reached node lifecycle's informers"
        if at <= since + period:  # upstream marks only when now is strictly after probeTimestamp + grace
            bad.append(f"node {name} was marked Ready=Unknown at {at} ms, {at - since} ms after {what} at "
                       f"{since} ms (grace period {period} ms)")

    # The node changes and the deletes are taken in revision order: an eviction is judged by when its node
    # became tainted as of the eviction, not as of the end of the step (a step that ran minutes can see the
    # taint removed and added again after the eviction, and judging a due eviction by the later taint would
    # blame taint eviction for keeping to the earlier one).
    changes = reader.read(cluster.store)
    applied = 0
    store = cluster.store
    for r in new_records:
        if r.verb != "delete" or r.resource != "pods" or r.subresource or r.code >= 300:
            continue
        while applied < len(changes) and changes[applied].rev <= r.revision:
            node_changed(changes[applied])
            applied += 1
        key = f"/registry/pods/{r.namespace}/{r.name}"
        kv = _at(store, key, r.revision) or _at(store, key, r.revision - 1)
        if kv is None:
            continue
        pod = kv.value
        # The eviction is the delete that starts the pod's termination (the first accepted delete of it, in the
        # order the API servers handled them), made by taint eviction's service account. A later delete of a pod already
        # terminating (PodGC's force delete once its node is gone, a user's) evicts nothing, and a user deleting
        # a pod marked by an eviction cut short is not taint eviction: both carry the old DisruptionTarget
        # condition, and judging them by it would blame taint eviction for a delete it never made.
        first = (key, pod.metadata.uid) not in started
        started.add((key, pod.metadata.uid))
        if not first or r.user != TAINT_EVICTION_USER:
            continue
        target = condition(pod, "DisruptionTarget")
        if target is None or target.reason != TAINT_MANAGER_REASON or target.status != "True":
            continue  # not a taint eviction
        node_kv = _at(store, node_key(pod.spec.node_name), r.revision) if pod.spec.node_name else None
        taints = _no_execute(node_kv.value if node_kv is not None else None)
        tainted_at = tainted_since.get(pod.spec.node_name)
        if node_kv is None and pod.spec.node_name in gone:  # its node was deleted while tainted
            taints, tainted_at = gone[pod.spec.node_name]
        if not taints:
            # Upstream evicts by its informer's view: a taint removed in the store but not yet delivered to it
            # still evicts. Judge by what it had seen when it decided (the DisruptionTarget condition's time).
            decided = target.last_transition_time if target.last_transition_time is not None else r.time
            seen = [_taints_seen(te_heard.get(pod.spec.node_name, []), te_starts, decided)
                    for te_heard, te_starts in _taint_eviction_view(cluster, memo)]
            taints = list(next((t for t in seen if t), ()))
            tainted_at = None
        if not taints:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms by taint eviction, but its node "
                       f"{pod.spec.node_name or '(none)'} had no NoExecute taint, in the store nor as taint "
                       f"eviction had seen it")
            continue
        since = tainted_at if tainted_at is not None else min(t.time_added or 0 for t in taints)
        if tainted_at is not None:
            # Upstream counts from when taint eviction first saw the pod on a tainted node, by its informer: a
            # taint removed and put back in the store while it never saw the node untainted (a restart's list
            # showing the old taint, then the new one as one change) keeps the eviction it had scheduled
            # (processPodOnNode)
            decided = target.last_transition_time if target.last_transition_time is not None else r.time
            for te_heard, te_starts in _taint_eviction_view(cluster, memo):
                seen_since = _tainted_since_in_view(te_heard.get(pod.spec.node_name, []), te_starts, decided)
                if seen_since is not None and seen_since < since:
                    since = seen_since
        due = eviction_due(pod, taints, since)
        if due is None:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms though it tolerates its node's taints "
                       f"{', '.join(t.key for t in taints)} forever")
        elif r.time < due:
            bad.append(f"pod {name_of(key)} was evicted at {r.time} ms, before its toleration of "
                       f"{', '.join(t.key for t in taints)} on {pod.spec.node_name} (tainted at {since} ms, in "
                       f"the store and as taint eviction saw it) ran out at {due} ms")
    for ch in changes[applied:]:
        node_changed(ch)
    yield from bad


@invariant("grace-only-for-running-pods", kind=SAFETY, principle="node lifecycle",
           reads=(writes(PODS),))
def grace_only_for_running_pods(cluster: Any, memo: dict) -> Iterator[str]:
    """A pod gets a deletion grace period only when it may be running: a pod bound to no node, or already
    Succeeded or Failed, is deleted at once (grace 0), whatever grace the delete asked for, as the pod
    registry's CheckGracefulDelete does. No kubelet would ever finish such a pod's graceful deletion.

    Judged on each write that starts a pod's deletion (the first with a deletionTimestamp), against the pod as
    it was before that write. Incremental: reads only the pod writes of each step."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo, (PODS,))
        memo["bad"] = []
    bad: list[str] = memo["bad"]
    for ch in reader.read(cluster.store):
        new, old = ch.value, ch.prev
        if new is None or old is None or old.metadata.deletion_timestamp is not None \
                or new.metadata.deletion_timestamp is None or not new.metadata.deletion_grace_period_seconds:
            continue
        if not old.spec.node_name or is_terminal(old):
            why = "bound to no node" if not old.spec.node_name else f"already {old.status.phase}"
            bad.append(f"pod {name_of(ch.key)} was {why} when its deletion began (revision {ch.rev}), yet got a "
                       f"grace period of {new.metadata.deletion_grace_period_seconds} s instead of 0")
    yield from bad
