"""Liveness invariants: checked once faults have healed and the cluster has run fairly to quiescence.

Each reads the settled state in full (they run once per settle, not per step), straight from the store and
the components' observable state (kube-proxy's rules, the nodes' CNI disks, the node IPAM allocator). The
store's objects are read once per revision for all of them (`_objects`): a settle asks every liveness
invariant in a row, at one revision.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._deployments import new_replica_set
from kmodel.invariants._endpoints import endpoints_match
from kmodel.invariants._history import condition, is_terminal, node_cidrs, pod_ips
from kmodel.invariants.registry import LIVENESS, SHARED, invariant
from kmodel.apiserver.deletion import GC_FINALIZERS
from kmodel.kubelet.runtime import POD_UID_LABEL
from kmodel.loop.events import Deliver, Work

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
NODE_TAINTS = ("node.kubernetes.io/unreachable", NOT_READY_TAINT)


def _node_blocks(cluster_cidr: str, node_mask: int) -> int:
    """How many node blocks the cluster CIDR holds: 2^(node mask - cluster mask)."""
    return 1 << (node_mask - int(cluster_cidr.rsplit("/", 1)[1]))


def _unschedulable(pod: Any) -> bool:
    c = condition(pod, "PodScheduled")
    return not pod.spec.node_name and c is not None and c.status == "False" and c.reason == "Unschedulable"


def _ready(pod: Any) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.status == "True"


def _owned_by(pod: Any, uid: str) -> bool:
    return any(ref.controller and ref.uid == uid for ref in pod.metadata.owner_references)


def _namespaces(cluster: Any, memo: dict) -> list[str]:
    return [ns.metadata.name for ns in _objects(cluster, memo, "namespaces")]


def _objects(cluster: Any, memo: dict, resource: str) -> list:
    """Every stored object of `resource` (all namespaces, key order), read once per store revision: the
    liveness checks of one round share the reading through the run's shared memo (registry.SHARED)."""
    home = memo.get(SHARED, memo)
    cache = home.get("liveness-objects")
    store = cluster.store
    revision = store.revision
    if cache is None or cache[0] != revision or cache[3] is not store:
        cache = home["liveness-objects"] = (revision, {}, {}, store)
    found = cache[1].get(resource)
    if found is None:
        found = cache[1][resource] = cluster.objects(resource)
    return found


def _in(cluster: Any, memo: dict, resource: str, namespace: str) -> list:
    """The objects of `resource` in `namespace`, in key order (from `_objects`, grouped once)."""
    home = memo.get(SHARED, memo)
    objects = _objects(cluster, memo, resource)
    grouped = home["liveness-objects"][2].get(resource)
    if grouped is None:
        grouped = {}
        for obj in objects:
            grouped.setdefault(obj.metadata.namespace, []).append(obj)
        home["liveness-objects"][2][resource] = grouped
    return grouped.get(namespace, [])


def _foreign_finalizers(obj: Any) -> bool:
    return any(f not in GC_FINALIZERS for f in obj.metadata.finalizers)  # any but the GC's is someone else's


def _stranded(pod: Any, machines: set, nodes: set) -> bool:
    """A pod being deleted that nothing in the cluster will ever remove: bound to a machine gone from the cluster
    (no kubelet will confirm it stopped) whose Node still exists. Upstream's PodGC force-deletes such a pod only
    once its Node is gone (gcOrphaned) or the Node is NotReady with the node.kubernetes.io/out-of-service taint
    (gcTerminating, which the model does not have, and which nothing in it sets); until then it stays
    Terminating."""
    node = pod.spec.node_name
    return pod.metadata.deletion_timestamp is not None and bool(node) and node not in machines and node in nodes


def _deletion_held(rs: Any, pods: list, machines: set, nodes: set) -> bool:
    """A ReplicaSet being deleted that something outside the model's controllers keeps: a finalizer of its own
    or, deleted in the foreground, a pod of its being deleted that a finalizer keeps or that is stranded on a
    lost machine (`_stranded`): the garbage collector removes foregroundDeletion only once every dependent
    blocking its owner's deletion is gone."""
    meta = rs.metadata
    if meta.deletion_timestamp is None:
        return False
    if _foreign_finalizers(rs):
        return True
    return "foregroundDeletion" in meta.finalizers and any(
        _owned_by(p, meta.uid) and p.metadata.deletion_timestamp is not None
        and (_foreign_finalizers(p) or _stranded(p, machines, nodes)) for p in pods)


