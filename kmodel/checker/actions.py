"""Actions: every choice the checker makes, as a small attrs value with a readable name and a JSON form.

Theory of operation
-------------------
The state machine (machine.py) draws numbers; it turns them into one *concrete* action against the cluster
as it is now (index 3 of the enabled events becomes ``deliver scheduler -> apiserver-0``), and hands the
action to a `Session` (session.py) that applies it. So a trace is a list of concrete actions, readable
without the machine, and replaying it is applying the same actions again: no Hypothesis, no indices.

Every action has

* `kind`: its stable name in a trace (``"apply-deployment"``), the ``"name"`` key of its JSON;
* `name`: one readable line (``kubectl apply deployment web (2 replicas)``), also its ``str()``;
* `to_json()` / `action_from_json()`: plain JSON values and back; `stable_json()` is the canonical text the
  session's digest hashes;
* `apply(cluster)`: what it does. Only `Settle` needs more (a callback saying whether liveness holds yet).

The user's objects are built from a few parameters (apps ``web`` and ``api``; replicas; a CPU request; a
host port), sent as the manifests a user would type, through kubectl. Faults and interleavings are the
loop's own events, wrapped (`Fire`, `Fault`), so they replay through `Loop.step`, which refuses an event
that is not enabled: a replay that diverges stops at once instead of drifting.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterator, Optional

import attrs

from kmodel.checker.simpler import Simplest, default, earlier, earlier_node, fewer, one_fewer, variants

from kmodel.cluster import Cluster, Delete, Scale
from kmodel.cluster.kubectl import Apply
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import (
    Crash, DelayHead, FailRequest, Heal, HealAll, LoopEvent, Partition, REQUEST_FAULT_CODES, Record,
    ReleaseAll, Restart, SlowLink, at_least, event_from_json,
)

#: the user's applications: a Deployment and a Service of each name may exist
APPS: tuple[str, ...] = ("web", "api")
#: the bare pods the checker applies and deletes (ApplyPod)
BARE_PODS: tuple[str, ...] = ("debug-1", "debug-2")
IMAGE = "nginx:1.25"
HOST_PORT = 8080


class Action(Record):
    """Base of all checker actions."""

    #: the fields that have simpler values, in the order minimization tries them, each with how to list them
    #: (kmodel.checker.simpler): a new action declares its own; none by default
    simplest: ClassVar[Simplest] = ()

    def simpler(self) -> Iterator["Action"]:
        """This action with one argument simplified, in a fixed order (minimization's second pass keeps one while
        the trace still fails the same way): from `simplest` unless the class knows better."""
        return variants(self, self.simplest)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.kind}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if isinstance(value, LoopEvent):
                value = value.to_json()
            elif isinstance(value, tuple):
                value = [v.to_json() if isinstance(v, LoopEvent) else v for v in value]
            d[field.name] = value
        return d

    def apply(self, cluster: Cluster) -> None:
        raise NotImplementedError


# -- the user ---------------------------------------------------------------------------------------------

def app_container(cpu_millis: int, host_port: bool) -> dict:
    """The user's one container: port 80, on host port 8080 when `host_port`, with a CPU request if any."""
    container: dict[str, Any] = {"name": "app", "image": IMAGE, "ports": [{"containerPort": 80}]}
    if host_port:
        container["ports"][0]["hostPort"] = HOST_PORT
    if cpu_millis:
        container["resources"] = {"requests": {"cpu": f"{cpu_millis}m"}}
    return container


def deployment_manifest(app: str, replicas: int, cpu_millis: int, host_port: bool) -> dict:
    container = app_container(cpu_millis, host_port)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": app, "namespace": "default", "labels": {"app": app}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [container]}},
        },
    }


def service_manifest(app: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"selector": {"app": app}, "ports": [{"port": 80, "targetPort": 80, "protocol": "TCP"}]},
    }


