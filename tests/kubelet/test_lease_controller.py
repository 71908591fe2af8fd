"""The kubelet's lease controller (kmodel/kubelet/lease.py) against a scripted client: upstream's
component-helpers/apimachinery/lease/controller.go step by step (retryUpdateLease, backoffEnsureLease)."""

from __future__ import annotations

from typing import Any

from kmodel.apiserver.wire import Response, Status
from kmodel.component import Out, SetTimer
from kmodel.kubelet.lease import MAX_UPDATE_RETRIES, LeaseController, new_lease
from kmodel.objects.fastevolve import evolve

NODE = "node-1"
TIMER = "lease"


class ScriptedClient:
    """Records each request; the test answers them one at a time, oldest first."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, Any, Any]] = []  # (verb, object or name, on_done)
        self.sent: list[str] = []
        self.kwargs: list[dict] = []

    def get(self, now, out, resource, name, *, namespace, on_done, **kw):
        self._record("get", name, on_done, kw)

    def create(self, now, out, resource, obj, *, on_done, **kw):
        self._record("create", obj, on_done, kw)

    def update(self, now, out, resource, obj, *, on_done, **kw):
        self._record("update", obj, on_done, kw)

    def _record(self, verb, what, on_done, kw):
        assert resource_ok(what)
        self.pending.append((verb, what, on_done))
        self.sent.append(verb)
        self.kwargs.append(kw)


def resource_ok(what: Any) -> bool:
    return what == NODE or what.metadata.name == NODE


def stored(rv: int) -> Any:
    lease = new_lease(NODE, "uid-1", 0, 40)
    return evolve(lease, metadata=evolve(lease.metadata, resource_version=str(rv)))


class Harness:
    def __init__(self) -> None:
        self.client = ScriptedClient()
        self.repeated: list[int] = []
        self.lease = LeaseController(self.client, NODE, lambda: "uid-1", duration_seconds=40,
                                     renew_interval_ms=10_000, timer=TIMER, heartbeat={"timeout_ms": 10_000},
                                     on_repeated_failure=lambda now, out: self.repeated.append(now))
        self.now = 0
        self.timers: list[int] = []

    def answer(self, code: int, body: Any = None) -> str:
        """Answer the oldest request; returns its verb."""
        verb, what, on_done = self.client.pending.pop(0)
        if body is None and code < 300:
            body = what if verb != "get" else stored(1)
        if code >= 300:
            body = Status(code, "", "scripted")
        out = Out()
        on_done(self.now, Response(0, code, body), out)
        self._note(out)
        return verb

    def sync(self) -> None:
        out = Out()
        self.lease.sync(self.now, out)
        self._note(out)

    def fire(self) -> None:
        out = Out()
        self.lease.on_timer(self.now, out)
        self._note(out)

    def _note(self, out: Out) -> None:
        self.timers += [e.delay_ms for e in out.effects if isinstance(e, SetTimer) and e.name == TIMER]


def test_the_first_sync_reads_creates_and_the_next_starts_10_s_later():
    h = Harness()
    h.sync()
    assert h.answer(404) == "get"
    assert h.answer(201) == "create"
    assert h.timers == [10_000] and not h.lease.syncing and h.lease.latest is not None
    assert all(kw == {"timeout_ms": 10_000} for kw in h.client.kwargs)  # the heartbeat client's requests
    h.fire()
    assert h.client.sent[-1] == "update"  # the Lease it wrote: no GET (latestLease)
    h.answer(200)
    assert h.timers == [10_000, 10_000] and not h.client.pending


def test_a_failing_update_is_retried_at_once_five_times_then_the_lease_is_read_and_updated_again():
    h = Harness()
    h.lease.latest = stored(5)
    h.sync()
    for attempt in range(MAX_UPDATE_RETRIES):
        assert h.client.sent == ["update"] * (attempt + 1)
        h.answer(503)
    assert h.repeated == [0] * (MAX_UPDATE_RETRIES - 1)  # every failure after the first: onRepeatedHeartbeatFailure
    assert h.client.sent[-1] == "get" and h.timers == []  # backoffEnsureLease, at once
    h.answer(200, stored(7))
    assert h.client.sent[-1] == "update" and h.client.pending[0][1].metadata.resource_version == "7"
    h.answer(200)
    assert h.timers == [10_000] and len(h.client.sent) == MAX_UPDATE_RETRIES + 2


def test_a_sync_whose_updates_all_fail_ends_and_the_next_comes_10_s_later():
    h = Harness()
    h.lease.latest = stored(5)
    h.sync()
    for _ in range(MAX_UPDATE_RETRIES):
        h.answer(503)
    h.answer(200, stored(5))  # the GET
    for _ in range(MAX_UPDATE_RETRIES):
        h.answer(503)
    assert h.timers == [10_000] and not h.lease.syncing
    assert h.client.sent == ["update"] * 5 + ["get"] + ["update"] * 5


def test_a_conflict_reads_the_newer_lease_and_updates_that():
    h = Harness()
    h.lease.latest = stored(5)
    h.sync()
    h.answer(409)
    assert h.repeated == [] and h.client.sent == ["update", "get"]
    h.answer(200, stored(9))
    assert h.client.pending[0][0] == "update" and h.client.pending[0][1].metadata.resource_version == "9"
    h.answer(200)
    assert h.timers == [10_000]


def test_reading_the_lease_is_retried_after_200_ms_doubling_up_to_7_s():
    h = Harness()
    h.sync()  # nothing written yet: backoffEnsureLease first
    for _ in range(7):
        assert h.answer(500) == "get"
        h.fire()
    assert h.timers == [200, 400, 800, 1_600, 3_200, 6_400, 7_000]
    assert h.lease.syncing
    h.sync()  # a sync asked for meanwhile does not start another
    assert len(h.client.pending) == 1
    h.answer(404)
    h.answer(201)
    assert h.timers[-1] == 10_000 and not h.lease.syncing


def test_a_failed_create_is_retried_as_a_failed_read():
    h = Harness()
    h.sync()
    h.answer(404)
    assert h.answer(500) == "create"
    assert h.timers == [200]
    h.fire()
    assert h.client.sent == ["get", "create", "get"]


def test_reset_forgets_the_lease_and_the_sync_in_progress():
    h = Harness()
    h.lease.latest = stored(5)
    h.sync()
    h.lease.reset()
    assert h.lease.latest is None and not h.lease.syncing
    h.client.pending.clear()
    h.sync()
    assert h.client.sent[-1] == "get"
