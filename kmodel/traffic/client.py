"""An in-cluster client: a workload on one node that calls Services by name, every 5 s, through the data plane.

Theory of operation
-------------------
`TrafficClient` ("traffic/<node>") stands for an application process on a node that depends on other
workloads and reaches them the way Kubernetes means it to: by the Service's name. Every `PERIOD_MS` of
logical time it sends one request to each of its `targets` ("<namespace>/<name>", by default the checker's
apps "default/web" and "default/api", port 80). A request is data-plane traffic, never a control-plane
message (kmodel.traffic.dataplane): it is not sent on kmodel.network, does not appear on the communication
graph, and reads nothing through the API.

One request, as the node's kernel carries it:

1. Name -> ClusterIP. DNS (kube-dns) watches Services through the API and answers the name with the
   ClusterIP. The model takes the answer from the node's own kube-proxy rules, which know each Service's
   ClusterIP by name (a record that exists when, and only when, the node has rules for the Service): the same
   Services, seen through a different watch, without a DNS cache. No rules for the name: NXDOMAIN. (One
   difference shows: while a node's kube-proxy is down, a Service deleted and created again resolves there to
   its old ClusterIP, where real DNS would give the new one, which that node would not forward yet.)
2. ClusterIP:80 -> a pod. The node's rules DNAT the packet to one of the Service's ready endpoints. iptables
   picks one at random; the model takes them in turn (request number modulo the backends) so runs replay. A
   rule with no backend rejects the packet ("no endpoints").
3. The pod network delivers the packet to the pod whose running container holds the IP, on any node, or
   nowhere (`DataPlane.pod_at`).

`route(service)` answers, without sending anything, where the *next* request could go: every
backend of the rule (iptables may pick any of them), or the remembered address. The `service-reachability`
invariant (invariants/traffic.py) judges that next request against the settled cluster.

The variant `hardcoded-pod-ip` is read here, in `make`, and nowhere else: the client keeps the first pod
address it got through a Service (the DNAT destination of its first request that found a backend) and sends
every later request straight to it, forever. Pods come and go; the address stays.

Time and settling: every 5 s is often enough that a client has talked to a Service a moment after it got
endpoints, and rare enough that the timer does not dominate an idle cluster's fair run (a settle that never
converges runs 600 s of logical time; at 1 s the client's timer was about a sixth of those events). The
request timer is periodic, like the kubelet's lease and status timers, so it is not
unfinished work for `settles` (which looks at messages in flight and queued work, never at timers). The
client has no work queue and sends no messages at all.

Crash: the process forgets what it remembered (a restarted client resolves again). `last`, `sent` and
`failed` are an observer's view of the requests (for tests and reports), kept across a crash.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import attrs

from kmodel.component.registry import component
from kmodel.component import Component, Out
from kmodel.traffic.dataplane import DataPlane, Reached, split_host_port
from kmodel.variants import HARDCODED_POD_IP

REQUEST_TIMER = "request"
PERIOD_MS = 5_000
SERVICE_PORT = 80
#: the Services the client calls: the checker's apps (kmodel.checker.actions.APPS) in namespace default
TARGETS: tuple[str, ...] = ("default/web", "default/api")

VIA_SERVICE = "service"
VIA_POD_IP = "pod-ip"
NO_SUCH_SERVICE = "no such service"
NO_ENDPOINTS = "no endpoints"
NO_ANSWER = "no answer"


@attrs.frozen
class Sent:
    """One request and what became of it."""

    at: int
    service: str
    via: str  # VIA_SERVICE or VIA_POD_IP
    destination: str  # the "<ip>:<port>" the packet went to after the node's rules ("" if it went nowhere)
    reached: Optional[Reached] = None
    error: str = ""  # "", NO_SUCH_SERVICE, NO_ENDPOINTS or NO_ANSWER

    @property
    def ok(self) -> bool:
        return self.reached is not None


@attrs.frozen
class Route:
    """Where the next request to one Service can go: `via`, and the addresses it may be sent to (empty, with
    `error`, when it goes nowhere)."""

    via: str
    destinations: tuple[str, ...]
    error: str = ""


def client_name(node: str) -> str:
    return f"traffic/{node}"


class TrafficClient(Component):
    """See the module docstring."""

    #: what invariants may read of it (kmodel.invariants.records): the node it runs on and the Services it reaches
    RECORDS: frozenset[str] = frozenset({"node", "targets"})

    def __init__(self, node: str, targets: Sequence[str] = TARGETS, *, hardcoded_pod_ip: bool = False,
                 period_ms: int = PERIOD_MS) -> None:
        super().__init__(client_name(node))
        self.node = node
        self.targets = tuple(targets)
        self.hardcoded_pod_ip = hardcoded_pod_ip
        self.period_ms = period_ms
        self.dataplane: Optional[DataPlane] = None
        # an observer's view (not the process's memory)
        self.sent = 0
        self.failed = 0
        self.last: dict[str, Sent] = {}
        self._forget()

    def _forget(self) -> None:
        self.remembered: dict[str, str] = {}  # service -> "<pod ip>:<port>" (hardcoded-pod-ip only)

    def attach_dataplane(self, dataplane: DataPlane) -> None:
        """The cluster wiring hands the node its data plane (kmodel.cluster.components.wire)."""
        self.dataplane = dataplane

    # -- where a request goes --------------------------------------------------------------------------

    def route(self, service: str) -> Route:
        """Where the next request to `service` can go (reads the data plane, changes nothing)."""
        remembered = self.remembered.get(service)
        if remembered is not None:
            return Route(VIA_POD_IP, (remembered,))
        if self.dataplane is None:
            return Route(VIA_SERVICE, (), NO_SUCH_SERVICE)
        namespace, _, name = service.partition("/")
        rules = self.dataplane.service_rules(self.node, namespace, name)
        if not rules:
            return Route(VIA_SERVICE, (), NO_SUCH_SERVICE)
        for key in sorted(rules):
            if "/" not in key and split_host_port(key)[1] == SERVICE_PORT:
                backends = tuple(rules[key])
                return Route(VIA_SERVICE, backends, "" if backends else NO_ENDPOINTS)
        return Route(VIA_SERVICE, (), NO_ENDPOINTS)  # the Service has no port 80: the kernel rejects it

    def deliver(self, destination: str) -> Optional[Reached]:
        """The pod a packet to `destination` reaches (None if nothing answers)."""
        if self.dataplane is None:
            return None
        return self.dataplane.pod_at(*split_host_port(destination))

    def request(self, now: int, service: str) -> Sent:
        """Send one request to `service` now and record it."""
        route = self.route(service)
        if not route.destinations:
            sent = Sent(now, service, route.via, "", None, route.error)
        else:
            destination = route.destinations[self.sent % len(route.destinations)]
            if self.hardcoded_pod_ip and route.via == VIA_SERVICE:
                self.remembered[service] = destination  # the variant: this address, from now on
            reached = self.deliver(destination)
            sent = Sent(now, service, route.via, destination, reached, "" if reached is not None else NO_ANSWER)
        self.sent += 1
        if not sent.ok:
            self.failed += 1
        self.last[service] = sent
        return sent

    # -- the component protocol --------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        out.set_timer(REQUEST_TIMER, self.period_ms)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if name == REQUEST_TIMER:
            out.set_timer(REQUEST_TIMER, self.period_ms)
            for service in self.targets:
                self.request(now, service)

    def crash(self) -> None:
        self._forget()


@component("traffic", default=True)
def make(ctx: Any) -> list[Component]:
    """The cluster's factory: one client, on the first node. The `hardcoded-pod-ip` switch is read here."""
    nodes = ctx.config.node_names()
    if not nodes:
        return []
    return [TrafficClient(nodes[0], hardcoded_pod_ip=ctx.config.variant == HARDCODED_POD_IP)]
