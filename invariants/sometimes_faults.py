"""Sometimes properties of the request faults, compactions, API server restarts and long stalls (the checker's
`RequestFaultRules`, kmodel/checker/fault_rules.py): the situations those faults exist to reach.

Each reads what the model's observers record (an API client's `retried_after`, a replica's `faults_answered`,
an informer's `expired_watches` and `tombstones`), the network's open streams, or the store's history of pods
and endpoints, never the trace, so any way of reaching a situation counts. They register in
kmodel.invariants.sometimes' registry, which loads this module.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import PODS
from kmodel.invariants.readers import ENDPOINTS, changes, informers
from kmodel.invariants.records import declares, record
from kmodel.invariants.registry import sometimes

#: the exit code of a container the kubelet killed (SIGKILL: 128 + 9), as it kills one that failed liveness
KILLED = 137


def _clients(cluster: Any, memo: dict) -> Iterator[Any]:
    """The API client of every component that has one (found again when components come)."""
    components = cluster.loop.components
    found = memo.get("clients")
    if found is None or memo.get("components") != len(components):
        found = memo["clients"] = [c for name in sorted(components)
                                   if declares(components[name], "client")
                                   and declares(c := record(components[name], "client"), "retried_after")]
        memo["components"] = len(components)
    return iter(found)


@sometimes("request-retried-after", principle="the API as the single contract")
def request_retried_after(cluster: Any, memo: dict) -> bool:
    """A client sent a request again after the API server answered it with Retry-After (a 429): the client,
    not its caller, waited out the server's overload."""
    return any(record(c, "retried_after") for c in _clients(cluster, memo))


@sometimes("timeout-write-applied", principle="optimistic concurrency")
def timeout_write_applied(cluster: Any, memo: dict) -> bool:
    """An API server answered a write 504 Timeout after the write had reached etcd: its client was told it
    failed, though it happened (the unknown outcome)."""
    return any(code == 504 and written
               for replica in cluster.replicas for _, _, _, code, written in record(replica, "faults_answered"))


@sometimes("watch-expired-relist", principle="watch, not poll")
def watch_expired_relist(cluster: Any, memo: dict) -> bool:
    """An informer's resumed watch met 410 Expired (it resumed from a resourceVersion the API server's window
    no longer held, after a long stall or a compaction) and the informer listed again."""
    for inf in informers(cluster, memo):  # a loop, not any() over a generator: asked after every step
        if inf.expired_watches and inf.lists >= 2:
            return True
    return False


@sometimes("informer-tombstone", principle="watch, not poll")
def informer_tombstone(cluster: Any, memo: dict) -> bool:
    """An informer's relist found an object gone whose deletion it never saw, and passed it to its handler as
    DeletedFinalStateUnknown (a tombstone)."""
    for inf in informers(cluster, memo):  # a loop, not any() over a generator: asked after every step
        if inf.tombstones:
            return True
    return False


@sometimes("apiserver-restarted-under-watches", principle="watch, not poll")
def apiserver_restarted_under_watches(cluster: Any, memo: dict) -> bool:
    """An API server replica crashed with clients watching through it, and one of those clients watched again
    (through another replica, or the same one restarted)."""
    loop = cluster.loop
    net = loop.network
    replicas = [r.name for r in cluster.replicas]
    components = loop.components
    watching: dict[str, dict[str, str]] = {}  # replica -> API client -> a watch it had open there
    for stream in net.open_streams():
        ends = net.stream_ends(stream)  # (opener, peer): a watch is opened by its client (etcd opens its own)
        if ends is not None and ends[1] in replicas and declares(components[ends[0]], "client"):
            watching.setdefault(ends[1], {})[ends[0]] = stream
    cut: dict[str, dict[str, str]] = memo.setdefault("cut", {})  # client -> its streams that a crash ended
    before: dict[str, dict[str, str]] = memo.get("watching", {})
    for replica in replicas:
        if not loop.is_up(replica):
            for client, stream in before.get(replica, {}).items():
                cut.setdefault(client, {})[stream] = replica
    memo["watching"] = watching
    for streams in watching.values():
        for client, stream in streams.items():
            if client in cut and stream not in cut[client]:
                return True
    return False


@sometimes("liveness-restart", principle="level-driven reconciliation")
def liveness_restart(cluster: Any, memo: dict) -> bool:
    """A kubelet killed a container that failed its liveness probe and started it again: the pod's status counts
    a restart whose last state ended with exit code 137."""
    for change in changes(cluster, memo, PODS):
        pod = change.value
        if pod is not None and any(s.restart_count and s.last_state.terminated is not None
                                   and s.last_state.terminated.exit_code == KILLED
                                   for s in pod.status.container_statuses):
            return True
    return False


@sometimes("readiness-flapped", principle="network model")
def readiness_flapped(cluster: Any, memo: dict) -> bool:
    """A Service's Endpoints listed a pod's address as ready, then as not ready, then as ready again: a readiness
    probe that failed and recovered (or a node that went NotReady and came back) moved it out of the traffic
    and back."""
    seen: dict[str, dict[str, int]] = memo.setdefault("seen", {})  # endpoints key -> ip -> 1 ready, 2 then not
    for change in changes(cluster, memo, ENDPOINTS):
        endpoints = change.value
        if endpoints is None:
            seen.pop(change.key, None)
            continue
        phases = seen.setdefault(change.key, {})
        for subset in endpoints.subsets:
            for address in subset.addresses:
                if phases.get(address.ip) == 2:
                    return True
                phases[address.ip] = 1
            for address in subset.not_ready_addresses:
                if phases.get(address.ip) == 1:
                    phases[address.ip] = 2
    return False
