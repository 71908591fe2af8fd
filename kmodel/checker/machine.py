"""The Hypothesis state machine: it chooses actions, nothing else.

Theory of operation
-------------------
Each Hypothesis example is one `KmodelMachine`: a cluster in a `Session` where the user has applied
`initial_actions` (a Deployment web of 2 replicas and its Service), warmed up by running fairly for `warmup_ms` (nodes
registered, CIDRs assigned, the pods running: the first actions of every trace). In the campaign profile an
example first draws its topology (kmodel.checker.topology: how many kube-controller-managers, kube-schedulers
and API servers run). The campaign builds and warms one such session per topology, snapshots it
(kmodel.checker.snapshot), and starts every later example of that topology from a copy of the snapshot: the
same session to the bit (same digest, same moves), without paying for the build and the warmup each time. Then Hypothesis picks rules. A rule draws a few small numbers, turns them into one
concrete action against the cluster as it is now (an index is taken modulo the current list of candidates,
so every draw means something and shrinks toward the first candidate), and hands it to the session, which
applies it and checks the safety invariants. Every rule does something each time it runs: a fault rule whose
kind has no candidate now (nothing down to restart, no message to drop) injects the next kind of fault that
has one (see `_fault`), and the two rules that can have none at all (add_node past its cap, remove_node on
a one-node cluster) carry Hypothesis preconditions. Every example ends with `settle` (the teardown), which
heals everything, restarts what is down (never the machines removed for good) and runs fairly until every
liveness invariant holds, or fails with the ones that never do.

The rules, by family:

    user          apply_deployment, scale_deployment, delete_deployment, apply_service, delete_service,
                  apply_pod (a bare pod, placed by the scheduler or pinned to a node, with or without a host
                  port), delete_pod, add_node (a machine of 2, 4 or 8 CPUs joins), remove_node (a machine
                  leaves for good: Cluster.remove_node); in campaigns only, lose_node (LongWaits: a machine
                  fails for good and no one deletes its Node: Cluster.lose_node)
    interleaving  next_event: the first event of the menu; interleave: a burst of up to `burst` enabled
                  progress events drawn as one list of indices (Hypothesis' per-step cost is the limit, so
                  each drawn choice moves the model)
    faults        partition, heal, drop_message, delay_link, lag_watch_cache (slow etcd -> an API server
                  replica: its watch cache lags, so it serves stale reads), break_stream (missed events),
                  crash, crash_mid_reconcile (a reconciler with a write sent and not answered yet: a
                  crash between two writes of one sync), restart, compact, fail_container
    time          advance_time: run fairly for a drawn number of seconds (up to 30); run_events: run fairly for
                  a drawn number of events (ending mid-reconcile); in campaigns only, wait_long (LongWaits: 60
                  to 400 s, long enough for an eviction)
    settle        settle (also the teardown)

Which rule sits first matters: Hypothesis draws a rule's index with a strong bias toward 0 (about one step
in five), and when the rule drawn fails its precondition it falls back to the first rule that passes. Rules
are sorted by their number of arguments, then by name, so the argument-free `next_event` (cheap, and the
simplest move to shrink toward) comes first, then `settle`; `add_node` takes its machine size as an
argument, which keeps its precondition (the cap) from handing its share of draws to `settle`, the dearest
rule (a settle runs the cluster to quiescence and asks every liveness invariant).

A violation is an `InvariantViolation` (AssertionError): Hypothesis shrinks the example, and the machine
reports each failing session to the campaign's `sink` (the last one reported is the shrunk one, which
Hypothesis runs last). With `keep_going` (`kmodel check --keep-going`) a violation ends its example, not
the campaign: the machine hands the failing session to `sink` and does not raise, and the example's remaining
steps do nothing, so Hypothesis sees a passing example, neither shrinks nor saves it, and runs its whole
budget (run.py minimizes each distinct violation by replay instead). Subclass to check more: set `config`,
add components in `extra_components()` and invariants in `extra_invariants` (see kmodel.pytest_plugin).
"""

from __future__ import annotations

import time
from typing import Any, Callable, ClassVar, Iterable, Optional, Sequence

import attrs
from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, precondition

