"""A CRI-shaped container runtime (containerd as the kubelet sees it) as a deterministic in-memory value.

Shaped after staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto (RuntimeService) with containerd's
behaviour where the spec leaves room.

Theory of operation
-------------------
The runtime stands for the node's real processes: pod sandboxes (a pause process holding the network namespace)
and containers. It is owned by the node, not by the kubelet, so a kubelet crash loses none of it; a restarted
kubelet rebuilds its view by listing sandboxes and containers and reading their labels and metadata, exactly as
the real kubelet does. A node reboot (reboot()) is the one fault that ends the processes.

States follow the CRI enums: a sandbox is SANDBOX_READY from RunPodSandbox until StopPodSandbox, then
SANDBOX_NOTREADY; a container is CONTAINER_CREATED after CreateContainer, CONTAINER_RUNNING after
StartContainer, CONTAINER_EXITED once its process ends (StopContainer, the fault hooks, its sandbox stopping,
a reboot), and CONTAINER_UNKNOWN is reserved for a container whose state the runtime lost. Transitions:

    CreateContainer  -> CREATED --StartContainer--> RUNNING --StopContainer / exit / fault--> EXITED
    RemoveContainer: any state -> gone (a running container is killed first)

Ids come from one counter (sandbox "s1", container "c2", ...), never from randomness, so runs replay. Times are
logical milliseconds passed in by the caller (`now`); the runtime never reads a clock. Restart counts are what CRI
has: ContainerMetadata.attempt, chosen by the kubelet at CreateContainer; restart_count() reads the highest
attempt of a container name in a pod.

Networking, as in containerd: RunPodSandbox of a pod that is not hostNetwork calls the CNI plugin's ADD for
interface eth0 in the sandbox's netns and records the IP; if ADD fails the sandbox is torn down and the error is
`failed to setup network for sandbox "<id>": plugin type="bridge" name="<net>" failed (add): <cni error>`.
StopPodSandbox kills the sandbox's containers and calls CNI DEL once (the netns is then gone; further stops do
not call it again). RemovePodSandbox stops the sandbox first, then removes it and its containers.

Idempotence, per the CRI comments: StopPodSandbox, RemovePodSandbox, StopContainer and RemoveContainer succeed on
something already stopped or removed (containerd answers NotFound to StopPodSandbox on an unknown id; so does the
model). Errors are CRIError with a gRPC code name and a message modelled on containerd's.

Fault hooks (not CRI calls; the explorer's actions): exit_container (the process ends by itself, reason Completed
for code 0 else Error), fail_container (the process dies with a code, e.g. 137 and reason OOMKilled or Error),
set_probe_health (a container instance answers its liveness or readiness probes with failure), reboot (every process ends: running containers become EXITED with code 255 and reason Unknown, sandboxes
NOTREADY, their network namespaces are closed; the host-local files on disk stay reserved until the kubelet stops
or removes each old sandbox, when containerd still calls CNI DEL, with an empty netns path as the spec allows).

Differences from upstream: no images, logs, exec, attach, port-forward, stats, cgroups, checkpoints, events or
streaming; StopContainer does not wait for a grace period (the caller models the timeout and passes the exit
code); timestamps are logical milliseconds, not nanoseconds; ids are short counters, not 64-hex digests; error
texts follow containerd's shape but are not byte-exact in every case.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence

from kmodel.kubelet.cni import PLUGIN_TYPE, BridgeCNI, CNIError

DEFAULT_IFNAME = "eth0"


class ContainerState(enum.IntEnum):
    CONTAINER_CREATED = 0
    CONTAINER_RUNNING = 1
    CONTAINER_EXITED = 2
    CONTAINER_UNKNOWN = 3


class PodSandboxState(enum.IntEnum):
    SANDBOX_READY = 0
    SANDBOX_NOTREADY = 1


class CRIError(Exception):
    """A failed CRI call: a gRPC status code name (NotFound, FailedPrecondition, Unknown, ...) and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"rpc error: code = {self.code} desc = {self.message}"


@dataclass(frozen=True)
class PodSandboxMetadata:
    name: str
    uid: str
    namespace: str
    attempt: int = 0


