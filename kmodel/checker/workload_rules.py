"""The workload rules: a user editing nodes, pods, Services and Deployments (a mixin of `KmodelMachine`).

Theory of operation
-------------------
Each rule draws a few small numbers and turns them into one action of kmodel.checker.workload_actions against the
cluster as it is now, handed to the session by `self._do` as machine.py's rules do. A node or pod is drawn as an
index taken modulo the candidates that exist now (`pick`), a feature as an index into the action module's tables,
which list the simplest choice first, so every draw shrinks toward the first node, the first row, no extras.

    nodes        label_node (zone, region or another label set or removed), taint_node (NoSchedule, NoExecute or
                 PreferNoSchedule added, or removed), cordon_node (cordon or uncordon)
    pods         apply_pod_shape (a bare pod built from four small indices: ports, resources, placement,
                 tolerations), label_pod (the app label removed or put back: released and adopted by its
                 ReplicaSet)
    Services     edit_service (selector and ports)
    Deployments  set_strategy (RollingUpdate bounds or Recreate), pause_deployment (pause or resume),
                 rollout_undo (back to the previous revision or a drawn one)
    mistakes     apply_invalid (a manifest validation refuses: the cluster stays as it was)

Every rule does something each time it runs: it sends a kubectl command (kubectl itself may refuse it, as it
refuses to roll back a paused Deployment, which is recorded as the command's result). The node rules need a node:
a precondition says so.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kmodel.checker.actions import APPS, BARE_PODS
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.workload_actions import (
    INVALID_MANIFESTS, NODE_LABELS, NODE_TAINTS, POD_SHAPE_SIZES, SERVICE_PORTS, SERVICE_SELECTORS, STRATEGIES,
    ApplyInvalid, ApplyPodShape, CordonNode, EditService, LabelNode, LabelPod, PauseDeployment, SetStrategy,
    TaintNodeAction, UndoRollout,
)
from kmodel.controllers.deployment_logic import REVISION_ANNOTATION

#: a pod shape: one small index per feature table, each shrinking to 0 (the plain pod)
POD_SHAPE = st.tuples(*(st.integers(0, n - 1) for n in POD_SHAPE_SIZES))


def _has_nodes(machine: Any) -> bool:
    return bool(machine.cluster.nodes)


class WorkloadRules:
    """Rules of the user editing workloads and nodes. Mixed into `KmodelMachine` (which provides `cluster` and
    `_do`)."""

    cluster: Any  # the machine's (KmodelMachine), as is `_do(rule_name, action)`
    _do: Any

    # -- nodes ---------------------------------------------------------------------------------------------------

    @precondition(_has_nodes)
    @rule(i=INDEX, label=st.integers(0, len(NODE_LABELS) - 1))
    def label_node(self, i: int, label: int) -> None:
        """Set or remove a node label the model reads: the zone and region (the node lifecycle controller's
        zones), disktype (pods' nodeSelector)."""
        key, value = NODE_LABELS[label]
        self._do("label_node", LabelNode(pick(i, self.cluster.nodes), key, value))

    @precondition(_has_nodes)
    @rule(i=INDEX, taint=st.integers(0, len(NODE_TAINTS) - 1))
    def taint_node(self, i: int, taint: int) -> None:
        """Taint a node dedicated=infra with a drawn effect, or remove that taint."""
        effect, remove = NODE_TAINTS[taint]
        self._do("taint_node", TaintNodeAction(pick(i, self.cluster.nodes), effect=effect, remove=remove))

    @precondition(_has_nodes)
    @rule(i=INDEX, uncordon=st.booleans())
    def cordon_node(self, i: int, uncordon: bool) -> None:
        self._do("cordon_node", CordonNode(pick(i, self.cluster.nodes), not uncordon))

    # -- pods ------------------------------------------------------------------------------------------------------

    @rule(pod=st.sampled_from(BARE_PODS), i=INDEX, shape=POD_SHAPE)
    def apply_pod_shape(self, pod: str, i: int, shape: tuple[int, ...]) -> None:
        """A bare pod of a drawn shape, for the scheduler to place (index 0) or pinned to a node."""
        self._do("apply_pod_shape", ApplyPodShape(pod, pick(i, ("", *self.cluster.nodes)), shape))

    def _labelled_pods(self) -> list[tuple[str, str]]:
        """(pod, new app label) for every pod of the default namespace, by name: a pod with an app label loses
        it (""), one without gets back the app its name starts with (a ReplicaSet's pods are named after it),
        else the first app."""
        out = []
        for pod in self.cluster.objects("pods", "default"):
            name = pod.metadata.name
            if "app" in pod.metadata.labels:
                out.append((name, ""))
            else:
                out.append((name, next((a for a in APPS if name.startswith(a + "-")), APPS[0])))
        return out

    @rule(i=INDEX)
    def label_pod(self, i: int) -> None:
        """Remove a pod's app label (its ReplicaSet releases it and makes another) or put it back (adopted again:
        one pod too many, which the ReplicaSet deletes)."""
        chosen = pick(i, self._labelled_pods())
        if chosen is None:
            chosen = (BARE_PODS[0], APPS[0])  # no pod at all: the label of a missing pod (404)
        self._do("label_pod", LabelPod(*chosen))

    # -- Services ----------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), selector=st.integers(0, len(SERVICE_SELECTORS) - 1),
          ports=st.integers(0, len(SERVICE_PORTS) - 1))
    def edit_service(self, app: str, selector: int, ports: int) -> None:
        self._do("edit_service", EditService(app, selector, ports))

    # -- Deployments -------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), strategy=st.integers(0, len(STRATEGIES) - 1))
    def set_strategy(self, app: str, strategy: int) -> None:
        self._do("set_strategy", SetStrategy(app, strategy))

    @rule(app=st.sampled_from(APPS), resume=st.booleans())
    def pause_deployment(self, app: str, resume: bool) -> None:
        self._do("pause_deployment", PauseDeployment(app, not resume))

    def _revisions(self, app: str) -> list[int]:
        """0 (the previous revision), then the revisions of the ReplicaSets named after `app`, in order."""
        found = set()
        for rs in self.cluster.objects("replicasets", "default"):
            value = rs.metadata.annotations.get(REVISION_ANNOTATION, "")
            if rs.metadata.name.startswith(app + "-") and value.isdigit():
                found.add(int(value))
        return [0, *sorted(found)]

    @rule(app=st.sampled_from(APPS), i=INDEX)
    def rollout_undo(self, app: str, i: int) -> None:
        """Roll a Deployment back to its previous revision (index 0) or to one of its ReplicaSets' revisions."""
        self._do("rollout_undo", UndoRollout(app, pick(i, self._revisions(app))))

    # -- mistakes ----------------------------------------------------------------------------------------------

    @rule(case=st.integers(0, len(INVALID_MANIFESTS) - 1))
    def apply_invalid(self, case: int) -> None:
        """Send a manifest validation refuses (422): nothing may change."""
        node = self.cluster.nodes[0] if self.cluster.nodes else "node-1"
        self._do("apply_invalid", ApplyInvalid(case, node))