@attrs.frozen
class ApplyDeployment(Action):
    """kubectl apply a Deployment of `app`; `server_side`: kubectl apply --server-side (a conflict with the fields
    another manager owns, such as a client-side apply's replicas, is refused 409)."""

    kind: ClassVar[str] = "apply-deployment"
    simplest: ClassVar[Simplest] = (
        ("app", earlier(APPS)), ("replicas", fewer(0)), ("cpu_millis", default(0)), ("host_port", default(False)),
        ("server_side", default(False)))
    app: str
    replicas: int = at_least(0)
    cpu_millis: int = at_least(0, default=0)
    host_port: bool = False
    server_side: bool = False

    @property
    def name(self) -> str:
        extra = (f", {self.cpu_millis}m CPU" if self.cpu_millis else "") + (
            f", hostPort {HOST_PORT}" if self.host_port else "")
        how = " --server-side" if self.server_side else ""
        return f"kubectl apply{how} deployment {self.app} ({self.replicas} replicas{extra})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(deployment_manifest(self.app, self.replicas, self.cpu_millis, self.host_port),
                             server_side=self.server_side))


def pod_manifest(pod: str, node: str, host_port: bool) -> dict:
    """A bare Pod (no owner) running the apps' container: pinned to `node` (spec.nodeName), or for the
    scheduler to place when `node` is ""."""
    spec: dict = {"nodeName": node} if node else {}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod, "namespace": "default", "labels": {"run": pod}},
        "spec": {**spec, "containers": [app_container(0, host_port)]},
    }


@attrs.frozen
class ApplyPod(Action):
    """kubectl apply a bare Pod, owned by no controller (`kubectl run`): pinned to `node` (spec.nodeName: no
    scheduler places it, as a debugging pod's or a DaemonSet's), or placed by the scheduler when `node` is "";
    with hostPort 8080 when `host_port`. A pod's spec is immutable, so applying it again with another node or
    port is refused (422), as kubectl's would be."""

    kind: ClassVar[str] = "apply-pod"
    simplest: ClassVar[Simplest] = (
        ("pod", earlier(BARE_PODS)), ("node", earlier_node(unpinned=True)), ("host_port", default(False)))
    pod: str
    node: str
    host_port: bool = False

    @property
    def name(self) -> str:
        where = f" on {self.node}" if self.node else ""
        return f"kubectl apply pod {self.pod}{where}" + (f" (hostPort {HOST_PORT})" if self.host_port else "")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(pod_manifest(self.pod, self.node, self.host_port)))


@attrs.frozen
class ScaleDeployment(Action):
    kind: ClassVar[str] = "scale-deployment"
    simplest: ClassVar[Simplest] = (("app", earlier(APPS)), ("replicas", fewer(0)))
    app: str
    replicas: int = at_least(0)

    @property
    def name(self) -> str:
        return f"kubectl scale deployment {self.app} --replicas={self.replicas}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Scale("deployments", "default", self.app, self.replicas))


@attrs.frozen
class ApplyService(Action):
    kind: ClassVar[str] = "apply-service"
    simplest: ClassVar[Simplest] = (("app", earlier(APPS)),)
    app: str

    @property
    def name(self) -> str:
        return f"kubectl apply service {self.app}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(service_manifest(self.app)))


@attrs.frozen
class DeleteObject(Action):
    """kubectl delete a namespaced object of the default namespace (deployments, services or bare pods)."""

    kind: ClassVar[str] = "delete"
    resource: str
    object: str

    @property
    def name(self) -> str:
        return f"kubectl delete {self.resource} {self.object}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Delete(self.resource, "default", self.object))


@attrs.frozen
class AddNode(Action):
    """A new machine joins; `cpu`: its CPUs, or "" for the config's node_cpu."""

    kind: ClassVar[str] = "add-node"
    simplest: ClassVar[Simplest] = (("cpu", default("")),)  # the cluster's own size
    cpu: str = ""

    @property
    def name(self) -> str:
        return f"a new node joins ({self.cpu} CPUs)" if self.cpu else "a new node joins"

    def apply(self, cluster: Cluster) -> None:
        cluster.add_node(self.cpu)


@attrs.frozen
class RemoveNode(Action):
    kind: ClassVar[str] = "remove-node"
    simplest: ClassVar[Simplest] = (("node", earlier_node()),)
    node: str

    @property
    def name(self) -> str:
        return f"remove {self.node} (stop its machine, kubectl delete node)"

    def apply(self, cluster: Cluster) -> None:
        cluster.remove_node(self.node)


@attrs.frozen
class LoseNode(Action):
    kind: ClassVar[str] = "lose-node"
    simplest: ClassVar[Simplest] = (("node", earlier_node()),)
    node: str

    @property
    def name(self) -> str:
        return f"lose {self.node} (its machine fails for good; no one deletes the Node)"

    def apply(self, cluster: Cluster) -> None:
        cluster.lose_node(self.node)


# -- the loop's own events ----------------------------------------------------------------------------------

