"""service-reachability owes a Service's TCP port endpoints only among the pods that have its targetPort: a named
targetPort only a pod declaring a TCP container port of that name has (upstream's podutil.FindPort, which the
Endpoints and EndpointSlice controllers call). The 5-step trace a --fix all run found before the rule: web's
Service patched to target the port named `http`, which web's pods do not declare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from kmodel.checker.session import Session, all_invariants
from kmodel.checker.trace import fitted, read_trace
from kmodel.invariants.registry import REGISTRY
from kmodel.objects.core import ContainerPort

TRACE = Path(__file__).parents[1] / "checker" / "fixtures" / "service-target-port-named-no-pod-declares.json"


def _settled() -> Any:
    trace = read_trace(TRACE)
    session = Session(trace.config, all_invariants())
    for action in fitted(trace, session.boot_revision).actions:
        session.execute(action)
    assert session.violation is None
    return session.cluster


class _PodsDeclaring:
    """The settled cluster as the invariant reads it, but with web's pods declaring the port named `http`."""

    def __init__(self, cluster: Any) -> None:
        self._cluster = cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)

    def objects(self, resource: str, *args: Any) -> list:
        found = self._cluster.objects(resource, *args)
        if resource != "pods":
            return found
        named = ContainerPort(name="http", container_port=80, protocol="TCP")
        return [attrs.evolve(p, spec=attrs.evolve(p.spec, containers=tuple(
            attrs.evolve(c, ports=(*c.ports, named)) for c in p.spec.containers))) for p in found]


def test_pods_without_the_named_target_port_are_owed_no_endpoints():
    cluster = _settled()
    web = cluster.get("services", "default", "web")
    assert [p.target_port for p in web.spec.ports] == ["http"]
    assert not cluster.loop.components["traffic/node-1"].route("default/web").destinations
    assert list(REGISTRY["service-reachability"].check(cluster, {})) == []


def test_pods_that_declare_the_named_target_port_are_owed_endpoints():
    found = list(REGISTRY["service-reachability"].check(_PodsDeclaring(_settled()), {}))
    assert len(found) == 1 and "goes nowhere (no endpoints), though 2 of its pods are ready" in found[0]
