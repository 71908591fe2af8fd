"""Liveness and readiness probing (pkg/kubelet/prober/worker.go, prober_manager.go), in logical time.

Theory of operation
-------------------
One `ProbeWorker` per (pod uid, container name, kind) of a container that declares the probe. A worker
follows the container's current instance (its CRI id): when the id changes (the container was restarted)
it starts over: result back to the kind's initial value (readiness Failure, liveness Success), run count 0,
off hold. It probes at once, then every periodSeconds (the model has no start-up jitter). A probe before
initialDelaySeconds have passed since the container started changes nothing (doProbe returns early).

A probe's outcome is the container's health in the runtime (ContainerRuntime.probe_healthy): healthy unless
a fault marked that container instance unhealthy for that kind. As upstream, a result is reported only after
failureThreshold consecutive failures or successThreshold consecutive successes (`resultRun`). A liveness
Failure puts the worker on hold until the container is restarted (a new id); the kubelet kills and
restarts it. Readiness results feed the container's `ready` and the pod's Ready condition.

Differences from upstream: no exec/HTTP/TCP handlers or timeouts (the outcome is the fault hook's), no
startup probes, no random initial delay.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects.core import Probe

LIVENESS = "liveness"
READINESS = "readiness"
SUCCESS = "Success"
FAILURE = "Failure"

_INITIAL = {LIVENESS: SUCCESS, READINESS: FAILURE}

ProbeKey = tuple[str, str, str]  # (pod uid, container name, kind)


class ProbeWorker:
    __slots__ = ("key", "probe", "container_id", "started_at", "result", "last_result", "run", "on_hold",
                 "next_due")

    def __init__(self, key: ProbeKey, probe: Probe, container_id: str, started_at: int, now: int) -> None:
        self.key = key
        self.probe = probe
        self.container_id = container_id
        self.started_at = started_at
        self.result = _INITIAL[key[2]]
        self.last_result: Optional[str] = None
        self.run = 0
        self.on_hold = False
        self.next_due = now

    @property
    def kind(self) -> str:
        return self.key[2]

    def probe_once(self, now: int, healthy: bool) -> bool:
        """doProbe at `now` with the container's health; True when the reported result changed. Sets next_due."""
        probe = self.probe
        self.next_due = now + max(probe.period_seconds, 1) * 1000
        if self.on_hold:
            return False
        if now - self.started_at < probe.initial_delay_seconds * 1000:
            return False
        outcome = SUCCESS if healthy else FAILURE
        if outcome == self.last_result:
            self.run += 1
        else:
            self.last_result = outcome
            self.run = 1
        threshold = probe.failure_threshold if outcome == FAILURE else probe.success_threshold
        if self.run < max(threshold, 1):
            return False
        changed = outcome != self.result
        self.result = outcome
        if outcome == FAILURE and self.kind == LIVENESS:
            self.run = 0
            self.on_hold = True
        return changed


class ProbeManager:
    """The probe workers of one kubelet, by key, in creation order."""

    def __init__(self) -> None:
        self.workers: dict[ProbeKey, ProbeWorker] = {}

    def ensure(self, key: ProbeKey, probe: Probe, container_id: str, started_at: int, now: int) -> Optional[int]:
        """Follow the running container instance `container_id`; returns a due time when a (re)started worker
        needs a timer, else None."""
        w = self.workers.get(key)
        if w is not None and w.container_id == container_id:
            return None
        w = self.workers[key] = ProbeWorker(key, probe, container_id, started_at, now)
        return w.next_due

    def result(self, key: ProbeKey, container_id: str) -> Optional[str]:
        """The reported result for this container instance (None: no worker follows it)."""
        w = self.workers.get(key)
        if w is None or w.container_id != container_id:
            return None
        return w.result

    def stop(self, key: ProbeKey) -> None:
        self.workers.pop(key, None)

    def remove_pod(self, uid: str) -> None:
        for key in [k for k in self.workers if k[0] == uid]:
            del self.workers[key]