def _events(value: Any) -> tuple[LoopEvent, ...]:
    return tuple(v if isinstance(v, LoopEvent) else event_from_json(v) for v in value)


@attrs.frozen
class Fire(Action):
    """A short burst of enabled progress events, in order (an interleaving chosen by the checker)."""

    kind: ClassVar[str] = "fire"
    events: tuple[LoopEvent, ...] = attrs.field(converter=_events)

    @property
    def name(self) -> str:
        return "; ".join(e.name for e in self.events)

    def apply(self, cluster: Cluster) -> None:
        step = cluster.loop.step
        for event in self.events:
            step(event)


def _event(value: Any) -> LoopEvent:
    return value if isinstance(value, LoopEvent) else event_from_json(value)


#: the simpler values of a fault event's fields, by event class (as `Action.simplest`): fewer endpoints cut off
#: or healed, the shortest delay, no Retry-After, a write not applied, the first status code
FAULT_EVENT_SIMPLEST: dict[type[LoopEvent], Simplest] = {
    Partition: (("endpoints", one_fewer),),
    Heal: (("endpoints", one_fewer),),
    DelayHead: (("delay_ms", fewer(1_000, 1_000)),),
    SlowLink: (("delay_ms", fewer(1_000, 1_000)),),
    FailRequest: (("applied", default(False)), ("retry_after_seconds", default(0)),
                  ("code", earlier(REQUEST_FAULT_CODES))),
}


def _fault_fits_its_rule(event: LoopEvent) -> bool:
    """Is a simplified fault event one its rule could draw (a write applied only with 504, Retry-After only with
    429: fault_rules.fail_request)?"""
    if isinstance(event, FailRequest):
        return (not event.applied or event.code == 504) and (not event.retry_after_seconds or event.code == 429)
    return True


@attrs.frozen
class Fault(Action):
    """One fault event of the loop: partition, heal, drop, delay, break a stream, crash, restart."""

    kind: ClassVar[str] = "fault"
    event: LoopEvent = attrs.field(converter=_event)

    @property
    def name(self) -> str:
        return self.event.name

    def simpler(self) -> Iterator[Action]:
        """The fault with its event's arguments simplified (FAULT_EVENT_SIMPLEST)."""
        for event in variants(self.event, FAULT_EVENT_SIMPLEST.get(type(self.event), ())):
            if _fault_fits_its_rule(event):
                yield Fault(event)

    def apply(self, cluster: Cluster) -> None:
        cluster.loop.step(self.event)


# -- processes ----------------------------------------------------------------------------------------------

#: the process the cluster's controllers run in (`Cluster.controller_manager`; with several kube-controller-managers
#: the first, the others "kube-controller-manager-2", ...: `Cluster.processes`)
CONTROLLER_MANAGER = "kube-controller-manager"


def process_of(cluster: Cluster, component: str) -> str:
    """The process a component runs in: its kube-controller-manager for the cluster's controllers, else itself."""
    return cluster.process_of(component)


@attrs.frozen
class CrashProcess(Action):
    """A kube-controller-manager crashes: every one of its components that is up stops at once (a panic in one
    controller, an OOM kill, a node reboot end the whole process)."""

    kind: ClassVar[str] = "crash-process"
    process: str = CONTROLLER_MANAGER

    @property
    def name(self) -> str:
        return f"crash {self.process} (every controller in it)"

    def apply(self, cluster: Cluster) -> None:
        if not any(cluster.loop.is_up(n) for n in cluster.processes.get(self.process, ())):
            # not enabled now (a replay of a trace that no longer fits the model: TraceDiverged)
            raise EventNotEnabled(f"cannot crash {self.process!r}: not a running process of this cluster")
        cluster.crash(self.process)  # each member that is up, in the process's order


@attrs.frozen
class RestartProcess(Action):
    """A kube-controller-manager starts again: every one of its components that is down starts."""

    kind: ClassVar[str] = "restart-process"
    process: str = CONTROLLER_MANAGER

    @property
    def name(self) -> str:
        return f"restart {self.process} (every controller in it)"

    def apply(self, cluster: Cluster) -> None:
        if all(cluster.loop.is_up(n) for n in cluster.processes.get(self.process, ())):
            raise EventNotEnabled(f"cannot restart {self.process!r}: it is not down")
        cluster.restart(self.process)  # each member that is down, in the process's order


