"""The checker's request faults, compactions of deletes and long stalls: the `RequestFaultRules` mixin of
`KmodelMachine`.

Theory of operation
-------------------
Each rule draws small numbers, turns them into one concrete fault against the cluster as it is now (an index
taken modulo the candidates, so it shrinks toward the first), and hands it to the session through
`self._do(kind, action)`, like machine.py's fault rules. A rule whose candidates are empty now injects the
machine's own fault of the nearest kind instead (`_fault`), so every rule does something. The stats count
the kind that happened:

    fail_request_429   the next request of a component to an API server replica is answered 429
                       TooManyRequests with Retry-After 1 or 5 s (the client waits and sends it again, up to 10
                       times, as client-go does)
    fail_request_500   ... 500 InternalError (nothing written; the caller sees the error and retries as it does)
    fail_request_503   ... 503 ServiceUnavailable (likewise)
    fail_request_504   ... 504 Timeout, the write applied or not (a drawn flag): the unknown outcome
    compact_delete     compact etcd at a revision that deleted a key (newest first): a watcher resuming from
                       before it meets 410 and relists, and the delete reaches its informer as a
                       DeletedFinalStateUnknown
    stall_watch        a client's watch stream held up for 2 to 10 minutes, then ended by its API server
                       (fault_actions.StallWatch): the resumed watch meets 410 Expired once the hold outlasted
                       the watch cache's window
    flap_readiness     a container's readiness probe fails for 15 or 60 s, then passes (fault_actions.FlapReadiness):
                       its pod leaves the Service's ready addresses and comes back
    fail_liveness      a container's liveness probe fails (fault_actions.FailLiveness): the kubelet restarts it
    reboot_node        a machine reboots and comes back (fault_actions.RebootNode): its containers end, its
                       pods' network namespaces close, its kubelet and kube-proxy start again
    apply_probed_app   what the two probe faults do first when the cluster has no probed application: kubectl
                       apply the Deployment "probed", whose container has a readiness and a liveness probe, and its
                       Service, and kubectl rollout status (up to 60 s), then the fault itself; while its pods are
                       not running, they kill a container as fail_container does

Candidates of a request fault: first the links with a request on its way to an API server now (the fault
then answers exactly that one), then every running component with an API client that sent a request to the
replica it talks to within the last 10 s (its next request there), the most recent first. Faults are the
loop's own `FailRequest` events (kmodel.loop.events), so a trace replays them through `Loop.step`.

API server restarts with watches open need no rule of their own: `crash` and `restart` pick API server
replicas, whose clients' watches break and resume elsewhere (the `apiserver-restarted-under-watches` sometimes
property shows it is reached).
"""

from __future__ import annotations

from typing import Any, Optional

from hypothesis import strategies as st

from kmodel.checker.actions import Compact, Fault
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.fault_actions import (
    PROBED_APP,
    ApplyProbedApp,
    FailLiveness,
    FlapReadiness,
    RebootNode,
    StallWatch,
    probed_kubelet,
    rebootable_nodes,
)
from kmodel.cluster.kubectl import Apply
from kmodel.loop.events import REQUEST_FAULT_CODES, FailRequest
from kmodel.checker.rulebook import RuleFamily, rule

#: a component is a candidate of a request fault when it sent to its API server this recently (a kubelet
#: renews its Lease every 10 s)
RECENT_MS = 10_000
#: the Retry-After of a 429 (max-in-flight and priority-and-fairness send 1 s; a longer one too)
RETRY_AFTER_S = (1, 5)
#: how long a flap_readiness keeps the probe failing: past one failure (5 s period, failureThreshold 2), or a minute
FLAP_SECONDS = (15, 60)
#: how long a probe fault that applies the probed application waits for its rollout
PROBED_ROLLOUT_SECONDS = 60
#: how long a stall_watch holds a watch: 2 to 10 minutes (the watch cache's window holds at least 100 events
#: of a resource; Leases renewed every 10 s per node fill it in about five minutes on three nodes)
STALL_MINUTES = (2, 10)


