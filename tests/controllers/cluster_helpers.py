"""Helpers for the workload-controller tests: manifests, an admin's hand on pod status, a checked stepper."""

from __future__ import annotations

import itertools
from typing import Any, Callable

import attrs

from kmodel.apiserver.wire import Request
from kmodel.objects import (
    Container, Deployment, DeploymentSpec, DeploymentStrategy, LabelSelector, ObjectMeta, PodCondition,
    PodSpec, PodTemplateSpec, ReplicaSet, ReplicaSetSpec, RollingUpdateDeployment, frozen_map,
)

_ids = itertools.count(1)


def template(image: str = "nginx:1", labels: dict | None = None) -> PodTemplateSpec:
    return PodTemplateSpec(metadata=ObjectMeta(labels=frozen_map(labels or {"app": "web"})),
                           spec=PodSpec(containers=(Container(name="c", image=image),)))


def deployment(replicas: int, *, image: str = "nginx:1", surge: Any = "25%", unavailable: Any = "25%",
               name: str = "web") -> Deployment:
    return Deployment(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=DeploymentSpec(replicas=replicas, selector=LabelSelector(match_labels=frozen_map({"app": "web"})),
                            template=template(image),
                            strategy=DeploymentStrategy(type="RollingUpdate", rolling_update=RollingUpdateDeployment(
                                max_surge=surge, max_unavailable=unavailable))))


def replicaset(replicas: int, *, name: str = "web", labels: dict | None = None) -> ReplicaSet:
    labels = labels or {"app": "web"}
    return ReplicaSet(metadata=ObjectMeta(name=name, namespace="default"),
                      spec=ReplicaSetSpec(replicas=replicas, selector=LabelSelector(match_labels=frozen_map(labels)),
                                          template=template(labels=labels)))


def admin(cluster: Any, verb: str, resource: str, *, namespace: str = "default", name: str = "",
          subresource: str = "", body: Any = None) -> Any:
    """A request straight through API server 0's pipeline as the admin (outside the loop), then wake etcd."""
    req = Request(-1000 - next(_ids), verb, resource, namespace, name, subresource, body, "admin-token")
    response = cluster.replicas[0].pipeline.handle(req, now=cluster.now, replica="test")
    cluster.etcd.poke()
    return response


def mark_ready(cluster: Any, pod: Any) -> None:
    """What a kubelet would report: Running and Ready since now."""
    cond = PodCondition(type="Ready", status="True", last_transition_time=cluster.now)
    new = attrs.evolve(pod, status=attrs.evolve(pod.status, phase="Running", conditions=(cond,)))
    r = admin(cluster, "update", "pods", name=pod.metadata.name, subresource="status", body=new)
    assert r.code == 200, r


def is_ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def live_pods(cluster: Any) -> list:
    return [p for p in cluster.objects("pods", "default") if p.metadata.deletion_timestamp is None]


def run_checked(cluster: Any, until_ms: int, check: Callable[[], None]) -> None:
    """Run fairly one event at a time, calling `check` after every event."""
    while cluster.loop.run_fair(until_ms, max_events=1):
        check()
