"""Leader election on a Lease, as client-go's tools/leaderelection does it (leaderelection.go and
resourcelock/leaselock.go, Kubernetes 1.28-1.32), sans-IO.

Theory of operation
-------------------
Several copies of a component (kube-controller-manager, kube-scheduler) run; exactly one acts. Each copy
embeds a `LeaderElector` that competes for one Lease (kube-system/<component>) through its owner's
`ApiClient`. The owner forwards its timer `timer` to `on_timer` and calls `reset` when its process crashes;
`start` begins a new process's election under a new identity.

* Identity: the host name, "_", and a UUID (upstream: os.Hostname() + "_" + uuid.NewUUID()), the UUID drawn
  from the client's seeded random source, so a restarted process is a new candidate (a new holder).
* acquire (wait.JitterUntil, sliding, JitterFactor 1.2): `try_acquire_or_renew` at once, then again
  RetryPeriod × (1 + 1.2 × rand) after each failed try ends, until one succeeds. Then the "<id> became leader"
  Event (reason LeaderElection, on the Lease), `on_started_leading`, and the renew loop.
* renew (wait.Until with RetryPeriod around wait.PollImmediateUntil under a RenewDeadline context): each round
  tries at once and again every RetryPeriod after a failed try, until a try succeeds (the round ends, the next
  starts RetryPeriod later) or RenewDeadline has passed since the round began: the elector then stops leading
  ("<id> stopped leading", `on_stopped_leading`; a try still out at the deadline is cancelled with its context).
* tryAcquireOrRenew, against the Lease read and written with its resourceVersion (LeaseLock keeps the Lease it
  last read or wrote, and an Update sends that object with the new spec: a 409 Conflict loses):
  1. the leader whose lease is still valid updates optimistically (no read first); a failure falls back to 2.;
  2. GET the Lease; 404: CREATE it with this record (success: holder). Another error: the try fails;
  3. a record that differs from the one observed last becomes the observed record, and `observed_time` is the
     candidate's OWN clock now: the lease is expired when observed_time + leaseDurationSeconds is not after
     now (isLeaseValid), whatever renewTime says, so clocks need not agree;
  4. held by another and still valid by that rule: the try fails; otherwise UPDATE the Lease with this record
     (a leader keeps acquireTime and leaseTransitions, a new holder increments leaseTransitions).
  A try's `now` (renewTime, and the validity check) is taken when it starts; the observed time when its answer
  comes, as upstream's setObservedRecord reads the clock.

The requests use the leader-election client upstream builds from the component's kubeconfig with Timeout set to
RenewDeadline (its own client, so they wait for no other request's rate limit). The model's API clients are
sans-IO, so a paused process (kmodel.loop: `Loop.pause`) tries nothing until it wakes, and then acts on what it
believed: a leader that wakes after its lease expired may write before its next try tells it otherwise, as
upstream.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

import attrs

from kmodel.apiserver.events import EventRecorder
from kmodel.apiserver.wire import Response
from kmodel.component import Out
from kmodel.objects import Lease, LeaseSpec, ObjectMeta
from kmodel.objects.fastevolve import evolve

#: client-go's defaults as kube-controller-manager and kube-scheduler set them (--leader-elect-lease-duration,
#: --leader-elect-renew-deadline, --leader-elect-retry-period), and leaderelection.JitterFactor
LEASE_DURATION_MS = 15_000
RENEW_DEADLINE_MS = 10_000
RETRY_PERIOD_MS = 2_000
JITTER_FACTOR = 1.2
LEASE_NAMESPACE = "kube-system"
#: how long after exiting (OnStoppedLeading) a control-plane process starts again: the kubelet's first back-off
#: before it restarts a static pod's container that exited (10 s, the initial CrashLoopBackOff)
RESTART_DELAY_MS = 10_000
#: a request of the election answered later than this was lost and resent, or held on the way: an observer's
#: note (`LeaderElector.last_failure`) counts it as the API failing the candidate
SLOW_REQUEST_MS = 1_000
#: the Leases of the two elected components
CONTROLLER_MANAGER_LEASE = "kube-controller-manager"
SCHEDULER_LEASE = "kube-scheduler"
#: the reason of the Events the elector records (resourcelock's RecordEvent)
EVENT_REASON = "LeaderElection"


@attrs.frozen
class ElectionConfig:
    """LeaderElectionConfig's timings and the lock's name."""

    name: str
    namespace: str = LEASE_NAMESPACE
    lease_duration_ms: int = LEASE_DURATION_MS
    renew_deadline_ms: int = RENEW_DEADLINE_MS
    retry_period_ms: int = RETRY_PERIOD_MS
    jitter_factor: float = JITTER_FACTOR

    @property
    def lease_duration_seconds(self) -> int:
        return self.lease_duration_ms // 1000


def new_identity(host: str, rng: Any) -> str:
    """hostname + "_" + a version-4 UUID drawn from `rng` (upstream: uuid.NewUUID())."""
    return f"{host}_{uuid.UUID(int=rng.getrandbits(128), version=4)}"


def jittered(period_ms: int, factor: float, rng: Any) -> int:
    """wait.Jitter: period + rand.Float64() × factor × period."""
    return period_ms + int(rng.random() * factor * period_ms)


class LeaderElector:
    """One candidate's leader election (see the module docstring)."""

    def __init__(self, client: Any, config: ElectionConfig, *, host: str, timer: str, event_source: str,
                 on_started_leading: Callable[[int, Out], None], on_stopped_leading: Callable[[int, Out], None],
                 on_acted: Optional[Callable[[int, str], None]] = None) -> None:
        self.client = client
        self.config = config
        self.host = host
        self.timer = timer
        self.event_source = event_source
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        #: the identities this candidate took, in order (an observer's record, survives reset)
        self.identities: list[str] = []
        #: when a request of its election last failed for want of the API (a 5xx or 429, a timeout, a reset:
        #: not a lost race), an observer's note for `leader-elected-after-loss` (survives reset)
        self.last_failure = -1
        #: (time, identity, what): "acquired", "stopped", "woke-expired" (it ran on, leading, with its lease
        #: expired by its own clock: it woke from a pause) (an observer's record, survives reset)
        self.history: list[tuple[int, str, str]] = []
        #: (time, identity, holderIdentity, leaseDurationSeconds) of every record it took as observed
        #: (setObservedRecord), by its own clock: an observer's record for `leader-acts-within-lease`, which
        #: judges the lease from these facts instead of asking `lease_valid` (survives reset)
        self.observations: list[tuple[int, str, str, int]] = []
        self.reset()

    def reset(self) -> None:
        """Forget everything (the process crashed)."""
        self.identity = ""
        self.state = "idle"  # idle, acquiring, leading, stopped
        self.lease: Optional[Lease] = None  # LeaseLock.lease: what it last read or wrote
        self.observed: Optional[LeaseSpec] = None
        self.observed_time = 0
        self.trying = False
        self.try_started = 0
        self._attempt = 0  # numbers tries: an answer to a cancelled try is ignored
        self._round_deadline: Optional[int] = None
        self._wake: Optional[str] = None  # what the timer does when it fires: "try" or "deadline"
        self.recorder = EventRecorder(self.event_source, instance=f"{self.client.owner}/leaderelection")

    # -- state ------------------------------------------------------------------------------------------------

    @property
    def leading(self) -> bool:
        return self.state == "leading"

    def is_leader(self) -> bool:
        """IsLeader: the observed record names this candidate."""
        return self.observed is not None and self.observed.holder_identity == self.identity

    def lease_valid(self, now: int) -> bool:
        """isLeaseValid: observedTime + leaseDurationSeconds is after `now`, by this candidate's clock."""
        if self.observed is None:
            return False
        return self.observed_time + (self.observed.lease_duration_seconds or 0) * 1000 > now

    def holds_valid_lease(self, now: int) -> bool:
        """Leading, and its lease unexpired by its own clock (what the fence asks of a write)."""
        return self.leading and self.is_leader() and self.lease_valid(now)

    # -- the loops ----------------------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        """Run: a new identity, then acquire."""
        self.reset()
        self.identity = new_identity(self.host, self.client.rng)
        self.identities.append(self.identity)
        self.state = "acquiring"
        self._try(now, out)

    def on_timer(self, now: int, name: str, out: Out) -> bool:
        if name != self.timer:
            return False
        if self.state == "leading" and self.is_leader() and not self.lease_valid(now) and (
                not self.history or self.history[-1][2] != "woke-expired"):
            # running on while its own lease ran out (a pause it woke from): an observer's note
            self.history.append((now, self.identity, "woke-expired"))
        wake, self._wake = self._wake, None
        if wake == "deadline":
            self._stop(now, out)
        elif wake == "try" and self.state in ("acquiring", "leading"):
            if self.state == "leading" and self._round_deadline is None:
                self._round_deadline = now + self.config.renew_deadline_ms  # a new renew round
            self._try(now, out)
        return True

    def _arm(self, now: int, out: Out, at: int, wake: str) -> None:
        self._wake = wake
        out.set_timer(self.timer, at=at)

    def _try(self, now: int, out: Out) -> None:
        self._attempt += 1
        attempt = self._attempt
        self.trying = True
        self.try_started = now
        if self.state == "leading":  # the poll's next tick may come after the round's deadline: the deadline wins
            self._arm(now, out, self._round_deadline, "deadline")  # type: ignore[arg-type]

        def done(t: int, o: Out, ok: bool) -> None:
            if attempt != self._attempt or self.state not in ("acquiring", "leading"):
                return  # cancelled with its context (the round's deadline passed)
            self.trying = False
            self._tried(t, o, ok)

        self.try_acquire_or_renew(now, out, done)

    def _tried(self, now: int, out: Out, ok: bool) -> None:
        c = self.config
        if self.state == "acquiring":
            if not ok:
                self._arm(now, out, now + jittered(c.retry_period_ms, c.jitter_factor, self.client.rng), "try")
                return
            self.state = "leading"
            self.history.append((now, self.identity, "acquired"))
            self._event(now, out, "became leader")
            self.on_started_leading(now, out)
            # renew: wait.Until runs its first round at once
            self._round_deadline = now + c.renew_deadline_ms
            self._try(now, out)
            return
        if ok:  # the round ends; wait.Until starts the next one RetryPeriod later
            self._round_deadline = None
            self._arm(now, out, now + c.retry_period_ms, "try")
            return
        assert self._round_deadline is not None
        if now + c.retry_period_ms < self._round_deadline:
            self._arm(now, out, now + c.retry_period_ms, "try")
        else:
            self._arm(now, out, self._round_deadline, "deadline")

    def _stop(self, now: int, out: Out) -> None:
        self._attempt += 1  # a try still out is cancelled
        self.trying = False
        self.state = "stopped"
        self.history.append((now, self.identity, "stopped"))
        self._event(now, out, "stopped leading")
        self.on_stopped_leading(now, out)

    def _event(self, now: int, out: Out, what: str) -> None:
        lease = self.lease if self.lease is not None else Lease(
            metadata=ObjectMeta(name=self.config.name, namespace=self.config.namespace))
        self.recorder.record(self.client, now, out, lease, EVENT_REASON, f"{self.identity} {what}")

    # -- tryAcquireOrRenew ------------------------------------------------------------------------------------

    def _record(self, now: int) -> LeaseSpec:
        return LeaseSpec(holder_identity=self.identity, lease_duration_seconds=self.config.lease_duration_seconds,
                         acquire_time=now, renew_time=now, lease_transitions=0)

    def _observe(self, now: int, record: LeaseSpec) -> None:
        """setObservedRecord: the record, and this candidate's clock now."""
        self.observed = record
        self.observed_time = now
        self.observations.append((now, self.identity, record.holder_identity or "",
                                  record.lease_duration_seconds or 0))

    def _request(self, now: int, out: Out, verb: str, body: Any, then: Callable[[int, Response, Out], None]) -> None:
        c = self.config

        def answered(t: int, response: Response, o: Out) -> None:
            if response.code >= 500 or response.code == 429 or t - now > SLOW_REQUEST_MS:
                self.last_failure = t  # an observer's note: the API failed or delayed it (not a lost race)
            then(t, response, o)

        options = dict(on_done=answered, timeout_ms=c.renew_deadline_ms, throttled=False)
        if verb == "get":
            self.client.get(now, out, "leases", c.name, namespace=c.namespace, **options)
        elif verb == "create":
            self.client.create(now, out, "leases", body, **options)
        else:
            self.client.update(now, out, "leases", body, **options)

    def try_acquire_or_renew(self, now: int, out: Out, done: Callable[[int, Out, bool], None]) -> None:
        """One try (see the module docstring); `done(t, out, succeeded)` when it ends."""
        record = self._record(now)
        if self.is_leader() and self.lease_valid(now) and self.lease is not None:
            old = self.observed
            assert old is not None
            fast = evolve(record, acquire_time=old.acquire_time, lease_transitions=old.lease_transitions)

            def updated_fast(t: int, response: Response, o: Out) -> None:
                if response.ok:
                    self.lease = response.body
                    self._observe(t, fast)
                    done(t, o, True)
                else:  # "Failed to update lock optimistically ... falling back to slow path"
                    self._slow_path(now, t, o, record, done)

            self._request(now, out, "update", evolve(self.lease, spec=fast), updated_fast)
            return
        self._slow_path(now, now, out, record, done)

    def _slow_path(self, now: int, t0: int, out: Out, record: LeaseSpec,
                   done: Callable[[int, Out, bool], None]) -> None:
        c = self.config

        def created(t: int, response: Response, o: Out) -> None:
            if response.ok:
                self.lease = response.body
                self._observe(t, record)
            done(t, o, response.ok)

        def updated(t: int, response: Response, o: Out, new: LeaseSpec) -> None:
            if response.ok:
                self.lease = response.body
                self._observe(t, new)
            done(t, o, response.ok)

        def got(t: int, response: Response, o: Out) -> None:
            if response.code == 404:
                lease = Lease(metadata=ObjectMeta(name=c.name, namespace=c.namespace), spec=record)
                self._request(t, o, "create", lease, created)
                return
            if not response.ok:
                done(t, o, False)
                return
            lease: Lease = response.body
            self.lease = lease
            if lease.spec != self.observed:
                self._observe(t, lease.spec)
            if lease.spec.holder_identity and self.lease_valid(now) and not self.is_leader():
                done(t, o, False)  # held by another and not yet expired
                return
            old = lease.spec
            if self.is_leader():
                new = evolve(record, acquire_time=old.acquire_time, lease_transitions=old.lease_transitions)
            else:
                new = evolve(record, lease_transitions=(old.lease_transitions or 0) + 1)
            self._request(t, o, "update", evolve(lease, spec=new), lambda t2, r2, o2: updated(t2, r2, o2, new))

        self._request(t0, out, "get", None, got)


