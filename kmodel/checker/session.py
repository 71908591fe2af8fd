"""A session: one cluster, the actions executed on it, the invariants checked after each, and its digest.

Theory of operation
-------------------
The state machine and the replayer both drive a cluster through a `Session`; the machine decides which
action comes next, the replayer reads it from a trace, and the session does the rest the same way for both:

1. append the action to `actions` and feed its stable JSON to a running blake2b (`digest()` adds the loop's
   own digest of every model event applied, with each delivered message's content, and the store's digest of
   every write, with the value written: two sessions that agree on the digest executed the same actions,
   the model made the same moves, its messages said the same things and etcd holds the same values);
2. apply it to the cluster;
3. check every safety invariant (those it was given, and those registered with the components its cluster runs:
   kmodel.component.registry), each with its own memo dict kept for the session (so invariants can be
   incremental; every memo also holds, under `registry.SHARED`, one dict shared by the session's invariants).
   An invariant that declares what it reads (kmodel.invariants.inputs) is skipped while none of that changed
   since it was last evaluated (it held then, so it holds now); KMODEL_INVARIANTS_EVERY_STEP=1 asks every one.
   A `Settle` action also asks, after each chunk of fair running, whether every liveness invariant holds
   (stopping at the first that does not), and fails with the ones that still do not when its bound is
   reached. Then the sometimes properties it was told to look for (`look_for`, invariants/sometimes.py)
   that it has not reached yet are asked whether it has now; each one reached is counted once per session in
   `stats`.

A violation raises `InvariantViolation` (an AssertionError, so Hypothesis shrinks it) naming the invariant.
An exception from the model itself (a handler that raised) is reported the same way under the name
``model-error``: the trace reproduces it like any violation. A replayed event that is not enabled any more
raises `TraceDiverged` instead: the trace does not fit this model.

`dispose()` frees a finished session at once: see its docstring.

Optionally (`record_messages=True`, replays only) a tap on the loop records each delivered message as
(step index, src, dst, short label: kmodel.checker.labels) for the report's sequence diagram; off, the loop's hot path is untouched.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Iterable, Optional, Sequence

import attrs

from kmodel.checker.actions import Action, Fire, NotSettled, Settle
from kmodel.checker.labels import MessageLabels
from kmodel.checker.stats import Stats
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.loop import LoopEvent, EventNotEnabled
from kmodel.variants import NAMES
from kmodel.invariants.registry import CHECK, Invariant, LIVENESS, SAFETY, SHARED, registered
from kmodel.invariants import inputs
from kmodel.invariants.inputs import Changes
from kmodel.invariants.sometimes import Sometimes
from kmodel import invariants
from kmodel.component.registry import component_invariants

MODEL_ERROR = "model-error"
VARIANTS: tuple[str, ...] = NAMES


def all_invariants() -> list[Invariant]:
    """Every registered invariant, by name, after importing every module of the `invariants` package."""
    import importlib
    import pkgutil

    for module in sorted(m.name for m in pkgutil.iter_modules(invariants.__path__)):
        if not module.startswith("_"):
            importlib.import_module(f"kmodel.invariants.{module}")
    return registered()


def with_component_invariants(invariants: Iterable[Invariant], components: Sequence[str]) -> list[Invariant]:
    """`invariants`, then those of the components a cluster runs (kmodel.component.registry) that are not among
    them already (by name): a component's guarantee is checked wherever a cluster runs it."""
    out = list(invariants)
    names = {inv.name for inv in out}
    return out + [inv for inv in component_invariants(components) if inv.name not in names]


class InvariantViolation(AssertionError):
    """An invariant failed after step `step` (0-based index into the session's actions)."""

    def __init__(self, invariant: str, message: str, step: int) -> None:
        super().__init__(f"{invariant}: {message} (after step {step})")
        self.invariant = invariant
        self.message = message
        self.step = step


class TraceDiverged(Exception):
    """A replayed action could not be applied: the model no longer makes the moves the trace recorded."""