from kmodel.checker.actions import (
    APPS,
    BARE_PODS,
    CrashMidReconcile,
    FIRST_RECONCILER,
    LoseNode,
    reconcilers,
    CrashProcess,
    RestartProcess,
    is_mid_reconcile,
    process_of,
    AddNode,
    ApplyDeployment,
    ApplyPod,
    ApplyService,
    Compact,
    DeleteObject,
    FailContainer,
    Fault,
    RemoveNode,
    RunEvents,
    RunFair,
    ScaleDeployment,
    removed_components,
    Settle,
    Action,
)
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.statefulset_actions import STATEFULSET
from kmodel.checker.rulebook import rule, rule_families
from kmodel.checker.session import InvariantViolation, Session, all_invariants, with_component_invariants
from kmodel.component.registry import component_sometimes
from kmodel.checker.snapshot import Snapshot, SnapshotError
from kmodel.checker.stats import Stats
from kmodel.checker.addressplan import draw_address_plan
from kmodel.checker.staticpods import draw_static_pods
from kmodel.checker.topology import ELECTING_COUNTS, draw_topology, topology_text
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import BreakStream, Crash, DelayHead, DropHead, Heal, Partition, Restart, SlowLink
from kmodel.invariants.registry import Invariant
from kmodel.invariants.sometimes import Sometimes, registered_sometimes
from kmodel.kubelet.pod_worker import CONTAINER_NAME_LABEL, POD_NAMESPACE_LABEL, POD_NAME_LABEL

DELAYS_MS = (1_000, 5_000, 30_000)  # delay_link
#: delay_link's draw past DELAYS_MS: hold the link until the next timer falls due (`_delay_ms`)
UNTIL_NEXT_TIMER = len(DELAYS_MS)
LAGS_MS = (2_000, 10_000, 60_000)  # lag_watch_cache
COMPACT_WINDOW = 41  # compact: at most this many revisions behind the newest
NODE_CPUS = ("2", "4", "8")  # add_node
#: delete_pod: the bare pods, then the StatefulSet's first two pods (there whenever `db` runs two replicas or more)
DELETED_PODS: tuple[str, ...] = (*BARE_PODS, f"{STATEFULSET}-0", f"{STATEFULSET}-1")
#: the fault kinds, in the order a fault rule falls through when its own kind has no candidate now (the ones
#: that often have none first, so they happen whenever they can; then those that nearly always can, the
#: passing faults first: break_stream, compact, then lag_watch_cache, which can hold a watch for a minute),
#: and the method listing each kind's candidates
FAULTS: tuple[str, ...] = ("crash", "crash_mid_reconcile", "fail_container", "delay_link", "restart", "heal",
                           "drop_message", "partition", "break_stream", "compact", "lag_watch_cache")
FAULT_CANDIDATES: dict[str, str] = {
    "crash": "_crashable", "restart": "restartable", "heal": "_partitions", "partition": "_reachable",
    "break_stream": "_open_streams",
    "drop_message": "droppable", "delay_link": "_nonempty_links", "lag_watch_cache": "laggable",
    "crash_mid_reconcile": "_reconcilers", "fail_container": "failable", "compact": "compactable",
}


@attrs.frozen
class _Warm:
    """A campaign's warmed-up session, snapshotted once (see `KmodelMachine._start`)."""

    key: tuple
    stats: Stats
    snapshot: Snapshot
    events: int  # model events the snapshot has applied (counted once, when it was built)


#: the rule families every machine has (kmodel.checker.rulebook: each `RuleFamily` of a `*_rules` module)
EVERY_MACHINE_FAMILIES: tuple[type, ...] = tuple(f for f in rule_families() if f.in_every_machine)


