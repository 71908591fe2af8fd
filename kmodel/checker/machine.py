"""The Hypothesis state machine: it chooses actions, nothing else.

Theory of operation
-------------------
Each Hypothesis example is one `KmodelMachine`: a fresh cluster in a `Session`, warmed up by running fairly
for `warmup_ms` (nodes registered, CIDRs assigned: the first action of every trace). Then Hypothesis picks
rules. A rule draws a few small numbers, turns them into one concrete action against the cluster as it is
now (an index is taken modulo the current list of candidates, so every draw means something and shrinks
toward the first candidate), and hands it to the session, which applies it and checks the safety
invariants. A rule with no candidate (nothing to drop, nobody down) does nothing and is not counted. Every
example ends with `settle` (the teardown), which heals everything, restarts what is down and runs fairly
until every liveness invariant holds, or fails with the ones that never do.

The rules, by family:

    user          apply_deployment, scale_deployment, delete_deployment, apply_service, delete_service,
                  add_node, remove_node
    interleaving  interleave: a burst of up to `burst` enabled progress events drawn as one list of indices
                  (Hypothesis' per-step cost is the limit, so each drawn choice moves the model)
    faults        partition, heal, drop_message, delay_link, lag_watch_cache (hold etcd -> an API server
                  replica: its watch cache lags, so it serves stale reads), break_stream (missed events),
                  crash, crash_mid_reconcile (a component whose write is in flight or whose answer is on
                  its way: a crash between two writes of one sync), restart, compact, fail_container
    time          advance_time: run fairly for a drawn number of seconds
    settle        settle (also the teardown)

A violation is an `InvariantViolation` (AssertionError): Hypothesis shrinks the example, and the machine
reports each failing session to the campaign's `sink` (the last one reported is the shrunk one, which
Hypothesis runs last). Subclass to check more: set `config`, add components in `extra_components()` and
invariants in `extra_invariants` (see kmodel.pytest_plugin).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Optional, Sequence

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from kmodel.apiserver.wire import Request, Response
from kmodel.checker.actions import (
    APPS,
    AddNode,
    ApplyDeployment,
    ApplyService,
    Compact,
    DeleteObject,
    FailContainer,
    Fault,
    Fire,
    RemoveNode,
    RunFair,
    ScaleDeployment,
    Settle,
    Action,
)
from kmodel.checker.session import InvariantViolation, Session, all_invariants
from kmodel.checker.stats import Stats
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import BreakStream, Crash, DelayHead, DropHead, Heal, Partition, Restart, Work
from invariants.registry import Invariant

#: an index into whatever list of candidates exists when the rule runs (taken modulo its length)
INDEX = st.integers(min_value=0, max_value=63)
WRITE_VERBS = ("create", "update", "patch", "delete")


def pick(index: int, options: Sequence[Any]) -> Any:
    return options[index % len(options)] if options else None


class KmodelMachine(RuleBasedStateMachine):
    """The checker's state machine over a whole default cluster. See the module docstring."""

    config: ClusterConfig = ClusterConfig()
    variant: str = "default"
    #: invariants checked besides the registered ones (a subclass's own)
    extra_invariants: ClassVar[tuple[Invariant, ...]] = ()
    #: False: check only `extra_invariants` (a plugin test of one controller)
    registered_invariants: ClassVar[bool] = True
    warmup_ms: ClassVar[int] = 15_000
    burst: ClassVar[int] = 8
    max_added_nodes: ClassVar[int] = 2
    #: remove_node is off for now: with it on, the checker finds states the invariants do not yet judge right
    #: (a removed node's CNI reservations outlive it; a restarted kubelet of a deleted Node re-registers and
    #: gets a new podCIDR while its pods keep their old IPs, as a real kubelet would). PodGC exists.
    node_removal: ClassVar[bool] = False
    settle_bound_ms: ClassVar[int] = 600_000
    #: the campaign's statistics (a fresh Stats per class unless run.py sets one)
    stats: ClassVar[Optional[Stats]] = None
    #: called with each session that failed (the campaign keeps the last: the shrunk one)
    sink: ClassVar[Optional[Callable[[Session], None]]] = None

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        if cls.stats is None:
            cls.stats = Stats()
        self.stats: Stats = cls.stats
        invariants = (all_invariants() if cls.registered_invariants else []) + list(cls.extra_invariants)
        self.session = Session(cls.config, invariants, variant=cls.variant,
                               extra_components=self.extra_components(), stats=self.stats)
        self.cluster = self.session.cluster
        self.stats.example_started()
        self._finished = False
        self._broken = False
        self._do("warmup", RunFair(cls.warmup_ms))

    def extra_components(self) -> list:
        """Components to run besides the cluster's own (a subclass's controllers)."""
        return []

    # -- executing -------------------------------------------------------------------------------------------

    def _do(self, rule_name: str, action: Optional[Action]) -> None:
        if action is not None:
            self._guard(lambda: self.session.execute(action), rule_name)

    def _guard(self, run: Callable[[], Any], rule_name: str) -> None:
        before = len(self.session.actions)
        try:
            run()
        except InvariantViolation:
            self.stats.failed()
            self._finish()
            sink = type(self).sink
            if sink is not None:
                sink(self.session)
            raise
        except BaseException:
            self._broken = True
            raise
        finally:
            if len(self.session.actions) > before:
                self.stats.fired(rule_name)

    def _finish(self) -> None:
        if not self._finished:
            self._finished = True
            self.stats.example_finished(self.session.digest(), self.session.events_applied)

    def check_invariants(self, *args: Any, **kwargs: Any) -> None:
        # Hypothesis calls this once before the first rule and after every rule: count its steps (the
        # checker's own checks run inside the session, after each action).
        self.stats.rule_steps += 1
        super().check_invariants(*args, **kwargs)

    def teardown(self) -> None:
        if self.session.violation is None and not self._broken:
            self._do("settle", Settle(self.settle_bound_ms))
        self._finish()

    # -- the user -------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), replicas=st.integers(0, 4), cpu=st.sampled_from((0, 500, 1500)),
          host_port=st.booleans())
    def apply_deployment(self, app: str, replicas: int, cpu: int, host_port: bool) -> None:
        self._do("apply_deployment", ApplyDeployment(app, replicas, cpu, host_port))

    @rule(app=st.sampled_from(APPS), replicas=st.integers(0, 5))
    def scale_deployment(self, app: str, replicas: int) -> None:
        self._do("scale_deployment", ScaleDeployment(app, replicas))

    @rule(app=st.sampled_from(APPS))
    def delete_deployment(self, app: str) -> None:
        self._do("delete_deployment", DeleteObject("deployments", app))

    @rule(app=st.sampled_from(APPS))
    def apply_service(self, app: str) -> None:
        self._do("apply_service", ApplyService(app))

    @rule(app=st.sampled_from(APPS))
    def delete_service(self, app: str) -> None:
        self._do("delete_service", DeleteObject("services", app))

    @rule()
    def add_node(self) -> None:
        if len(self.cluster.nodes) < self.config.nodes + self.max_added_nodes and "kubelet" in self.config.components:
            self._do("add_node", AddNode())

    @rule(i=INDEX)
    def remove_node(self, i: int) -> None:
        if self.node_removal and len(self.cluster.nodes) > 1:
            self._do("remove_node", RemoveNode(pick(i, self.cluster.nodes)))

    # -- interleaving ----------------------------------------------------------------------------------------

    @rule(picks=st.lists(INDEX, min_size=1, max_size=8))
    def interleave(self, picks: list[int]) -> None:
        self._guard(lambda: self.session.execute_burst(picks[: self.burst]), "interleave")

    # -- faults ---------------------------------------------------------------------------------------------

    @rule(picks=st.lists(INDEX, min_size=1, max_size=3))
    def partition(self, picks: list[int]) -> None:
        endpoints = self.cluster.network.endpoints
        chosen = sorted({pick(i, endpoints) for i in picks})
        if len(chosen) < len(endpoints):
            self._do("partition", Fault(Partition(tuple(chosen))))

    @rule(picks=st.lists(INDEX, min_size=1, max_size=3))
    def heal(self, picks: list[int]) -> None:
        if self.cluster.network.partitioned:
            endpoints = self.cluster.network.endpoints
            self._do("heal", Fault(Heal(tuple(sorted({pick(i, endpoints) for i in picks})))))

    @rule(i=INDEX)
    def drop_message(self, i: int) -> None:
        """Lose one request or response. Only messages outside streams: a watch stream runs over one HTTP/2
        connection, which loses nothing in the middle of a stream; its fault is break_stream."""
        net = self.cluster.network
        link = pick(i, [k for k in net.nonempty_links() if net.in_flight(*k)[0].stream is None])
        if link is not None:
            self._do("drop_message", Fault(DropHead(*link)))

    @rule(i=INDEX, ms=st.sampled_from((1_000, 5_000, 30_000)))
    def delay_link(self, i: int, ms: int) -> None:
        link = pick(i, self.cluster.network.nonempty_links())
        if link is not None:
            self._do("delay_link", Fault(DelayHead(link[0], link[1], ms)))

    @rule(i=INDEX, ms=st.sampled_from((2_000, 10_000, 60_000)))
    def lag_watch_cache(self, i: int, ms: int) -> None:
        """Hold etcd -> one API server replica: its watch cache lags, so it serves stale reads. When nothing is
        on that link yet but etcd has watch responses to send, let etcd send them first (one Work event)."""
        net, loop = self.cluster.network, self.cluster.loop
        replica = pick(i, [r.name for r in self.cluster.replicas])
        if not net.has_in_flight("etcd", replica) and loop.is_enabled(Work("etcd")):
            self._do("lag_watch_cache", Fire((Work("etcd"),)))
        if net.has_in_flight("etcd", replica) and self.session.violation is None:
            self._do("lag_watch_cache", Fault(DelayHead("etcd", replica, ms)))

    @rule(i=INDEX)
    def break_stream(self, i: int) -> None:
        stream = pick(i, self.cluster.network.open_streams())
        if stream is not None:
            self._do("break_stream", Fault(BreakStream(stream)))

    def _crashable(self) -> list[str]:
        loop = self.cluster.loop
        return [n for n in sorted(loop.components) if loop.is_up(n) and loop.components[n].supports_crash()]

    @rule(i=INDEX)
    def crash(self, i: int) -> None:
        name = pick(i, self._crashable())
        if name is not None:
            self._do("crash", Fault(Crash(name)))

    def mid_reconcile(self) -> list[str]:
        """Components with a write on its way to an API server, or an answer on its way back to them."""
        net = self.cluster.network
        loop = self.cluster.loop
        found: dict[str, None] = {}
        for src, dst in net.nonempty_links():
            if dst.startswith("apiserver-") and not src.startswith(("apiserver-", "etcd")):
                if any(type(m.payload) is Request and m.payload.verb in WRITE_VERBS for m in net.in_flight(src, dst)):
                    found[src] = None
            elif src.startswith("apiserver-") and not dst.startswith(("apiserver-", "etcd")):
                if any(type(m.payload) is Response for m in net.in_flight(src, dst)):
                    found[dst] = None
        return [n for n in sorted(found) if loop.is_up(n) and loop.components[n].supports_crash()]

    @rule(i=INDEX)
    def crash_mid_reconcile(self, i: int) -> None:
        name = pick(i, self.mid_reconcile())
        if name is not None:
            self._do("crash_mid_reconcile", Fault(Crash(name)))

    @rule(i=INDEX)
    def restart(self, i: int) -> None:
        loop = self.cluster.loop
        removed = {f"{k}/{n}" for n in self.cluster.removed_nodes for k in ("kubelet", "proxy")}
        down = [n for n in sorted(loop.components) if not loop.is_up(n) and n not in removed]
        name = pick(i, down)
        if name is not None:
            self._do("restart", Fault(Restart(name)))

    @rule(keep=st.integers(0, 40))
    def compact(self, keep: int) -> None:
        store = self.cluster.store
        revision = store.revision - keep
        if revision > store.compact_revision:
            self._do("compact", Compact(revision))

    @rule(i=INDEX)
    def fail_container(self, i: int) -> None:
        from kmodel.kubelet.pod_worker import CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL

        loop = self.cluster.loop
        candidates = []
        for node in self.cluster.nodes:
            kubelet = loop.components.get(f"kubelet/{node}")
            if kubelet is None or not loop.is_up(kubelet.name):
                continue
            for c in kubelet.runtime.running():  # type: ignore[attr-defined]
                if c.labels.get(POD_NAMESPACE_LABEL) == "default":
                    candidates.append((node, c.labels.get(POD_NAME_LABEL, ""), c.labels.get(CONTAINER_NAME_LABEL, "")))
        chosen = pick(i, sorted(candidates))
        if chosen is not None:
            self._do("fail_container", FailContainer(*chosen))

    # -- time -----------------------------------------------------------------------------------------------

    @rule(seconds=st.integers(1, 30))
    def advance_time(self, seconds: int) -> None:
        self._do("advance_time", RunFair(seconds * 1000))

    @rule()
    def settle(self) -> None:
        self._do("settle", Settle(self.settle_bound_ms))