def _recreate_held(d: Any, sets: list, pods: list, machines: set, nodes: set) -> bool:
    """A Deployment of strategy Recreate that an old ReplicaSet's pod stranded on a lost machine (`_stranded`)
    keeps from rolling out: upstream's rolloutRecreate creates no new pod while oldPodsRunning finds a pod of an
    old set that is not Failed or Succeeded, and a stranded pod stays Terminating until its Node is deleted or it
    is force-deleted."""
    if d.spec.strategy.type != "Recreate":
        return False
    new = new_replica_set(d, sets)
    old = {rs.metadata.uid for rs in sets if new is None or rs.metadata.uid != new.metadata.uid}
    return any(_stranded(p, machines, nodes) and any(_owned_by(p, uid) for uid in old) for p in pods)


@invariant("converges-replicas", kind=LIVENESS, principle="level-driven reconciliation")
def converges_replicas(cluster: Any, memo: dict) -> Iterator[str]:
    """Each ReplicaSet has spec.replicas live pods, all ready except those no node has room for, and a status that
    says so; each Deployment's status reports spec.replicas updated, ready pods for its current generation
    (or, when some of its pods fit no node, which stalls a rollout for good, or it is paused, the pods it has),
    and once rolled out, every replica available, the Available condition True, Progressing True with reason
    NewReplicaSetAvailable, and all its replicas in one ReplicaSet, the one whose pod template is its own.

    A pod bound to a machine taken out of the cluster (`_machines`) does not count as ready although the API may
    still say Ready=True (until the node lifecycle controller marks it or PodGC deletes it): it serves nothing,
    and a settle must not stop before it is replaced. Its Ready still counts for the status comparison.

    A Deployment is not judged while its ReplicaSet is being deleted and kept (`_deletion_held`): by a finalizer
    outside the model's controllers, or, deleted in the foreground, by a pod of its stranded on a machine gone
    from the cluster whose Node still exists (`_stranded`: it stays Terminating, as upstream's does); nor, of
    strategy Recreate, while a pod of an old ReplicaSet of its is stranded so (`_recreate_held`)."""
    machines = set(_machines(cluster))
    nodes = {n.metadata.name for n in _objects(cluster, memo, "nodes")}
    for ns in _namespaces(cluster, memo):
        pods = [p for p in _in(cluster, memo, "pods", ns) if not is_terminal(p) and p.metadata.deletion_timestamp is None]
        for rs in _in(cluster, memo, "replicasets", ns):
            if rs.metadata.deletion_timestamp is not None:
                continue
            want = rs.spec.replicas if rs.spec.replicas is not None else 1
            mine = [p for p in pods if _owned_by(p, rs.metadata.uid)]
            stuck = sum(1 for p in mine if _unschedulable(p))
            ready = sum(1 for p in mine if _ready(p))
            gone = sorted({p.spec.node_name for p in mine if p.spec.node_name and p.spec.node_name not in machines})
            serving = ready - sum(1 for p in mine if _ready(p) and p.spec.node_name in gone)
            left = sum(1 for p in mine if p.spec.node_name in gone)
            name = f"replicaset {ns}/{rs.metadata.name}"
            if len(mine) != want:
                yield f"{name} wants {want} replicas but has {len(mine)} live pods"
            elif serving != want - stuck:
                on_gone = (f", {left} on machines gone from the cluster ({', '.join(gone)}), {ready - serving} of them "
                           f"still Ready in the API" if gone else "")
                yield f"{name} has {serving} ready pods of {want} ({stuck} unschedulable{on_gone})"
            st = rs.status
            if st.replicas != len(mine) or st.ready_replicas != ready or \
                    st.observed_generation != rs.metadata.generation:
                yield (f"{name} status says replicas={st.replicas} ready={st.ready_replicas} "
                       f"observedGeneration={st.observed_generation}, but it has {len(mine)} pods, {ready} ready, "
                       f"generation {rs.metadata.generation}")
        for d in _in(cluster, memo, "deployments", ns):
            if d.metadata.deletion_timestamp is not None:
                continue
            if any(_owned_by(rs, d.metadata.uid) and _deletion_held(rs, _in(cluster, memo, "pods", ns), machines,
                                                                    nodes)
                   for rs in _in(cluster, memo, "replicasets", ns)):
                # its ReplicaSet for this template is being deleted and kept by a finalizer no controller of the
                # model removes, or by a pod stranded on a lost machine: upstream's deployment controller keeps
                # claiming that ReplicaSet (it finds it as the new one) and makes no other until it is gone
                continue
            owned_sets = [rs for rs in _in(cluster, memo, "replicasets", ns) if _owned_by(rs, d.metadata.uid)]
            if _recreate_held(d, owned_sets, _in(cluster, memo, "pods", ns), machines, nodes):
                continue  # it waits for the old pod to be gone, for good, as upstream's Recreate does
            want = d.spec.replicas if d.spec.replicas is not None else 1
            st = d.status
            name = f"deployment {ns}/{d.metadata.name}"
            owned_rs = [rs.metadata.uid for rs in _in(cluster, memo, "replicasets", ns) if _owned_by(rs, d.metadata.uid)]
            mine = [p for p in pods if any(_owned_by(p, uid) for uid in owned_rs)]
            stuck = sum(1 for p in mine if _unschedulable(p))
            if st.observed_generation != d.metadata.generation:
                yield f"{name} status is for generation {st.observed_generation}, not {d.metadata.generation}"
            if stuck or d.spec.paused:
                # new pods no node has room for stall a rolling update for good (upstream reports
                # ProgressDeadlineExceeded and waits), and a paused Deployment rolls out no new template (it
                # scales its ReplicaSets, which converge on their own): the status must still say what is
                if st.replicas != len(mine):
                    why = f"{stuck} unschedulable" if stuck else "paused"
                    yield f"{name} has {len(mine)} pods ({why}) but its status says replicas={st.replicas}"
            elif st.replicas != want or st.updated_replicas != want or st.ready_replicas != want:
                yield (f"{name} wants {want} replicas but its status says "
                       f"replicas={st.replicas} updated={st.updated_replicas} ready={st.ready_replicas}")
            else:
                yield from _rolled_out(name, d, [rs for rs in _in(cluster, memo, "replicasets", ns)
                                                 if _owned_by(rs, d.metadata.uid)])


