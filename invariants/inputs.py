"""What a safety invariant reads, declared beside it, so that a runner can skip it while none of that changed.

An invariant registered with `reads=(...)` (kmodel.invariants.registry) names every input its verdict depends
on. Each input is an `Input`: a name and a function of the cluster that returns a small value, its *mark*, which
changes whenever the input does: the store's revision under some key prefixes (`writes`), the length of a log
that only grows (the audit trail, the store's request history, an API server's record of what etcd sent it), the
clock. An invariant is a function of its inputs and of its own memo, which only it changes, so while the marks
of its inputs are those its last evaluation saw, it would say again what it said then; and what it said was
"holds", since a violation ends the session. So a runner (kmodel.checker.session) reads every declared input's
mark once per check, and skips an invariant none of whose inputs changed since the check before (`Changes`
says why that is the same as "since its last evaluation"). The first check of a session asks every invariant.

An invariant that declares nothing is evaluated at every check: the safe default for one whose inputs are not
listed yet (tests/invariants/test_inputs.py lists them). A time-dependent invariant declares `CLOCK`.
An invariant that reads what components keep in their own state (informers, a kubelet's runtime) declares
`MODEL_EVENTS` or the record it reads: a component changes only when the loop gives it an event, and the
checker's direct changes (a failed container, a node added) each move an input named here.

The reference path evaluates every invariant at every check: `EVERY_STEP`, set by the environment variable
KMODEL_INVARIANTS_EVERY_STEP=1 (or by a test); tests/invariants/test_inputs.py runs checker campaigns and
sessions both ways and compares every verdict and the first violation.

A mark is compared with ==, so it holds numbers, strings and tuples of them; where identity matters (an object a
crash replaces) the object itself goes in the mark, whose class compares by identity: the runner keeps the last
marks, so an object in them stays alive and no new object can take its id.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Hashable, Optional

from kmodel.invariants.records import declares, record

#: True: the runner evaluates every invariant at every check (the reference path; see the module docstring)
EVERY_STEP: bool = os.environ.get("KMODEL_INVARIANTS_EVERY_STEP", "") not in ("", "0")

#: an input's mark: a function of the cluster and of a dict it may keep between the checks of one session
Mark = Callable[[Any, dict], Hashable]


class Input:
    """One thing an invariant reads: `name` (for tests and messages) and `mark(cluster, memo)`, a value that
    changes whenever the input does (`memo`: a dict of its own, kept for one session)."""

    __slots__ = ("name", "mark")

    def __init__(self, name: str, mark: Mark) -> None:
        self.name = name
        self.mark = mark

    def __repr__(self) -> str:
        return f"Input({self.name!r})"


_WRITES: dict[tuple[str, ...], Input] = {}


def writes(*prefixes: str) -> Input:
    """The store's writes to keys under `prefixes`: what a change feed over them reads (kmodel.invariants._history).

    Marked by the last revision that wrote under them (the store's `track`); "/registry/", every object, by the
    store's revision itself. A write is a new revision, so a feed has news exactly when the mark moved."""
    found = _WRITES.get(prefixes)
    if found is None:
        if prefixes == ("/registry/",):
            mark: Mark = _store_revision
        else:
            def mark(cluster: Any, memo: dict) -> int:
                return cluster.store.track(prefixes).revision
        found = _WRITES[prefixes] = Input(f"store writes under {', '.join(prefixes)}", mark)
    return found


def _store_revision(cluster: Any, memo: dict) -> int:
    return cluster.store.revision


def _etcd_received(cluster: Any, memo: dict) -> int:
    # each API server replica keeps its log for life and only appends to it: the sum of lengths moves with any
    return sum(len(record(r, "etcd_received")) for r in cluster.replicas)


def _etcd_written(cluster: Any, memo: dict) -> int:
    return sum(len(record(r.etcd, "written")) for r in cluster.replicas)


def _client_updates(cluster: Any, memo: dict) -> int:
    # a component keeps its client for life (a crash resets it, the same object), the client keeps its list of
    # updates for life and only appends to it, and components are only ever added: the lists are looked up again
    # only when there are more components
    components = cluster.loop.components
    if memo.get("components") != len(components):
        memo["components"] = len(components)
        memo["lists"] = [record(client, "updates") for component in components.values()
                         if declares(component, "client") and declares(client := record(component, "client"),
                                                                      "updates")]
    return sum(map(len, memo["lists"]))


def _replica_caches(cluster: Any, memo: dict) -> tuple:
    # a crash replaces the cache: the cache itself is in the mark (WatchCache compares by identity)
    return tuple((r.cache, r.cache.resource_version) for r in cluster.replicas)


def _kubelet_runtimes(cluster: Any, memo: dict) -> tuple:
    # a runtime's generation only grows, with each change of its sandboxes (a failed container too, which the
    # checker makes without an event); machines only come (components) and go (removed_nodes)
    components = cluster.loop.components
    return (len(components), len(cluster.removed_nodes),
            sum(c.runtime.generation for name, c in components.items() if name.startswith("kubelet/")))


#: every record of every request the API servers handled (the audit trail only grows)
AUDIT = Input("audit trail", lambda cluster, memo: len(cluster.audit.records))
#: every request etcd answered, reads too (the store's history only grows)
STORE_HISTORY = Input("store history", lambda cluster, memo: len(cluster.store.history))
#: logical time
CLOCK = Input("clock", lambda cluster, memo: cluster.now)
#: what each API server's etcd watches received (APIServerReplica.etcd_received)
ETCD_RECEIVED = Input("etcd responses received", _etcd_received)
#: the revisions each API server's etcd handle wrote (EtcdHandle.written)
ETCD_WRITTEN = Input("etcd writes made", _etcd_written)
#: the pairs of endpoints that ever talked (the network's communication graph only grows)
NETWORK_PAIRS = Input("network pairs", lambda cluster, memo: cluster.network.pairs_talked)
#: the updates each API client recorded (ApiClient.updates)
CLIENT_UPDATES = Input("client updates", _client_updates)
#: each API server's watch cache and its resourceVersion
REPLICA_CACHES = Input("watch caches", _replica_caches)
#: the kubelets' container runtimes
KUBELET_RUNTIMES = Input("kubelet runtimes", _kubelet_runtimes)
#: the ClusterIP allocator's state
SERVICE_IPS = Input("ClusterIP allocator", lambda cluster, memo: cluster.service_ips.state())
#: kubectl's record of its commands and their answers
KUBECTL_RESULTS = Input("kubectl results", lambda cluster, memo: len(cluster.kubectl.results))
#: anything a component keeps in its own state (informers, notes of its writes): it changes only by an event
#: the loop applies, and components are only ever added
MODEL_EVENTS = Input("model events", lambda cluster, memo: (cluster.loop.events_applied, len(cluster.loop.components)))


class Changes:
    """Which of a session's inputs changed since its last check, as a bit mask (`mask` gives a declaration's bits).

    An invariant asked whenever one of its inputs changed since the check before has, at a check it is skipped
    at, the inputs of its last evaluation: none of them changed at this check, and at the one before it was
    either asked or (by the same argument) skipped with those inputs. So each check reads every input's mark
    once and compares it with the check before, and an invariant is skipped when its mask and the changes share
    no bit. The first check after `forget` counts every input as changed."""

    __slots__ = ("cluster", "inputs", "_memos", "_last")

    def __init__(self, cluster: Any, inputs: list[Input]) -> None:
        self.cluster = cluster
        self.inputs = inputs
        self._memos: list[dict] = [{} for _ in inputs]
        self._last: Optional[list[Hashable]] = None

    def mask(self, reads: Optional[tuple[Input, ...]]) -> int:
        """The bits of `reads` (0 for an invariant that declares nothing)."""
        bits = 0
        for inp in reads or ():
            bits |= 1 << self.inputs.index(inp)
        return bits

    def forget(self) -> None:
        self._last = None

    def changed(self) -> int:
        """The bits of the inputs whose mark is not what it was at the last call (all after `forget`)."""
        cluster = self.cluster
        now = [inp.mark(cluster, memo) for inp, memo in zip(self.inputs, self._memos)]
        last, self._last = self._last, now
        if last is None:
            return (1 << len(now)) - 1
        bits = 0
        for i, (a, b) in enumerate(zip(last, now)):
            if a != b:
                bits |= 1 << i
        return bits
