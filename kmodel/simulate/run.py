"""`kmodel simulate`: apply manifests to a fresh cluster as kubectl would, run it fairly, report.

Theory of operation
-------------------
1. The inputs are checked first (kmodel.simulate.inputs): nothing runs on input that cannot be used.
2. A cluster of node-1 … node-N is built (kmodel.cluster) and the manifests of `-f` are one `kubectl apply`
   at logical time 0, as the given user (`--as USER`; default the cluster admin): kubectl maps every document
   first, through discovery as it stands then (the built-in kinds, and the custom kinds of Established CRDs),
   submits those it mapped in order, and refuses the others by name (NoKindMatch). Each `--apply
   FILE_OR_DIR@SECONDS` is one more such invocation at its time, so an object of a CRD applied earlier maps.
3. The cluster runs fairly. Each fault and later apply happens at its time, in time order (ties: faults first,
   each kind in the order given), by running until then. A fault pulls the cable:
   partition/heal a target's endpoints, crash/restart them. A
   target is an endpoint (`apiserver-0`, `scheduler`, `kubelet/node-2`) or a node name (all its endpoints).
   `lose` and `remove` take a node's machine out for good (Cluster.lose_node: it fails and its Node is left
   for the control plane; Cluster.remove_node: it is switched off and `kubectl delete node` follows); after
   that no fault may name the node or its endpoints.
4. At `until`, the report is read (kmodel.simulate.observe). Commands still unanswered then are reported as
   rejected with code 0, reason NoResponse: kubectl would still be waiting.
"""

from __future__ import annotations

from typing import Optional, Sequence

from kmodel.apiserver import customresources
from kmodel.apiserver.wire import Response, Status
from kmodel.cluster import Cluster, ClusterConfig, ClusterError, DEFAULT_COMPONENTS
from kmodel.cluster.cluster import user_token
from kmodel.cluster.config import check_election
from kmodel.cluster.kubectl import CommandResult, custom_resource_of_manifest
from kmodel.simulate.inputs import MACHINE_ACTIONS, ApplySpec, FaultSpec, InputError, Manifest
from kmodel.simulate.observe import rejected, snapshot

BUILT_IN_USERS = ("admin", "alice", "bob")
#: the Cluster method each fault action calls
FAULT_METHODS = {"partition": "partition", "heal": "heal", "crash": "crash", "restart": "restart",
                 "lose": "lose_node", "remove": "remove_node"}


def check_faults(cluster: Cluster, faults: Sequence[FaultSpec], until_ms: int) -> None:
    gone: dict[str, FaultSpec] = {}  # node -> the fault that took its machine out
    for f in sorted(faults, key=lambda f: f.at_ms):
        if f.action in MACHINE_ACTIONS and f.target not in cluster.nodes:
            raise InputError(f"fault {f.text}: {f.action} takes a node name ({', '.join(cluster.nodes)}), "
                             f"not {f.target!r}")
        node = f.target if f.target in cluster.nodes else f.target.rpartition("/")[2]
        if node in gone:
            raise InputError(f"fault {f.text}: {node} is already out of the cluster ({gone[node].text}); "
                             "drop this fault or move it before that one")
        if f.action in MACHINE_ACTIONS:
            gone[node] = f
    for f in faults:
        if f.at_ms > until_ms:
            raise InputError(f"fault {f.text} is after the end of the run (--until {until_ms / 1000:g}): "
                             "raise --until or move the fault")
        try:
            endpoints = cluster.endpoints_of(f.target)
        except ClusterError as exc:
            raise InputError(f"fault {f.text}: {exc}") from None
        if f.action == "crash":
            for name in endpoints:
                if not cluster.loop.components[name].supports_crash():
                    raise InputError(f"fault {f.text}: {name} cannot be crashed in the model")


