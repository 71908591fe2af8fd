"""Builders for scheduler tests (like upstream's st.MakePod / st.MakeNode)."""

from __future__ import annotations

from kmodel.objects import (
    Container, ContainerPort, FrozenDict, Node, NodeSpec, NodeStatus, ObjectMeta, Pod, PodSpec,
    ResourceRequirements, Taint, Toleration, parse_quantity,
)


def rl(**amounts) -> FrozenDict:
    """A ResourceList: rl(cpu="10m", memory="20") ; use ephemeral_storage for ephemeral-storage."""
    return FrozenDict({k.replace("_", "-"): parse_quantity(str(v)) for k, v in amounts.items()})


def container(requests: dict | None = None, ports=(), name: str = "c") -> Container:
    return Container(
        name=name,
        resources=ResourceRequirements(requests=FrozenDict(requests or {})),
        ports=tuple(ports),
    )


def pod(
    name: str = "p",
    containers=(),
    init_containers=(),
    tolerations=(),
    node_selector: dict | None = None,
    node_name: str = "",
    uid: str = "",
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=uid or name),
        spec=PodSpec(
            containers=tuple(containers),
            init_containers=tuple(init_containers),
            tolerations=tuple(tolerations),
            node_selector=FrozenDict(node_selector or {}),
            node_name=node_name,
        ),
    )


def resource_pod(*usages: dict, name: str = "p", init: tuple = ()) -> Pod:
    """newResourcePod / newResourceInitPod: one container per usage dict (milli cpu, memory, extended...)."""
    return pod(
        name=name,
        containers=[container(_usage(u)) for u in usages],
        init_containers=[container(_usage(u)) for u in init],
    )


def _usage(u: dict) -> FrozenDict:
    out = {}
    for k, v in u.items():
        if k == "cpu":
            out["cpu"] = parse_quantity(f"{v}m")
        else:
            out[k] = parse_quantity(str(v))
    return FrozenDict(out)


def port_pod(*specs: str, name: str = "p") -> Pod:
    """newPod(host, "UDP/127.0.0.1/8080", ...)."""
    ports = []
    for s in specs:
        proto, ip, port = s.split("/")
        ports.append(ContainerPort(protocol=proto, host_ip=ip, host_port=int(port), container_port=int(port)))
    return pod(name=name, containers=[container(ports=ports)])


def node(
    name: str = "n",
    allocatable: dict | None = None,
    taints=(),
    unschedulable: bool = False,
    labels: dict | None = None,
) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels=FrozenDict(labels or {})),
        spec=NodeSpec(taints=tuple(taints), unschedulable=unschedulable),
        status=NodeStatus(allocatable=FrozenDict(allocatable or {})),
    )


def allocatable(milli_cpu: int, memory: int, pods: int, **extra) -> FrozenDict:
    """makeAllocatableResources."""
    out = {
        "cpu": parse_quantity(f"{milli_cpu}m"),
        "memory": parse_quantity(str(memory)),
        "pods": parse_quantity(str(pods)),
    }
    for k, v in extra.items():
        out[k] = parse_quantity(str(v))
    return FrozenDict(out)


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Taint:
    return Taint(key=key, value=value, effect=effect)


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect)