def _members(cluster: Cluster, process: str) -> tuple[str, ...]:
    return cluster.processes.get(process, (process,))


def is_mid_reconcile(cluster: Cluster, name: str) -> bool:
    """Is the component (or every controller of the process) `name` in the middle of a change: a write of it
    sent and not answered yet (on its way, being applied, or its answer on the way back)? Events it records do
    not count: they report a sync, they are not part of the change it makes."""
    return bool(writes_outstanding(cluster, name))


def writes_outstanding(cluster: Cluster, name: str) -> list[tuple[str, int]]:
    """(component, request id) of each write of `name` (a component, or every controller of the process) sent
    and not answered yet (Events aside)."""
    return _outstanding(_clients(cluster, name))


def _clients(cluster: Cluster, name: str) -> list[tuple[str, Any]]:
    """(component, its API client) for the component `name`, or every controller of the process `name`, that has
    one."""
    components = cluster.loop.components
    out = []
    for member in _members(cluster, name):
        client = getattr(components.get(member), "client", None)
        if client is not None:
            out.append((member, client))
    return out


def _outstanding(clients: list[tuple[str, Any]]) -> list[tuple[str, int]]:
    """`writes_outstanding` of the components of `clients` (as `_clients` lists them)."""
    out = []
    for member, client in clients:
        rids = client.writes_outstanding()
        if rids:  # mostly none: CrashMidReconcile asks after every event, for every reconciler
            out.extend((member, rid) for rid in rids)
    return out


def crash_process(cluster: Cluster, process: str) -> None:
    """Crash a process: kube-controller-manager as a whole, anything else as itself."""
    if process in cluster.processes:
        CrashProcess(process).apply(cluster)
    else:
        cluster.loop.step(Crash(process))


#: CrashMidReconcile's `component` for "whichever reconciling component is first in the middle of a reconcile"
FIRST_RECONCILER = ""


def reconcilers(cluster: Cluster) -> list[str]:
    """Running components that reconcile through the API (Component.reconciles: each controller, the scheduler,
    kubelets), sorted."""
    loop = cluster.loop
    return sorted(n for n, c in loop.components.items() if c.reconciles and loop.is_up(n) and c.supports_crash())


@attrs.frozen
class CrashMidReconcile(Action):
    """Run fairly, one event at a time, until `component` is in the middle of a reconcile (a write of it sent and
    not answered yet: `is_mid_reconcile`), then crash the process it runs in: the crash between two writes of
    one sync that leaves half a change behind. `component` FIRST_RECONCILER ("") waits for whichever
    reconciling component gets there first (after a user's change, the controller acting on it); a process
    name (kube-controller-manager) for whichever of its controllers does. At most `max_events` events within
    a minute of logical time; a component that gets no work in that time crashes where the run stopped
    (FIRST_RECONCILER: nothing crashes)."""

    kind: ClassVar[str] = "crash-mid-reconcile"
    simplest: ClassVar[Simplest] = (
        ("component", default(FIRST_RECONCILER)), ("writes", fewer(1)))
    component: str = FIRST_RECONCILER
    #: crash while this write of the component (counted from the start of the fault) is out: 1 before the first
    #: write of its next sync is answered, 2 between its first and second write, ...
    writes: int = at_least(1, default=1)
    max_events: int = at_least(1, default=2_000)

    @property
    def name(self) -> str:
        if self.component == FIRST_RECONCILER:
            subject, sync = "the first component", "a reconcile"
        else:  # the cluster's controllers run in kube-controller-manager (`process_of`, without a cluster here)
            head = self.component.partition("/")[0]
            subject = head.replace("controller", CONTROLLER_MANAGER, 1) if "/" in self.component and \
                head.startswith("controller") else self.component
            sync = "its next reconcile" if subject == self.component else f"{self.component}'s next reconcile"
        if self.writes == 1:
            return f"crash {subject} in the middle of {sync}"
        return f"crash {subject} while write {self.writes} of {sync} is out"

    def apply(self, cluster: Cluster) -> None:
        loop = cluster.loop
        deadline = cluster.now + 60_000
        names = reconcilers(cluster) if self.component == FIRST_RECONCILER else [self.component]
        seen: dict[str, set] = {n: set() for n in names}
        # each name's API clients, looked up once: a component makes its client when it is built and keeps it
        # through crashes and restarts (`reset`), and a fair run adds no component
        watched = [(n, _clients(cluster, n)) for n in names]
        target = ""
        for _ in range(self.max_events):
            for n, clients in watched:
                out_now = _outstanding(clients)
                if out_now:
                    seen[n].update(out_now)
                    if len(seen[n]) >= self.writes:
                        target = n
                        break
            if target or loop.run_fair(deadline, max_events=1) == 0:
                break
        if not target and self.component != FIRST_RECONCILER:
            target = self.component  # it got no work: it crashes where the run stopped
        if target:
            crash_process(cluster, process_of(cluster, target))


