"""The fault actions of the `RequestFaultRules` family (fault_rules.py) that are more than one loop event.

Theory of operation
-------------------
Most faults of the family are one loop event wrapped in `Fault` (actions.py): a request fault
(`kmodel.loop.events.FailRequest`), a compaction (`Compact`). The one here composes loop events as
`CrashMidReconcile` does, so it replays through `Loop.step` and the fair runner:

`StallWatch`: a watch stream held up for minutes, then ended by the API server. The link from the replica to
the client is held (`SlowLink`: the watch's events, and anything else the replica sends that client, wait in
order), the cluster runs fairly for the hold, and just before it would end the stream is reset
(`BreakStream`): what was held on it is lost, and the client resumes the watch from the last event it
received. That is kube-apiserver's cacher closing a watcher that could not take its events
("Forcing watcher close due to unresponsiveness", cacher.go, Kubernetes 1.28-1.32): the client sees the watch
end, resumes from its last resourceVersion, and when the replica's window of events has moved past it (a
window of at least 100 events per resource, kmodel.apiserver.watchcache) the resumed watch meets 410 Expired
and the informer relists. The hold lasts minutes so that it can outlast that window: a resource changing
every few seconds (Leases: one renewal per node every 10 s) fills 100 events in about five minutes on a
three-node cluster.

Not modelled: the client's HTTP/2 health check during the hold (kmodel.loop.health arms it for partitions
only); a stalled connection whose PINGs go unanswered would be given up on after about 45 s and the informer
would relist at once, which the `partition` fault covers.

Probe faults go through the kubelet's fault hook (`Kubelet.fail_probe`: the container instance answers its
probes of one kind with failure, or success again); the kubelet's probe workers find out on their own period
(kmodel.kubelet.probes, as prober/worker.go):

`FlapReadiness`: a container's readiness probe fails for a while, then succeeds again: after failureThreshold
failures the kubelet reports the container not ready (the pod's Ready condition False, and the endpoints
controller moves its address to notReadyAddresses), after successThreshold successes ready again.

`FailLiveness`: a container's liveness probe fails: after failureThreshold failures the kubelet kills the
container (exit 137, event Killing "Container app failed liveness probe, will be restarted") and starts a new
instance (restartCount + 1), whose probes pass.

Both need containers that declare probes: `ApplyProbedApp` applies a Deployment whose container has a
readiness and a liveness probe (an HTTP GET of /healthz on port 80, as a user would write them) and its
Service, which the rules apply first when the cluster has no such Deployment.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from kmodel.checker.actions import Action, deployment_manifest, run_fairly, service_manifest
from kmodel.checker.simpler import Simplest, fewer
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import BreakStream, Crash, Restart, SlowLink, at_least


@attrs.frozen
class StallWatch(Action):
    """Hold the link `replica` -> `client` for `ms`, running fairly meanwhile, then reset the watch `stream`
    (one of `client`'s watches on `replica`) just before the hold ends. See the module docstring."""

    kind: ClassVar[str] = "stall-watch"
    simplest: ClassVar[Simplest] = (("ms", fewer(60_000, 60_000)),)  # whole minutes
    stream: str
    replica: str
    client: str
    ms: int = at_least(2)

    @property
    def name(self) -> str:
        return (f"stall watch {self.stream} ({self.replica} -> {self.client}) for {self.ms / 60_000:g} min, then "
                f"{self.replica} ends it")

    def fits(self, cluster: Cluster) -> bool:
        """Is `stream` an open stream between `client` and `replica` now?"""
        ends = cluster.loop.network.stream_ends(self.stream)
        return ends is not None and set(ends) == {self.client, self.replica} and self.ms > 1

    def apply(self, cluster: Cluster) -> None:
        if not self.fits(cluster):
            raise EventNotEnabled(f"{self.name}: no such open watch stream now")
        loop = cluster.loop
        start = cluster.now
        loop.step(SlowLink(self.replica, self.client, self.ms))
        run_fairly(cluster, start + self.ms - 1)
        reset = BreakStream(self.stream)
        if loop.is_enabled(reset):  # the client may have ended it meanwhile, or the replica crashed
            loop.step(reset)


#: the probes of `ApplyProbedApp`'s container: readiness every 5 s (not ready after 2 failures), liveness at
#: Kubernetes' defaults (every 10 s, restarted after 3 failures)
READINESS_PROBE = {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5, "failureThreshold": 2}
LIVENESS_PROBE = {"httpGet": {"path": "/healthz", "port": 80}}


#: how long FailLiveness waits for the kubelet to restart the container: failureThreshold (3) probes 10 s apart,
#: the kill's grace and the status written
LIVENESS_RESTART_MS = 45_000


def _restarts(cluster: Cluster, pod: str, container: str) -> int:
    """The restartCount of `container` in the stored status of the default namespace's `pod` (-1: none)."""
    obj = cluster.get("pods", "default", pod)
    statuses = [] if obj is None else [s for s in obj.status.container_statuses if s.name == container]
    return statuses[0].restart_count if statuses else -1


#: the application whose container declares the probes (a name no other rule applies or deletes, so its probes
#: stay: re-applying web or api without probes would take them away)
PROBED_APP = "probed"


def probed_deployment_manifest(app: str, replicas: int) -> dict:
    """The apps' Deployment (actions.deployment_manifest) with a readiness and a liveness probe on its container."""
    manifest = deployment_manifest(app, replicas, 0, False)
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"] = dict(READINESS_PROBE)
    container["livenessProbe"] = dict(LIVENESS_PROBE)
    return manifest


@attrs.frozen
class ApplyProbedApp(Action):
    """kubectl apply a Deployment of `app` whose container declares a readiness and a liveness probe, and its
    Service (so a readiness failure moves its pod's address to the Endpoints' notReadyAddresses)."""

    kind: ClassVar[str] = "apply-probed-app"
    simplest: ClassVar[Simplest] = (("replicas", fewer(0)), ("wait_seconds", fewer(0)))
    app: str = PROBED_APP
    replicas: int = at_least(0, default=2)
    #: then `kubectl rollout status --timeout=<this>s`: run fairly until every replica is available, at most this
    #: long (0: no wait)
    wait_seconds: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        wait = f"; kubectl rollout status deployment {self.app} --timeout={self.wait_seconds}s" \
            if self.wait_seconds else ""
        return (f"kubectl apply deployment {self.app} ({self.replicas} replicas, with readiness and liveness "
                f"probes) and service {self.app}{wait}")

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(probed_deployment_manifest(self.app, self.replicas)))
        cluster.submit(Apply(service_manifest(self.app)))
        deadline = cluster.now + self.wait_seconds * 1000
        while cluster.now < deadline and not self._rolled_out(cluster):
            run_fairly(cluster, min(deadline, cluster.now + 1000))

    def _rolled_out(self, cluster: Cluster) -> bool:
        """kubectl rollout status's test: the Deployment's controller has seen its generation and every replica
        is updated and available."""
        d = cluster.get("deployments", "default", self.app)
        return (d is not None and d.status.observed_generation >= d.metadata.generation
                and d.status.updated_replicas == d.spec.replicas == d.status.available_replicas)


