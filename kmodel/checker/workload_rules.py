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

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.actions import APPS, BARE_PODS
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.workload_actions import (
    INVALID_MANIFESTS, NODE_LABELS, NODE_TAINTS, POD_SHAPE_SIZES, SERVICE_PORTS, SERVICE_SELECTORS, STRATEGIES,
    ApplyInvalid, ApplyPodShape, CordonNode, EditService, LabelNode, LabelPod, PauseDeployment, SetStrategy,
    TaintNodeAction, UndoRollout,
)
from kmodel.controllers.deployment_logic import REVISION_ANNOTATION
from kmodel.checker.rulebook import RuleFamily, rule

#: a pod shape: one small index per feature table, each shrinking to 0 (the plain pod)
POD_SHAPE = st.tuples(*(st.integers(0, n - 1) for n in POD_SHAPE_SIZES))


def _has_nodes(machine: Any) -> bool:
    return bool(machine.cluster.nodes)


class WorkloadRules(RuleFamily):
    """Rules of the user editing workloads and nodes. Mixed into `KmodelMachine` (which provides `cluster` and
    `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    # -- nodes ---------------------------------------------------------------------------------------------------

    @precondition(_has_nodes)
    @rule(i=INDEX, label=st.integers(0, len(NODE_LABELS) - 1))
    def label_node(self, i: int, label: int) -> None:
        """Set or remove a node label the model reads: the zone and region (the node lifecycle controller's
        zones), disktype (pods' nodeSelector), a core count (pods' node affinity).

        Draws: a node; a row of `NODE_LABELS`: `topology.kubernetes.io/zone` = zone-a or zone-b,
        `topology.kubernetes.io/region` = region-1, `disktype` = ssd, `example.com/cores` = 4 (a whole number a Gt
        or Lt node-affinity term compares), or one of the first three removed
        Does: `kubectl label node N key=value --overwrite` or `key-` (`label-node`): a merge patch of the label
        Shrinks to: the first node labelled zone-a"""
        key, value = NODE_LABELS[label]
        self._do(LabelNode(pick(i, self.cluster.nodes), key, value))

    @precondition(_has_nodes)
    @rule(i=INDEX, taint=st.integers(0, len(NODE_TAINTS) - 1))
    def taint_node(self, i: int, taint: int) -> None:
        """Taint a node dedicated=infra with a drawn effect, or remove that taint.

        Draws: a node; a row of `NODE_TAINTS`: `dedicated=infra` with effect NoSchedule, NoExecute or
        PreferNoSchedule, or removed (every effect, or NoExecute only)
        Does: `kubectl taint nodes` (`taint-node`): the Node read, its taints reorganised as kubectl's
        `ReorganizeTaints` does (the new taint first), `spec.taints` patched as a whole; a removal of a taint that
        is not there is refused by kubectl itself
        Shrinks to: the first node tainted NoSchedule"""
        effect, remove = NODE_TAINTS[taint]
        self._do(TaintNodeAction(pick(i, self.cluster.nodes), effect=effect, remove=remove))

    @precondition(_has_nodes)
    @rule(i=INDEX, uncordon=st.booleans())
    def cordon_node(self, i: int, uncordon: bool) -> None:
        """Draws: a node; uncordon or not
        Does: `kubectl cordon` / `uncordon` (`cordon-node`): `spec.unschedulable` set or removed
        Shrinks to: cordon the first node"""
        self._do(CordonNode(pick(i, self.cluster.nodes), not uncordon))

    # -- pods ------------------------------------------------------------------------------------------------------

    @rule(pod=st.sampled_from(BARE_PODS), i=INDEX, shape=POD_SHAPE)
    def apply_pod_shape(self, pod: str, i: int, shape: tuple[int, ...]) -> None:
        """A bare pod of a drawn shape, for the scheduler to place (index 0) or pinned to a node.

        Draws: a bare pod name (`debug-1`, `debug-2`); where (the scheduler, or pinned to a node); a shape of four
        small indices
        Does: `kubectl apply` of a bare pod (`apply-pod-shape`) built from the shape: ports (`POD_PORTS`: port 80;
        host port 8080 TCP, UDP, or on hostIP 127.0.0.1; hostNetwork, labelled app=web: in the Service web's
        rotation; two containers holding 8080 over TCP and SCTP; port 80 named `http`), resources (`POD_RESOURCES`:
        none, requests, requests and limits, limits only, a request too large for most nodes, an init container
        asking for more than the app container), placement
        (`POD_PLACEMENTS`: nodeSelector on zone, disktype, region and zone; required node affinity: zone In
        (zone-a, zone-b) or disktype Exists, zone NotIn (zone-a); preferred node affinity: disktype=ssd weighing
        50, any zone weighing 10; required node affinity of an empty term, which matches no node, or
        example.com/cores Gt 2), tolerations (`POD_TOLERATIONS`: dedicated:NoSchedule, dedicated:NoExecute for 30
        s, everything, node.kubernetes.io/unschedulable:NoSchedule (a cordoned node takes the pod),
        dedicated=infra:NoExecute for 0 s with the operator left out (evicted at once))
        Shrinks to: a plain pod with one port, placed by the scheduler"""
        self._do(ApplyPodShape(pod, pick(i, ("", *self.cluster.nodes)), shape))

    def _labelled_pods(self) -> list[tuple[str, str]]:
        """(pod, new app label) for every pod of the default namespace, those the scheduler has not placed yet
        first (a label change of a pod it found unschedulable may let it try again), each group by name: a pod
        with an app label loses it (""), one without gets back the app its name starts with (a ReplicaSet's pods
        are named after it), else the first app."""
        out = []
        pods = self.cluster.objects("pods", "default")
        for pod in [p for p in pods if not p.spec.node_name] + [p for p in pods if p.spec.node_name]:
            name = pod.metadata.name
            if "app" in pod.metadata.labels:
                out.append((name, ""))
            else:
                out.append((name, next((a for a in APPS if name.startswith(a + "-")), APPS[0])))
        return out

    @rule(i=INDEX)
    def label_pod(self, i: int) -> None:
        """Remove a pod's app label (its ReplicaSet releases it and makes another) or put it back (adopted again:
        one pod too many, which the ReplicaSet deletes).

        Draws: a pod of the default namespace (one the scheduler has not placed yet first)
        Does: `kubectl label pod` (`label-pod`): a pod with an `app` label loses it (its ReplicaSet releases it and
        makes another), one without gets back the app its name starts with (its ReplicaSet adopts it again and
        deletes the surplus pod)
        Shrinks to: the first pod's app label removed"""
        chosen = pick(i, self._labelled_pods())
        if chosen is None:
            chosen = (BARE_PODS[0], APPS[0])  # no pod at all: the label of a missing pod (404)
        self._do(LabelPod(*chosen))

    # -- Services ----------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), selector=st.integers(0, len(SERVICE_SELECTORS) - 1),
          ports=st.integers(0, len(SERVICE_PORTS) - 1))
    def edit_service(self, app: str, selector: int, ports: int) -> None:
        """Draws: an app; a selector (`SERVICE_SELECTORS`: its own app, the other app, its own app and a tier no pod
        has); ports (`SERVICE_PORTS`: 80, 8080 to 80, two named ports 80/TCP and 53/UDP, 80 to the port named `http`,
        which only a pod shape's pod declares)
        Does: `kubectl patch service` (`edit-service`)
        Shrinks to: the Service web as applied"""
        self._do(EditService(app, selector, ports))

    # -- Deployments -------------------------------------------------------------------------------------------

    @rule(app=st.sampled_from(APPS), strategy=st.integers(0, len(STRATEGIES) - 1))
    def set_strategy(self, app: str, strategy: int) -> None:
        """Draws: an app; a row of `STRATEGIES`: RollingUpdate 25 %/25 % (the default), Recreate, RollingUpdate 1/0,
        0/1, 2/50 %
        Does: `kubectl patch deployment` of `spec.strategy` (`set-strategy`)
        Shrinks to: the default strategy"""
        self._do(SetStrategy(app, strategy))

    @rule(app=st.sampled_from(APPS), resume=st.booleans())
    def pause_deployment(self, app: str, resume: bool) -> None:
        """Draws: an app; resume or not
        Does: `kubectl rollout pause` / `resume` (`pause-deployment`): `spec.paused` set or removed
        Shrinks to: pause web"""
        self._do(PauseDeployment(app, not resume))

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
        """Roll a Deployment back to its previous revision (index 0) or to one of its ReplicaSets' revisions.

        Draws: an app; a revision (the previous one, or one of the revisions its ReplicaSets carry)
        Does: `kubectl rollout undo [--to-revision]` (`rollout-undo`): the Deployment read (a paused one is refused
        by kubectl), its ReplicaSets listed, the chosen revision's template (without its pod-template-hash label)
        and kubectl's rollback annotations patched into the Deployment; the Deployment controller makes that
        ReplicaSet the new one again, under a new revision
        Shrinks to: undo web to its previous revision"""
        self._do(UndoRollout(app, pick(i, self._revisions(app))))

    # -- mistakes ----------------------------------------------------------------------------------------------

    @rule(case=st.integers(0, len(INVALID_MANIFESTS) - 1))
    def apply_invalid(self, case: int) -> None:
        """Send a manifest validation refuses (422): nothing may change.

        Draws: a row of `INVALID_MANIFESTS`
        Does: a manifest validation refuses with 422 (`apply-invalid`): a Deployment with replicas -1, one whose
        selector does not match its template's labels, a Service port 70000, a pod with containerPort 0, a taint of
        effect Sometimes, a rolling update with maxSurge and maxUnavailable both 0; nothing in the cluster changes
        Shrinks to: a Deployment with replicas -1"""
        node = self.cluster.nodes[0] if self.cluster.nodes else "node-1"
        self._do(ApplyInvalid(case, node))