# -- other faults -------------------------------------------------------------------------------------------

@attrs.frozen
class Compact(Action):
    """Compact the store at `revision` (kube-apiserver compacts etcd every five minutes): watches and lists
    from older revisions get 410 Gone and must relist."""

    kind: ClassVar[str] = "compact"
    revision: int = at_least(1)

    @property
    def name(self) -> str:
        return f"compact the store at revision {self.revision}"

    def fits(self, cluster: Cluster) -> bool:
        """Can the store be compacted there now (above its last compaction, not past its newest revision)?"""
        store = cluster.store
        return store.compact_revision < self.revision <= store.revision

    def apply(self, cluster: Cluster) -> None:
        if not self.fits(cluster):  # a replayed trace that does not fit this model: the trace's fault, not etcd's
            store = cluster.store
            raise EventNotEnabled(f"cannot compact at revision {self.revision}: the store is at revision "
                                  f"{store.revision}, compacted at {store.compact_revision}")
        cluster.store.compact(self.revision)


@attrs.frozen
class FailContainer(Action):
    """A container's process dies on its node (exit code 1); the kubelet finds out and restarts it."""

    kind: ClassVar[str] = "fail-container"
    node: str
    pod: str
    container: str

    @property
    def name(self) -> str:
        return f"container {self.container} of pod {self.pod} dies on {self.node}"

    def fits(self, cluster: Cluster) -> bool:
        """Does that node's kubelet run, and know that container as the pod's current one, running now (what the
        explorer draws from)?"""
        loop = cluster.loop
        kubelet = loop.components.get(f"kubelet/{self.node}")
        if kubelet is None or not loop.is_up(kubelet.name):
            return False
        cid = kubelet.container_id("default", self.pod, self.container)  # type: ignore[attr-defined]
        return bool(cid) and any(c.id == cid for c in kubelet.runtime.running())  # type: ignore[attr-defined]

    def apply(self, cluster: Cluster) -> None:
        if not self.fits(cluster):  # a replayed trace that does not fit this model: the trace's fault, not the CRI's
            raise EventNotEnabled(f"{self.name}: no such running container on {self.node} now")
        kubelet = cluster.loop.components[f"kubelet/{self.node}"]
        kubelet.fail_container("default", self.pod, self.container, now=cluster.now)  # type: ignore[attr-defined]
        cluster.loop.notify_work(kubelet.name)


def removed_components(cluster: Cluster) -> set[str]:
    """The components of machines taken out for good (`Cluster.remove_node`: every endpoint named
    ``<component>/<node>``). Nothing restarts them, neither the explorer's `restart` nor `Settle`: a removed
    machine is gone, and its kubelet comes back only if the operator rejoins it (a new node, `AddNode`)."""
    suffixes = tuple("/" + node for node in cluster.removed_nodes)
    if not suffixes:
        return set()
    return {name for name in cluster.loop.components if name.endswith(suffixes)}


# -- time ---------------------------------------------------------------------------------------------------

#: bound on the events of one fair run: a model that never falls quiet within this many is livelocked
MAX_FAIR_EVENTS = 200_000
#: events at one logical instant after which a fair run lets the clock move on anyway (`Loop.run_fair`'s
#: busy_instant): components that keep each other busy take real time in a real cluster. The busiest real
#: instants the checker has seen (a rollout, a relist storm) stay under 3,000 events.
BUSY_INSTANT_EVENTS = 5_000


def run_fairly(cluster: Cluster, until_ms: int) -> int:
    """`Cluster.run` with the checker's bounds: fair running to `until_ms` (the clock ends there when the cluster
    falls quiet before), at most MAX_FAIR_EVENTS events, time passing through busy instants. Returns the
    events applied."""
    return cluster.run(until_ms, max_events=MAX_FAIR_EVENTS, busy_instant=BUSY_INSTANT_EVENTS)