@attrs.define
class Leadership:
    """What the components of one process share about its election: whether the process leads now (its elector
    sets `leading`), and `wake`, set by the cluster, which the elector calls with each member's name when
    leadership starts, so the loop asks those members again whether they have work (kmodel.controllers.base:
    a controller starts its informers only once its process leads).

    `guard` is every member's ApiClient `write_guard`. It keeps an observer's record (never read by the model,
    it survives crashes): the last write of each identity (`last_write`), and every write it lets through
    (`writes`: time, identity, what, and how many entries the elector's `history` and `observations` had then,
    which places the write among them), which the `leader-acts-within-lease` invariant judges. With the
    leaderelection-fence-writes fix (`fence`) it refuses the writes of a process that does not hold an unexpired
    lease by its own clock: kmodel's sketch of a fix, since client-go's leader election does not fence (a leader
    acts on its belief until its next renewal fails)."""

    members: tuple[str, ...] = ()
    leading: bool = False
    wake: Optional[Callable[[str], None]] = None
    elector: Optional[LeaderElector] = None
    fence: bool = False
    last_write: dict[str, int] = attrs.field(factory=dict)
    writes: list[tuple[int, str, str, int, int]] = attrs.field(factory=list)

    def started(self) -> None:
        self.leading = True
        if self.wake is not None:
            for name in self.members:
                self.wake(name)

    def guard(self, now: int, owner: str, verb: str, resource: str) -> str:
        """A member's write about to be sent: "" to send it, else why it is refused (see the class docstring)."""
        elector = self.elector
        if elector is None:
            return ""
        if self.fence and not elector.holds_valid_lease(now):
            return f"{elector.identity} does not hold an unexpired lease {elector.config.name}"
        self.writes.append((now, elector.identity, f"{owner}: {verb} {resource}", len(elector.history),
                            len(elector.observations)))
        self.last_write[elector.identity] = now
        return ""


class StartsWhenLeading:
    """The start of a component that runs only while its process leads (a kube-controller-manager's controllers
    and shared informers: upstream starts them in OnStartedLeading). With no election (`leadership` None) or
    while the process leads, `start` runs the component's `_run` at once; otherwise it sets `awaiting_leader`,
    and the component's `work` calls `_run` once the process leads (`has_work` says when)."""

    leadership: Optional[Leadership]
    awaiting_leader: bool

    def start(self, now: int, out: Out) -> None:
        if self.leadership is not None and not self.leadership.leading:
            self.awaiting_leader = True
            return
        self._run(now, out)

    def _run(self, now: int, out: Out) -> None:
        """Start for real: clear `awaiting_leader` and start what the component runs."""
        raise NotImplementedError