class KmodelMachine(*EVERY_MACHINE_FAMILIES, RuleBasedStateMachine):  # type: ignore[misc]
    """The checker's state machine over a whole default cluster. See the module docstring."""

    config: ClusterConfig = ClusterConfig()
    #: the topology counts each example draws as its first choices, before its session is built
    #: (kmodel.checker.topology: the campaign profile's; empty, every example runs `config` as it is)
    drawn_counts: ClassVar[tuple[str, ...]] = ()
    #: each example draws its address plan after the counts (kmodel.checker.addressplan: the service CIDR, the
    #: cluster CIDR and the node block size), when `config` runs the default plan; False runs `config`'s
    draws_address_plan: ClassVar[bool] = True
    #: each example draws node-1's static pod after its address plan (kmodel.checker.staticpods): the campaign of
    #: `kmodel check` turns it on (kmodel.checker.run); a machine of one's own (a test's, a plugin user's) keeps the
    #: static pods its configuration names
    draws_static_pods: ClassVar[bool] = False
    variant: str = "default"
    #: invariants checked besides the registered ones (a subclass's own)
    extra_invariants: ClassVar[tuple[Invariant, ...]] = ()
    #: False: check only `extra_invariants` (a plugin test of one controller), and of the sometimes properties
    #: only `extra_sometimes`
    registered_invariants: ClassVar[bool] = True
    #: sometimes properties counted besides the registered ones (invariants/sometimes.py)
    extra_sometimes: ClassVar[tuple[Sometimes, ...]] = ()
    #: what the user has done before every example starts (applied before the warmup run, so its pods run by
    #: the first rule): without it, Hypothesis' swarm testing, which turns each rule off in about half the
    #: examples, would leave half of them without a single pod for the pod invariants and pod faults
    initial_actions: ClassVar[tuple[Action, ...]] = (ApplyDeployment("web", 2), ApplyService("web"))
    warmup_ms: ClassVar[int] = 15_000
    burst: ClassVar[int] = 8
    max_added_nodes: ClassVar[int] = 2
    #: remove_node on: a removed machine is gone for good (never restarted, its in-flight requests lost with it,
    #: see Cluster.remove_node), and liveness judges only the machines still in the cluster
    node_removal: ClassVar[bool] = True
    settle_bound_ms: ClassVar[int] = 600_000
    #: a settle's event bound, per node of the cluster (Settle.max_events, judged from Settle.busy_ms on):
    #: passing settles of a dev example run at most about 600 events per node, a campaign's 1,500, a busy spell
    #: after a heal 21,000 in 75 s; a churning cluster's ran 100,000 per node to the time bound
    settle_events_per_node: ClassVar[int] = 10_000
    #: start every example from a snapshot of the campaign's warmed-up session instead of building and warming
    #: a cluster each time. None: on, unless a subclass overrides `extra_components` (its components might be
    #: referenced from the machine, which a snapshot would not follow); True or False to force it.
    snapshot_warmup: ClassVar[Optional[bool]] = None
    #: free each passing example's session at its teardown (`Session.dispose`); False keeps it readable after the
    #: example (a subclass's teardown that inspects `self.cluster` after calling this one's)
    dispose_sessions: ClassVar[bool] = True
    #: the campaign's statistics (a fresh Stats per class unless run.py sets one)
    stats: ClassVar[Optional[Stats]] = None
    #: called with each session that failed (the campaign keeps the last: the shrunk one)
    sink: ClassVar[Optional[Callable[[Session], None]]] = None
    #: a violation ends its example and is handed to `sink`, never raised to Hypothesis (see the module docstring)
    keep_going: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        if cls.stats is None:
            cls.stats = Stats()
        self.stats: Stats = cls.stats
        self.stats.example_started()
        self._finished = False
        self._broken = False
        self._ended = False  # keep_going: a violation ended this example; its remaining steps do nothing
        self._rules_run = -1  # Hypothesis checks once before the first rule
        # this example's configuration: the class's, with the topology counts the example drew (if it draws any),
        # then its address plan (kmodel.checker.addressplan) and node-1's static pod (kmodel.checker.staticpods)
        self.config = draw_topology(type(self).config, self.drawn_counts)
        if self.draws_address_plan:
            self.config = draw_address_plan(self.config)
        if self.draws_static_pods:
            self.config = draw_static_pods(self.config)
        if self.drawn_counts:
            self.stats.topology_drawn(topology_text(self.config))
        self.session = self._start()
        self.cluster = self.session.cluster

    def _start(self) -> Session:
        """A session of the example's `config` (the class's, with the counts the example drew) that ran
        `initial_actions` and `RunFair(warmup_ms)` (the first actions of every trace): restored from the
        campaign's snapshot of that configuration when there is one, else built, warmed and (the first time)
        snapshotted. A restored
        session is the built one to the bit (the same digest, the same moves from then on); what the snapshot
        ran (its events, its warmup checks) is counted once, when it was built."""
        cls, config = type(self), self.config
        invariants, situations = cls._campaign_lists(self.stats)
        key = (config, cls.variant, cls.initial_actions, cls.warmup_ms, tuple(invariants), tuple(situations))
        use = cls.snapshot_warmup
        if use is None:
            use = not cls.has_own_components()
        warm = cls.__dict__.get("_warm", {}).get(config)
        if use and warm is not None and warm.key == key and warm.stats is self.stats:
            started = time.perf_counter()
            session = warm.snapshot.restore()
            self.stats.steps += 1 + len(cls.initial_actions)
            spent = time.perf_counter() - started
            self.stats.action_seconds += spent
            self.stats.restore_seconds += spent
            for _ in cls.initial_actions:
                self.stats.fired("workload")
            self.stats.fired("warmup")
            self._inherited_events = warm.events
            return session
        self._inherited_events = 0
        self.session = Session(config, invariants, variant=cls.variant,
                               extra_components=self.extra_components(), stats=self.stats)
        for action in cls.initial_actions:
            self._do("workload", action)
        self._do("warmup", RunFair(cls.warmup_ms))
        self.session.look_for(situations)  # what the rules reach, not the warm-up every example shares
        # (never a session a violation ended, under keep_going: every example would start ended)
        if use and cls.__dict__.get("_no_snapshot") is None and not self._ended:
            try:
                snapshot = Snapshot(self.session, shared=(self.stats, *invariants, *situations))
            except SnapshotError:
                cls._no_snapshot = True  # build every example from scratch
            else:
                # one snapshot per topology drawn (kmodel.checker.topology), each made by the first example
                # that drew it; a new campaign (its own Stats) lets the earlier one's go
                warms = cls.__dict__.get("_warm")
                if warms is None or any(w.stats is not self.stats for w in warms.values()):
                    warms = cls._warm = {}
                warms[config] = _Warm(key, self.stats, snapshot, self.session.events_applied)
        return self.session

    @classmethod
    def _campaign_lists(cls, stats: Stats) -> tuple[list[Invariant], list[Sometimes]]:
        """`invariant_list()` and `sometimes_list()`, worked out once for the campaign that `stats` counts and
        this configuration (every example of it checks the same ones; finding the registered invariants scans
        the invariants package)."""
        kept = cls.__dict__.get("_lists")
        if kept is not None and kept[0] is stats and kept[1] is cls.config:
            return kept[2], kept[3]
        invariants, situations = cls.invariant_list(), cls.sometimes_list()
        cls._lists = (stats, cls.config, invariants, situations)
        return invariants, situations

    @classmethod
    def invariant_list(cls) -> list[Invariant]:
        """The invariants this machine checks, in the order it checks them: the registered ones (unless
        `registered_invariants` is off), its `extra_invariants`, and those of the components its cluster runs
        (kmodel.component.registry)."""
        return with_component_invariants((all_invariants() if cls.registered_invariants else [])
                                         + list(cls.extra_invariants), cls.config.components)

    @classmethod
    def sometimes_list(cls) -> list[Sometimes]:
        """The sometimes properties this machine counts, in the order it asks them (those of leader election only
        when its cluster has a standby, ClusterConfig.has_standbys, or may draw one: `elects`), then those of the
        components its cluster runs (kmodel.component.registry)."""
        elects = cls.elects()
        registered = [s for s in registered_sometimes() if elects or not s.elections_only]
        own = (registered if cls.registered_invariants else []) + list(cls.extra_sometimes)
        names = {s.name for s in own}
        return own + [s for s in component_sometimes(cls.config.components) if s.name not in names]

    @classmethod
    def elects(cls) -> bool:
        """Whether an example may run a standby to take a lease over: its configuration has one, or it draws how
        many kube-controller-managers or kube-schedulers run (kmodel.checker.topology)."""
        return cls.config.has_standbys or bool(set(cls.drawn_counts) & set(ELECTING_COUNTS))

    def extra_components(self) -> list:
        """Components to run besides the cluster's own (a subclass's controllers)."""
        return []

    @classmethod
    def has_own_components(cls) -> bool:
        """Whether this machine adds components of its own (overrides `extra_components`)."""
        return cls.extra_components is not KmodelMachine.extra_components

    @classmethod
    def replay_components(cls) -> list:
        """Fresh components of this machine's own, for a replay of one of its traces outside an example (on an
        instance that has not started a session: `extra_components` may read the class's `config`, nothing the
        constructor sets)."""
        return cls.__new__(cls).extra_components()

    @classmethod
    def replays_alone(cls) -> bool:
        """Whether `kmodel replay` reproduces this machine's traces by itself: the machine checks the registered
        invariants only and runs the cluster's own components only (everything else a trace records)."""
        return cls.registered_invariants and not cls.extra_invariants and not cls.has_own_components()

    # -- executing -------------------------------------------------------------------------------------------

    #: the rule running now (kmodel.checker.rulebook.rule sets it), what `_do(action)` counts an action under
    _rule: str = ""

    def _do(self, *args: Any) -> None:
        """Execute an action: `_do(action)` counts it under the rule running, `_do(label, action)` under `label`
        (what happened, when a rule does another thing than its name says: a fault rule falling through to
        the next kind; and rules written before kmodel.checker.rulebook, which name themselves). None: nothing
        to do."""
        label, action = (self._rule, args[0]) if len(args) == 1 else args
        if not label:
            raise TypeError("_do(action) outside a rule declared with kmodel.checker.rulebook.rule: pass its label")
        if action is not None:
            self._guard(lambda: self.session.execute(action), label)

    def _guard(self, run: Callable[[], Any], rule_name: str) -> None:
        if self._ended:
            return
        before = len(self.session.actions)
        try:
            run()
        except InvariantViolation:
            if self.keep_going:
                self.stats.example_violated()
            else:
                self.stats.failed()
            self._finish()
            sink = type(self).sink
            if sink is not None:
                sink(self.session)
            if self.keep_going:
                self._ended = True
                return
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
            self.stats.example_finished(self.session.digest(), self.session.events_applied - self._inherited_events)

    def check_invariants(self, *args: Any, **kwargs: Any) -> None:
        # Hypothesis calls this once before the first rule and after every rule: count the rules run (the
        # checker's own checks run inside the session, after each action). Hypothesis' own loop over
        # @invariant methods runs only for a subclass that defines some.
        self._rules_run += 1
        if self._rules_run:
            self.stats.rule_steps += 1
        if self.invariants:
            super().check_invariants(*args, **kwargs)

    def _aim(self) -> None:
        """Point Hypothesis' targeted phase at rare situations: the example scores the sometimes properties it
        reached, each weighted by how seldom the run's earlier examples reached it (1 / (1 + times)), so that
        hill-climbing mutates the examples that got where few others did."""
        if not currently_in_test_context():
            return  # a machine driven by hand (a test), not by Hypothesis
        reached = self.stats.reached
        score = sum(1.0 / reached.get(name, 1) for name in sorted(self.session.reached))
        target(score, label="rare situations reached")

    def teardown(self) -> None:
        # keep_going: an example a violation ended is not a target to climb from (its violation is found
        # already; hill-climbing from it finds it again and again)
        if not self._broken and not self._ended:
            self._aim()
        if self.session.violation is None and not self._broken:
            started, events = time.perf_counter(), self.session.events_applied
            try:
                self._do("settle", self._settle())
            finally:
                self.stats.closing_settle_seconds += time.perf_counter() - started
                self.stats.closing_settle_events += self.session.events_applied - events
        self._finish()
        if self._ended or (self.session.violation is None and not self._broken and self.dispose_sessions):
            # a passing example is done with, and so is one a violation ended under keep_going (the sink took
            # what it keeps of it): free it now (Session.dispose)
            self.session.dispose()

    def _settle(self) -> Settle:
        """The checker's settle: heal and release everything, finish node removals, within its time bound and
        `settle_events_per_node` events per node (those of the cluster now, at least one)."""
        return Settle(self.settle_bound_ms, max_events=self.settle_events_per_node * max(len(self.cluster.nodes), 1))

    # -- the user -------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), replicas=st.integers(0, 4), cpu=st.sampled_from((0, 500, 1500)),
          host_port=st.booleans(), server_side=st.booleans())
    def apply_deployment(self, app: str, replicas: int, cpu: int, host_port: bool, server_side: bool) -> None:
        self._do(ApplyDeployment(app, replicas, cpu, host_port, server_side))

    @rule(app=st.sampled_from(APPS), replicas=st.integers(0, 5))
    def scale_deployment(self, app: str, replicas: int) -> None:
        self._do(ScaleDeployment(app, replicas))

    @rule(app=st.sampled_from(APPS))
    def delete_deployment(self, app: str) -> None:
        self._do(DeleteObject("deployments", app))

    @rule(app=st.sampled_from(APPS))
    def apply_service(self, app: str) -> None:
        self._do(ApplyService(app))

    @rule(app=st.sampled_from(APPS))
    def delete_service(self, app: str) -> None:
        self._do(DeleteObject("services", app))

    @rule(pod=st.sampled_from(BARE_PODS), i=INDEX, host_port=st.booleans())
    def apply_pod(self, pod: str, i: int, host_port: bool) -> None:
        """A bare pod: for the scheduler to place (index 0), or pinned to one of the nodes."""
        self._do(ApplyPod(pod, pick(i, ("", *self.cluster.nodes)), host_port))

    @rule(pod=st.sampled_from(DELETED_PODS))
    def delete_pod(self, pod: str) -> None:
        """A bare pod deleted, or a pod of the StatefulSet `db` (as a user restarts one): its controller sees it
        terminating for its grace period, then makes it again (at the update revision under OnDelete)."""
        self._do(DeleteObject("pods", pod))

    # add_node and remove_node can have no move at all (the cap reached, one node left): a precondition says
    # so, and Hypothesis draws another rule instead of spending a step on nothing.

    def _can_add_node(self) -> bool:
        return len(self.cluster.nodes) < self.config.nodes + self.max_added_nodes and "kubelet" in self.config.components

    @precondition(_can_add_node)
    @rule(cpu=st.sampled_from(NODE_CPUS))
    def add_node(self, cpu: str) -> None:
        """A machine joins, with 2, 4 or 8 CPUs (the cluster's own have `config.node_cpu`)."""
        self._do(AddNode(cpu))

    @precondition(lambda self: self.node_removal and len(self.cluster.nodes) > 1)
    @rule(i=INDEX)
    def remove_node(self, i: int) -> None:
        self._do(RemoveNode(pick(i, self.cluster.nodes)))

    # -- interleaving ----------------------------------------------------------------------------------------

    @rule()
    def next_event(self) -> None:
        """The first event of the menu (`Loop.enabled_events`: deliveries by link, due timers, work, then a
        time advance): the simplest move there is, and where interleavings shrink to."""
        self._guard(lambda: self.session.execute_burst([0]), "next_event")

    @rule(picks=st.lists(INDEX, min_size=1, max_size=8))
    def interleave(self, picks: list[int]) -> None:
        self._guard(lambda: self.session.execute_burst(picks[: self.burst]), "interleave")

    # -- faults ---------------------------------------------------------------------------------------------

    @rule(picks=st.lists(INDEX, min_size=1, max_size=3))
    def partition(self, picks: list[int]) -> None:
        endpoints = self.cluster.network.endpoints
        chosen = sorted({pick(i, endpoints) for i in picks})
        if len(chosen) < len(endpoints):
            self._do(Fault(Partition(tuple(chosen))))

    # Each fault rule injects a fault of its own kind when one is possible now, else of the next kind that is
    # (in FAULTS order, wrapping around): with nothing down, `restart` heals a partition if there is one, else
    # drops a message if one is in flight, else cuts one component off the network. So every fault rule does something (a step that did
    # nothing would cost Hypothesis' per-step price for no exploration), and a fault happens as often as the
    # fault rules are drawn. Stats count the kind that happened. `i` picks among that kind's candidates.

    def _fault(self, first: str, i: int, ms: int = 0) -> None:
        n = len(FAULTS)
        start = FAULTS.index(first)
        for k in range(n):
            kind = FAULTS[(start + k) % n]
            candidates = getattr(self, FAULT_CANDIDATES[kind])()
            if candidates:
                self._do(kind, self._fault_action(kind, pick(i, candidates), ms))
                return

    def _fault_action(self, kind: str, chosen: Any, ms: int) -> Optional[Action]:
        if kind == "crash_mid_reconcile":
            return CrashMidReconcile(chosen, writes=1 + ms % 3)
        if kind == "crash":
            return CrashProcess(chosen) if chosen in self.cluster.processes else Fault(Crash(chosen))
        if kind == "restart":
            return RestartProcess(chosen) if chosen in self.cluster.processes else Fault(Restart(chosen))
        if kind == "heal":
            return Fault(Heal(tuple(chosen)))
        if kind == "partition":
            return Fault(Partition((chosen,)))
        if kind == "break_stream":
            return Fault(BreakStream(chosen))
        if kind == "drop_message":
            return Fault(DropHead(*chosen))
        if kind == "delay_link":
            return Fault(DelayHead(chosen[0], chosen[1], self._delay_ms(ms)))
        if kind == "lag_watch_cache":
            return Fault(SlowLink("etcd", chosen, LAGS_MS[ms % len(LAGS_MS)]))
        if kind == "fail_container":
            return FailContainer(*chosen)
        if kind == "compact":
            return Compact(chosen)
        raise ValueError(f"unknown fault kind {kind!r}")

    def _delay_ms(self, ms: int) -> int:
        """delay_link's hold: DELAYS_MS[ms], or for UNTIL_NEXT_TIMER the time until the next timer of the cluster
        falls due (at least 1 ms): what the link holds then arrives at the instant a timer fires, just after it
        (the fair runner fires the timers due first), as an answer that comes at its own deadline."""
        ms %= len(DELAYS_MS) + 1
        if ms != UNTIL_NEXT_TIMER:
            return DELAYS_MS[ms]
        due = self.cluster.loop.clock.next_due()
        return max(1, due - self.cluster.now) if due is not None else DELAYS_MS[0]

    def _processes(self, names: Iterable[str]) -> list[str]:
        """Components as the processes they run in, sorted, each once: the cluster's controllers are one,
        kube-controller-manager (crashed and restarted as a whole)."""
        return sorted({process_of(self.cluster, n): None for n in names})

    def _crashable(self) -> list[str]:
        loop = self.cluster.loop
        return self._processes(n for n in loop.components if loop.is_up(n) and loop.components[n].supports_crash())

    def _reconcilers(self) -> list[str]:
        """Where crash_mid_reconcile strikes: first (the index shrinks toward it) the first reconciling component
        to be in the middle of a reconcile (FIRST_RECONCILER: after a user's change, the controller acting
        on it), then each reconciling component (Component.reconciles: each controller, the scheduler,
        kubelets) that has queued work or a write out now. A controller is a candidate of its own (the fault
        waits until *it* is mid-reconcile, then crashes kube-controller-manager). API servers, etcd, kube-proxy
        and clients write no objects of their own: `crash` covers them."""
        loop = self.cluster.loop
        busy = [n for n in reconcilers(self.cluster)
                if loop.components[n].has_work() or is_mid_reconcile(self.cluster, n)]
        return [FIRST_RECONCILER, *busy]

    def restartable(self) -> list[str]:
        """Processes that are down, except those of removed machines (gone for good)."""
        loop = self.cluster.loop
        down = loop.down_components()
        if not down:
            return []
        removed = removed_components(self.cluster)
        return self._processes(n for n in down if n not in removed)

    def _partitions(self) -> list[list[str]]:
        return self.cluster.network.reachability.sides()

    def _reachable(self) -> list[str]:
        """Running components still on the main side of the network (one of them can be cut off)."""
        loop, reach = self.cluster.loop, self.cluster.network.reachability
        return [n for n in sorted(loop.components) if loop.is_up(n) and reach.side_of(n) == 0]

    def _open_streams(self) -> list[str]:
        return self.cluster.network.open_streams()

    def droppable(self) -> list[tuple[str, str]]:
        """Links whose head is a request or response outside a stream: a watch stream runs over one HTTP/2
        connection, which loses nothing in the middle of a stream (its fault is break_stream)."""
        net = self.cluster.network
        return [k for k in net.nonempty_links() if net.head(*k).stream is None]

    def _nonempty_links(self) -> list[tuple[str, str]]:
        return self.cluster.network.nonempty_links()

    def laggable(self) -> list[str]:
        """The API server replicas (their etcd -> replica link can always be slowed)."""
        return [r.name for r in self.cluster.replicas]

    def mid_reconcile(self) -> list[str]:
        """Reconciling components with a write sent and not answered yet (the crash_mid_reconcile rule picks any of
        `_reconcilers` and runs until it is so: `CrashMidReconcile`)."""
        return [n for n in reconcilers(self.cluster) if is_mid_reconcile(self.cluster, n)]

    def failable(self) -> list[tuple[str, str, str]]:
        """(node, pod, container) of every running container of the default namespace on a node whose kubelet
        is up and knows it as that pod's container (a kubelet that just restarted has running containers it
        has not matched to pods yet; the kubelet's fail_container addresses containers through their pod),
        sorted."""
        loop = self.cluster.loop
        candidates = []
        for node in self.cluster.nodes:
            kubelet = loop.components.get(f"kubelet/{node}")
            if kubelet is None or not loop.is_up(kubelet.name):
                continue
            for c in kubelet.runtime.running():  # type: ignore[attr-defined]
                if c.labels.get(POD_NAMESPACE_LABEL) != "default":
                    continue
                pod, container = c.labels.get(POD_NAME_LABEL, ""), c.labels.get(CONTAINER_NAME_LABEL, "")
                if kubelet.container_id("default", pod, container) == c.id:  # type: ignore[attr-defined]
                    candidates.append((node, pod, container))
        return sorted(candidates)

    def compactable(self) -> list[int]:
        """Revisions the store can be compacted at, newest first (a drawn index is how far behind the newest)."""
        store = self.cluster.store
        return list(range(store.revision, max(store.compact_revision, store.revision - COMPACT_WINDOW), -1))

    def cut_off_crashable(self) -> list[str]:
        """The crashable processes (`_crashable`) with an endpoint cut off from the main side of the network."""
        reach = self.cluster.network.reachability
        if not reach.partitioned:
            return []
        return [p for p in self._crashable() if any(reach.side_of(e) != 0 for e in self.cluster.endpoints_of(p))]

    @rule(i=INDEX, cut_off=st.booleans())
    def crash(self, i: int, cut_off: bool = False) -> None:
        """Crash a process that runs; with `cut_off`, one cut off by a partition when there is one (a machine that lost
        its network, then its process: its peers across the partition learn nothing, and what they send it is lost
        rather than refused)."""
        cut = self.cut_off_crashable() if cut_off else []
        if cut:
            self._do(self._fault_action("crash", pick(i, cut), 0))
            return
        self._fault("crash", i)

    @rule(i=INDEX)
    def restart(self, i: int) -> None:
        self._fault("restart", i)

    @rule(i=INDEX)
    def heal(self, i: int) -> None:
        """Heal one partition (all its endpoints back on the main side)."""
        self._fault("heal", i)

    @rule(i=INDEX)
    def break_stream(self, i: int) -> None:
        self._fault("break_stream", i)

    @rule(i=INDEX)
    def drop_message(self, i: int) -> None:
        """Lose one request or response (see `droppable`)."""
        self._fault("drop_message", i)

    @rule(i=INDEX, ms=st.integers(0, UNTIL_NEXT_TIMER))
    def delay_link(self, i: int, ms: int) -> None:
        """Hold one link (its head and, FIFO, all behind it) for 1, 5 or 30 s, or until the next timer falls due."""
        self._fault("delay_link", i, ms)

    @rule(i=INDEX, ms=st.integers(0, 2))
    def lag_watch_cache(self, i: int, ms: int) -> None:
        """Slow etcd -> one API server replica for 2, 10 or 60 s: the watch responses on it, and those etcd sends
        meanwhile, wait, so that replica's watch cache lags and it serves stale reads."""
        self._fault("lag_watch_cache", i, ms)

    @rule(i=INDEX, nth=st.integers(0, 2))
    def crash_mid_reconcile(self, i: int, nth: int) -> None:
        """Crash a component while the first, second or third write of its next sync is out (see
        `_reconcilers`)."""
        self._fault("crash_mid_reconcile", i, nth)

    @rule(i=INDEX)
    def fail_container(self, i: int) -> None:
        self._fault("fail_container", i)

    @rule(keep=st.integers(0, 40))
    def compact(self, keep: int) -> None:
        """Compact the store `keep` revisions behind the newest (within what is not compacted yet)."""
        self._fault("compact", keep)

    # -- time -----------------------------------------------------------------------------------------------

    @rule(seconds=st.integers(1, 30))
    def advance_time(self, seconds: int) -> None:
        self._do(RunFair(seconds * 1000))

    @rule(events=st.integers(1, 64))
    def run_events(self, events: int) -> None:
        """Run fairly for a drawn number of events: stop mid-flight, so the next fault lands inside a
        reconcile (advance_time ends where the cluster is quiet; most work happens at one instant)."""
        self._do(RunEvents(events))

    @rule()
    def settle(self) -> None:
        self._do(self._settle())