@attrs.frozen
class RunFair(Action):
    """Let `ms` of logical time pass, delivering everything fairly."""

    kind: ClassVar[str] = "run"
    simplest: ClassVar[Simplest] = (("ms", fewer(1_000, 1_000)),)  # whole seconds
    ms: int = at_least(1)

    @property
    def name(self) -> str:
        return f"run fairly for {self.ms / 1000:g} s"

    def apply(self, cluster: Cluster) -> None:
        run_fairly(cluster, cluster.now + self.ms)


@attrs.frozen
class RunEvents(Action):
    """Deliver fairly, but stop after `events` model events (within a minute of logical time): unlike `RunFair`,
    which ends where the cluster is quiet, this ends wherever the count runs out, often in the middle of a
    reconcile, so the fault that follows can land between two writes of one sync."""

    kind: ClassVar[str] = "run-events"
    simplest: ClassVar[Simplest] = (("events", fewer(1)),)
    events: int = at_least(1)

    @property
    def name(self) -> str:
        return f"run fairly for {self.events} events"

    def apply(self, cluster: Cluster) -> None:
        cluster.loop.run_fair(cluster.now + 60_000, max_events=self.events)


class NotSettled(Exception):
    """`Settle` ran out of time with liveness still failing (the session turns it into a violation)."""


@attrs.frozen
class Settle(Action):
    """Heal every partition (and, with `release_holds`, end every delay), restart everything down (except
    removed nodes), then run fairly until liveness holds, at most `bound_ms`. With `check_at_once`, liveness is asked first once everything enabled at this
    very moment has run (the clock not moved: a cluster that was settled already costs one check and no
    time); then after `first_ms`, then after chunks that double each time (5, 10, 20, 40 ... s), so a cluster
    that converges at once costs a check or two and one that never does costs a handful, not one per chunk.
    Without a `converged` callback it runs one chunk of `first_ms`."""

    kind: ClassVar[str] = "settle"
    #: none: a settle's bounds are the checker's, not a choice of the example (and a liveness failure's last step)
    simplest: ClassVar[Simplest] = ()
    bound_ms: int = at_least(1, default=600_000)
    first_ms: int = at_least(1, default=5_000)
    #: ask liveness once before the clock moves (False: first after `first_ms`)
    check_at_once: bool = True
    #: end every delay too (held links: DelayHead, SlowLink), as partitions are ended: liveness is judged once
    #: the faults have healed, and a delay is a fault (False: delays are waited out)
    release_holds: bool = True
    #: the operator finishes removing machines: a removed machine whose Node is still there (its `kubectl delete
    #: node` failed while an API server or etcd was out) is deleted again, at the start and after every chunk
    #: (False: it is not; a small cluster can then stall for good, as upstream: see docs/differences.md, node
    #: lifecycle)
    finish_removals: bool = True
    #: a settle that has run this many model events (0: no such bound) and `busy_ms` of logical time without
    #: converging fails as one that reached `bound_ms` does, once everything pending at that moment has come due
    #: (`Loop.latest_deadline`: every timer, a work queue's delayed keys, a held link's release): a cluster busy
    #: for a while after a heal may still be waiting for a long timer, a lost machine's pods' eviction 300 s
    #: after its taint, and gets to converge when it fires. A cluster that converges needs few events (a dev
    #: example's settles, at most about 2,000 on 3 nodes; a busy spell after a heal, a controller recreating
    #: what the garbage collector deletes while its informer waits out a back-off, 64,000 in 75 s); one that
    #: churns for good, a controller replacing pods a kubelet keeps rejecting, ran hundreds of thousands to the
    #: time bound, on every replay while its failure shrank. The checker's settles set it from the number of
    #: nodes.
    max_events: int = at_least(0, default=0)
    busy_ms: int = at_least(0, default=150_000)

    @property
    def name(self) -> str:
        bound = f"at most {self.bound_ms / 1000:g} s"
        if self.max_events:
            bound += f", or {self.busy_ms / 1000:g} s and {self.max_events:,} events"
        return f"settle: heal all, restart what is down, run fairly ({bound})"

    def apply(self, cluster: Cluster, converged: Optional[Callable[[], bool]] = None) -> None:
        loop = cluster.loop

        if loop.network.partitioned:
            loop.step(HealAll())
        if self.release_holds and loop.network.has_held_links:
            loop.step(ReleaseAll())
        removed = removed_components(cluster)
        for name in sorted(loop.components):
            if not loop.is_up(name) and name not in removed:
                loop.step(Restart(name))
        if self.finish_removals:
            _delete_leftover_nodes(cluster)
        start = cluster.now
        first_event = loop.events_applied
        stored_at_start = cluster.store.live_key_count
        if converged is not None and self.check_at_once:
            # Everything enabled at this instant, then ask. A cluster still busy after BUSY_INSTANT_EVENTS events
            # at this instant is not quiet (components keeping each other busy, e.g. a controller recreating
            # what the garbage collector deletes while its informer waits out a back-off): time must pass for
            # it, so go on to the chunks, where it does.
            if loop.run_fair(start, max_events=BUSY_INSTANT_EVENTS) < BUSY_INSTANT_EVENTS and converged():
                return
        chunk = self.first_ms
        horizon: Optional[int] = None  # when the event bound was reached: the latest deadline pending then
        while True:
            length = min(chunk, start + self.bound_ms - cluster.now)
            if horizon is not None and cluster.now < horizon:
                length = min(length, horizon - cluster.now)  # ask again once the last of those has fired
            _settle_livelocked(cluster, run_fairly(cluster, cluster.now + length))
            if converged is None or converged():
                return
            events = loop.events_applied - first_event
            if self.max_events and events >= self.max_events and cluster.now - start >= self.busy_ms:
                stored = cluster.store.live_key_count
                if is_storm(stored_at_start, stored):
                    raise NotSettled(f"liveness still fails {(cluster.now - start) / 1000:g} s after the faults "
                                     f"healed, with {events:,} events run and {stored:,} objects stored where "
                                     f"there were {stored_at_start:,} (the cluster keeps creating objects "
                                     f"without converging: a storm, such as a controller replacing pods a "
                                     f"kubelet keeps rejecting)")
                if horizon is None:
                    horizon = loop.latest_deadline() or cluster.now
                if cluster.now >= horizon:
                    raise NotSettled(f"liveness still fails {(cluster.now - start) / 1000:g} s after the faults "
                                     f"healed, with {events:,} events run (the cluster keeps busy without "
                                     f"converging: the bound is {self.max_events:,}, and every timer pending when "
                                     f"it was reached has fired)")
            if cluster.now - start >= self.bound_ms:
                raise NotSettled(f"liveness still fails {self.bound_ms / 1000:g} s after the faults healed")
            if self.finish_removals:
                # a `kubectl delete node` still awaiting its answer when the settle began may have failed since
                # (its request was lost and timed out): the operator tries again
                _delete_leftover_nodes(cluster)
            chunk *= 2


