"""Doing one episode action (kmodel.operator.actions) to the served cluster and the operator's process. User
actions are handed to the model's kubectl; faults go through the model's own hands (a partition, a crash, a loop
event), recorded in the served trace, or to the process (signals). Each fault is healed before `perform`
returns."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, Callable, Optional

from kmodel.cluster.kubectl import Apply, Delete, Patch
from kmodel.loop.events import BreakStream, FailRequest as FailRequestEvent
from kmodel.operator import actions as a
from kmodel.serve.gateway import GATEWAY

#: the verbs of a write (what KillOperator's at_write counts)
WRITES = ("create", "update", "patch", "delete", "deletecollection")
#: how long a kill at a write waits for that write before it kills anyway
WRITE_WAIT_S = 1.0
#: the Retry-After of a drawn 429, in seconds
RETRY_AFTER_S = 1
#: the annotation another client's write sets (ConflictingWrite)
WRITTEN_BY = "kmodel.dev/written-by"


class Performer:
    """`restart()` starts the operator again and waits until it is ready (raising nothing: it says whether)."""

    def __init__(self, served: Any, process: Any, spec: Any, restart: Callable[[], bool]) -> None:
        self.served, self.process, self.spec, self.restart = served, process, spec, restart
        self.resources = {r.plural: r for r in spec.resources}
        self._writes = 0
        #: a kill waiting for the operator's write (KillOperator.at_write), and whether it was armed this step
        self._armed: Optional[threading.Event] = None
        self._armed_fresh = False

    def _where(self, plural: str) -> str:
        return "default" if self.resources[plural].namespaced else ""

    def perform(self, action: a.Action) -> bool:
        """Do `action`; False when the operator did not come back ready after a restart."""
        method = getattr(self, "_" + action.kind.replace("-", "_"))
        return method(action) is not False

    # -- user actions -------------------------------------------------------------------------------------

    def _apply(self, action: a.ApplyObject) -> None:
        resource = self.resources[action.resource]
        meta = {"name": action.name, **({"namespace": "default"} if resource.namespaced else {})}
        self.served.kubectl(Apply({"apiVersion": resource.api_version, "kind": resource.kind, "metadata": meta,
                                   "spec": action.spec}))

    def _scale(self, action: a.ScaleObject) -> None:
        self.served.kubectl(Patch(action.resource, self._where(action.resource), action.name,
                                  {"spec": {"replicas": action.replicas}}))

    def _delete(self, action: a.DeleteObject) -> None:
        self.served.kubectl(Delete(action.resource, self._where(action.resource), action.name))

    def _conflict(self, action: a.ConflictingWrite) -> None:
        self._writes += 1
        self.served.kubectl(Patch(action.resource, self._where(action.resource), action.name,
                                  {"metadata": {"annotations": {WRITTEN_BY: f"another-client-{self._writes}"}}}))

    # -- faults on the operator ----------------------------------------------------------------------------

    def _kill(self, action: a.KillOperator) -> bool:
        killed = threading.Event()
        if not action.at_write:
            self.process.kill()
            killed.set()
            self._armed, self._armed_fresh = killed, True
            return True
        left = [action.at_write]

        def on_send(request: Any) -> None:  # on the model's thread, as the request enters the model
            if request.verb in WRITES and not killed.is_set():
                left[0] -= 1
                if left[0] == 0:
                    self.process.signal(signal.SIGKILL)
                    killed.set()

        gateway = self.served.gateway
        self.served.call(lambda: setattr(gateway, "on_send", on_send))
        self._armed, self._armed_fresh = killed, True
        return True

    @property
    def holds_down(self) -> bool:
        """Whether the operator is killed (or to be killed) and waits for its restart after a step."""
        return self._armed is not None

    def after_step(self, last: bool = False) -> bool:
        """After each step: the operator killed by the step before this one (or by this one, when it is the
        `last`) is restarted, as its Deployment's kubelet would: killed now if a kill at its write saw no write
        within WRITE_WAIT_S. False when it did not come back ready."""
        if self._armed is None or (self._armed_fresh and not last):
            self._armed_fresh = False
            return True
        self._armed.wait(WRITE_WAIT_S)
        gateway = self.served.gateway
        self.served.call(lambda: setattr(gateway, "on_send", None))
        self._armed = None
        self.process.kill()
        return self.restart()

    def _pause(self, action: a.PauseOperator) -> None:
        self.process.signal(signal.SIGSTOP)
        time.sleep(action.seconds)
        self.process.signal(signal.SIGCONT)

    def _cut(self, action: a.CutConnection) -> None:
        self.served.control("partition", GATEWAY)
        time.sleep(action.seconds)
        self.served.control("heal", GATEWAY)

    def _fail(self, action: a.FailRequest) -> None:
        retry = RETRY_AFTER_S if action.code == 429 else 0
        for replica in self.served.gateway.replicas:
            self.served.step(FailRequestEvent(GATEWAY, replica, action.code, action.applied, retry))

    def _break_watches(self, action: a.BreakWatches) -> None:
        for stream in self.served.call(lambda: sorted(self.served.gateway.watches)):
            self.served.step(BreakStream(stream))

    def _expire_watches(self, action: a.ExpireWatches) -> None:
        for replica in self.served.gateway.replicas:
            self.served.control("crash", replica)
            self.served.control("restart", replica)

    # -- the cluster ----------------------------------------------------------------------------------------

    def _restart(self, action: a.RestartComponent) -> None:
        self.served.control("crash", action.target)
        time.sleep(action.seconds)
        self.served.control("restart", action.target)

    def _wait(self, action: a.Wait) -> None:
        time.sleep(action.seconds)
