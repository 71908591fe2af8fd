"""Pod workers: one per pod, driving the runtime toward the pod's spec (kubelet.go SyncPod / SyncTerminatingPod,
pod_workers.go, kuberuntime_manager.go computePodActions / SyncPod, kuberuntime_container.go doBackOff).

Theory of operation
-------------------
A `PodWorker` holds what the kubelet remembers of one pod (by uid): the newest spec it was given, whether the
pod is static, whether termination was requested and done, the restart backoff per container and the
waiting reasons for the status. What runs is never remembered: every sync reads it from the runtime by the
pod uid label (`pod_view`), as upstream reads PodStatus from the runtime cache. So a kubelet that crashed and
restarted finds the sandbox and containers of a pod again and adopts them: no second sandbox, no second IP.

`sync_pod` (SyncPod of a pod that should run), in upstream's order:
  1. network: a pod that is not hostNetwork needs the pod network (the node's podCIDR known to the runtime's
     CNI); otherwise the sync fails with `network is not ready: …` and is retried after the backoff period;
  2. sandbox: the newest sandbox if it is ready; a dead one (after a reboot) is killed (CNI DEL) and a new one
     created with attempt + 1 (CNI ADD: the next host-local address); failing to create it is the event
     FailedCreatePodSandBox and a retry after the backoff period;
  3. containers, in spec order: a running container of a run-to-completion pod whose run time is over exits by
     itself (completion.py); a running container that failed its liveness probe is killed (exit 137) and,
     if the restart policy allows, started again at once (attempt + 1); a missing one is created and started;
     an exited one is restarted if the policy says so (Always; OnFailure for a non-zero exit) unless it is in
     back-off (10 s doubling to 5 min, keyed by pod uid and container name, reset when a container ran for
     twice the maximum), in which case it waits as CrashLoopBackOff until the back-off ends;
  4. if no container runs and none is to be started, the pod is done: its sandbox is stopped (KillPod).

`terminate_pod` (SyncTerminatingPod): stop every container (they honour SIGTERM: exit 0), stop every sandbox
of the pod (CNI DEL releases the IP). `remove_pod` removes the records once the pod is gone from the API
(the containers' garbage collection). `kill_orphans` stops and removes sandboxes whose pod the kubelet does
not know (HandlePodCleanups, once every pod source has been seen).

Everything here is a plain function of (worker, runtime, now): the component decides when to call it.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import attrs

from kmodel.kubelet import completion
from kmodel.kubelet.cni import RUNTIME_NETWORK_NOT_READY
from kmodel.kubelet.runtime import (
    ContainerConfig, ContainerMetadata, ContainerRuntime, ContainerState, CRIError, PodSandboxConfig,
    PodSandboxMetadata, PodSandboxState, PortMapping, SandboxResources, POD_UID_LABEL,
)
from kmodel.scheduler.framework import pod_requests
from kmodel.kubelet.status import PodView
from kmodel.objects import Pod

POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"

NETWORK_NOT_READY = f"network is not ready: {RUNTIME_NETWORK_NOT_READY}"


@attrs.define
class SyncResult:
    """What one sync asks of the component: events to post, and when to sync again (None: the resync period)."""

    events: list = attrs.Factory(list)  # (type, reason, message)
    requeue_ms: Optional[int] = None
    error: str = ""


class PodWorker:
    """The kubelet's memory of one pod (see the module docstring)."""

    __slots__ = ("uid", "pod", "static", "deleted", "terminated", "backoff", "waiting", "admitted")

    def __init__(self, pod: Pod, static: bool = False) -> None:
        self.uid: str = pod.metadata.uid
        self.pod = pod
        self.static = static
        self.deleted = False  # gone from the API
        self.terminated = False  # containers and sandboxes stopped for good
        #: admission (kmodel.kubelet.admission): None until decided, True to run, False never to run (rejected,
        #: or already Succeeded/Failed in the API when the kubelet learnt of it). Static pods are admitted.
        self.admitted: Optional[bool] = True if static else None
        self.backoff: dict[str, tuple[int, int]] = {}  # container -> (backoff ms, last update)
        self.waiting: dict[str, tuple[str, str]] = {}  # container -> (reason, message) for the status

    @property
    def termination_requested(self) -> bool:
        return self.deleted or self.pod.metadata.deletion_timestamp is not None

    @property
    def active(self) -> bool:
        """filterOutInactivePods: admitted and not fully terminated (a terminating pod still holds its node)."""
        return self.admitted is True and not self.terminated