#: a Deployment's progressDeadlineSeconds meaning "no deadline" (math.MaxInt32): no Progressing condition
_NO_PROGRESS_DEADLINE = 2**31 - 1


def _rolled_out(name: str, d: Any, owned: list) -> Iterator[str]:
    """What a Deployment whose rollout is complete must show besides its counts (upstream's
    deployment controller, sync.go and progress.go): every replica available, the Available condition True,
    the Progressing condition True with reason NewReplicaSetAvailable (when it has a progress deadline), and
    all its replicas in a single ReplicaSet, the others scaled to zero (cleanupDeployment, scaleDownOldReplicaSets),
    and that one the new ReplicaSet, whose pod template is the Deployment's (`new_replica_set`)."""
    want = d.spec.replicas if d.spec.replicas is not None else 1
    st = d.status
    if st.available_replicas != want or st.unavailable_replicas:
        yield (f"{name} has rolled out {want} replicas but its status says available={st.available_replicas} "
               f"unavailable={st.unavailable_replicas}")
    conditions = {c.type: c for c in st.conditions}
    available = conditions.get("Available")
    if available is None or available.status != "True":
        yield f"{name} has rolled out but its Available condition is {_said(available)}, not True"
    deadline = d.spec.progress_deadline_seconds
    progressing = conditions.get("Progressing")
    if deadline is not None and deadline != _NO_PROGRESS_DEADLINE and \
            (progressing is None or progressing.status != "True" or progressing.reason != "NewReplicaSetAvailable"):
        yield (f"{name} has rolled out but its Progressing condition is {_said(progressing)}, "
               f"not True/NewReplicaSetAvailable")
    active = sorted((rs.metadata.name, rs.spec.replicas if rs.spec.replicas is not None else 1)
                    for rs in owned if rs.metadata.deletion_timestamp is None)
    scaled = [(n, r) for n, r in active if r]
    if len(scaled) > 1 or sum(r for _, r in scaled) != want:
        yield (f"{name} has rolled out {want} replicas but its ReplicaSets want "
               + (", ".join(f"{n}={r}" for n, r in scaled) or "none"))
    elif scaled:
        # and that ReplicaSet is the new one: its template is the Deployment's (FindNewReplicaSet), so the pods run
        # what the Deployment says
        new = new_replica_set(d, [rs for rs in owned if rs.metadata.deletion_timestamp is None])
        if new is None or new.metadata.name != scaled[0][0]:
            yield (f"{name} has rolled out {want} replicas in ReplicaSet {scaled[0][0]}, whose pod template is not "
                   f"the Deployment's (its new ReplicaSet is {new.metadata.name if new else 'missing'})")


