"""One episode: a fresh served cluster, the operator started and ready, the actions done one by one, the settle,
and what the oracles found (kmodel.operator.judge), with what it takes to show it: the logical time each step
began, the operator's requests and the cluster's answers, the served trace and the operator's log."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import attrs

from kmodel.operator.actions import Action
from kmodel.operator.judge import Finding, Judge
from kmodel.operator.perform import Performer
from kmodel.operator.process import OperatorProcess, OperatorStartError, wait_until
from kmodel.operator.readiness import readiness
from kmodel.operator.served import ServedCluster
from kmodel.operator.spec import OperatorSpec

#: how long the operator may take to be ready after a start
READY_TIMEOUT_S = 30.0
#: how often the operator may end by itself in one episode (each time it is started again)
MAX_EXITS = 3
#: the finding when the operator ended by itself too often, and when it did not come back after a restart
EXITED = "operator-keeps-running"
NOT_READY = "operator-ready-after-restart"


@attrs.frozen
class EpisodeOptions:
    nodes: int = 1
    seed: int = 0
    speed: float = 10.0
    #: wall seconds after each action, for the operator to act on it
    step_s: float = 0.3
    #: wall seconds the liveness invariants have to hold by, once the actions are done
    settle_s: float = 10.0


@attrs.frozen
class EpisodeResult:
    findings: tuple[Finding, ...]
    #: wall seconds: serving until the CRDs were Established, then until the operator was first ready
    serve_s: float
    ready_s: float
    #: logical ms at which each step began: [start-up, step 1, ..., settle]
    step_ms: tuple[int, ...]
    #: (logical ms, request id, verb, resource, namespace, name, code or None) of the operator's requests
    requests: tuple[tuple, ...]
    digest: str
    folder: Path
    restarts: int

    @property
    def startup_s(self) -> float:
        return self.serve_s + self.ready_s

    @property
    def violated(self) -> Optional[Finding]:
        return self.findings[0] if self.findings else None


def _requests(gateway: Any) -> tuple[tuple, ...]:
    answers = {request_id: code for _, request_id, code in gateway.answered}
    return tuple((t, r.id, r.verb, r.resource + (f"/{r.subresource}" if r.subresource else ""), r.namespace,
                  r.name, answers.get(r.id)) for t, r in gateway.received)


def run_episode(spec: OperatorSpec, actions: Sequence[Action], options: EpisodeOptions, folder: Path) -> EpisodeResult:
    """Run one episode in `folder` (made afresh); OperatorStartError when the operator never became ready."""
    if folder.exists():
        shutil.rmtree(folder)
    began = time.monotonic()
    served = ServedCluster(spec, folder, nodes=options.nodes, seed=options.seed, speed=options.speed)
    process = OperatorProcess(spec.command, served.kubeconfig, folder / "operator.log")
    judge: Optional[Judge] = None
    step_ms: list[int] = []
    serve_s = ready_s = 0.0
    try:
        if not served.start():
            raise OperatorStartError("the operator's CRDs were not Established in time")
        serve_s = time.monotonic() - began

        def start() -> bool:
            process.start()
            ready = readiness(spec.ready, served, process, served.plurals)
            return wait_until(lambda: ready() or process.exit_code() is not None, READY_TIMEOUT_S) \
                and process.exit_code() is None

        if not start():
            raise OperatorStartError(f"the operator was not ready ({spec.ready}) within {READY_TIMEOUT_S:g} s; "
                                     f"its log ends:\n{process.log_tail()}")
        ready_s = time.monotonic() - began - serve_s
        judge = Judge(served, spec.invariants)
        performer = Performer(served, process, spec, start)
        step_ms.append(served.now())
        exits = 0
        for number, action in enumerate(actions, 1):
            judge.step = number
            step_ms.append(served.now())
            last = number == len(actions)
            if not performer.perform(action) or (time.sleep(options.step_s) or not performer.after_step(last)):
                judge.note(NOT_READY, f"the operator was not ready ({spec.ready}) within {READY_TIMEOUT_S:g} s "
                                      f"of its restart")
                break
            code = process.exit_code()
            if code is not None and not performer.holds_down:  # it ended by itself: its Deployment's kubelet would start it again
                exits += 1
                process.note(f"the operator exited by itself with code {code}")
                if exits > MAX_EXITS:
                    judge.note(EXITED, f"the operator exited by itself {exits} times, the last with code {code}")
                    break
                if not start():
                    judge.note(NOT_READY, f"the operator was not ready ({spec.ready}) within "
                                          f"{READY_TIMEOUT_S:g} s of its restart after it exited with code {code}")
                    break
            if judge.check_now():
                break
        judge.step = len(actions) + 1
        step_ms.append(served.now())
        if not judge.findings:
            judge.settle(options.settle_s)
    finally:
        process.stop()
        report = served.stop()
    return EpisodeResult(findings=tuple(judge.findings if judge else ()), serve_s=serve_s, ready_s=ready_s,
                         step_ms=tuple(step_ms), requests=_requests(served.gateway), digest=report["digest"],
                         folder=folder, restarts=process.starts - 1)
