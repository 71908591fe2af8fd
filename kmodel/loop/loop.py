"""The loop: the only scheduler. It lists the enabled events, applies exactly one per `step`, and can run
everything fairly to quiescence.

Theory of operation
-------------------
The loop owns a `Network`, a `Clock` and the components (one per endpoint, by name). The state of the
whole system changes only through `step(event)`, and every event is a value from `kmodel.loop.events`:

    Deliver(src, dst)       pop the head of a deliverable link, call dst.on_message
    FireTimer(owner, timer) pop a due timer, call owner.on_timer
    Work(component)         call component.work (only while it has_work)
    AdvanceTime(to_ms)      move the clock forward, at most to the next timer or delay release
    faults                  Partition, Heal, HealAll, ReleaseAll, DropHead, DelayHead, SlowLink,
                            BreakStream, Crash, Restart, FailRequest

A handler's effects (`Out`) are applied at once, in order, within the same step: sends go onto links,
timers are set or cancelled, a closed stream is purged and its other end told (its `on_stream_closed`
runs in the same step, and its effects are applied after the current ones, first in first out). A message
outside a stream sent to a component that is down, from a machine that reaches it, is refused the same way
(the sender's `on_send_refused`); across a partition it is lost. An `ActFor` effect carries effects another
component of the same process asked for within the handler (a shared informer calling a controller's handlers):
they are applied in place as that component's.

A crash is a process dying on a machine that stays up: its timers are cancelled, what was on its way to it
is lost, its streams break (both ends told), and every live component that ever sent it a message and
reaches it is told its connections were reset (`on_connection_reset`, in name order, with the answers the
crashed process had already sent it, which are still delivered). What it had sent stays in flight.

A partition loses packets and resets nothing, so a connection across one dies only when its client's transport
gives up on it (kmodel.loop.health): a partition or heal arms or cancels the health-checked clients' timers
``http2-health/<peer>``, and a message such a client sends across a partition with no connection up arms its dial's
timeout ``dial-timeout/<peer>``. They fire like the client's own timers (`FireTimer`), and firing one closes that
connection (`_lose_connection`: its streams end, what is in flight on it is lost, the client's
`on_connection_lost` runs).

A process that exits on its own (`ExitProcess`, client-go's leader election giving up: klog.Fatalf) is crashed by
the loop once the effects of the handler that asked are applied, every component of that process, and each gets
a timer RESTART_TIMER: when it fires, the component starts again (`Restart`), as the kubelet or systemd restarts
an exited process. A `Restart` before that cancels the timer.

A pause (`pause(name, until_ms)`, the checker's pause-process fault) stops a process's world for a while, as a
long GC pause, a SIGSTOP or a frozen VM does: it gets no deliveries (its incoming links are held until then),
its timers due meanwhile fire when it wakes, and it works no item, until the loop's timer PAUSE_TIMER fires at
`until_ms`. It then goes on with everything it believed. A link a peer first uses during the pause is held
too; a crash ends the pause and its holds. What peers' crashes and broken streams tell it
(`on_connection_reset`, `on_stream_closed`, `on_send_refused`) still reaches it at once: the kernel's notices do
not wait for the process in the model.

`enabled_events()` lists the progress events in a stable order: deliveries by (src, dst), due timers by
(due, owner, timer), work by component name, then the one time advance (to the next due time). It is the
explorer's menu. Faults are listed separately by `enabled_faults()` (only the parameterless ones; the
explorer builds `Partition`, `Heal` and `DelayHead` with parameters of its choosing), and `step` accepts
any enabled event, fault or not; it raises `EventNotEnabled` otherwise. AdvanceTime is enabled even while
messages are in flight, because a slow network is a real interleaving (a lease can expire while its renewal
is on the wire); the fair runner only advances time when nothing else is enabled.

`run_fair(until_ms)` is the fair runner: it repeats rounds of (the earliest due timer, the longest-waiting
deliverable link, the longest-waiting component with work), so nothing enabled is starved, and advances the
clock to the next due time only when none of those is left, until nothing is enabled or the next due time
is past `until_ms`. Timers fire in (due, owner, timer) order.

The cost of one event does not grow with the number of idle endpoints, links or timers: the network keeps
the deliverable links incrementally, the clock keeps a heap, and the loop keeps the components with work in
a dict updated after each call into a component (asking `has_work()` of that one component only).

A handler that raises leaves the step half applied: the exception propagates out of `step`/`run_fair`
and the loop should be thrown away (the checker reports it as a failure of that trace).

Digest
------
Every applied event's `stable_json()` (UTF-8, newline-terminated) is fed to a running blake2b hash, and for a
delivery the delivered message's content after it (`kmodel.fingerprint`: its payload and its stream), so the
digest says what happened, not only in what order: a run that delivered one field differently has another
digest. `digest()` returns its hex. Two runs that applied the same events to the same messages in the same
order have the same digest, under any PYTHONHASHSEED (tests/test_determinism.py). `events_applied` counts the
events.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Any, Callable, Iterable, Optional

from kmodel.clock import Clock
from kmodel.component.effects import ActFor, CancelTimer, CloseStream, ExitProcess, Out, Send, SetTimer
from kmodel.component.protocol import Component
from kmodel.fingerprint import content, fingerprint
from kmodel.loop.health import TIMER_PREFIXES, ConnectionHealth
from kmodel.loop.events import (
    AdvanceTime, BreakStream, Crash, DelayHead, Deliver, DropHead, FailRequest, FireTimer, Heal, HealAll, LoopEvent,
    Partition, REQUEST_FAULT_CODES, ReleaseAll, Restart, SlowLink, Work,
)
from kmodel.network import REFUSED, Message, Network


#: the loop's own timer of a process that exited (`ExitProcess`): when it fires, the process starts again
RESTART_TIMER = "loop/restart"
#: the loop's own timer of a paused process (`Loop.pause`): when it fires, the process runs again
PAUSE_TIMER = "loop/wake"
LOOP_TIMER_PREFIXES = (*TIMER_PREFIXES, "loop/")

#: How many stream-closed and send-refused handlers may run within one step before the loop calls it a
#: livelock.
MAX_CASCADE = 10_000


class EventNotEnabled(ValueError):
    """`Loop.step` was given an event that is not enabled now."""


#: in a busy spell (see `Loop.run_fair`), an instant after the first gets busy_instant // this many events
BUSY_SPELL_DIVISOR = 50
#: ... and moves the clock on by at most this much: while busy, the model runs about busy_instant //
#: BUSY_SPELL_DIVISOR events per BUSY_QUANTUM_MS (100 per 10 ms at the checker's 5,000, about 10,000 events per
#: logical second, a control plane's pace: an API server serves thousands of requests a second and pushes watch
#: events faster). Jumping straight to the next due time instead (seconds away in a quiet cluster) made a busy
#: cluster run a hundred events per logical second, so a backlog of watch events behind a hot loop never drained
#: within a settle's 600 s (tests/loop/test_loop.py, tests/scenarios/test_hot_loop.py).
BUSY_QUANTUM_MS = 10


#: the digest's line of AdvanceTime(to_ms), `AdvanceTime(to_ms).stable_json()` and a newline (its keys sorted),
#: formatted without building the event and its JSON: the fair runner records one for every advance it makes
#: (tests/loop/test_events.py checks it against the event's own)
_ADVANCE_LINE = b'{"kind":"%s","to_ms":%%d}\n' % AdvanceTime.kind.encode()


def advance_line(to_ms: int) -> bytes:
    """AdvanceTime(to_ms)'s line in the digest: its stable JSON and a newline."""
    return _ADVANCE_LINE % to_ms


