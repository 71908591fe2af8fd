"""Rules that take the infrastructure's rarer decisions (a mixin of `KmodelMachine`): an etcd client's session of
several requests, and a pod placed by node affinity and tolerations the other rules' pods never use.

    etcd_session      a session of the second etcd client (kmodel.checker.etcd_client_actions): a read, a watch
                      and a txn, then 0 to 5 more of its requests, in one step, each drawn as `etcd_client` draws
                      one and counted under its own name; the requests write nothing, and cost no events of the
                      cluster
    apply_placed_pod  kubectl apply of a bare pod with a required and a preferred node-affinity row,
                      tolerations, a restart policy and exit code, on the host's network or not
                      (kmodel.checker.infra_depth_actions), about a node that exists
    freeze_node       a node's VM frozen for a few seconds (infra_depth_actions.FreezeNode): its kubelet,
                      proxy and traffic run nothing, then wake with everything they believed; or a VM that
                      hangs for good, which the operator then removes (`RemoveNode`, as remove_node does)
                      while its processes are still stopped; the leader family's pause_process stops a
                      control-plane process where leaders are elected

Why a session: one `etcd_client` draw in a step shares the rule draws with every other rule, so a dev run sends
a few dozen requests, too few to meet the combinations of a txn's compare and branches; a backup tool or an
administrator at etcdctl sends several in a row. A session starts with a read, a watch and a txn, so that each
kind is sent in every session: drawn from all six kinds alike, a run's share of each swung between runs (23 to
55 txns in a dev run), and with it the store's decisions a txn takes. Every draw shrinks toward the simplest: a
read and a watch of the client's own key and a read-only txn; a plain pod about the first node.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.actions import BARE_PODS, RemoveNode
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.etcd_client_rules import RANGE_REQUEST, REQUESTS, RULE_NAMES, TXN_REQUEST, WATCH_REQUEST
from kmodel.checker.infra_depth_actions import (
    PREFERRED, REQUIRED, RUNS, TOLERATIONS, ApplyPlacedPod, FreezeNode, freezable_nodes,
)
from kmodel.checker.rulebook import RuleFamily, rule

#: the requests of one session after its read, watch and txn
MORE_REQUESTS = (0, 5)
#: a session's requests: a read, a watch and a txn (each kind in every session), then 0 to 5 of any kind
SESSION = st.tuples(RANGE_REQUEST, WATCH_REQUEST, TXN_REQUEST,
                    st.lists(REQUESTS, min_size=MORE_REQUESTS[0], max_size=MORE_REQUESTS[1])).map(
    lambda drawn: [*drawn[:3], *drawn[3]])
#: freeze_node's draw for a VM that never thaws: it stops for HUNG_SECONDS and the operator removes the machine
HUNG_FOR_GOOD = 0
#: how long freeze_node stops a node, in seconds, shortest first: a hypervisor stall, a live migration, a
#: longer stop (all below the node monitor's 40 s grace: a frozen node stays Ready); then a hang for good
FREEZE_SECONDS: tuple[int, ...] = (1, 5, 20, HUNG_FOR_GOOD)
#: how long a VM that hangs for good is stopped before its removal (which comes at once, in the same step)
HUNG_SECONDS = 60


class InfraDepthRules(RuleFamily):
    """The rules of the module docstring. Mixed into KmodelMachine, which provides `cluster` and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Sends", "Shrinks to")
    node_removal: bool  # KmodelMachine's: may a rule remove a node

    @rule(requests=SESSION)
    def etcd_session(self, requests: list[Any]) -> None:
        """Draws: a read, a watch and a txn of the second etcd client, then 0 to 5 more of its requests, each as
        `etcd_client` draws one (a range, a watch, a txn, a compaction, a compare-and-swap, a delete)
        Sends: each request straight to etcd in turn, counted under its own name (`etcd_range`, `etcd_watch`,
        `etcd_txn`, `etcd_compact`, `etcd_cas`, `etcd_delete`); etcd answers or refuses each as it would any
        client
        Shrinks to: a read and a watch of the client's own key, now, and a read-only txn on a /registry key's mod
        revision as it is"""
        for request in requests:
            self._do(RULE_NAMES[type(request)], request)

    @precondition(lambda self: bool(self.cluster.nodes))
    @rule(pod=st.sampled_from(BARE_PODS), node=INDEX, required=st.integers(0, len(REQUIRED) - 1),
          preferred=st.integers(0, len(PREFERRED) - 1), tolerations=st.integers(0, len(TOLERATIONS) - 1),
          runs=st.integers(0, len(RUNS) - 1), host_network=st.booleans())
    def apply_placed_pod(self, pod: str, node: int, required: int, preferred: int, tolerations: int,
                         runs: int = 0, host_network: bool = False) -> None:
        """Draws: a bare pod name; a node that exists; a required node-affinity row (`REQUIRED`: none, DoesNotExist,
        `metadata.name` In or NotIn the node, an expression and a field together, an empty term ORed with one that
        matches, Gt 2 on the core count label_node may set, Lt on a bound that is not an integer); a preferred row
        (`PREFERRED`); tolerations (`TOLERATIONS`: the workload rules' taint with the operator left empty, another
        value, another key, every PreferNoSchedule taint, a cordoned node's unschedulable taint); how it runs
        (`RUNS`: a server, or OnFailure or Never with a process that exits 0 or 1); the host's network or the pod's
        own (on the host's network it carries `app: web`: the Service web fronts it)
        Sends: `kubectl apply` of the pod (`apply-placed-pod`): the scheduler places it where its terms and
        tolerations allow, or it stays Pending, Unschedulable; 422 over an existing pod of that name
        Shrinks to: a plain pod, about the first node"""
        self._do(ApplyPlacedPod(pod, pick(node, self.cluster.nodes), required, preferred, tolerations, runs,
                                host_network))

    @precondition(lambda self: bool(freezable_nodes(self.cluster)))
    @rule(i=INDEX, seconds=st.sampled_from(FREEZE_SECONDS))
    def freeze_node(self, i: int, seconds: int) -> None:
        """Draws: a node whose processes all run; 1, 5 or 20 s, or for good
        Sends: nothing: the node's kubelet, proxy and traffic run nothing until then (`freeze-node`), the
        messages to them are held, and they wake with everything they believed, their timers due at once; a
        node hung for good (when a node can be removed) is then removed at once (`remove-node`: its machine
        stopped, `kubectl delete node`), its processes ended while stopped, as an operator decommissions a hung VM
        Shrinks to: the first node, for 1 s"""
        node = pick(i, freezable_nodes(self.cluster))
        if seconds != HUNG_FOR_GOOD:
            self._do(FreezeNode(node, seconds))
        elif self.node_removal and len(self.cluster.nodes) > 1:
            self._do(FreezeNode(node, HUNG_SECONDS))
            self._do("remove_node", RemoveNode(node))
        else:
            self._do(FreezeNode(node, FREEZE_SECONDS[-2]))