def check_applies(applies: Sequence[ApplySpec], until_ms: int) -> None:
    for a in applies:
        if a.at_ms > until_ms:
            raise InputError(f"--apply {a.text} is after the end of the run (--until {until_ms / 1000:g}): "
                             "raise --until or apply it earlier")


#: the reason of a rejected entry for an object whose kind the model does not serve (refused by kubectl itself)
UNMAPPED_REASON = "NoKindMatch"


def kubectl_apply(cluster: Cluster, manifests: Sequence[Manifest], token: str) -> list[dict]:
    """One `kubectl apply -f` invocation now: every document is mapped first, against the kinds the API serves
    at this moment (built in, or of an Established CRD); the mapped ones are submitted in order, and the
    returned entries refuse the others as kubectl does, by name."""
    crds = customresources.crds(cluster.store)
    mapped = [m.mapped or custom_resource_of_manifest(m.document, crds) is not None for m in manifests]
    cluster.apply([m.document for m, ok in zip(manifests, mapped) if ok], token=token)
    return [{"code": 0, "reason": UNMAPPED_REASON, "message": m.mapping_error(),
             "object": f"{m.document['kind'].lower()}/{(m.document.get('metadata') or {}).get('name', '')}"}
            for m, ok in zip(manifests, mapped) if not ok]


def simulate(manifests: Sequence[Manifest], *, nodes: int = 3, until_ms: int = 60_000,
             faults: Sequence[FaultSpec] = (), as_user: Optional[str] = None, seed: int = 0,
             components: Optional[tuple[str, ...]] = None, variant: str = "default",
             fixes: tuple[str, ...] = (), controller_managers: int = 1, schedulers: int = 1,
             leader_elect: bool = True, applies: Sequence[ApplySpec] = ()) -> tuple[Cluster, dict]:
    """Run one simulation; returns the cluster (for inspection) and the report. `components`: those the cluster
    runs (default: DEFAULT_COMPONENTS); `applies`: the later `kubectl apply` invocations."""
    if nodes < 1:
        raise InputError(f"--nodes must be at least 1 (got {nodes})")
    if until_ms < 0:
        raise InputError("--until must be >= 0 seconds")
    for option, value in (("--controller-managers", controller_managers), ("--schedulers", schedulers)):
        if not 1 <= value <= 5:
            raise InputError(f"{option} must be between 1 and 5 (got {value})")
    try:
        check_election(controller_managers, schedulers, leader_elect)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    users = (as_user,) if as_user and as_user not in BUILT_IN_USERS else ()
    cluster = Cluster(ClusterConfig(nodes=nodes, seed=seed, components=components or DEFAULT_COMPONENTS, users=users,
                                    variant=variant, fixes=fixes, controller_managers=controller_managers,
                                    schedulers=schedulers, leader_elect=leader_elect))
    check_faults(cluster, faults, until_ms)
    check_applies(applies, until_ms)
    token = "" if not as_user or as_user == "admin" else user_token(as_user)
    unmapped = kubectl_apply(cluster, manifests, token)
    # faults before applies at one time; each in the order given (sorted() is stable)
    timeline = sorted([(f.at_ms, 0, f) for f in faults] + [(a.at_ms, 1, a) for a in applies],
                      key=lambda entry: entry[:2])
    for at_ms, _, step in timeline:
        cluster.run(at_ms)
        if isinstance(step, FaultSpec):
            getattr(cluster, FAULT_METHODS[step.action])(step.target)
        else:
            unmapped += kubectl_apply(cluster, step.manifests, token)
    cluster.run(until_ms)
    unanswered = [CommandResult(c, Response(0, 0, Status(0, "NoResponse", "no answer before the end of the run")))
                  for c in cluster.kubectl.unanswered()]
    report = snapshot(cluster)
    if unanswered:
        report["rejected"].extend(rejected(unanswered))
    # kubectl applies what it can map and reports the rest: a kind the server does not serve
    report["rejected"].extend(unmapped)
    return cluster, report