class Session:
    """See the module docstring."""

    def __init__(
        self,
        config: ClusterConfig,
        invariants: Iterable[Invariant],
        *,
        variant: str = "default",
        extra_components: Iterable[Any] = (),
        stats: Optional[Stats] = None,
        record_messages: bool = False,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; variants: {', '.join(VARIANTS)}")
        config = attrs.evolve(config, variant=variant)
        self.config = config
        self.variant = variant
        self.cluster = Cluster(config, extra=extra_components)
        #: the store's revision once the cluster booted, before any action (a trace records it: trace.fitted)
        self.boot_revision: int = self.cluster.store.revision
        invs = with_component_invariants(invariants, config.components)
        self.safety = [inv for inv in invs if inv.kind == SAFETY]
        self.liveness = [inv for inv in invs if inv.kind == LIVENESS]
        # each invariant's own memo, all holding one dict shared by the run (registry.SHARED)
        shared: dict = {CHECK: 0}
        self.memos: dict[str, dict] = {inv.name: {SHARED: shared} for inv in invs}
        self._shared = shared
        #: (self.safety, what changed in their inputs (kmodel.invariants.inputs), each safety invariant's name,
        #: check, memo and the bits of its inputs (0: it declares none)), built at the first check
        self._asks: Optional[tuple[list, Changes, list[tuple[str, Any, dict, int]]]] = None
        #: the sometimes properties not reached yet in this session, each with its own memo (sharing the run's
        #: dict), and those reached: name -> the step after which it was (see `look_for`)
        self.unreached: list[tuple[Sometimes, dict]] = []
        self.reached: dict[str, int] = {}
        self._last_failing: Optional[Invariant] = None  # the liveness invariant that failed last
        self.stats = stats if stats is not None else Stats()
        self.actions: list[Action] = []
        self.violation: Optional[InvariantViolation] = None
        self._hash = hashlib.blake2b(digest_size=16)
        self.messages: list[tuple[int, str, str, str]] = []
        self._labels = MessageLabels()
        if record_messages:
            self.cluster.loop.set_delivery_tap(self._tap)

    def _tap(self, msg: Any) -> None:
        self.messages.append((len(self.actions) - 1, msg.src, msg.dst, self._labels(msg)))

    # -- executing ---------------------------------------------------------------------------------------

    def execute(self, action: Action) -> None:
        """Apply one action and check the safety invariants; raise InvariantViolation on a violation."""
        self._execute(action, None)

    def execute_burst(self, picks: Sequence[int]) -> Optional[Fire]:
        """Fire a burst of enabled progress events, the i-th chosen as `picks[i]` modulo the events enabled
        after the ones before it (so each choice sees the state the previous one left). The burst is
        recorded as one `Fire` of the events chosen, so a replay applies exactly them. None if nothing was
        enabled."""
        loop = self.cluster.loop
        first = loop.enabled_events()
        if not first:
            return None
        chosen: list[LoopEvent] = []

        def burst() -> None:
            enabled = first
            for i in picks:
                if not enabled:
                    return
                event = enabled[i % len(enabled)]
                chosen.append(event)
                loop.step(event)
                enabled = loop.enabled_events()

        action = self._execute(None, burst, lambda: Fire(tuple(chosen)))
        return action  # type: ignore[return-value]

    def _execute(self, action: Optional[Action], run: Optional[Callable[[], None]] = None,
                 record: Optional[Callable[[], Action]] = None) -> Action:
        if self.violation is not None:
            raise RuntimeError("the session already failed; start a new one")
        step = len(self.actions)
        if action is not None:
            self._record(action)
        stats = self.stats
        stats.steps += 1
        started = time.perf_counter()
        try:
            if run is not None:
                try:
                    run()
                finally:
                    action = record()  # type: ignore[misc]
                    self._record(action)
            elif isinstance(action, Settle):
                action.apply(self.cluster, converged=self._liveness_holds)
            else:
                action.apply(self.cluster)  # type: ignore[union-attr]
        except InvariantViolation as exc:
            self._fail(exc)
        except NotSettled as exc:
            failing = self._liveness_failures()
            if failing:
                name, message = failing[0]
                self._fail(InvariantViolation(name, f"{message} ({exc})", step))
            self._fail(InvariantViolation("settles", str(exc), step))
        except EventNotEnabled as exc:
            raise TraceDiverged(f"step {step} ({action.name}): {exc}") from None
        except Exception as exc:
            self._fail(InvariantViolation(MODEL_ERROR, f"{type(exc).__name__}: {exc}", step), cause=exc)
        finally:
            stats.action_seconds += time.perf_counter() - started
        self.check_safety(step)
        return action  # type: ignore[return-value]

    def _record(self, action: Action) -> None:
        self.actions.append(action)
        self._hash.update(action.stable_json().encode() + b"\n")

    def _fail(self, violation: InvariantViolation, cause: Optional[BaseException] = None) -> None:
        self.violation = violation
        self.stats.violations[violation.invariant] = self.stats.violations.get(violation.invariant, 0) + 1
        raise violation from cause

    def check_safety(self, step: int) -> None:
        stats = self.stats
        checks = stats.checks
        started = time.perf_counter()
        self._shared[CHECK] += 1  # a new check: what the invariants derived in the last one is out of date
        try:
            cluster = self.cluster
            asks = self._asks
            if asks is None or asks[0] is not self.safety:
                asks = self._asks = self._build_asks()
            changes = asks[1]
            if inputs.EVERY_STEP:
                changes.forget()
                changed = -1  # every bit: every invariant is asked
            else:
                changed = changes.changed()
            for name, check, memo, bits in asks[2]:
                checks[name] = checks.get(name, 0) + 1
                if bits and not bits & changed:
                    continue  # none of its inputs changed since it was last asked, and it held then: it holds
                for message in check(cluster, memo):
                    self._fail(InvariantViolation(name, message, step))
            if self.unreached:
                self._look_for_situations(step)
        finally:
            stats.invariant_seconds += time.perf_counter() - started

    def _build_asks(self) -> tuple[list, Changes, list[tuple[str, Any, dict, int]]]:
        """What `check_safety` asks: the safety invariants, the inputs they declare (each once, in order of first
        declaration) and, per invariant, its name, check, memo and the bits of its inputs."""
        declared: list = []
        for inv in self.safety:
            declared.extend(i for i in inv.reads or () if i not in declared)
        changes = Changes(self.cluster, declared)
        return (self.safety, changes,
                [(inv.name, inv.check, self.memos[inv.name], changes.mask(inv.reads)) for inv in self.safety])

    def look_for(self, situations: Iterable[Sometimes]) -> None:
        """From now on, ask these sometimes properties after every action. What happened before (the checker's
        warm-up, the same in every example) does not count: each property first reads what happened up to now,
        and its answer is dropped (a property that looks at a state rather than at what happened, one true
        already, is then reached at the first action)."""
        self._shared[CHECK] += 1
        for prop in situations:
            memo: dict = {SHARED: self._shared}
            prop.reached(self.cluster, memo)
            self.unreached.append((prop, memo))

    def _look_for_situations(self, step: int) -> None:
        """Ask each sometimes property not reached yet in this session; count the ones reached now."""
        still = []
        for prop, memo in self.unreached:
            if prop.reached(self.cluster, memo):
                self.reached[prop.name] = step
                self.stats.situation_reached(prop.name)
            else:
                still.append((prop, memo))
        self.unreached = still

    def _liveness_failures(self) -> list[tuple[str, str]]:
        stats = self.stats
        started = time.perf_counter()
        failing: list[tuple[str, str]] = []
        try:
            for inv in self.liveness:
                stats.checks[inv.name] = stats.checks.get(inv.name, 0) + 1
                for message in inv.check(self.cluster, self.memos[inv.name]):
                    failing.append((inv.name, message))
                    break
        finally:
            spent = time.perf_counter() - started
            stats.invariant_seconds += spent
            stats.liveness_seconds += spent
        return failing

    def _liveness_holds(self) -> bool:
        """Safety first, then liveness until the first invariant that fails (the one that failed last time is
        asked first: a cluster still converging usually fails the same one again). Liveness invariants only
        read, without memo, so skipping the others changes nothing but the cost; the final, passing answer
        has asked them all."""
        stats = self.stats
        asked = time.perf_counter()
        self.check_safety(len(self.actions) - 1)
        started = time.perf_counter()
        try:
            last = self._last_failing
            order = self.liveness if last is None else [last, *(inv for inv in self.liveness if inv is not last)]
            for inv in order:
                stats.checks[inv.name] = stats.checks.get(inv.name, 0) + 1
                for _ in inv.check(self.cluster, self.memos[inv.name]):
                    self._last_failing = inv
                    return False
            return True
        finally:
            done = time.perf_counter()
            stats.invariant_seconds += done - started
            stats.liveness_seconds += done - asked

    # -- after the end -----------------------------------------------------------------------------------

    def dispose(self) -> None:
        """Break the reference cycles of a finished session (the checker's passing examples, the minimizer's
        replays), so that CPython frees it by reference counting the moment it is dropped. A model is one big
        cyclic graph (components hold continuations that hold the components); left alone, a dead session is
        found only by the cyclic collector, which walks it, and every other live object of its generation,
        several times before it finds it dead (a large share of a long run's time).

        What is cleared: each component's attributes and the attributes of the model objects it holds (its
        client, informers, queues; instances of kmodel classes with a `__dict__`), then the loop, network,
        clock, store, cluster and this session. Nothing shared is touched: the snapshot's shared values are
        frozen (they have no `__dict__`) and the campaign's Stats and invariants are only let go of. The
        session, its cluster and its components must not be used afterwards."""
        cluster = self.cluster
        loop = cluster.loop
        for component in list(loop.components.values()):
            attributes = getattr(component, "__dict__", None)
            if attributes is None:
                continue
            for value in attributes.values():
                inner = getattr(value, "__dict__", None)
                if type(inner) is dict and type(value).__module__.startswith("kmodel."):
                    inner.clear()
            attributes.clear()
        for obj in (loop.network, loop.clock, loop, cluster.store, cluster, self):
            attributes = getattr(obj, "__dict__", None)
            if attributes is not None:
                attributes.clear()

    # -- results -----------------------------------------------------------------------------------------

    def digest(self) -> str:
        """blake2b over every executed action's stable JSON, then the loop's digest of its events and messages,
        then the store's digest of its writes."""
        h = self._hash.copy()
        h.update(self.cluster.loop.digest().encode())
        h.update(self.cluster.store.digest().encode())
        return h.hexdigest()

    @property
    def events_applied(self) -> int:
        return self.cluster.loop.events_applied