def pod_view(runtime: ContainerRuntime, uid: str) -> PodView:
    """The newest sandbox of the pod and, per container name, its newest and previous instance."""
    selector = {POD_UID_LABEL: uid}
    sandboxes = runtime.list_pod_sandbox(label_selector=selector)
    sandbox = sandboxes[-1] if sandboxes else None
    containers: dict = {}
    for c in runtime.list_containers(label_selector=selector):
        newest = containers.get(c.metadata.name)
        containers[c.metadata.name] = (c, newest[0] if newest else None)
    return PodView(sandbox, containers)


def _should_restart(pod: Pod, exit_code: int) -> bool:
    policy = pod.spec.restart_policy or "Always"
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def _all_succeeded(pod: Pod, view: PodView) -> bool:
    """Every container of the pod has exited with 0 (containerSucceeded for each): under OnFailure none is
    started again."""
    for spec in pod.spec.containers:
        instances = view.containers.get(spec.name)
        if instances is None or instances[0].state != ContainerState.CONTAINER_EXITED or instances[0].exit_code != 0:
            return False
    return True


def _format_pod(pod: Pod) -> str:
    return f"{pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})"


def _human(ms: int) -> str:
    """time.Duration's String for whole seconds and minutes (10s, 1m20s, 5m0s)."""
    s = ms // 1000
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60}s"


class RestartBackoff:
    """flowcontrol.Backoff as doBackOff uses it, over a worker's `backoff` dict."""

    def __init__(self, initial_ms: int, max_ms: int) -> None:
        self.initial_ms = initial_ms
        self.max_ms = max_ms

    def _expired(self, event_time: int, last_update: int) -> bool:
        return event_time - last_update > 2 * self.max_ms

    def in_backoff_since(self, entries: dict, key: str, event_time: int, now: int) -> Optional[int]:
        """The back-off in force if `now` is within it since `event_time` (the container's exit), else None."""
        entry = entries.get(key)
        if entry is None or self._expired(event_time, entry[1]):
            return None
        return entry[0] if now - event_time < entry[0] else None

    def next(self, entries: dict, key: str, now: int) -> None:
        entry = entries.get(key)
        if entry is None or self._expired(now, entry[1]):
            entries[key] = (self.initial_ms, now)
        else:
            entries[key] = (min(entry[0] * 2, self.max_ms), now)


def port_mappings(pod: Pod) -> tuple[PortMapping, ...]:
    """generatePodSandboxConfig's port mappings: every container port, published on the node when hostPort is
    set."""
    return tuple(PortMapping(p.protocol or "TCP", p.container_port, p.host_port or 0, p.host_ip or "")
                 for c in pod.spec.containers for p in c.ports)


def _sandbox_config(pod: Pod, attempt: int) -> PodSandboxConfig:
    meta = pod.metadata
    labels = {POD_NAME_LABEL: meta.name, POD_NAMESPACE_LABEL: meta.namespace, POD_UID_LABEL: meta.uid}
    requests = pod_requests(pod)
    return PodSandboxConfig(PodSandboxMetadata(meta.name, meta.uid, meta.namespace, attempt),
                            hostname=pod.spec.hostname or meta.name, labels=labels,
                            host_network=bool(pod.spec.host_network), port_mappings=port_mappings(pod),
                            resources=SandboxResources(requests.milli_cpu, requests.memory))


def _start_container(runtime: ContainerRuntime, pod: Pod, sandbox_id: str, spec, attempt: int, now: int) -> str:
    meta = pod.metadata
    labels = {POD_NAME_LABEL: meta.name, POD_NAMESPACE_LABEL: meta.namespace, POD_UID_LABEL: meta.uid,
              CONTAINER_NAME_LABEL: spec.name}
    cid = runtime.create_container(sandbox_id, ContainerConfig(ContainerMetadata(spec.name, attempt), spec.image,
                                                               labels), now)
    runtime.start_container(cid, now)
    return cid


