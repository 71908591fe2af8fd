"""Builders for controller-logic tests."""

from __future__ import annotations

import attrs

from kmodel.objects import (
    Container, ContainerPort, ContainerStatus, Deployment, DeploymentSpec, DeploymentStrategy, FrozenDict,
    LabelSelector, ObjectMeta, Pod, PodCondition, PodIP, PodSpec, PodStatus, PodTemplateSpec, ReplicaSet,
    ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment,
)


def pod(name: str, *, node: str = "", phase: str = "Running", ready: bool | None = None, ready_at: int | None = None,
        created: int | None = 0, restarts: int = 0, uid: str | None = None, ip: str = "", labels=None,
        annotations=None, deleted: int | None = None, ports=(), namespace: str = "default") -> Pod:
    conds = ()
    if ready is not None:
        conds = (PodCondition(type="Ready", status="True" if ready else "False", last_transition_time=ready_at),)
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid or f"uid-{name}", creation_timestamp=created,
                            deletion_timestamp=deleted, labels=FrozenDict(labels or {}),
                            annotations=FrozenDict(annotations or {})),
        spec=PodSpec(containers=(Container(name="c", image="img", ports=tuple(ports)),), node_name=node),
        status=PodStatus(phase=phase, conditions=conds, pod_ip=ip, pod_ips=(PodIP(ip=ip),) if ip else (),
                         container_statuses=(ContainerStatus(name="c", restart_count=restarts, ready=bool(ready)),)),
    )


TEMPLATE = PodTemplateSpec(metadata=ObjectMeta(labels=FrozenDict({"app": "web"})),
                           spec=PodSpec(containers=(Container(name="c", image="img:1"),)))


def deployment(replicas: int, *, surge="25%", unavailable="25%", image="img:1", generation=1,
               strategy="RollingUpdate", annotations=None) -> Deployment:
    tmpl = attrs.evolve(TEMPLATE, spec=attrs.evolve(TEMPLATE.spec, containers=(Container(name="c", image=image),)))
    return Deployment(
        metadata=ObjectMeta(name="web", namespace="default", uid="d-uid", generation=generation,
                            annotations=FrozenDict(annotations or {})),
        spec=DeploymentSpec(replicas=replicas, selector=LabelSelector(match_labels=FrozenDict({"app": "web"})),
                            template=tmpl,
                            strategy=DeploymentStrategy(type=strategy, rolling_update=RollingUpdateDeployment(
                                max_surge=surge, max_unavailable=unavailable) if strategy == "RollingUpdate" else None)),
    )


def replicaset(name: str, replicas: int, *, available: int | None = None, created: int = 0, annotations=None,
               image: str = "img:1") -> ReplicaSet:
    tmpl = attrs.evolve(TEMPLATE, spec=attrs.evolve(TEMPLATE.spec, containers=(Container(name="c", image=image),)))
    avail = replicas if available is None else available
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}", creation_timestamp=created,
                            annotations=FrozenDict(annotations or {})),
        spec=ReplicaSetSpec(replicas=replicas, template=tmpl),
        status=ReplicaSetStatus(replicas=replicas, ready_replicas=avail, available_replicas=avail),
    )
