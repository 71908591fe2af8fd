"""Anti-pattern variants: Kubernetes' design principles shown by contrast.

A variant is a switch, not a fork: it changes one behaviour at one named place in
the model, and everything else stays the real design. The cluster carries the variant's name in
`ClusterConfig.variant`; the one place a variant changes reads it there (`where` names that place) and
nowhere else does. The default model passes the checker; each anti-pattern but `polling` fails with the
invariants in `expect`, which is what `kmodel principles` measures.

    kmodel variants          lists them with what each changes
    kmodel check --variant NAME, kmodel replay --variant NAME, kmodel simulate --variant NAME

This package is only the table (names read by the client, the informer, the controllers and the cluster), so
it sits below everything that reads a switch. The places a variant changes live where they act (the
pessimistic-locking variant's lock in kmodel/client, the bypass-apiserver variant's etcdctl in
kmodel/etcdctl.py), and the experiments on the variants (`kmodel principles`, watch versus polling costs) in
kmodel/principles, above the checker.
"""

from __future__ import annotations

from typing import Optional

import attrs

DEFAULT = "default"
EDGE_TRIGGERED = "edge-triggered"
BLIND_WRITES = "blind-writes"
PESSIMISTIC_LOCKING = "pessimistic-locking"
BYPASS_APISERVER = "bypass-apiserver"
DIRECT_CALLS = "direct-calls"
HARDCODED_POD_IP = "hardcoded-pod-ip"
POLLING = "polling"


@attrs.frozen
class Variant:
    name: str
    #: the design principle this variant breaks (as the invariants name principles)
    principle: str
    #: what Kubernetes' design says, in one sentence
    design_says: str
    #: what the variant changes, in one sentence
    changes: str
    #: the one place in the model that reads the switch
    where: str
    #: the invariants the checker is expected to find violated (empty: nothing is violated, it only costs)
    expect: tuple[str, ...]


VARIANTS: tuple[Variant, ...] = (
    Variant(
        DEFAULT, "all of them", "The control plane as Kubernetes builds it.",
        "nothing: the model as Kubernetes is built", "-", ()),
    Variant(
        EDGE_TRIGGERED, "level-driven reconciliation",
        "Controllers are level-driven: each sync re-reads the state it manages and acts on the difference from "
        "the desired state, so a missed or duplicated event costs nothing.",
        "the ReplicaSet controller keeps a running count of each set's pods (up when its own create is answered, "
        "down when a pod event shows one going away) and decides from it, instead of re-reading the pods it owns",
        "kmodel/controllers/replicaset.py", ("replicaset-within-expectations", "converges-replicas")),
    Variant(
        BLIND_WRITES, "optimistic concurrency",
        "Every update carries the resourceVersion it was read at, and a stale one is refused with 409 Conflict, "
        "so no writer silently overwrites a change it never saw.",
        "clients send updates without the resourceVersion they read (the precondition), so the API server "
        "takes them unconditionally and the last writer wins",
        "kmodel/client/api_client.py", ("occ-no-lost-update",)),
    Variant(
        PESSIMISTIC_LOCKING, "optimistic concurrency",
        "Kubernetes takes no locks: writers race and the loser retries, so a writer that crashes or is cut off "
        "holds nothing up.",
        "the controller manager's writers take a lock (a Lease without expiry) around each update and release it "
        "after; a writer that finds it taken waits",
        "kmodel/client/api_client.py",
        ("settles", "converges-replicas", "converges-statefulsets", "converges-endpoints", "converges-node-status")),
    Variant(
        BYPASS_APISERVER, "the API as the single contract",
        "Only the API server touches etcd: everything else, operators included, goes through its "
        "authentication, authorization, admission and validation.",
        "an operator's etcdctl job fixes things straight in etcd: it puts a hand-written pod, already bound to a "
        "node, with no uid, creationTimestamp or admission defaults (the etcdctl put anti-pattern)",
        "kmodel/etcdctl.py", ("api-single-contract", "admission-enforced")),
    Variant(
        DIRECT_CALLS, "the API as the single contract",
        "Components never call each other: the scheduler writes a Binding and the kubelet learns of it by "
        "watching the API server.",
        "the scheduler tells the chosen node's kubelet to run the pod directly, instead of writing the binding",
        "kmodel/scheduler/component.py", ("api-single-contract",)),
    Variant(
        HARDCODED_POD_IP, "network model",
        "Pod IPs come and go; clients reach a workload through its Service's stable ClusterIP, which kube-proxy "
        "maps to the pods that are ready now.",
        "an in-cluster client keeps the first Pod IP it resolved through the Service and sends to it from then on",
        "kmodel/traffic/client.py", ("service-reachability",)),
    Variant(
        POLLING, "watch, not poll",
        "Components watch the API server instead of polling it: one list, then only the changes, delivered as "
        "they happen.",
        "informers list every 10 s and diff the answer against their cache, instead of listing once and "
        "watching",
        "kmodel/client/informer.py", ()),
)

BY_NAME: dict[str, Variant] = {v.name: v for v in VARIANTS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def variant(name: str) -> Variant:
    """The variant called `name`; ValueError naming the variants if there is none."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown variant {name!r}; variants: {', '.join(NAMES)}") from None


def check_name(name: Optional[str]) -> None:
    """ValueError unless `name` is None or a known variant."""
    if name is not None:
        variant(name)