def _said(cond: Any) -> str:
    return "missing" if cond is None else f"{cond.status}/{cond.reason}"


@invariant("converges-endpoints", kind=LIVENESS, principle="level-driven reconciliation")
def converges_endpoints(cluster: Any, memo: dict) -> Iterator[str]:
    """Each Service with a selector has Endpoints whose subsets are exactly what its live pods imply (ready pods
    in addresses, the others in notReadyAddresses); but a Service of a namespace being deleted whose Endpoints
    are gone is owed none: the NamespaceLifecycle admission plugin refuses every create in a Terminating
    namespace, the endpoints controller's too, so a Service a finalizer keeps there stays without Endpoints
    until the namespace is gone."""
    terminating = {ns.metadata.name for ns in _objects(cluster, memo, "namespaces")
                   if ns.metadata.deletion_timestamp is not None}
    for ns in _namespaces(cluster, memo):
        pods = _in(cluster, memo, "pods", ns)
        endpoints = {e.metadata.name: e for e in _in(cluster, memo, "endpoints", ns)}
        for svc in _in(cluster, memo, "services", ns):
            if svc.spec.type == "ExternalName" or not svc.spec.selector:
                continue
            selected = [p for p in pods
                        if all(p.metadata.labels.get(k) == v for k, v in svc.spec.selector.items())]
            current = endpoints.get(svc.metadata.name)
            if current is None and ns in terminating:
                continue  # a create the API server refuses (see the docstring)
            if current is None or not endpoints_match(current, svc, selected):
                have = "no Endpoints" if current is None else f"Endpoints {current.subsets}"
                yield (f"service {ns}/{svc.metadata.name} has {have}, not what its "
                       f"{len(selected)} selected pods imply")


def _labels_ok(obj: Any, *excluded: str) -> bool:
    return not any(k in obj.metadata.labels for k in excluded)


def _machines(cluster: Any) -> list[str]:
    """The nodes whose machines are in the cluster now (the config's, plus added, minus removed ones).

    Liveness judges only these: a machine taken out for good (`Cluster.remove_node`) is switched off, and
    what is left on its disk (CNI reservations, kube-proxy rules) is no longer part of the cluster; its
    components are never restarted, so nothing of it could ever converge."""
    return list(cluster.nodes)