class Loop:
    """Owns the network, the clock and the components; the only thing that calls a component."""

    def __init__(
        self,
        network: Optional[Network] = None,
        clock: Optional[Clock] = None,
        components: Iterable[Component] = (),
    ) -> None:
        self.network = network if network is not None else Network()
        self.clock = clock if clock is not None else Clock()
        self.components: dict[str, Component] = {}
        self._has_work_queue: dict[str, bool] = {}  # name -> does its class override has_work
        self._down: dict[str, None] = {}
        #: paused processes: name -> the time they wake (see `pause`)
        self._paused: dict[str, int] = {}
        self._work_ready: dict[str, None] = {}
        self._work_rr: deque[str] = deque()
        self._work_queued: dict[str, None] = {}
        self._hash = hashlib.blake2b(digest_size=16)
        self.events_applied = 0
        self._out = Out()
        self._tap: Optional[Callable[[Message], None]] = None
        self._deliver_cache: dict[tuple[str, str], tuple[Deliver, bytes]] = {}
        self._timer_cache: dict[tuple[str, str], tuple[FireTimer, bytes]] = {}
        self._work_cache: dict[str, tuple[Work, bytes]] = {}
        #: health-checked connections across partitions (kmodel.loop.health)
        self.health = ConnectionHealth(self.network, self.clock)
        #: the endpoints that abort their connections when their process ends (SO_LINGER 0: the kernel sends a
        #: reset and discards what it had not got acknowledged); empty upstream, filled by the
        #: `leaderelection-reset-on-exit` fix (kmodel.fixes), see `_crash`
        self.resets_on_exit: frozenset[str] = frozenset()
        # Every endpoint exists before any component starts (a start may send to any of them); sorted so
        # a set of components starts in the same order as any list of them.
        ordered = sorted(components, key=lambda c: c.name)
        for component in ordered:
            self._register(component)
        for component in ordered:
            self._start(component)

    # -- wiring ----------------------------------------------------------------------------------------

    def add_component(self, component: Component) -> None:
        """Register one more component as an endpoint and start it (its start handler runs now)."""
        self._register(component)
        self._start(component)

    def _register(self, component: Component) -> None:
        name = component.name
        if name in self.components:
            raise ValueError(f"a component named {name!r} already exists")
        if not self.network.has_endpoint(name):
            self.network.add_endpoint(name)
        self.components[name] = component
        self._has_work_queue[name] = type(component).has_work is not Component.has_work
        self.health.add_client(name, component.connection_health_check)

    def _start(self, component: Component) -> None:
        out = Out()
        component.start(self.clock.now, out)
        self._apply(component.name, out.effects)
        self._check_work(component.name, component)

    @property
    def now(self) -> int:
        return self.clock.now

    def is_up(self, name: str) -> bool:
        return name in self.components and name not in self._down

    def is_paused(self, name: str) -> bool:
        return name in self._paused

    def paused_until(self, name: str) -> Optional[int]:
        return self._paused.get(name)

    def pause(self, name: str, until_ms: int) -> None:
        """Stop `name`'s world until logical time `until_ms` (see the module docstring). Recorded in the digest."""
        if name not in self.components or name in self._down:
            raise EventNotEnabled(f"pause {name}: it is not a running component")
        if until_ms <= self.clock.now:
            raise EventNotEnabled(f"pause {name}: it must end after now ({self.clock.now})")
        self._record(f'{{"name":"pause","component":"{name}","until":{until_ms}}}\n'.encode())
        until = max(until_ms, self._paused.get(name, 0))
        self._paused[name] = until
        self._work_ready.pop(name, None)
        for timer, due in self.clock.timers_of(name).items():
            if due < until and not timer.startswith(LOOP_TIMER_PREFIXES):
                self.clock.set_at(name, timer, until)
        self.clock.set_at(name, PAUSE_TIMER, until)
        for sender in self.network.senders_to(name):
            self._hold_for_pause(sender, name)

    def _hold_for_pause(self, sender: str, name: str) -> None:
        """Hold the link sender→name until paused `name` wakes (a stopped process reads nothing), also for a
        link its first message makes during the pause; a longer hold a delay fault set stays."""
        until = self._paused[name]
        held = self.network.held_until(sender, name)
        if held is None or held < until:
            self.network.hold_link(sender, name, until)

    def down_components(self) -> list[str]:
        """The components that are down (crashed, not restarted), sorted."""
        return sorted(self._down)

    def notify_work(self, name: str) -> None:
        """Re-ask `has_work()` of one component after something outside the loop changed it (a test or
        the explorer feeding it input, like `CounterClient.enqueue`)."""
        self._check_work(name, self.components[name])

    # -- the menu ----------------------------------------------------------------------------------------

    def enabled_events(self) -> list[LoopEvent]:
        """Enabled progress events: deliveries, due timers, work, then at most one time advance."""
        events: list[LoopEvent] = [self._deliver_entry(key)[0] for key in self.network.deliverable_links()]
        events.extend(self._timer_entry(owner, timer)[0] for _, owner, timer in self.clock.due_timers())
        events.extend(self._work_entry(name)[0] for name in sorted(self._work_ready))
        next_due = self._next_due_after_now()
        if next_due is not None:
            events.append(AdvanceTime(next_due))
        return events

    def enabled_faults(self) -> list[LoopEvent]:
        """Enabled parameterless faults: drop the head of each non-empty link, break each open stream,
        crash each up component that models crashes, restart each down one, heal all (if partitioned), release
        all (if a link is held)."""
        faults: list[LoopEvent] = [DropHead(src, dst) for src, dst in self.network.nonempty_links()]
        faults.extend(BreakStream(s) for s in self.network.open_streams())
        for name in sorted(self.components):
            if name in self._down:
                faults.append(Restart(name))
            elif self.components[name].supports_crash():
                faults.append(Crash(name))
        if self.network.partitioned:
            faults.append(HealAll())
        if self.network.has_held_links:
            faults.append(ReleaseAll())
        return faults

    def why_not_enabled(self, event: LoopEvent) -> Optional[str]:
        """None if `event` is enabled now, else the reason it is not."""
        net = self.network
        t = type(event)
        if t is Deliver:
            if net.is_deliverable(event.src, event.dst):
                return None
            return f"link {event.src} -> {event.dst} has no deliverable message"
        if t is FireTimer:
            due = self.clock.due_at(event.owner, event.timer)
            if due is None:
                return f"{event.owner} has no timer {event.timer!r}"
            if due > self.clock.now:
                return f"timer {event.timer!r} of {event.owner} is due at {due}, now is {self.clock.now}"
            return None
        if t is Work:
            if event.component in self._work_ready:
                return None
            return f"{event.component} has no queued work (or is down)"
        if t is AdvanceTime:
            if event.to_ms <= self.clock.now:
                return f"time is already {self.clock.now}"
            next_due = self._next_due_after_now()
            if next_due is not None and event.to_ms > next_due:
                return f"cannot advance past the next due time {next_due}"
            return None
        if t is Partition or t is Heal:
            if not event.endpoints:
                return "no endpoints given"
            unknown = [e for e in event.endpoints if not net.has_endpoint(e)]
            return f"unknown endpoints {unknown}" if unknown else None
        if t is HealAll:
            return None if net.partitioned else "nothing is partitioned"
        if t is ReleaseAll:
            return None if net.has_held_links else "no link is held"
        if t is DropHead:
            if net.has_in_flight(event.src, event.dst):
                return None
            return f"link {event.src} -> {event.dst} is empty"
        if t is DelayHead:
            if event.delay_ms <= 0:
                return "a delay must be > 0 ms"
            if net.has_in_flight(event.src, event.dst):
                return None
            return f"link {event.src} -> {event.dst} is empty"
        if t is SlowLink:
            if event.delay_ms <= 0:
                return "a delay must be > 0 ms"
            unknown = [e for e in (event.src, event.dst) if not net.has_endpoint(e)]
            if unknown:
                return f"unknown endpoints {unknown}"
            return None if event.src != event.dst else "a link joins two endpoints"
        if t is BreakStream:
            return None if net.stream_ends(event.stream) else f"stream {event.stream!r} is not open"
        if t is Crash:
            if event.component not in self.components:
                return f"unknown component {event.component!r}"
            if event.component in self._down:
                return f"{event.component} is already down"
            if not self.components[event.component].supports_crash():
                return f"{event.component} does not model crashes"
            return None
        if t is Restart:
            return None if event.component in self._down else f"{event.component} is not down"
        if t is FailRequest:
            return self._why_not_fail_request(event)
        return f"not a loop event: {event!r}"

    def _why_not_fail_request(self, event: FailRequest) -> Optional[str]:
        if event.code not in REQUEST_FAULT_CODES:
            return f"a request fault answers with one of {list(REQUEST_FAULT_CODES)}, not {event.code}"
        if event.retry_after_seconds < 0:
            return "Retry-After must be >= 0 seconds"
        if not self.network.has_endpoint(event.src):
            return f"unknown endpoint {event.src!r}"
        server = self.components.get(event.dst)
        if server is None or not server.answers_request_faults():
            return f"{event.dst} answers no requests"
        if event.dst in self._down:
            return f"{event.dst} is down"
        return None

    def is_enabled(self, event: LoopEvent) -> bool:
        return self.why_not_enabled(event) is None

    # -- applying one event ------------------------------------------------------------------------------

    def step(self, event: LoopEvent) -> None:
        """Apply exactly one enabled event; raise `EventNotEnabled` (saying why) if it is not enabled."""
        reason = self.why_not_enabled(event)
        if reason is not None:
            raise EventNotEnabled(f"{event.name}: {reason}")
        t = type(event)
        if t is Deliver:
            self._deliver((event.src, event.dst))
        elif t is FireTimer:
            self._fire(event.owner, event.timer)
        elif t is Work:
            self._work(event.component)
        else:
            self._record(event.stable_json().encode() + b"\n")
            self._apply_other(event)

    def _apply_other(self, event: LoopEvent) -> None:
        net = self.network
        t = type(event)
        if t is AdvanceTime:
            self._advance(event.to_ms)
        elif t is Partition:
            self.health.on_reachability_changed(net.partition(event.endpoints), self.clock.now, self._down)
        elif t is Heal:
            self.health.on_reachability_changed(net.heal(event.endpoints), self.clock.now, self._down)
        elif t is HealAll:
            self.health.on_reachability_changed(net.heal_all(), self.clock.now, self._down)
        elif t is ReleaseAll:
            net.release_all()
        elif t is DropHead:
            net.drop_head(event.src, event.dst)
        elif t is DelayHead:
            net.delay_head(event.src, event.dst, self.clock.now + event.delay_ms)
        elif t is SlowLink:
            net.hold_link(event.src, event.dst, self.clock.now + event.delay_ms)
        elif t is BreakStream:
            opener, peer = net.close_stream(event.stream)
            self._tell_stream_closed(event.stream, (opener, peer))
        elif t is Crash:
            self._crash(event.component)
        elif t is Restart:
            self._restart(event.component)
        elif t is FailRequest:
            self.components[event.dst].fail_next_request(event.src, event)
        else:  # pragma: no cover - why_not_enabled rejects anything else
            raise EventNotEnabled(f"not a loop event: {event!r}")

    # -- the fair runner ---------------------------------------------------------------------------------

    def run_fair(self, until_ms: int, max_events: Optional[int] = None, busy_instant: Optional[int] = None) -> int:
        """Run fairly until nothing is enabled before `until_ms` (or `max_events` were applied); return
        how many events were applied. Never applies a fault.

        Events take no time, so components that keep each other busy (a controller recreating what another
        deletes) can hold the clock at one instant for ever, and nothing that waits for time (a delayed
        message, a timer) ever comes. With `busy_instant`, once that many events have run at one instant the
        clock moves on anyway, as real time passes while real processes are busy: to the next due time, but
        never more than BUSY_QUANTUM_MS ahead. A busy spell lasts until the cluster falls quiet by itself:
        meanwhile each later instant gets only 1/BUSY_SPELL_DIVISOR of that many events, so time keeps passing
        at a steady pace a hot loop cannot stop (a back-off of 800 ms ends after some thousands of events, not
        hundreds of thousands), and work queued meanwhile (a backlog of watch events) still gets its share of
        each quantum. A run still busy when its next step would pass `until_ms` ends there."""
        clock = self.clock
        net = self.network
        work_rr = self._work_rr
        applied = 0
        limit = max_events if max_events is not None else -1
        instant_started = applied
        threshold = busy_instant
        while applied != limit:
            if threshold is not None and applied - instant_started >= threshold:
                next_due = self._next_due_after_now()
                target = clock.now + BUSY_QUANTUM_MS
                if next_due is not None and next_due < target:
                    target = next_due
                if target > until_ms:
                    break
                self._advance_recorded(target)
                applied += 1
                instant_started = applied
                threshold = max(1, busy_instant // BUSY_SPELL_DIVISOR)
                continue
            progressed = False
            due = clock.earliest_due()
            if due is not None:
                self._fire(due[1], due[2])
                applied += 1
                progressed = True
            # ask for a link only when one may be delivered: next_fair_link takes it off the rotation
            key = net.next_fair_link() if applied != limit else None
            if key is not None:
                self._deliver(key)
                applied += 1
                progressed = True
            if work_rr and applied != limit:
                name = self._next_fair_worker()
                if name is not None:
                    self._work(name)
                    applied += 1
                    progressed = True
            if not progressed:
                next_due = self._next_due_after_now()
                if next_due is None or next_due > until_ms:
                    break
                self._advance_recorded(next_due)
                applied += 1
                instant_started = applied
                threshold = busy_instant  # quiet by itself: a busy spell is over
        return applied

    def _advance_recorded(self, to_ms: int) -> None:
        """The fair runner's AdvanceTime: recorded in the digest as the event, then applied."""
        self._record(advance_line(to_ms))
        self._advance(to_ms)

    def latest_deadline(self) -> Optional[int]:
        """The latest logical time at which anything pending now comes due: a timer of a component that is up, a
        held link's release, or what a component keeps behind a timer of its own (`Component.latest_deadline`:
        a work queue's delayed keys). None when nothing is pending. Walks everything: for rare questions."""
        down = self._down
        dues = [self.network.latest_release()]
        dues.extend(c.latest_deadline(self.clock.now) for name, c in self.components.items() if name not in down)
        dues.append(self.clock.latest_due())  # a crash cancels its owner's timers: those left are of components up
        return max((d for d in dues if d is not None), default=None)

    # -- digest ------------------------------------------------------------------------------------------

    def digest(self) -> str:
        """Hex blake2b of the stable JSON of every event applied so far, in order, each delivery followed by the
        delivered message's content."""
        return self._hash.hexdigest()

    def _record(self, line: bytes) -> None:
        self._hash.update(line)
        self.events_applied += 1

    # -- internals: the three hot events -----------------------------------------------------------------

    def _deliver(self, key: tuple[str, str]) -> None:
        entry = self._deliver_cache.get(key) or self._deliver_entry(key)
        self._hash.update(entry[1])  # _record, inlined (one call per delivery)
        self.events_applied += 1
        msg = self.network.deliver(key[0], key[1], self.clock.now)
        self._hash.update(content(msg.payload))
        if msg.stream is not None:
            self._hash.update(fingerprint(msg.stream))
        component = self.components[key[1]]
        out = self._out
        try:
            component.on_message(self.clock.now, msg, out)
        except BaseException:
            out.effects = []  # the shared Out must not carry a failed handler's effects
            raise
        if out.effects:
            self._apply(key[1], out.take())
        if self._has_work_queue[key[1]]:
            self._check_work(key[1], component)

    # -- an optional tap on deliveries (replays that draw sequence diagrams) ------------------------------

    def set_delivery_tap(self, tap: Optional[Callable[[Message], None]]) -> None:
        """Call `tap(message)` for every message delivered from now on; None removes the tap. The tapped
        deliver replaces `_deliver` on this instance only, so a loop without a tap runs the untouched hot
        path (no test per delivery)."""
        if tap is None:
            self.__dict__.pop("_deliver", None)
            self._tap = None
            return
        self._tap = tap
        self._deliver = self._deliver_tapped  # type: ignore[method-assign]

    def _deliver_tapped(self, key: tuple[str, str]) -> None:
        self._record(self._deliver_entry(key)[1])
        msg = self.network.deliver(key[0], key[1], self.clock.now)
        self._hash.update(content(msg.payload))
        if msg.stream is not None:
            self._hash.update(fingerprint(msg.stream))
        self._tap(msg)
        component = self.components[key[1]]
        out = self._out
        try:
            component.on_message(self.clock.now, msg, out)
        except BaseException:
            out.effects = []
            raise
        if out.effects:
            self._apply(key[1], out.take())
        if self._has_work_queue[key[1]]:
            self._check_work(key[1], component)

    def _fire(self, owner: str, timer: str) -> None:
        self._record(self._timer_entry(owner, timer)[1])
        self.clock.pop(owner, timer)
        if timer.startswith(LOOP_TIMER_PREFIXES):
            if timer == RESTART_TIMER:
                self._restart(owner)
                return
            if timer == PAUSE_TIMER:
                del self._paused[owner]
                self._check_work(owner, self.components[owner])
                return
            prefix, peer = timer.split("/", 1)
            self._lose_connection(owner, peer, self.health.reason(owner, prefix + "/"))
            return
        component = self.components[owner]
        out = self._out
        try:
            component.on_timer(self.clock.now, timer, out)
        except BaseException:
            out.effects = []  # the shared Out must not carry a failed handler's effects
            raise
        if out.effects:
            self._apply(owner, out.take())
        if self._has_work_queue[owner]:
            self._check_work(owner, component)

    def _work(self, name: str) -> None:
        self._record(self._work_entry(name)[1])
        component = self.components[name]
        out = self._out
        try:
            component.work(self.clock.now, out)
        except BaseException:
            out.effects = []  # the shared Out must not carry a failed handler's effects
            raise
        if out.effects:
            self._apply(name, out.take())
        self._check_work(name, component)

    def _deliver_entry(self, key: tuple[str, str]) -> tuple[Deliver, bytes]:
        entry = self._deliver_cache.get(key)
        if entry is None:
            event = Deliver(key[0], key[1])
            entry = self._deliver_cache[key] = (event, event.stable_json().encode() + b"\n")
        return entry

    def _timer_entry(self, owner: str, timer: str) -> tuple[FireTimer, bytes]:
        key = (owner, timer)
        entry = self._timer_cache.get(key)
        if entry is None:
            event = FireTimer(owner, timer)
            entry = self._timer_cache[key] = (event, event.stable_json().encode() + b"\n")
        return entry

    def _work_entry(self, name: str) -> tuple[Work, bytes]:
        entry = self._work_cache.get(name)
        if entry is None:
            event = Work(name)
            entry = self._work_cache[name] = (event, event.stable_json().encode() + b"\n")
        return entry

    # -- internals: effects --------------------------------------------------------------------------------

    def _apply(self, owner: str, effects: list) -> None:
        """Apply one handler's effects in order; handlers they trigger (a peer told its stream closed) run
        afterwards, first in first out, within the same step."""
        pending: Optional[deque] = None
        exits: Optional[list] = None
        cascade = 0
        send = self.network.send
        reachability = self.network.reachability
        health = self.health
        while True:
            for effect in effects:
                t = type(effect)
                if t is Send:
                    stream = effect.stream
                    result = send(owner, effect.dst, effect.payload, stream)
                    if self._paused and effect.dst in self._paused:
                        self._hold_for_pause(owner, effect.dst)
                    if reachability.partitioned and not reachability.can_reach(owner, effect.dst) and \
                            health.checks(owner, effect.dst) and result is not None:
                        health.on_send_across(owner, effect.dst, self.clock.now)  # a dial that cannot complete
                    if result is REFUSED:
                        if stream is not None:
                            # Connection refused: the opener learns its new stream is closed.
                            pending = self._queue_stream_closed(pending, owner, stream)
                        elif self.network.reachability.can_reach(owner, effect.dst):
                            # A message to a process that is down, on a machine the sender reaches: refused
                            # at once (across a partition it is lost: the sender waits out its timeout).
                            pending = self._queue_send_refused(pending, owner, effect.dst, effect.payload)
                elif t is SetTimer:
                    if effect.at is not None:
                        self.clock.set_at(owner, effect.name, effect.at)
                    else:
                        self.clock.set_after(owner, effect.name, effect.delay_ms)
                elif t is CancelTimer:
                    self.clock.cancel(owner, effect.name)
                elif t is CloseStream:
                    ends = self.network.stream_ends(effect.stream)
                    if ends is None:
                        continue  # already ended: closing twice is harmless
                    if owner not in ends:
                        raise ValueError(f"{owner} closed stream {effect.stream!r}, which is not its own")
                    self.network.close_stream(effect.stream)
                    peer = ends[1] if ends[0] == owner else ends[0]
                    pending = self._queue_stream_closed(pending, peer, effect.stream)
                elif t is ExitProcess:
                    exits = [effect] if exits is None else [*exits, effect]
                elif t is ActFor:
                    self._apply(effect.owner, effect.effects)  # another member's effects, in place
                else:
                    raise TypeError(f"{owner} asked for an unknown effect {effect!r}")
            if not pending:
                if exits:
                    self._exit(exits)
                return
            cascade += 1
            if cascade > MAX_CASCADE:
                raise RuntimeError(
                    f"more than {MAX_CASCADE} stream-closed or send-refused handlers ran within one step: "
                    "components are reopening refused streams or resending refused messages at once; retry "
                    "after a timer instead"
                )
            endpoint, stream, refused = pending.popleft()
            if stream is not None:
                owner, effects = self._call_stream_closed(endpoint, stream)
            else:
                owner, effects = self._call_peer_handler(endpoint, "on_send_refused", *refused)

    def _queue_stream_closed(self, pending: Optional[deque], endpoint: str, stream: str) -> deque:
        if pending is None:
            pending = deque()
        if endpoint not in self._down:
            pending.append((endpoint, stream, None))
        return pending

    def _queue_send_refused(self, pending: Optional[deque], endpoint: str, dst: str, payload: Any) -> deque:
        if pending is None:
            pending = deque()
        if endpoint not in self._down:
            pending.append((endpoint, None, (dst, payload)))
        return pending

    def _call_peer_handler(self, endpoint: str, handler: str, *args: Any) -> tuple[str, list]:
        """Call `endpoint`'s handler of what befell a peer or a stream (on_stream_closed, on_connection_reset,
        on_send_refused) with (now, *args, out); return the effects it asked for, to be applied."""
        component = self.components[endpoint]
        out = Out()
        getattr(component, handler)(self.clock.now, *args, out)
        if self._has_work_queue[endpoint]:
            self._check_work(endpoint, component)
        return endpoint, out.effects

    def _call_stream_closed(self, endpoint: str, stream: str) -> tuple[str, list]:
        return self._call_peer_handler(endpoint, "on_stream_closed", stream)

    def _tell_stream_closed(self, stream: str, ends: Iterable[str]) -> None:
        """Tell the live ends of an ended stream, in the order given (opener first)."""
        for endpoint in ends:
            if endpoint not in self._down:
                owner, effects = self._call_stream_closed(endpoint, stream)
                self._apply(owner, effects)

    # -- internals: work queue -----------------------------------------------------------------------------

    def _check_work(self, name: str, component: Component) -> None:
        if name not in self._down and not (self._paused and name in self._paused) and component.has_work():
            if name not in self._work_ready:
                self._work_ready[name] = None
                if name not in self._work_queued:
                    self._work_rr.append(name)
                    self._work_queued[name] = None
        else:
            self._work_ready.pop(name, None)

    def _next_fair_worker(self) -> Optional[str]:
        rr = self._work_rr
        while rr:
            name = rr.popleft()
            del self._work_queued[name]
            if name in self._work_ready:
                # Back of the line; _check_work after the work keeps or drops it.
                rr.append(name)
                self._work_queued[name] = None
                return name
        return None

    # -- internals: time, crash, restart -------------------------------------------------------------------

    def _next_due_after_now(self) -> Optional[int]:
        timer = self.clock.next_due_after_now()
        release = self.network.next_release()
        if release is not None and release <= self.clock.now:
            release = None  # released on the last advance already; cannot happen, kept safe
        if timer is None:
            return release
        if release is None:
            return timer
        return min(timer, release)

    def _advance(self, to_ms: int) -> None:
        self.clock.advance_to(to_ms)
        self.network.release(to_ms)

    def _crash(self, name: str) -> None:
        component = self.components[name]
        self._down[name] = None
        paused_until = self._paused.pop(name, None)
        if paused_until is not None:
            # the pause ends with the process: what is sent to it after a restart is not held until the
            # pause would have ended (a hold a delay fault set later than the pause's stays)
            for sender in self.network.senders_to(name):
                self.network.unhold_link(sender, name, paused_until)
        self._work_ready.pop(name, None)
        self.clock.cancel_owner(name)
        self.health.on_crash(name)
        net = self.network
        broken = net.set_down(name)
        if name in self.resets_on_exit:
            # A request lost on the wire across a partition is only in the sender's retransmit queue: an
            # aborted connection discards it, so it never lands after a successor acted. What a reachable link
            # still carries (a delay) is ahead of the reset and still arrives.
            for peer in net.peers_of(name):
                if not net.reachability.can_reach(name, peer):
                    net.drop_between(name, peer)
        component.crash()
        for stream, opener, peer in broken:
            self._tell_stream_closed(stream, (opener, peer))
        # The process is gone, its machine is not: the kernel resets its connections, so each live sender
        # that reaches it learns at once (requests it had sent there are lost; a request sent from now on
        # is refused, see _apply). Told in name order, after the streams, with what the crashed process had
        # sent it that is still on its way (TCP delivers that before the reset).
        for sender in net.senders_to(name):
            if sender != name and sender not in self._down and net.reachability.can_reach(sender, name):
                arriving = tuple(m.payload for m in net.in_flight(name, sender) if m.stream is None)
                owner, effects = self._call_peer_handler(sender, "on_connection_reset", name, arriving)
                self._apply(owner, effects)

    def _lose_connection(self, client: str, peer: str, reason: str) -> None:
        """`client`'s transport gave up on its connection to `peer`, or on its dial there (kmodel.loop.health):
        the streams between them end, what is in flight between them outside streams is lost, the peer is told
        of each stream (in stream order; a real partition keeps it from hearing the close until it heals, it is
        told now), and the client is told its connection was lost (`on_connection_lost`, with the transport's
        error, `reason`), which covers its ends of those streams: they ended with that error (client-go's
        watch decoder reports it as an error event), not as a reset, so the client is not told of each."""
        self.health.fired(client, peer)
        net = self.network
        broken = net.streams_between(client, peer)
        for stream, _, _ in broken:
            net.close_stream(stream)
        net.drop_between(client, peer)
        for stream, opener, other in broken:
            self._tell_stream_closed(stream, (other if opener == client else opener,))
        # the client is up: a crash cancels its timers, these among them
        owner, effects = self._call_peer_handler(client, "on_connection_lost", peer, reason)
        self._apply(owner, effects)

    def _exit(self, exits: list) -> None:
        """Processes that exited (`ExitProcess`): crash each member that is up, then arm its RESTART_TIMER."""
        for effect in exits:
            for name in effect.members:
                if name not in self._down:
                    self._crash(name)
                    self.clock.set_after(name, RESTART_TIMER, effect.restart_after_ms)

    def _restart(self, name: str) -> None:
        self.clock.cancel(name, RESTART_TIMER)
        del self._down[name]
        self.network.set_up(name)
        component = self.components[name]
        out = Out()
        component.start(self.clock.now, out)
        self._apply(name, out.effects)
        self._check_work(name, component)