def probed_kubelet(cluster: Cluster, node: str, pod: str, container: str, kind: str) -> Any:
    """The running kubelet of `node` when it knows `container` of `pod` as a running instance that declares a
    `kind` probe, else None."""
    loop = cluster.loop
    kubelet = loop.components.get(f"kubelet/{node}")
    if kubelet is None or not loop.is_up(kubelet.name):
        return None
    cid = kubelet.container_id("default", pod, container)  # type: ignore[attr-defined]
    if not cid or not any(c.id == cid for c in kubelet.runtime.running()):  # type: ignore[attr-defined]
        return None
    worker = kubelet.worker_of("default", pod)  # type: ignore[attr-defined]
    specs = [] if worker is None else [c for c in worker.pod.spec.containers if c.name == container]
    probe = getattr(specs[0], f"{kind}_probe", None) if specs else None
    return kubelet if probe is not None else None


@attrs.frozen
class FlapReadiness(Action):
    """The readiness probe of a running container fails for `ms`, running fairly meanwhile, then succeeds again."""

    kind: ClassVar[str] = "flap-readiness"
    simplest: ClassVar[Simplest] = (("ms", fewer(1_000, 1_000)),)  # whole seconds
    node: str
    pod: str
    container: str
    ms: int = at_least(1)

    @property
    def name(self) -> str:
        return (f"readiness probe of container {self.container} of pod {self.pod} on {self.node} fails for "
                f"{self.ms / 1000:g} s, then passes")

    def apply(self, cluster: Cluster) -> None:
        kubelet = probed_kubelet(cluster, self.node, self.pod, self.container, "readiness")
        if kubelet is None:
            raise EventNotEnabled(f"{self.name}: no such running container with a readiness probe now")
        kubelet.fail_probe("default", self.pod, self.container, "readiness")
        run_fairly(cluster, cluster.now + self.ms)
        if probed_kubelet(cluster, self.node, self.pod, self.container, "readiness") is kubelet:
            kubelet.fail_probe("default", self.pod, self.container, "readiness", healthy=True)
        # else the container was replaced meanwhile: the new instance's probes pass already