@invariant("converges-node-status", kind=LIVENESS, principle="node lifecycle")
def converges_node_status(cluster: Any, memo: dict) -> Iterator[str]:
    """Every node's kubelet is up and reaches an API server, every node is Ready=True, and no node carries the
    unreachable or not-ready taint; but a node left without a podCIDR because the other nodes hold every block of
    the cluster CIDR has no pod network: it is Ready=False (upstream's kubelet reports NetworkPluginNotReady) and
    not-ready is the taint it may carry."""
    apiservers = [r.name for r in cluster.replicas]
    nodes = {n.metadata.name: n for n in _objects(cluster, memo, "nodes")}
    blocks = _node_blocks(cluster.config.cluster_cidr, cluster.config.node_cidr_mask_size)
    cidr_full = len({c for n in nodes.values() for c in node_cidrs(n)}) >= blocks
    for node_name in _machines(cluster):
        kubelet = f"kubelet/{node_name}"
        if kubelet in cluster.loop.components:
            if not cluster.loop.is_up(kubelet):
                yield f"{kubelet} is down"
            elif not any(cluster.network.can_reach(kubelet, a) for a in apiservers):
                yield f"{kubelet} cannot reach any API server"
        node = nodes.get(node_name)
        if node is None:
            yield f"node {node_name} is not registered"
            continue
        ready = condition(node, "Ready")
        without_network = cidr_full and not node_cidrs(node)
        want = "False" if without_network else "True"
        if ready is None or ready.status != want:
            state = ready.status if ready else "missing"
            yield (f"node {node_name} has no podCIDR (every block is held) but is not NotReady (Ready={state})"
                   if without_network else f"node {node_name} is not Ready (Ready={state})")
        taints = [t.key for t in node.spec.taints
                  if t.key in NODE_TAINTS and not (without_network and t.key == NOT_READY_TAINT)]
        if taints:
            yield f"node {node_name} still has the taints {', '.join(taints)}"


@invariant("no-ip-leak", kind=LIVENESS, principle="network model")
def no_ip_leak(cluster: Any, memo: dict) -> Iterator[str]:
    """Each node's host-local reservations are exactly the IPs of the live pods (not hostNetwork) running there.

    Judged on the machines in the cluster (`_machines`): a removed machine's disk left the cluster with it
    (its pods are PodGC's to delete, and nothing will ever release its reservations, as on a real machine
    that is switched off for good)."""
    pods = [p for p in _objects(cluster, memo, "pods") if p.spec.node_name and not p.spec.host_network
            and not is_terminal(p)]
    for node in _machines(cluster):
        comp = cluster.loop.components.get(f"kubelet/{node}")
        if comp is None:
            continue
        reserved = {f for f in comp.cni_disk if not f.startswith("last_reserved_ip.")}
        reserved = {f.rsplit("/", 1)[-1] for f in reserved}
        expected = {ip for p in pods if p.spec.node_name == node for ip in pod_ips(p)}
        leaked, missing = sorted(reserved - expected), sorted(expected - reserved)
        if leaked:
            yield f"node {node} still reserves {', '.join(leaked)}, which no live pod there holds"
        if missing:
            yield f"node {node} has pods with IPs {', '.join(missing)} that its host-local IPAM does not reserve"


@invariant("no-sandbox-leak", kind=LIVENESS, principle="node lifecycle")
def no_sandbox_leak(cluster: Any, memo: dict) -> Iterator[str]:
    """Each node's container runtime holds sandboxes only of pods its kubelet still has (in the API, or static):
    the kubelet removes a deleted pod's sandboxes, and a restarted one those of pods it no longer knows.

    The model removes them once the pod is gone, where upstream's container GC does within its minute's period;
    judged on the machines in the cluster whose kubelet is up."""
    for node in _machines(cluster):
        name = f"kubelet/{node}"
        comp = cluster.loop.components.get(name)
        if comp is None or not cluster.loop.is_up(name):
            continue
        held = {sb.labels.get(POD_UID_LABEL, sb.metadata.uid) for sb in comp.runtime.sandboxes.values()}
        left = sorted(held - set(comp.workers))
        if left:
            yield f"node {node}'s container runtime still holds sandboxes of pods its kubelet forgot: {', '.join(left)}"


@invariant("no-cidr-leak", kind=LIVENESS, principle="network model")
def no_cidr_leak(cluster: Any, memo: dict) -> Iterator[str]:
    """The node IPAM allocator holds every podCIDR of the nodes not being deleted, and no block that no node has
    (that of a Node a finalizer keeps after its delete may be held or not: 1.31's syncNode releases it once the
    deletionTimestamp is set, 1.32's, as the nodeipam-release-only-on-delete fix, when the Node is gone)."""
    acting = cluster.acting("controller/nodeipam")  # with several controller managers, the leader's
    comp = cluster.loop.components.get(acting) if acting else None
    if comp is None or not cluster.loop.is_up(acting):
        return
    used = {str(b) for b in comp.cidrs.used_blocks()}
    nodes = _objects(cluster, memo, "nodes")
    present = {c for n in nodes for c in node_cidrs(n)}
    live = {c for n in nodes if n.metadata.deletion_timestamp is None for c in node_cidrs(n)}
    for c in sorted(used - present):
        yield f"node IPAM holds {c}, which no node has"
    for c in sorted(live - used):
        yield f"node IPAM does not hold {c}, which a node has"


