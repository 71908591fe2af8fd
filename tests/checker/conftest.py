"""Shared helpers for the checker's tests: a tiny machine with invariants the tests plant."""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.registry import LIVENESS, SAFETY, Invariant
from kmodel.checker.replay import replay
from kmodel.checker.trace import Trace, read_trace, write_trace
from kmodel.checker.machine import KmodelMachine
from kmodel.cluster import ClusterConfig


def no_web_deployment(cluster: Any, memo: dict) -> Iterator[str]:
    if cluster.get("deployments", "default", "web") is not None:
        yield "a Deployment named web exists"


def store_revision_grows(cluster: Any, memo: dict) -> Iterator[str]:
    rev = cluster.store.revision
    if rev < memo.get("last", 0):
        yield f"revision went back from {memo['last']} to {rev}"
    memo["last"] = rev


def kubectl_idle(cluster: Any, memo: dict) -> Iterator[str]:
    if not cluster.kubectl.idle:
        yield "kubectl still has commands"


NO_WEB = Invariant("no-web-deployment", SAFETY, "test", "No Deployment named web.", no_web_deployment)
GROWS = Invariant("revision-grows", SAFETY, "test", "The revision never goes back.", store_revision_grows)
IDLE = Invariant("kubectl-idle", LIVENESS, "test", "kubectl ends idle.", kubectl_idle)


class SmallMachine(KmodelMachine):
    """Two nodes, two API servers, only the test's own invariants (fast)."""

    config = ClusterConfig(nodes=2, apiservers=2)
    initial_actions = ()  # an empty cluster: the planted invariants judge what the rules do
    registered_invariants = False
    extra_invariants = (GROWS, IDLE)
    settle_bound_ms = 60_000


class PlantedMachine(SmallMachine):
    extra_invariants = (GROWS, NO_WEB, IDLE)


def replayed_twice(trace: Trace, path: Any) -> Any:
    """`trace` written to `path` and read back (the same trace), then replayed twice with every registered
    invariant: no violation, the same digest. The first replay's result."""
    again = read_trace(write_trace(trace, path))
    assert again == trace
    first, second = replay(again, record_messages=False), replay(again, record_messages=False)
    assert first.passed and second.passed, first.violation
    assert first.digest == second.digest
    return first