@attrs.frozen
class FailLiveness(Action):
    """The liveness probe of a running container fails from now on: the kubelet restarts it. The cluster runs
    fairly until the pod's status counts the restart, at most LIVENESS_RESTART_MS."""

    kind: ClassVar[str] = "fail-liveness"
    node: str
    pod: str
    container: str

    @property
    def name(self) -> str:
        return f"liveness probe of container {self.container} of pod {self.pod} on {self.node} fails"

    def apply(self, cluster: Cluster) -> None:
        kubelet = probed_kubelet(cluster, self.node, self.pod, self.container, "liveness")
        if kubelet is None:
            raise EventNotEnabled(f"{self.name}: no such running container with a liveness probe now")
        restarts = _restarts(cluster, self.pod, self.container)
        kubelet.fail_probe("default", self.pod, self.container, "liveness")
        # the kubelet finds out on its probe period: run fairly until the pod's status counts the restart (a
        # fault the next steps would otherwise have to wait out, which a dev run seldom does)
        deadline = cluster.now + LIVENESS_RESTART_MS
        while cluster.now < deadline and _restarts(cluster, self.pod, self.container) <= restarts:
            run_fairly(cluster, min(deadline, cluster.now + 1000))


# -- machines ----------------------------------------------------------------------------------------------


def rebootable_nodes(cluster: Cluster) -> list[str]:
    """The nodes whose kubelet runs now (a removed or lost machine's never does), in the cluster's order."""
    loop = cluster.loop
    return [n for n in cluster.nodes if f"kubelet/{n}" in loop.components and loop.is_up(f"kubelet/{n}")]


@attrs.frozen
class RebootNode(Action):
    """The machine `node` reboots and comes back: its kubelet and kube-proxy stop, every container process on it
    ends (exit code 255) and every pod's network namespace closes, then both start again. The container
    runtime's records and host-local's files on disk survive the reboot (kmodel.kubelet.runtime), so the kubelet
    starting again finds each pod's sandbox dead: it tears it down (CNI DEL without a netns) and makes a new one,
    and counts a restart of each container, as after a real reboot."""

    kind: ClassVar[str] = "reboot-node"
    node: str

    @property
    def name(self) -> str:
        return f"machine {self.node} reboots (its containers end, its kubelet and kube-proxy start again)"

    def apply(self, cluster: Cluster) -> None:
        if self.node not in rebootable_nodes(cluster):
            raise EventNotEnabled(f"cannot reboot {self.node!r}: not a node whose kubelet runs now")
        loop = cluster.loop
        stopped = [n for n in cluster.endpoints_of(self.node) if loop.is_up(n)]
        for name in stopped:
            loop.step(Crash(name))
        loop.components[f"kubelet/{self.node}"].runtime.reboot(cluster.now)  # type: ignore[attr-defined]
        for name in stopped:
            loop.step(Restart(name))