#: lose_node stops at two lost machines: with more than two nodes of a zone not Ready, and 55 % of it, the node
#: lifecycle controller of a small cluster stops evicting (partial disruption, as upstream), and a cluster of
#: the checker's size would stay short for good by design
MAX_LOST_NODES = 2
#: the shortest settle bound that lose_node needs: 40 s of grace before the node is tainted, 300 s of
#: toleration, then the replacements' start, with room to spare
LOST_NODE_SETTLE_MS = 600_000


class LongWaits(KmodelMachine):
    """The machine with two more rules, for long runs (the campaign profile, kmodel.checker.profiles):
    `wait_long` lets minutes pass with no one acting, and `lose_node` loses a machine for good, leaving its Node
    for the control plane to deal with, which takes minutes too. A node left unreachable that long is what has its pods
    evicted (their tolerations of the not-ready and unreachable taints end after 300 s, upstream's
    DefaultTolerationSeconds); advance_time's 30 s at most took a hundred-step campaign of 1,009 examples to
    no eviction at all (the `pod-evicted` sometimes property). The dev and ci profiles keep the rules they
    always had, so their seeds explore what they did."""

    #: a settle of a long run waits 20 minutes: a controller's default rate limiter waits up to 1,000 s between
    #: two tries of a key that kept failing (workqueue's DefaultControllerRateLimiter), and an outage long
    #: enough for that (twenty minutes of failed syncs) is one these runs make. With the dev profile's 600 s, a
    #: ReplicaSet whose next try is due more than 600 s after etcd came back, which upstream does by design,
    #: would be reported as a liveness violation
    settle_bound_ms: ClassVar[int] = 1_200_000

    @rule(seconds=st.integers(60, 400))
    def wait_long(self, seconds: int) -> None:
        self._do(RunFair(seconds * 1000))

    def _can_lose_node(self) -> bool:
        # a machine whose settles end sooner than an eviction takes would report the wait as non-convergence
        return (self.node_removal and self.settle_bound_ms >= LOST_NODE_SETTLE_MS and len(self.cluster.nodes) > 1
                and len(self.cluster.lost_nodes) < MAX_LOST_NODES)

    @precondition(_can_lose_node)
    @rule(i=INDEX)
    def lose_node(self, i: int) -> None:
        """A machine fails for good and its Node is left: the control plane must evict its pods on its own
        (taint eviction, 340 s after the loss), which nothing else in the rules leaves to it for good (a crashed
        kubelet is restarted by the settle; a removed machine's Node is deleted, and PodGC takes its pods)."""
        self._do(LoseNode(pick(i, self.cluster.nodes)))
