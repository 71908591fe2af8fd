"""Pod status: what the kubelet reports (generateAPIPodStatus, kubelet_pods.go) and how it reaches the API
(pkg/kubelet/status/status_manager.go).

Theory of operation
-------------------
`generate_status` is pure: from the pod, what the runtime shows of it (`PodView`: its newest sandbox, and
per container name its newest and previous instance), the readiness results and the waiting reasons the pod
worker decided (ContainerCreating, CrashLoopBackOff), it builds a PodStatus the way the kubelet does:

* phase (getPhase): Pending while a container waits without having run; Running while one runs; once all
  stopped: Succeeded / Failed for a pod being finished (deleted, or restartPolicy Never / OnFailure done),
  else Running (restartPolicy Always restarts them);
* conditions in upstream's order: Initialized (True: no init containers), Ready, ContainersReady (False with
  reason ContainersNotReady and `containers with unready status: [a b]` when a container is not ready;
  Ready is PodCompleted on a finished pod), PodScheduled True; lastTransitionTime kept from the previous
  status while a condition's status is unchanged;
* hostIP/hostIPs = the node IP, podIP/podIPs = the sandbox's IPs (the node IP for hostNetwork pods),
  startTime = when the kubelet first saw the pod (kept once set);
* containerStatuses in spec order: state (waiting / running / terminated, with CRI ids "containerd://<id>"),
  lastState (the previous instance's termination), ready, started, restartCount (the instance's attempt).

`StatusManager` keeps, per pod uid, the newest status the kubelet set and whether the API has it. Sending is
the component's (a GET of the pod, then a write of pods/status only when the merged status differs from the
stored one: `needs_update`), as the status manager's syncPod does (it PATCHes; the model PUTs the merged
status unconditionally, which is the same write). `merge_status` keeps what the kubelet does not own: the
pod conditions of other writers (e.g. DisruptionTarget) and an existing startTime.
"""

from __future__ import annotations

from typing import Callable, Optional

import attrs

from kmodel.kubelet.runtime import Container as CriContainer
from kmodel.kubelet.runtime import ContainerState as CriState
from kmodel.kubelet.runtime import PodSandbox
from kmodel.objects import Pod
from kmodel.objects.core import (
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, HostIP,
    PodCondition, PodIP, PodStatus,
)
from kmodel.objects.fastevolve import evolve

KUBELET_CONDITIONS = ("PodScheduled", "Ready", "Initialized", "ContainersReady", "PodReadyToStartContainers")
CONTAINER_ID_PREFIX = "containerd://"


@attrs.frozen
class PodView:
    """The runtime's view of one pod: its newest sandbox and, per container name, (newest, previous)."""

    sandbox: Optional[PodSandbox]
    containers: dict  # name -> tuple[CriContainer, Optional[CriContainer]]


def _terminated(c: CriContainer) -> ContainerStateTerminated:
    return ContainerStateTerminated(exit_code=c.exit_code, reason=c.reason, message=c.message,
                                    started_at=c.started_at or None, finished_at=c.finished_at,
                                    container_id=CONTAINER_ID_PREFIX + c.id)


def container_statuses(pod: Pod, view: PodView, ready: Callable[[str, CriContainer], bool],
                       waiting: dict) -> tuple:
    out = []
    for spec in pod.spec.containers:
        newest, previous = view.containers.get(spec.name, (None, None))
        last = ContainerState()
        if newest is None:
            reason, message = waiting.get(spec.name, ("ContainerCreating", ""))
            out.append(ContainerStatus(name=spec.name, state=ContainerState(
                waiting=ContainerStateWaiting(reason=reason, message=message)), ready=False, restart_count=0,
                image=spec.image, image_id="", started=False))
            continue
        if previous is not None and previous.state == CriState.CONTAINER_EXITED:
            last = ContainerState(terminated=_terminated(previous))
        cid = CONTAINER_ID_PREFIX + newest.id
        if newest.state == CriState.CONTAINER_RUNNING:
            state = ContainerState(running=ContainerStateRunning(started_at=newest.started_at))
            is_ready, started = ready(spec.name, newest), True
        elif newest.state == CriState.CONTAINER_EXITED and spec.name in waiting:
            # exited and waiting to be restarted (CrashLoopBackOff): the exit becomes lastState
            reason, message = waiting[spec.name]
            state = ContainerState(waiting=ContainerStateWaiting(reason=reason, message=message))
            last = ContainerState(terminated=_terminated(newest))
            is_ready, started = False, False
        elif newest.state == CriState.CONTAINER_EXITED:
            state = ContainerState(terminated=_terminated(newest))
            is_ready, started = False, False
        else:
            state = ContainerState(waiting=ContainerStateWaiting(reason="ContainerCreating"))
            is_ready, started = False, False
        out.append(ContainerStatus(name=spec.name, state=state, last_state=last, ready=is_ready,
                                   restart_count=newest.metadata.attempt, image=spec.image, image_id="",
                                   container_id=cid, started=started))
    return tuple(out)


