"""The colliding-request rules: requests the components make, made by a user or a second component, with values
that meet what is there (a mixin of `KmodelMachine`).

    list_objects      GET a list: pods, Services, Deployments, ReplicaSets, nodes, Leases, Endpoints; a label
                      selector and a field selector from small pools (`LABEL_SELECTORS`, `FIELD_SELECTORS`, some
                      refused with 400), at a drawn resourceVersion (`RESOURCE_VERSIONS`)
    get_object        GET an object that exists now, at a drawn resourceVersion
    bind_pod          POST pods/<pod>/binding of a pod that exists now (pending, already bound, or being deleted),
                      or of a bare pod created just before in the same step (the binding races the scheduler's),
                      to a node, as the admin, a second scheduler, or alice
    write_status      PUT pods|nodes/<name>/status of an object that exists now, from the object as read (as
                      is, or with a condition of the user's), or PUT deployments|statefulsets/<name>/scale (its
                      replicas as read or one more), on the resourceVersion read, none, or a stale one; as the
                      admin, alice, or a node's kubelet (its own node's objects or another's)
    update_lease      PUT a Lease that exists now (a node's heartbeat, a leader's lock), as read, with another
                      holder, or a shorter duration, on the resourceVersion read, none or a stale one
    apply_pod_near_capacity
                      kubectl apply of a bare pod sized from what a node has left of a resource (exactly that,
                      one unit more), or asking for an extended resource the node does not have, or the host
                      port a pod there holds; pinned to the node or through the scheduler
    create_service_ip POST a Service of the apps asking for a ClusterIP from `CLUSTER_IPS` (one another Service
                      holds, free, reserved, out of range, of the other family, headless, malformed)

Every draw is a small index: a target into the objects that exist when the rule runs (taken modulo their
number, shrinking toward the first), a value into a pool (its simplest first), the actor into `ACTORS`
(the admin first). The rule turns them into one concrete `SendRequest` (kmodel.checker.collide_actions), which
carries what it sends, so a trace reads as the requests made and replays without the pools.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.apiserver.authentication import NODE_PREFIX
from kmodel.checker.access_actions import TEAM
from kmodel.checker.actions import APPS, BARE_PODS, HOST_PORT, ApplyPod, service_manifest
from kmodel.checker.collide_actions import ACTORS, ApplySizedPod, SendRequest
from kmodel.checker.draws import (
    CLUSTER_IPS, FIELD_SELECTORS, INDEX, LABEL_SELECTORS, RESOURCE_VERSIONS, cluster_ips, pick, resource_version,
)
from kmodel.checker.preconditions import once_per_step
from kmodel.objects import dump
from kmodel.scheduler.framework import pod_requests
from kmodel.checker.rulebook import RuleFamily, rule

#: what list_objects lists, and in which namespace ("" : a cluster-scoped kind)
LISTED: tuple[tuple[str, str], ...] = (("pods", "default"), ("services", "default"), ("deployments", "default"),
                                       ("replicasets", "default"), ("nodes", ""), ("leases", "kube-node-lease"),
                                       ("endpoints", "default"))
#: what get_object reads, update_lease and write_status write: (resource, namespaces)
GOTTEN = (("pods", ("default", TEAM)), ("services", ("default",)), ("deployments", ("default", TEAM)),
          ("nodes", ("",)), ("leases", ("kube-node-lease", "kube-system")))
STATUS_WRITTEN = (("pods", ("default", TEAM)), ("nodes", ("",)))
#: what write_status writes the scale subresource of (`kubectl replace --subresource=scale`), after the above
SCALE_WRITTEN = (("deployments", ("default",)), ("statefulsets", ("default",)))
LEASES = (("leases", ("kube-node-lease", "kube-system")),)
#: the resourceVersion a write carries in its body: the one read, none (an unconditional update), one behind
WRITE_VERSIONS: tuple[str, ...] = ("read", "none", "stale")
WRITE_VERSION = st.integers(0, len(WRITE_VERSIONS) - 1)
#: what write_status changes in the status read: nothing (an update that writes nothing new), or a condition of
#: the user's own type set (kept beside those the components own)
STATUS_EDITS: tuple[str, ...] = ("as read", "condition")
USER_CONDITION = "example.com/Checked"
#: what update_lease changes: nothing, the holder (a second candidate takes it), the duration (1 s)
LEASE_EDITS: tuple[str, ...] = ("as read", "holder", "duration")
INTRUDER = "intruder"
#: the actors of each request kind, simplest first (indices into ACTORS)
LIST_ACTORS = ("admin", "alice", NODE_PREFIX)
BIND_ACTORS = ("admin", "system:kube-scheduler", "alice")
STATUS_ACTORS = ("admin", "alice", NODE_PREFIX)
LEASE_ACTORS = ("admin", "alice", NODE_PREFIX)
#: what apply_pod_near_capacity asks for: none (a host port alone), the cpu, memory or ephemeral storage a node has
#: left, and what a node of the model never has (its allocatable lists cpu, memory, ephemeral storage and pods): an
#: extended resource
SIZED: tuple[str, ...] = ("", "cpu", "memory", "ephemeral-storage", "example.com/dongle")
#: how much of what is left: all of it (fits, and fills the node), one unit more (does not fit)
FITS: tuple[str, ...] = ("left", "one more")
MI = 1024 * 1024
assert all(set(a) <= set(ACTORS) for a in (LIST_ACTORS, BIND_ACTORS, STATUS_ACTORS, LEASE_ACTORS))


def _objects(cluster: Any, kinds: tuple) -> list[tuple[str, str, Any]]:
    """(resource, namespace, object) of every object of `kinds` ((resource, namespaces) pairs), in a stable order."""
    return [(resource, ns, obj) for resource, namespaces in kinds for ns in namespaces
            for obj in cluster.objects(resource, ns)]


def _rv(obj: Any) -> int:
    text = obj.metadata.resource_version
    return int(text) if text.isdigit() else 0


def _with_rv(body: dict, kind: str, read: int) -> dict:
    """`body` carrying the resourceVersion `kind` (one of WRITE_VERSIONS) names, `read` being the one read."""
    meta = body["metadata"]
    meta.pop("resourceVersion", None)
    if kind == "read":
        meta["resourceVersion"] = str(read)
    elif kind == "stale":
        meta["resourceVersion"] = str(max(1, read - 1))
    return body


class CollideRules(RuleFamily):
    """The colliding-request rules (see the module docstring). Mixed into KmodelMachine, which provides `cluster`
    and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Sends", "Shrinks to")

    def _actor(self, actors: tuple[str, ...], who: int, node: str = "") -> str:
        """The actor `who` names among `actors`; a kubelet is that of `node`, or of a drawn node when it is ""."""
        actor = pick(who, actors)
        if actor != NODE_PREFIX:
            return actor
        return NODE_PREFIX + (node or pick(who // len(actors), self.cluster.nodes) or "node-1")

    @rule(what=st.integers(0, len(LISTED) - 1), labels=st.integers(0, len(LABEL_SELECTORS) - 1),
          fields=st.integers(0, len(FIELD_SELECTORS) - 1), rv=st.integers(0, len(RESOURCE_VERSIONS) - 1),
          who=INDEX, every_namespace=st.booleans())
    def list_objects(self, what: int, labels: int, fields: int, rv: int, who: int, every_namespace: bool) -> None:
        """Draws: a resource (pods, Services, Deployments, ReplicaSets, nodes, Leases, Endpoints), in its namespace or
        all; a label selector (`LABEL_SELECTORS`: every operator, two that use them all at once, then mistakes: an
        unknown operator, `in` without parentheses, an empty or unclosed set, a trailing comma, `>` of a word, an
        operator first, two values, a set without commas); a field selector
        (`FIELD_SELECTORS`: a pod's node and phase, name and namespace, a field the kind does not support, a term
        without an operator); a resourceVersion (`RESOURCE_VERSIONS`)
        Sends: `GET` of the list: 200, or 400 with the parser's text; a resourceVersion the watch cache has not
        reached waits for it, then 504 `Timeout: Too large resource version`
        Shrinks to: all pods of default, as the admin"""
        resource, ns = LISTED[what]
        version = resource_version(RESOURCE_VERSIONS[rv], self.cluster.store)
        self._do(SendRequest("list", resource, "" if every_namespace else ns,
                                             label_selector=LABEL_SELECTORS[labels],
                                             field_selector=FIELD_SELECTORS[fields], resource_version=version,
                                             actor=self._actor(LIST_ACTORS, who)))

    def _gotten(self) -> list:
        return _objects(self.cluster, GOTTEN)

    @precondition(once_per_step(lambda self: bool(self._gotten())))
    @rule(i=INDEX, rv=st.integers(0, len(RESOURCE_VERSIONS) - 1), who=INDEX)
    def get_object(self, i: int, rv: int, who: int) -> None:
        """Draws: an object that exists (a pod, Service, Deployment, node or Lease); a resourceVersion: none (a
        consistent read), `0`, the newest, one behind the object's, one far ahead, one compacted away, `latest`
        (400)
        Sends: `GET` of the object
        Shrinks to: the first object, no resourceVersion"""
        resource, ns, obj = pick(i, self._gotten())
        version = resource_version(RESOURCE_VERSIONS[rv], self.cluster.store, _rv(obj))
        self._do(SendRequest("get", resource, ns, obj.metadata.name, resource_version=version,
                                           actor=self._actor(LIST_ACTORS, who)))

    def _pods(self) -> list:
        """The pods of the user's namespaces: those pending first (a binding of one races the scheduler's), then
        the bound ones and those being deleted (a binding of one is refused with 409)."""
        pods = _objects(self.cluster, (STATUS_WRITTEN[0],))
        return sorted(pods, key=lambda p: bool(p[2].spec.node_name or p[2].metadata.deletion_timestamp))

    def _unused_bare_pod(self) -> str:
        """The first bare pod name no pod of the default namespace holds now, or "" when each is taken."""
        taken = {p.metadata.name for p in self.cluster.objects("pods", "default")}
        return next((name for name in BARE_PODS if name not in taken), "")

    @precondition(once_per_step(lambda self: bool(self.cluster.nodes)))
    @rule(i=INDEX, node=INDEX, who=st.integers(0, len(BIND_ACTORS) - 1), fresh=st.booleans())
    def bind_pod(self, i: int, node: int, who: int, fresh: bool = False) -> None:
        """Draws: a pod of the default or team namespace (pending ones first), or (`fresh`, and always when there is no
        pod) a bare pod the rule creates first, with a free name, for the scheduler to place; a node; the admin, a
        second scheduler or alice
        Sends: `POST pods/<pod>/binding`: a pending pod is bound, racing the scheduler's own binding (a created pod's
        binding is sent right behind its create, while the scheduler's watch brings it the pod: whichever binding
        comes second gets 409, and a scheduler that loses forgets the pod it assumed); one already bound or being
        deleted gets 409
        Shrinks to: the first pod to the first node, as the admin"""
        created = self._unused_bare_pod() if fresh or not self._pods() else ""
        if created:
            self._do(ApplyPod(created, ""))
            ns, name = "default", created
        else:
            _, ns, pod = pick(i, self._pods())  # some pod exists: with none, every bare pod name is free
            name = pod.metadata.name
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": pick(node, self.cluster.nodes)}}
        self._do(SendRequest("create", "pods", ns, name, "binding", binding,
                                         actor=BIND_ACTORS[who]))

    def _update(self, rule_name: str, resource: str, ns: str, obj: Any, subresource: str, body: dict, rv: int,
                actors: tuple[str, ...], who: int, own_node: str) -> None:
        """PUT `body` (the object as read, edited) on the resourceVersion WRITE_VERSIONS[rv] names; a kubelet is
        that of the object's own node (`own_node`) for an even `who`, else of a drawn node."""
        node = own_node if who % 2 == 0 else ""
        self._do(rule_name, SendRequest("update", resource, ns, obj.metadata.name, subresource,
                                        _with_rv(body, WRITE_VERSIONS[rv], _rv(obj)),
                                        actor=self._actor(actors, who, node)))

    def _status_written(self) -> list:
        return _objects(self.cluster, STATUS_WRITTEN + SCALE_WRITTEN)

    @precondition(once_per_step(lambda self: bool(self._status_written())))
    @rule(i=INDEX, edit=st.integers(0, len(STATUS_EDITS) - 1), rv=WRITE_VERSION, who=INDEX)
    def write_status(self, i: int, edit: int, rv: int, who: int) -> None:
        """Draws: a pod or a node, or a Deployment or StatefulSet; the status as read, or with a condition
        `example.com/Checked` added (a workload's Scale: its replicas as read, or one more); the resourceVersion
        read, none (an unconditional update) or one behind; the admin, alice, or the kubelet of the object's node
        or of another
        Sends: `PUT <resource>/<name>/status` of the object as read, or a workload's
        `PUT <resource>/<name>/scale` (`kubectl replace --subresource=scale` of the Scale as read, uid
        included): 409 on a stale resourceVersion, 403 for a kubelet writing another node's pod or any workload
        Shrinks to: the first pod's status as read"""
        resource, ns, obj = pick(i, self._status_written())
        if resource in dict(SCALE_WRITTEN):
            meta = {"name": obj.metadata.name, "namespace": ns, "uid": obj.metadata.uid}
            replicas = (obj.spec.replicas or 0) + (STATUS_EDITS[edit] == "condition")
            scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta, "spec": {"replicas": replicas}}
            self._update("write_status", resource, ns, obj, "scale", scale, rv, STATUS_ACTORS, who, "")
            return
        body = dump(obj)
        if STATUS_EDITS[edit] == "condition":
            status = body.setdefault("status", {})
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != USER_CONDITION]
            status["conditions"] = [*conditions, {"type": USER_CONDITION, "status": "True",
                                                  "reason": "Checked", "message": "checked by hand"}]
        own_node = obj.metadata.name if resource == "nodes" else obj.spec.node_name
        self._update("write_status", resource, ns, obj, "status", body, rv, STATUS_ACTORS, who, own_node)

    def _leases(self) -> list:
        return _objects(self.cluster, LEASES)

    @precondition(once_per_step(lambda self: bool(self._leases())))
    @rule(i=INDEX, edit=st.integers(0, len(LEASE_EDITS) - 1), rv=WRITE_VERSION, who=INDEX)
    def update_lease(self, i: int, edit: int, rv: int, who: int) -> None:
        """Draws: a Lease of `kube-node-lease` or `kube-system`; as read, with holder `intruder`, or a duration of 1 s;
        the resourceVersion read, none or one behind; the admin, alice, or a kubelet
        Sends: `PUT` of the Lease: a node's heartbeat or a leader's lock written by someone else
        Shrinks to: the first Lease as read"""
        _, ns, lease = pick(i, self._leases())
        body = dump(lease)
        spec = body.setdefault("spec", {})
        if LEASE_EDITS[edit] == "holder":
            spec["holderIdentity"] = INTRUDER
        elif LEASE_EDITS[edit] == "duration":
            spec["leaseDurationSeconds"] = 1
        own_node = lease.metadata.name if ns == "kube-node-lease" else ""
        self._update("update_lease", "leases", ns, lease, "", body, rv, LEASE_ACTORS, who, own_node)

    def _left(self, node: str) -> tuple[int, int, int]:
        """(millicores, bytes of memory, bytes of ephemeral storage) `node` has left: its allocatable less the
        requests of the pods bound to it that still hold them (not Succeeded or Failed)."""
        obj = self.cluster.get("nodes", "", node)
        alloc = obj.status.allocatable if obj is not None else {}
        cpu = alloc["cpu"].milli_value() if "cpu" in alloc else 0
        memory = alloc["memory"].value() if "memory" in alloc else 0
        storage = alloc["ephemeral-storage"].value() if "ephemeral-storage" in alloc else 0
        for ns in ("default", TEAM, "kube-system"):
            for pod in self.cluster.objects("pods", ns):
                if pod.spec.node_name == node and pod.status.phase not in ("Succeeded", "Failed"):
                    requested = pod_requests(pod)
                    cpu, memory = cpu - requested.milli_cpu, memory - requested.memory
                    storage -= requested.ephemeral_storage
        return max(cpu, 0), max(memory, 0), max(storage, 0)

    def _held_port(self, node: str) -> tuple[int, str, str]:
        """(port, protocol, hostIP) of the first host port a pod bound to `node` holds, else HOST_PORT over TCP."""
        for pod in self.cluster.objects("pods", "default"):
            if pod.spec.node_name != node:
                continue
            for c in pod.spec.containers:
                for p in c.ports:
                    if p.host_port:
                        return p.host_port, p.protocol or "TCP", p.host_ip
        return HOST_PORT, "TCP", ""

    @precondition(lambda self: bool(self.cluster.nodes))
    @rule(pod=st.sampled_from(BARE_PODS), i=INDEX, sized=st.integers(0, len(SIZED) - 1),
          fit=st.integers(0, len(FITS) - 1), pinned=st.booleans(), host_port=st.booleans())
    def apply_pod_near_capacity(self, pod: str, i: int, sized: int, fit: int, pinned: bool, host_port: bool) -> None:
        """Draws: a bare pod name; a node; what it requests (`SIZED`: nothing, cpu, memory, ephemeral storage, the
        extended resource `example.com/dongle`); how much (`FITS`: what the node has left, its allocatable less the
        requests of the pods bound to it, or one unit more); pinned or not; a host port (the one a pod on the node
        holds, else 8080)
        Sends: `kubectl apply` of the pod (`apply-sized-pod`): pinned (`spec.nodeName`), the kubelet's admission
        judges it and a pod that does not fit is Failed with `OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage` or
        `NodePorts`; through the scheduler (a nodeSelector on the node's hostname), a pod that does not fit stays
        Pending, Unschedulable. The model's nodes have no extended resource in their allocatable, so a pod asking
        for one (with its limit, as a resource that cannot be overcommitted needs) never fits
        Shrinks to: a pod for the scheduler to place on the first node, asking for nothing but the host port"""
        node = pick(i, self.cluster.nodes)
        resource, more = SIZED[sized], FITS[fit] == "one more"
        cpu, memory, storage = self._left(node)
        quantity = {"": "", "cpu": f"{cpu + more}m", "memory": f"{memory // MI + more}Mi",
                    "ephemeral-storage": f"{storage // MI + more}Mi", "example.com/dongle": "1"}[resource]
        port, protocol, host_ip = self._held_port(node) if host_port or not resource else (0, "TCP", "")
        self._do(ApplySizedPod(pod, node, pinned, resource, quantity, port, protocol,
                                                          host_ip))

    @rule(app=st.sampled_from(APPS), ip=st.integers(0, len(CLUSTER_IPS) - 1))
    def create_service_ip(self, app: str, ip: int) -> None:
        """kubectl create of the app's Service asking for a ClusterIP (409 AlreadyExists when it is there).

        Draws: an app; a ClusterIP of the example's service CIDR (`cluster_ips`: one an existing Service holds, a
        free one, the range's first, its network and broadcast addresses, one outside the range, an IPv6 address,
        `None`, a malformed one)
        Sends: `POST` of the app's Service asking for it: 422 with the allocator's reason when it is taken or not in
        the range, 409 when the Service exists
        Shrinks to: web asking for the address the last Service holds"""
        rows = cluster_ips(self.config.service_cidr)
        wanted = rows[ip]
        if wanted == "taken":
            held = [s.spec.cluster_ip for s in self.cluster.objects("services", "default")
                    if s.spec.cluster_ip not in ("", "None")]
            wanted = held[-1] if held else rows[1]
        manifest = service_manifest(app)
        manifest["spec"]["clusterIP"] = wanted
        self._do(SendRequest("create", "services", "default", "", "", json.dumps(manifest)))