#: what the namespace controller deletes that a user's objects are made of (every namespaced kind the model serves
#: but bindings)
_NAMESPACED = ("configmaps", "deployments", "endpoints", "events", "jobs", "leases", "pods", "replicasets",
               "rolebindings", "roles", "secrets", "serviceaccounts", "services", "statefulsets")


@invariant("namespaces-terminate", kind=LIVENESS, principle="level-driven reconciliation")
def namespaces_terminate(cluster: Any, memo: dict) -> Iterator[str]:
    """A namespace being deleted is emptied by the namespace controller and removed, unless a finalizer keeps
    the namespace or one of its objects, or a pod in it waits for a kubelet whose machine is gone (upstream's
    namespaces stay Terminating then too); and no object is left in a namespace that no longer exists
    (NamespaceLifecycle admission refuses content for a namespace that is missing or being deleted, so nothing
    can outlive the controller's last sweep)."""
    if "controller/namespace" not in cluster.loop.components:
        return
    names = {ns.metadata.name for ns in _objects(cluster, memo, "namespaces")}
    orphaned: dict[str, int] = {}
    for resource in _NAMESPACED:
        for o in _objects(cluster, memo, resource):
            if o.metadata.namespace not in names:
                orphaned[o.metadata.namespace] = orphaned.get(o.metadata.namespace, 0) + 1
    for name in sorted(orphaned):
        yield f"namespace {name} does not exist, but {orphaned[name]} object(s) are left in it"
    machines = set(_machines(cluster))
    for ns in _objects(cluster, memo, "namespaces"):
        meta = ns.metadata
        if meta.deletion_timestamp is None or meta.finalizers:
            continue
        left = [o for r in _NAMESPACED for o in _in(cluster, memo, r, meta.name)]
        if any(o.metadata.finalizers for o in left):
            continue
        if any(p.spec.node_name and p.spec.node_name not in machines for p in _in(cluster, memo, "pods", meta.name)):
            continue
        yield f"namespace {meta.name} is still Terminating, with {len(left)} object(s) left in it"


@invariant("settles", kind=LIVENESS, principle="level-driven reconciliation")
def settles(cluster: Any, memo: dict) -> Iterator[str]:
    """The cluster is quiescent: no message in flight, no component with work queued, and no pod pending that
    could run (unbound without being marked Unschedulable, or bound to a Ready node and not started)."""
    in_flight = cluster.network.in_flight_count()
    if in_flight:
        yield f"{in_flight} message(s) still in flight"
    busy = sorted({e.component for e in cluster.loop.enabled_events() if isinstance(e, Work)})
    if busy:
        yield f"components with work queued: {', '.join(busy)}"
    deliverable = [e for e in cluster.loop.enabled_events() if isinstance(e, Deliver)]
    if deliverable and not in_flight:
        yield f"{len(deliverable)} deliveries still enabled"
    nodes = {n.metadata.name: n for n in _objects(cluster, memo, "nodes")}
    for p in _objects(cluster, memo, "pods"):
        if p.status.phase != "Pending" or p.metadata.deletion_timestamp is not None:
            continue
        name = f"{p.metadata.namespace}/{p.metadata.name}"
        if not p.spec.node_name:
            if not _unschedulable(p):
                yield f"pod {name} is pending, unbound, and not marked Unschedulable"
        else:
            node = nodes.get(p.spec.node_name)
            ready = condition(node, "Ready") if node is not None else None
            if ready is not None and ready.status == "True":
                yield f"pod {name} is bound to Ready node {p.spec.node_name} but still Pending"