def phase(pod: Pod, statuses: tuple, finished: bool) -> str:
    """getPhase over the container statuses; `finished`: the pod is being terminated for good."""
    waiting = running = stopped = succeeded = 0
    for cs in statuses:
        st = cs.state
        if st.running is not None:
            running += 1
        elif st.terminated is not None:
            stopped += 1
            if st.terminated.exit_code == 0:
                succeeded += 1
        elif st.waiting is not None:
            if cs.last_state.terminated is not None:
                stopped += 1
                if cs.last_state.terminated.exit_code == 0:
                    succeeded += 1
            else:
                waiting += 1
    if waiting > 0 and not finished:
        return "Pending"
    if running > 0:
        return "Running"
    if stopped > 0 or finished:
        if finished:
            return "Succeeded" if stopped == succeeded and waiting == 0 else "Failed"
        policy = pod.spec.restart_policy or "Always"
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "OnFailure":
            return "Running"
        return "Failed"
    return "Pending"


def _condition(typ: str, status: str, now: int, old: dict, reason: str = "", message: str = "") -> PodCondition:
    before = old.get(typ)
    transition = before.last_transition_time if before is not None and before.status == status else now
    return PodCondition(type=typ, status=status, last_transition_time=transition, reason=reason, message=message)


def generate_status(pod: Pod, view: PodView, ready: Callable[[str, CriContainer], bool], waiting: dict,
                    node_ip: str, now: int, old: PodStatus, finished: bool = False) -> PodStatus:
    """The status the kubelet sets for `pod` (see the module docstring)."""
    statuses = container_statuses(pod, view, ready, waiting)
    ph = phase(pod, statuses, finished)
    previous = {c.type: c for c in old.conditions}
    unready = [cs.name for cs in statuses if not cs.ready]
    conditions = [_condition("Initialized", "True", now, previous)]
    if ph == "Succeeded" or (finished and ph == "Failed" and not any(cs.state.running for cs in statuses)):
        ready_cond = _condition("Ready", "False", now, previous, "PodCompleted")
        cready = _condition("ContainersReady", "False", now, previous, "PodCompleted")
    elif unready:
        message = f"containers with unready status: [{' '.join(unready)}]"
        ready_cond = _condition("Ready", "False", now, previous, "ContainersNotReady", message)
        cready = _condition("ContainersReady", "False", now, previous, "ContainersNotReady", message)
    else:
        ready_cond = _condition("Ready", "True", now, previous)
        cready = _condition("ContainersReady", "True", now, previous)
    conditions += [ready_cond, cready, _condition("PodScheduled", "True", now, previous)]
    sandbox = view.sandbox
    if pod.spec.host_network:
        ips: tuple[str, ...] = (node_ip,)
    elif sandbox is not None and sandbox.ips:
        ips = sandbox.ips
    else:
        ips = tuple(ip.ip for ip in old.pod_ips)  # keep the last known IPs (upstream keeps them too)
    return evolve(
        old, phase=ph, conditions=tuple(conditions), host_ip=node_ip, host_ips=(HostIP(ip=node_ip),),
        pod_ip=ips[0] if ips else "", pod_ips=tuple(PodIP(ip=i) for i in ips),
        start_time=old.start_time if old.start_time is not None else now, container_statuses=statuses)


def merge_status(api: PodStatus, kubelet: PodStatus) -> PodStatus:
    """mergePodStatus: the kubelet's status plus the conditions it does not own, from the stored status."""
    others = tuple(c for c in api.conditions if c.type not in KUBELET_CONDITIONS)
    mine = tuple(c for c in kubelet.conditions if c.type in KUBELET_CONDITIONS)
    start = api.start_time if api.start_time is not None else kubelet.start_time
    return evolve(kubelet, conditions=mine + others, start_time=start, qos_class=api.qos_class,
                        nominated_node_name=api.nominated_node_name)


class StatusManager:
    """Per pod uid: the newest status set, where it goes in the API, and whether a write is outstanding."""

    def __init__(self) -> None:
        self.statuses: dict[str, PodStatus] = {}
        self.targets: dict[str, tuple[str, str]] = {}  # uid -> (namespace, name) of the API pod (mirror for static)
        self.dirty: dict[str, None] = {}  # uids whose newest status the API may not have
        self.in_flight: dict[str, None] = {}

    def set_status(self, uid: str, namespace: str, name: str, status: PodStatus) -> bool:
        """SetPodStatus; True when this is news (the caller queues a sync)."""
        self.targets[uid] = (namespace, name)
        if self.statuses.get(uid) == status:
            return False
        self.statuses[uid] = status
        self.dirty[uid] = None
        return True

    def get(self, uid: str) -> Optional[PodStatus]:
        return self.statuses.get(uid)

    def forget(self, uid: str) -> None:
        self.statuses.pop(uid, None)
        self.targets.pop(uid, None)
        self.dirty.pop(uid, None)
        self.in_flight.pop(uid, None)