class RequestFaultRules(RuleFamily):
    """The rules of the request-fault family (see the module docstring). Mixed into `KmodelMachine`, whose
    `cluster`, `_do` and `_fault` they use."""


    def _fault(self, first: str, i: int, ms: int = 0) -> None:  # pragma: no cover - KmodelMachine's
        raise NotImplementedError

    # -- candidates -------------------------------------------------------------------------------------------

    def request_links(self) -> list[tuple[str, str]]:
        """(component, replica) pairs a request fault can target: links with a request (outside a stream) on its
        way to a running replica now, sorted; then each running component with an API client and the running
        replica it sends to now, if it sent there within the last RECENT_MS (a kubelet renewing its Lease every
        10 s, not a controller with nothing to do), the most recent first, so a fault meets a request soon."""
        loop = self.cluster.loop
        net = loop.network
        replicas = {r.name: None for r in self.cluster.replicas if loop.is_up(r.name)}
        if not replicas:
            return []
        in_flight = [(src, dst) for src, dst in net.nonempty_links()
                     if dst in replicas and net.head(src, dst).stream is None]
        seen = set(in_flight)
        talking = []
        for name in sorted(loop.components):
            client = getattr(loop.components[name], "client", None)
            endpoint = getattr(client, "endpoint", None)
            if endpoint in replicas and loop.is_up(name) and (name, endpoint) not in seen:
                talking.append((name, endpoint))
        # those that sent there within RECENT_MS, most recent first: their next request comes soon (an idle
        # controller's fault would wait for ever); all of them when none did
        now = self.cluster.now
        last = {link: net.delivered_at(*link) for link in talking}
        recent = [link for link in talking if last[link] and now - last[link] <= RECENT_MS]
        return in_flight + sorted(recent or talking, key=lambda link: (-last[link], link))

    def stallable_watches(self) -> list[tuple[str, str, str]]:
        """(stream, replica, client) of every open watch of a running client on a running API server replica,
        those of the resources with the most events in their replica's window first (Leases, renewed every 10 s
        per node, before Deployments), so the first candidates are the likeliest to outlast the window."""
        loop = self.cluster.loop
        net = loop.network
        busy: dict[str, int] = {}  # stream -> events its replica's cache has recorded for its resource
        for replica in self.cluster.replicas:
            if loop.is_up(replica.name):
                for rc in replica.cache.resources.values():
                    for stream in rc.all_watchers:
                        busy[stream] = rc.recorded
        out = []
        for stream in sorted(busy, key=lambda s: (-busy[s], s)):
            ends = net.stream_ends(stream)
            if ends is None:
                continue
            client, replica = ends
            if loop.is_up(client) and getattr(loop.components[client], "client", None) is not None:
                out.append((stream, replica, client))
        return out

    def probed_containers(self, kind: str) -> list[tuple[str, str, str]]:
        """(node, pod, container) of every running container of the default namespace that declares a `kind`
        ("readiness", "liveness") probe, on a node whose kubelet is up and knows it (machine.failable's, narrowed
        to those with the probe), sorted."""
        cluster = self.cluster
        running = self.failable()  # type: ignore[attr-defined]
        return [c for c in running if probed_kubelet(cluster, *c, kind) is not None]

    def _probe_fault(self, kind: str, i: int, action: Any) -> None:
        """Fail a `kind` probe of a running container that declares one. With none running: apply the probed
        application (`ApplyProbedApp`) if it is neither there nor on its way, waiting for its rollout (so the fault
        drawn meets a running container in this step, not only if a later step draws a probe fault again), then
        fail the probe; else (its pods are not running yet, or did not come up in time) kill a container as
        `fail_container` does."""
        containers = self.probed_containers(kind)
        cluster = self.cluster
        applying = any(isinstance(c, Apply) and isinstance(c.obj, dict)
                       and c.obj.get("metadata", {}).get("name") == PROBED_APP for c in cluster.kubectl.unanswered())
        if not containers and not applying and cluster.get("deployments", "default", PROBED_APP) is None:
            self._do("apply_probed_app", ApplyProbedApp(wait_seconds=PROBED_ROLLOUT_SECONDS))
            containers = self.probed_containers(kind)
        if containers:
            self._do("flap_readiness" if kind == "readiness" else "fail_liveness", action(*pick(i, containers)))
            return
        self._fault("fail_container", i)

    # -- rules ------------------------------------------------------------------------------------------------

    @rule(i=INDEX, status=st.integers(0, len(REQUEST_FAULT_CODES) - 1), applied=st.booleans(),
          wait=st.integers(0, len(RETRY_AFTER_S) - 1))
    def fail_request(self, i: int, status: int, applied: bool, wait: int) -> None:
        """Answer a component's next request to an API server with 429 (Retry-After 1 or 5 s), 500, 503 or 504
        (the write applied or not): see `request_links`."""
        links = self.request_links()
        if not links:  # every API server is down
            self._fault("restart", i)
            return
        src, dst = pick(i, links)
        code = REQUEST_FAULT_CODES[status]
        event = FailRequest(src, dst, code, applied=applied and code == 504,
                            retry_after_seconds=RETRY_AFTER_S[wait] if code == 429 else 0)
        self._do(f"fail_request_{code}", Fault(event))

    @rule(i=INDEX)
    def compact_delete(self, i: int) -> None:
        """Compact the store at a revision that deleted a key (the newest first), else as `compact` does."""
        revisions = self.cluster.store.deletion_revisions()
        if not revisions:
            self._fault("compact", i)
            return
        self._do(Compact(pick(i, revisions)))

    @rule(i=INDEX, minutes=st.integers(*STALL_MINUTES))
    def stall_watch(self, i: int, minutes: int) -> None:
        """Hold a client's watch stream for 2 to 10 minutes, then its API server ends it (`StallWatch`); with no
        watch open, delay a link as `delay_link` does."""
        watches = self.stallable_watches()
        chosen: Optional[tuple[str, str, str]] = pick(i, watches)
        if chosen is None:
            self._fault("delay_link", i)
            return
        self._do(StallWatch(*chosen, ms=minutes * 60_000))

    @rule(i=INDEX, seconds=st.integers(0, len(FLAP_SECONDS) - 1))
    def flap_readiness(self, i: int, seconds: int) -> None:
        """A container's readiness probe fails for 15 or 60 s, then passes; see `_probe_fault`."""
        self._probe_fault("readiness", i, lambda *c: FlapReadiness(*c, ms=FLAP_SECONDS[seconds] * 1000))

    @rule(i=INDEX)
    def fail_liveness(self, i: int) -> None:
        """A container's liveness probe fails: the kubelet restarts it; see `_probe_fault`."""
        self._probe_fault("liveness", i, FailLiveness)

    @rule(i=INDEX)
    def reboot_node(self, i: int) -> None:
        """A machine whose kubelet runs reboots and comes back (`RebootNode`); with none running (every kubelet
        down), the machine's `restart` fault instead."""
        node = pick(i, rebootable_nodes(self.cluster))
        if node is None:
            self._fault("restart", i)
            return
        self._do(RebootNode(node))