def sync_pod(worker: PodWorker, runtime: ContainerRuntime, backoff: RestartBackoff, now: int, *,
             network_ready: bool, liveness_failed: Callable[[str, str], bool]) -> SyncResult:
    """SyncPod for a pod that should be running (see the module docstring)."""
    pod = worker.pod
    result = SyncResult()
    worker.waiting = {}
    if not pod.spec.host_network and not network_ready:
        result.events.append(("Warning", "NetworkNotReady", NETWORK_NOT_READY))
        result.error = NETWORK_NOT_READY
        return result
    view = pod_view(runtime, worker.uid)
    sandbox = view.sandbox
    policy = pod.spec.restart_policy or "Always"
    if sandbox is None or sandbox.state != PodSandboxState.SANDBOX_READY:
        attempt = 0
        if sandbox is not None:
            # the sandbox died (a reboot): kill what is left of the pod, then make a new one
            for sb in runtime.list_pod_sandbox(label_selector={POD_UID_LABEL: worker.uid}):
                runtime.stop_pod_sandbox(sb.id, now)
            attempt = sandbox.metadata.attempt + 1
            if policy == "Never" and view.containers:
                return result  # nothing may run again: the pod is done
            if policy == "OnFailure" and _all_succeeded(pod, view):
                # computePodActions (1.31): no container to start, so no new sandbox: the pod is done
                return result
            result.events.append(("Normal", "SandboxChanged", "Pod sandbox changed, it will be killed and re-created."))
        try:
            sid = runtime.run_pod_sandbox(_sandbox_config(pod, attempt), now)
        except CRIError as err:
            result.events.append(("Warning", "FailedCreatePodSandBox", f"Failed to create pod sandbox: {err}"))
            result.error = str(err)
            return result
        sandbox = runtime.pod_sandbox_status(sid)
    sid = sandbox.id
    keep = 0
    to_start = 0
    for spec in pod.spec.containers:
        newest, _ = view.containers.get(spec.name, (None, None))
        here = newest if newest is not None and newest.pod_sandbox_id == sid else None
        next_attempt = newest.metadata.attempt + 1 if newest is not None else 0
        if here is not None and here.state == ContainerState.CONTAINER_RUNNING:
            # a run-to-completion pod's process ends by itself (completion.py: the model's convention)
            ends = completion.ends_at(pod, here.started_at)
            if ends is not None and now >= ends:
                runtime.exit_container(here.id, completion.exit_code(pod), now)
                here = runtime.container_status(here.id)
            elif ends is not None:
                due = ends - now
                result.requeue_ms = due if result.requeue_ms is None else min(result.requeue_ms, due)
        if here is not None and here.state == ContainerState.CONTAINER_RUNNING:
            if not liveness_failed(spec.name, here.id):
                keep += 1
                continue
            message = f"Container {spec.name} failed liveness probe"
            restart = policy != "Never"
            if restart:
                message += ", will be restarted"
            result.events.append(("Normal", "Killing", message))
            runtime.stop_container(here.id, 137, now)
            if not restart:
                continue
            to_start += 1
            _start_container(runtime, pod, sid, spec, next_attempt, now)
            continue
        if here is not None and here.state == ContainerState.CONTAINER_EXITED:
            if not _should_restart(pod, here.exit_code):
                continue
            to_start += 1
            waited = backoff.in_backoff_since(worker.backoff, spec.name, here.finished_at, now)
            if waited is not None:
                worker.waiting[spec.name] = ("CrashLoopBackOff", f"back-off {_human(waited)} restarting failed "
                                                                 f"container={spec.name} pod={_format_pod(pod)}")
                result.events.append(("Warning", "BackOff", f"Back-off restarting failed container {spec.name} "
                                                            f"in pod {_format_pod(pod)}"))
                due = here.finished_at + waited - now
                result.requeue_ms = due if result.requeue_ms is None else min(result.requeue_ms, due)
                continue
            backoff.next(worker.backoff, spec.name, now)
        elif here is None and newest is not None and not _should_restart(pod, newest.exit_code):
            continue  # a new sandbox, but this container is done for good
        to_start += 1
        _start_container(runtime, pod, sid, spec, next_attempt, now)
    if keep == 0 and to_start == 0:
        runtime.stop_pod_sandbox(sid, now)  # KillPod: nothing will run here again
    return result


def terminate_pod(worker: PodWorker, runtime: ContainerRuntime, now: int) -> None:
    """SyncTerminatingPod: stop the containers (exit 0: SIGTERM honoured), then every sandbox (CNI DEL)."""
    selector = {POD_UID_LABEL: worker.uid}
    for c in runtime.list_containers(label_selector=selector):
        if c.state == ContainerState.CONTAINER_RUNNING:
            runtime.stop_container(c.id, 0, now)
    for sb in runtime.list_pod_sandbox(label_selector=selector):
        runtime.stop_pod_sandbox(sb.id, now)
    worker.terminated = True
    worker.waiting = {}


def remove_pod(runtime: ContainerRuntime, uid: str, now: int) -> None:
    """Remove the pod's sandboxes and containers (stopping them first if needed)."""
    for sb in runtime.list_pod_sandbox(label_selector={POD_UID_LABEL: uid}):
        runtime.remove_pod_sandbox(sb.id, now)


def kill_orphans(runtime: ContainerRuntime, known_uids: Iterable[str], now: int) -> list[str]:
    """Stop and remove the sandboxes of pods the kubelet does not know; returns their uids."""
    known = set(known_uids)
    orphans: list[str] = []
    for sb in runtime.list_pod_sandbox():
        uid = sb.labels.get(POD_UID_LABEL, sb.metadata.uid)
        if uid not in known and uid not in orphans:
            orphans.append(uid)
    for uid in orphans:
        remove_pod(runtime, uid, now)
    return orphans