#: objects a settle's cluster must have added, beyond doubling its store, to count as a storm (`is_storm`)
STORM_GROWTH = 1_000


def is_storm(stored_at_start: int, stored: int) -> bool:
    """Whether a busy settle's store grew like a storm: more than doubled, and by more than STORM_GROWTH keys.
    Such a cluster does not wait for its latest timer (Settle.max_events): each object it adds makes every
    later event dearer (controllers list and sync over all of them), and a storm that ran to a far timer, a
    work queue's longest back-off, cost minutes of CPU on every replay while its failure shrank. A convergence
    that adds objects stays within the bound: a DaemonSet rolled out to every node adds at most one pod per
    node, fewer than the store already holds for those nodes (Node, Lease)."""
    grown = stored - stored_at_start
    return grown > STORM_GROWTH and grown > stored_at_start


def _delete_leftover_nodes(cluster: Cluster) -> None:
    """`kubectl delete node` again for each removed machine whose Node still exists and is not being deleted by
    a command still queued or awaiting its answer."""
    pending = {c.name for c in cluster.kubectl.unanswered() if isinstance(c, Delete) and c.resource == "nodes"}
    lost = set(cluster.lost_nodes)  # no one decided to delete those (Cluster.lose_node)
    for node in cluster.removed_nodes:
        if node not in pending and node not in lost and cluster.get("nodes", "", node) is not None:
            cluster.submit(Delete("nodes", "", node))


def _settle_livelocked(cluster: Cluster, applied: int) -> None:
    """A fair run that used up its whole event budget is a livelock (time passes through busy instants, so
    only a cluster that never falls quiet gets here): waiting for the settle's bound would never end."""
    if applied >= MAX_FAIR_EVENTS:
        raise NotSettled(f"the cluster never fell quiet: {applied} events in one fair run, the clock at "
                         f"{cluster.now} ms (a livelock)")