@dataclass(frozen=True)
class PortMapping:
    """CRI's PortMapping: a container port the sandbox publishes on the node (host_port 0: not published)."""

    protocol: str
    container_port: int
    host_port: int = 0
    host_ip: str = ""


@dataclass(frozen=True)
class SandboxResources:
    """What the sandbox holds of the node: the pod's requests (milli-CPU, bytes of memory). Stands for CRI's
    LinuxPodSandboxConfig.resources (the sum of the containers' resources), kept as requests, which is what
    the node's allocatable is judged against."""

    milli_cpu: int = 0
    memory: int = 0


@dataclass(frozen=True)
class PodSandboxConfig:
    """The part of CRI's PodSandboxConfig the model uses; host_network is namespace_options.network == NODE."""

    metadata: PodSandboxMetadata
    hostname: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    host_network: bool = False
    port_mappings: tuple[PortMapping, ...] = ()
    resources: SandboxResources = SandboxResources()


@dataclass(frozen=True)
class ContainerMetadata:
    name: str
    attempt: int = 0


@dataclass(frozen=True)
class ContainerConfig:
    metadata: ContainerMetadata
    image: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PodSandbox:
    """ListPodSandbox's item and PodSandboxStatus in one (network IPs, with the primary first)."""

    id: str
    metadata: PodSandboxMetadata
    state: PodSandboxState
    created_at: int
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    ips: tuple[str, ...] = ()
    netns: str = ""
    host_network: bool = False
    netns_closed: bool = False
    port_mappings: tuple[PortMapping, ...] = ()
    resources: SandboxResources = SandboxResources()

    @property
    def ip(self) -> str:
        return self.ips[0] if self.ips else ""


@dataclass(frozen=True)
class Container:
    """ListContainers' item and ContainerStatus in one."""

    id: str
    pod_sandbox_id: str
    metadata: ContainerMetadata
    image: str
    state: ContainerState
    created_at: int
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    started_at: int = 0
    finished_at: int = 0
    exit_code: int = 0
    reason: str = ""
    message: str = ""


def _matches(labels: Mapping[str, str], selector: Optional[Mapping[str, str]]) -> bool:
    return not selector or all(labels.get(k) == v for k, v in selector.items())


def _beside_uid(selector: Mapping[str, str]) -> Optional[Mapping[str, str]]:
    """What a label selector asks beyond the pod uid, for items found by the uid's index (which all carry it):
    nothing when the uid is all it asks (the kubelet's every list of one pod's sandboxes and containers)."""
    return selector if len(selector) > 1 else None


#: the label the kubelet puts on every sandbox and container it creates, and selects by in every list it makes
#: of one pod's sandboxes and containers (kuberuntime's ListPodSandbox/ListContainers with the pod's uid)
POD_UID_LABEL = "io.kubernetes.pod.uid"


def _index_add(index: dict[str, dict[str, None]], key: Optional[str], item_id: str) -> None:
    if key is not None:
        index.setdefault(key, {})[item_id] = None


def _index_remove(index: dict[str, dict[str, None]], key: Optional[str], item_id: str) -> None:
    ids = index.get(key) if key is not None else None
    if ids is not None:
        ids.pop(item_id, None)
        if not ids:
            del index[key]  # type: ignore[arg-type]


