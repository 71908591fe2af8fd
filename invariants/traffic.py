"""Traffic invariants: what an in-cluster client's requests reach (kmodel.traffic).

service-reachability is a liveness invariant: it is asked once faults have healed and the cluster has run
fairly to quiescence (the checker's settle), and it judges the *next* request each client would send, against
the state the cluster has settled in, rather than requests already sent: a request sent while the cluster was
still converging may rightly have gone nowhere, the one sent now may not. Every address the next request may
be sent to is judged (each backend of the node's rule, since iptables may pick any of them; or the one
address a client keeps), so the verdict does not depend on which backend a random pick would have chosen.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import condition, is_terminal
from kmodel.invariants.records import declares, record
from kmodel.invariants.registry import LIVENESS, invariant
from kmodel.traffic.client import SERVICE_PORT


MIRROR_ANNOTATION = "kubernetes.io/config.mirror"  # a mirror pod's: the uid of the static pod the node runs


def _ready_pods_of(cluster: Any, service: Any, port: int) -> dict[str, Any]:
    """uid -> pod, for the Service's selected pods that are ready, live and not being deleted (from the store),
    and that have a port for the Service's TCP port `port` (`_has_target`). A mirror pod is keyed by its static
    pod's uid too: that is the uid the node's sandbox carries."""
    selector = service.spec.selector
    if not selector:
        return {}
    target = next(p.target_port for p in service.spec.ports if p.port == port and p.protocol in ("", "TCP"))
    ready = {}
    for pod in cluster.objects("pods", service.metadata.namespace):
        if is_terminal(pod) or pod.metadata.deletion_timestamp is not None:
            continue
        if any(pod.metadata.labels.get(k) != v for k, v in selector.items()):
            continue
        if not _has_target(pod, target):
            continue
        c = condition(pod, "Ready")
        if c is not None and c.status == "True":
            ready[pod.metadata.uid] = pod
            static_uid = pod.metadata.annotations.get(MIRROR_ANNOTATION)
            if static_uid:
                ready[static_uid] = pod
    return ready


def _has_target(pod: Any, target: int | str | None) -> bool:
    """Does `pod` have the Service port's targetPort? A number (or none: the port itself) every pod has; a name
    only a pod with a TCP container port of that name (upstream's podutil.FindPort, the one the EndpointSlice
    and Endpoints controllers call; a pod without it is no endpoint of that port; upstream also searches
    sidecars, init containers that keep running, which the model's pods do not have)."""
    if not isinstance(target, str) or not target:
        return True
    return any(p.name == target and p.protocol in ("", "TCP") for c in pod.spec.containers for p in c.ports)


def _serves(service: Any, port: int) -> bool:
    """Does the Service have the TCP port `port` (the protocol defaults to TCP)?"""
    return any(p.port == port and p.protocol in ("", "TCP") for p in service.spec.ports)


def _clients(cluster: Any) -> list:
    """The traffic clients that are up, on nodes still in the cluster, by name."""
    loop = cluster.loop
    removed = set(cluster.removed_nodes)
    return [c for name, c in sorted(loop.components.items())
            if declares(c, "targets") and loop.is_up(name) and record(c, "node") not in removed]


@invariant("service-reachability", kind=LIVENESS, principle="network model")
def service_reachability(cluster: Any, memo: dict) -> Iterator[str]:
    """Every request an in-cluster client sends to a Service that has ready pods reaches a ready pod of that
    Service.

    Judged on each client's next request to each of its target Services (`TrafficClient.route`: every address
    it may go to), against the settled state: the pod the data plane delivers it to (`DataPlane.pod_at`) must
    be one of the Service's selected pods that the store shows Ready and not being deleted, and that has the
    port's targetPort (a targetPort by name only a pod declaring a TCP container port of that name has: a
    Service whose selected pods have none is owed no endpoints, as upstream's). A Service that no
    longer serves the port the clients send to (SERVICE_PORT, TCP: its ports edited) is not judged: the kernel
    rightly refuses a request to a port no Service rule has; nor is a headless Service (clusterIP None): the model's
    clients address Services by their virtual IP only, and it has none (its clients would look its pods up in DNS,
    which the model does not have); nor is a Service being deleted that a finalizer keeps: upstream's EndpointSlice
    controller makes no slice for it (its reconciler's finalize skips creates while the Service has a
    deletionTimestamp, so as not to race the garbage collector), and it serves until its slices are gone."""
    for client in _clients(cluster):
        for target in record(client, "targets"):
            namespace, _, name = target.partition("/")
            service = cluster.get("services", namespace, name)
            if service is None or not _serves(service, SERVICE_PORT) or service.spec.cluster_ip == "None":
                continue  # a headless Service has no virtual IP: its clients resolve its pods' IPs by DNS
            if service.metadata.deletion_timestamp is not None:
                continue  # being deleted: owed no new slices (see the docstring)
            ready = _ready_pods_of(cluster, service, SERVICE_PORT)
            if not ready:
                continue
            route = client.route(target)
            who = f"{client.name}'s request to service {target}"
            if not route.destinations:
                names = sorted({p.metadata.name for p in ready.values()})
                yield f"{who} goes nowhere ({route.error}), though {len(names)} of its pods are ready: {', '.join(names)}"
                continue
            for destination in route.destinations:
                reached = client.deliver(destination)
                if reached is None:
                    count = len({id(p) for p in ready.values()})
                    yield (f"{who} goes to {destination} (via {route.via}), where no running pod answers, though "
                           f"{count} of its pods are ready")
                elif reached.uid not in ready or reached.namespace != namespace:
                    yield (f"{who} goes to {destination} (via {route.via}) and reaches {reached}, which is not a "
                           f"ready pod of the service")