class ContainerRuntime:
    """The node's runtime: sandboxes and containers keyed by id, in creation order, plus the CNI plugin.

    Lists filtered by a pod's uid label and a sandbox's containers are found through indexes (ids in creation
    order, as the records are), so a lookup costs the pod's own records, not the node's: the kubelet lists one
    pod's records at every sync of it. The records themselves, `sandboxes` and `containers`, are read-only
    outside this class: the indexes follow only its own changes."""

    __slots__ = ("cni", "sandboxes", "containers", "_next_id", "unhealthy", "generation",
                 "_sandboxes_by_uid", "_containers_by_uid", "_containers_by_sandbox")

    def __init__(self, cni: Optional[BridgeCNI] = None) -> None:
        self.cni = cni
        #: moves whenever a sandbox is created, stopped or removed (invariants re-examine a node only then)
        self.generation = 0
        self.sandboxes: dict[str, PodSandbox] = {}
        self.containers: dict[str, Container] = {}
        self._next_id = 1
        self.unhealthy: dict[tuple[str, str], None] = {}  # (container id, probe kind) whose probes fail
        self._sandboxes_by_uid: dict[str, dict[str, None]] = {}  # POD_UID_LABEL value -> sandbox ids
        self._containers_by_uid: dict[str, dict[str, None]] = {}  # POD_UID_LABEL value -> container ids
        self._containers_by_sandbox: dict[str, dict[str, None]] = {}  # sandbox id -> its container ids

    def _new_id(self, prefix: str) -> str:
        n = self._next_id
        self._next_id += 1
        return f"{prefix}{n}"

    # -- sandboxes ------------------------------------------------------------------------------------------------

    def run_pod_sandbox(self, config: PodSandboxConfig, now: int = 0) -> str:
        """RunPodSandbox: a READY sandbox with its network set up; returns its id."""
        sid = self._new_id("s")
        netns = f"/var/run/netns/cni-{sid}"
        ips: tuple[str, ...] = ()
        if not config.host_network and self.cni is not None:
            try:
                ips = self.cni.add(sid, netns, DEFAULT_IFNAME).pod_ips
            except CNIError as err:
                # containerd tears the half-made sandbox down (teardown calls CNI DEL) and reports the failure.
                self.cni.delete(sid, netns, DEFAULT_IFNAME)
                raise CRIError(
                    "Unknown",
                    f'failed to setup network for sandbox "{sid}": plugin type="{PLUGIN_TYPE}" '
                    f'name="{self.cni.network_name}" failed (add): {err}',
                ) from None
        self.sandboxes[sid] = PodSandbox(
            sid, config.metadata, PodSandboxState.SANDBOX_READY, now, dict(config.labels),
            dict(config.annotations), ips, "" if config.host_network else netns, config.host_network,
            port_mappings=config.port_mappings, resources=config.resources,
        )
        _index_add(self._sandboxes_by_uid, config.labels.get(POD_UID_LABEL), sid)
        self.generation += 1
        return sid

    def sandbox_containers(self, sandbox_id: str) -> list[Container]:
        """The sandbox's containers, in creation order."""
        return [self.containers[cid] for cid in self._containers_by_sandbox.get(sandbox_id, ())]

    def _sandbox(self, sandbox_id: str) -> PodSandbox:
        sb = self.sandboxes.get(sandbox_id)
        if sb is None:
            raise CRIError("NotFound", f'an error occurred when try to find sandbox "{sandbox_id}": not found')
        return sb

    def stop_pod_sandbox(self, sandbox_id: str, now: int = 0) -> None:
        """StopPodSandbox: kill its containers, tear the network down (once), mark it NOTREADY. Idempotent."""
        sb = self._sandbox(sandbox_id)
        for c in self.sandbox_containers(sandbox_id):
            if c.state == ContainerState.CONTAINER_RUNNING:
                self._exit(c.id, 137, "Error", "", now)
        if sb.netns:
            # containerd: teardown even when the netns is already closed (after a reboot), with netns path "".
            if self.cni is not None and not sb.host_network:
                self.cni.delete(sandbox_id, "" if sb.netns_closed else sb.netns, DEFAULT_IFNAME)
            sb = replace(sb, netns="", netns_closed=False)
        self.sandboxes[sandbox_id] = replace(sb, state=PodSandboxState.SANDBOX_NOTREADY)
        self.generation += 1

    def remove_pod_sandbox(self, sandbox_id: str, now: int = 0) -> None:
        """RemovePodSandbox: stop it if needed, then remove it and all its containers. Idempotent."""
        if sandbox_id not in self.sandboxes:
            return
        self.stop_pod_sandbox(sandbox_id, now)
        for c in self.sandbox_containers(sandbox_id):
            self._forget_container(c)
        sb = self.sandboxes.pop(sandbox_id)
        _index_remove(self._sandboxes_by_uid, sb.labels.get(POD_UID_LABEL), sandbox_id)
        self.generation += 1

    def pod_sandbox_status(self, sandbox_id: str) -> PodSandbox:
        """PodSandboxStatus."""
        return self._sandbox(sandbox_id)

    def list_pod_sandbox(
        self,
        id: str = "",  # noqa: A002 (CRI's field name)
        state: Optional[PodSandboxState] = None,
        label_selector: Optional[Mapping[str, str]] = None,
    ) -> list[PodSandbox]:
        """ListPodSandbox with PodSandboxFilter (id, state, label selector), in creation order."""
        uid = label_selector.get(POD_UID_LABEL) if label_selector else None
        if uid is None:
            candidates: Any = self.sandboxes.values()
        else:
            candidates = [self.sandboxes[sid] for sid in self._sandboxes_by_uid.get(uid, ())]
            label_selector = _beside_uid(label_selector)
        return [
            sb for sb in candidates
            if (not id or sb.id == id) and (state is None or sb.state == state) and _matches(sb.labels, label_selector)
        ]

    # -- containers -----------------------------------------------------------------------------------------------

    def create_container(self, pod_sandbox_id: str, config: ContainerConfig, now: int = 0) -> str:
        """CreateContainer: a CREATED container in a READY sandbox; returns its id."""
        sb = self._sandbox(pod_sandbox_id)
        if sb.state != PodSandboxState.SANDBOX_READY:
            raise CRIError("Unknown", f'sandbox container "{pod_sandbox_id}" is not running')
        md = config.metadata
        for c in self.sandbox_containers(pod_sandbox_id):
            if c.metadata == md:
                raise CRIError(
                    "Unknown",
                    f'failed to reserve container name "{md.name}_{sb.metadata.name}_{sb.metadata.namespace}_'
                    f'{sb.metadata.uid}_{md.attempt}": name is reserved for "{c.id}"',
                )
        cid = self._new_id("c")
        self.containers[cid] = Container(
            cid, pod_sandbox_id, md, config.image, ContainerState.CONTAINER_CREATED, now,
            dict(config.labels), dict(config.annotations),
        )
        _index_add(self._containers_by_uid, config.labels.get(POD_UID_LABEL), cid)
        _index_add(self._containers_by_sandbox, pod_sandbox_id, cid)
        return cid

    def _forget_container(self, c: Container) -> None:
        del self.containers[c.id]
        _index_remove(self._containers_by_uid, c.labels.get(POD_UID_LABEL), c.id)
        _index_remove(self._containers_by_sandbox, c.pod_sandbox_id, c.id)

    def _container(self, container_id: str) -> Container:
        c = self.containers.get(container_id)
        if c is None:
            raise CRIError("NotFound", f'an error occurred when try to find container "{container_id}": not found')
        return c

    def start_container(self, container_id: str, now: int = 0) -> None:
        """StartContainer: CREATED -> RUNNING; any other state is an error."""
        c = self._container(container_id)
        if c.state != ContainerState.CONTAINER_CREATED:
            raise CRIError(
                "Unknown",
                f'failed to start container "{container_id}": container is in {c.state.name} state',
            )
        if self.sandboxes[c.pod_sandbox_id].state != PodSandboxState.SANDBOX_READY:
            raise CRIError("Unknown", f'sandbox container "{c.pod_sandbox_id}" is not running')
        self.containers[container_id] = replace(c, state=ContainerState.CONTAINER_RUNNING, started_at=now)

    def stop_container(self, container_id: str, exit_code: int = 0, now: int = 0) -> None:
        """StopContainer: a RUNNING container exits with exit_code (0: it honoured SIGTERM; 137: killed after the
        timeout). A container that is not running is left as it is. Idempotent; NotFound for an unknown id."""
        c = self._container(container_id)
        if c.state in (ContainerState.CONTAINER_RUNNING, ContainerState.CONTAINER_UNKNOWN):
            self._exit(container_id, exit_code, "Completed" if exit_code == 0 else "Error", "", now)

    def remove_container(self, container_id: str, now: int = 0) -> None:
        """RemoveContainer: kill it if running, then forget it. Idempotent."""
        c = self.containers.get(container_id)
        if c is None:
            return
        if c.state == ContainerState.CONTAINER_RUNNING:
            self._exit(container_id, 137, "Error", "", now)
        self._forget_container(self.containers[container_id])

    def container_status(self, container_id: str) -> Container:
        """ContainerStatus."""
        return self._container(container_id)

    def list_containers(
        self,
        id: str = "",  # noqa: A002
        state: Optional[ContainerState] = None,
        pod_sandbox_id: str = "",
        label_selector: Optional[Mapping[str, str]] = None,
    ) -> list[Container]:
        """ListContainers with ContainerFilter (id, state, pod sandbox id, label selector), in creation order."""
        uid = label_selector.get(POD_UID_LABEL) if label_selector else None
        if uid is None:
            candidates: Any = self.containers.values()
        else:
            candidates = [self.containers[cid] for cid in self._containers_by_uid.get(uid, ())]
            label_selector = _beside_uid(label_selector)
        return [
            c for c in candidates
            if (not id or c.id == id)
            and (state is None or c.state == state)
            and (not pod_sandbox_id or c.pod_sandbox_id == pod_sandbox_id)
            and _matches(c.labels, label_selector)
        ]

    def restart_count(self, pod_uid: str, container_name: str) -> int:
        """The highest attempt among the containers with this name in the pod's sandboxes (0 if none)."""
        attempts = [
            c.metadata.attempt for c in self.containers.values()
            if c.metadata.name == container_name and self.sandboxes[c.pod_sandbox_id].metadata.uid == pod_uid
        ]
        return max(attempts, default=0)

    # -- faults ---------------------------------------------------------------------------------------------------

    def _exit(self, container_id: str, exit_code: int, reason: str, message: str, now: int) -> None:
        c = self.containers[container_id]
        self.containers[container_id] = replace(
            c, state=ContainerState.CONTAINER_EXITED, finished_at=now, exit_code=exit_code, reason=reason,
            message=message,
        )

    def exit_container(self, container_id: str, exit_code: int = 0, now: int = 0) -> None:
        """Fault hook: the running process ends by itself (reason Completed for 0, else Error)."""
        self.fail_container(container_id, exit_code, "Completed" if exit_code == 0 else "Error", "", now)

    def fail_container(
        self, container_id: str, exit_code: int, reason: str = "Error", message: str = "", now: int = 0
    ) -> None:
        """Fault hook: the running process dies with exit_code (reason e.g. Error or OOMKilled)."""
        c = self._container(container_id)
        if c.state != ContainerState.CONTAINER_RUNNING:
            raise CRIError("FailedPrecondition", f'container "{container_id}" is not running')
        self._exit(container_id, exit_code, reason, message, now)

    def reboot(self, now: int = 0) -> None:
        """Fault hook: the node restarts. Every process ends and every netns closes; the records and the CNI disk
        survive (see the module docstring)."""
        for c in list(self.containers.values()):
            if c.state == ContainerState.CONTAINER_RUNNING:
                self._exit(c.id, 255, "Unknown", "", now)
        for sid, sb in list(self.sandboxes.items()):
            self.sandboxes[sid] = replace(sb, state=PodSandboxState.SANDBOX_NOTREADY, netns_closed=bool(sb.netns))
        self.generation += 1

    def set_probe_health(self, container_id: str, kind: str, healthy: bool) -> None:
        """Fault hook: make the probes of `kind` ("liveness", "readiness") of this container instance fail (or
        pass again). A restarted container is a new instance, healthy until marked."""
        self._container(container_id)
        if healthy:
            self.unhealthy.pop((container_id, kind), None)
        else:
            self.unhealthy[(container_id, kind)] = None

    def probe_healthy(self, container_id: str, kind: str) -> bool:
        """What a probe of `kind` finds: the container is running and not marked unhealthy."""
        c = self.containers.get(container_id)
        return c is not None and c.state == ContainerState.CONTAINER_RUNNING and \
            (container_id, kind) not in self.unhealthy

    def ready_sandboxes(self) -> list[PodSandbox]:
        """The READY sandboxes, in creation order: the pods this node runs (a view for invariants)."""
        return [sb for sb in self.sandboxes.values() if sb.state == PodSandboxState.SANDBOX_READY]

    def running(self) -> list[Container]:
        """The running containers, in creation order (a view for invariants)."""
        return [c for c in self.containers.values() if c.state == ContainerState.CONTAINER_RUNNING]


__all__: Sequence[str] = (
    "Container", "ContainerConfig", "ContainerMetadata", "ContainerRuntime", "ContainerState", "CRIError",
    "PodSandbox", "PodSandboxConfig", "PodSandboxMetadata", "PodSandboxState", "PortMapping", "SandboxResources",
)
