"""The workload depth rules: Jobs of the shapes real manifests use, a user suspending a Job and waiting for it,
and NoExecute taints met by pods that tolerate them for a while (a mixin of `KmodelMachine`).

Theory of operation
-------------------
The other rules reach a Job's start and a taint's first effect; the controllers' rarer sides (a Job failing
past its backoff limit or its deadline, a work queue Job, a suspended Job resumed, a finished Job deleted by its
TTL, a pod evicted once its tolerationSeconds have passed, an eviction cancelled when the taint goes) need a
Job's pods to run to their end and a taint to land where tolerating pods run. So the draws collide on purpose:
`wait_for_job` waits for a Job that exists and has not finished, `suspend_job` patches a Job that exists (when
one does),
`apply_tolerant_pod` pins its pod to a node that has the NoExecute taint when one has it, and
`taint_node_of_pod` taints (or untaints) the node a pod runs on. A Deployment's rollout is kept in progress by a
nodeSelector no node matches yet (`set_node_selector`), `scale_rollout` scales a Deployment while two of its
ReplicaSets want pods, and `annotate_and_scale_down` sets a pod-deletion-cost on a pod of a Deployment and scales
it one down, so that its ReplicaSet ranks its pods; `apply_statefulset_strategy` gives the StatefulSet an update
strategy other than the default; `wait_for_unschedulable` waits out the scheduler's five minutes over a pod no node
fits (the other waits are seconds long). Every draw shrinks toward the first row of its table
(kmodel.checker.workload_depth_actions).
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.actions import APPS, BARE_PODS, RunFair, ScaleDeployment
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.job_actions import JOB
from kmodel.checker.patch_actions import POD_DELETION_COST, PatchObject
from kmodel.checker.rulebook import RuleFamily, rule
from kmodel.checker.workload_actions import TAINT_KEY, TAINT_VALUE, TaintNodeAction
from kmodel.checker.statefulset_actions import IMAGES
from kmodel.scheduler.queue import POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS, UNSCHEDULABLE_FLUSH_PERIOD_MS
from kmodel.checker.workload_depth_actions import (
    BATCH_JOB, COMPLETIONS, DEADLINES, MAX_WAIT_SECONDS, NODE_SELECTORS, SCALE_DOWN_COSTS, SET_STRATEGIES,
    TOLERATIONS, TTLS,
    ApplyBatchJob, ApplyStatefulSetStrategy, ApplyTolerantPod, SetNodeSelector, SuspendJob, WaitForJob,
    job_finished_or_gone,
)

#: the Jobs a user suspends or waits for
JOBS: tuple[str, ...] = (BATCH_JOB, JOB)


def _jobs(machine: Any) -> list[str]:
    """The names of the checker's Jobs that exist now, in JOBS order."""
    present = {j.metadata.name for j in machine.cluster.objects("jobs", "default")}
    return [name for name in JOBS if name in present]


def _unfinished_jobs(machine: Any) -> list[str]:
    return [name for name in _jobs(machine) if not job_finished_or_gone(machine.cluster, name)]


#: the TOLERATIONS row that does not tolerate the checker's NoExecute taint (another value)
UNTOLERATED = len(TOLERATIONS) - 1
assert TOLERATIONS[UNTOLERATED].get("value") not in (None, TAINT_VALUE)
#: how long wait_for_unschedulable waits: the scheduler's podMaxInUnschedulablePodsDuration (5 min), then one period
#: of its flushUnschedulablePodsLeftover loop (30 s), so a pod found unschedulable when the wait starts is moved
#: back to be tried again even if no cluster event woke it
UNSCHEDULABLE_WAIT_MS = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS + UNSCHEDULABLE_FLUSH_PERIOD_MS


def _unschedulable_pods(machine: Any) -> bool:
    """Whether a pod of the default namespace is Pending with PodScheduled False, reason Unschedulable."""
    return any(c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
               for p in machine.cluster.objects("pods", "default") if not p.spec.node_name
               for c in p.status.conditions)


def _rolling_out(machine: Any) -> list[str]:
    """The apps whose Deployment has more than one ReplicaSet with pods wanted: a rollout in progress."""
    active: dict[str, int] = {}
    for rs in machine.cluster.objects("replicasets", "default"):
        owner = next((r.name for r in rs.metadata.owner_references if r.kind == "Deployment"), None)
        if owner is not None and rs.spec.replicas:
            active[owner] = active.get(owner, 0) + 1
    return [app for app in APPS if active.get(app, 0) > 1]


def _replicated_pods(machine: Any) -> list[tuple[str, str]]:
    """(app, pod) for every pod a ReplicaSet of an app's Deployment owns, of the apps that have two such pods or
    more (a scale-down then ranks them), in pod order."""
    owned: list[tuple[str, str]] = []
    for pod in machine.cluster.objects("pods", "default"):
        owner = next((r.name for r in pod.metadata.owner_references if r.kind == "ReplicaSet"), "")
        app = next((a for a in APPS if owner.startswith(a + "-")), None)
        if app is not None:
            owned.append((app, pod.metadata.name))
    counts = {app: sum(1 for a, _ in owned if a == app) for app in APPS}
    return [(app, pod) for app, pod in owned if counts[app] > 1]


def _has_nodes(machine: Any) -> bool:
    return bool(machine.cluster.nodes)


def _no_execute_nodes(machine: Any) -> list[str]:
    """The nodes that carry the checker's NoExecute taint now, by name."""
    return sorted(n.metadata.name for n in machine.cluster.objects("nodes")
                  if any(t.key == TAINT_KEY and t.effect == "NoExecute" for t in n.spec.taints))


def _pod_nodes(machine: Any) -> list[str]:
    """The nodes the pods of the default namespace are bound to, each once, in pod order."""
    out: list[str] = []
    for pod in machine.cluster.objects("pods", "default"):
        if pod.spec.node_name and pod.spec.node_name not in out:
            out.append(pod.spec.node_name)
    return out


class WorkloadDepthRules(RuleFamily):
    """Rules that take Jobs and NoExecute taints to their rare sides. Mixed into `KmodelMachine` (which provides
    `cluster` and `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    # -- Jobs ----------------------------------------------------------------------------------------------------

    @rule(completions=st.integers(0, len(COMPLETIONS) - 1), parallelism=st.integers(1, 3), indexed=st.booleans(),
          fails=st.booleans(), on_failure=st.booleans(), backoff_limit=st.integers(0, 2),
          deadline=st.integers(0, len(DEADLINES) - 1), suspend=st.booleans(), ttl=st.integers(0, len(TTLS) - 1))
    def apply_batch_job(self, completions: int, parallelism: int, indexed: bool, fails: bool, on_failure: bool,
                        backoff_limit: int, deadline: int, suspend: bool, ttl: int) -> None:
        """Draws: completions (1, none: a work queue, 2, 3); parallelism 1-3; NonIndexed or Indexed; pods that
        succeed or fail; restartPolicy Never or OnFailure; backoffLimit 0-2; activeDeadlineSeconds (none, 3 s,
        60 s); suspended or not; ttlSecondsAfterFinished (none, 0, 30 s)
        Does: `kubectl apply` of the Job `batch` (`apply-batch-job`, `kmodel/checker/workload_depth_actions.py`):
        the Job controller runs, suspends, fails (BackoffLimitExceeded, DeadlineExceeded) or completes it, the TTL
        controller deletes it once finished; Indexed without completions, or another template, completions or
        completion mode than the Job's, is refused (422)
        Shrinks to: one completion, parallelism 1, NonIndexed, succeeding pods, Never, backoffLimit 0, no
        deadline, not suspended, no TTL"""
        self._do(ApplyBatchJob(completions, parallelism, indexed, fails, on_failure, backoff_limit, deadline,
                               suspend, ttl))

    @rule(i=INDEX, resume=st.booleans())
    def suspend_job(self, i: int, resume: bool) -> None:
        """Draws: a Job that exists (`batch`, `report`; `batch` when none does: 404); suspend or resume
        Does: `kubectl patch job` of `spec.suspend` (`suspend-job`): a suspended Job's active pods are deleted
        (their tracking finalizers removed first) and its Suspended condition set; resumed, it starts over its
        active deadline
        Shrinks to: suspend the first Job"""
        self._do(SuspendJob(pick(i, _jobs(self) or [BATCH_JOB]), not resume))

    @precondition(lambda self: bool(_unfinished_jobs(self)))
    @rule(i=INDEX, seconds=st.integers(5, MAX_WAIT_SECONDS))
    def wait_for_job(self, i: int, seconds: int) -> None:
        """Draws: a Job that exists and has not finished; a timeout of 5-60 s
        Does: the user waits (`wait-for-job`, as `kubectl wait --for=condition=complete` does): the cluster runs
        fairly until the Job is Complete or Failed, is gone, or the timeout has passed
        Shrinks to: the first such Job, 5 s"""
        self._do(WaitForJob(pick(i, _unfinished_jobs(self)), seconds))

    @precondition(once_per_step(_unschedulable_pods))
    @rule()
    def wait_for_unschedulable(self) -> None:
        """Draws: nothing (the rule runs only while a pod of the default namespace is Pending, Unschedulable)
        Does: the user watches the Pending pod for 5 min 30 s (`run`, as `kubectl get pods -w` would): the
        scheduler's leftover flush moves a pod unschedulable for more than 5 minutes back to be tried again, even
        when no event of the cluster woke it, and each kubelet's periodic work (a node status written every
        5 minutes without change) comes due
        Shrinks to: itself"""
        self._do(RunFair(UNSCHEDULABLE_WAIT_MS))

    # -- NoExecute taints ----------------------------------------------------------------------------------------

    @precondition(_has_nodes)
    @rule(pod=st.sampled_from(BARE_PODS), i=INDEX, toleration=st.integers(0, len(TOLERATIONS) - 1))
    def apply_tolerant_pod(self, pod: str, i: int, toleration: int) -> None:
        """Draws: a bare pod name; a node (one with the NoExecute taint when there is one); a row of `TOLERATIONS`:
        dedicated:NoExecute for 5 s, dedicated=infra:NoExecute for 30 s, for 0 s, for ever, dedicated of every
        effect, dedicated=other:NoExecute (not tolerated)
        Does: `kubectl apply` of a bare pod pinned to the node (`apply-tolerant-pod`): on a tainted node the taint
        eviction controller deletes it at once, once its tolerationSeconds have passed, or never; a pod that does
        not tolerate the taint is first refused by the node's kubelet (admission: phase Failed, reason
        TaintToleration), so when no node has the taint, its row taints the drawn node first (`taint-node`,
        dedicated=infra:NoExecute), as an admin dedicating a node does
        Shrinks to: `debug-1` on the first such node, tolerating for 5 s"""
        tainted = _no_execute_nodes(self)
        node = pick(i, tainted or list(self.cluster.nodes))
        if not tainted and toleration == UNTOLERATED:
            self._do(TaintNodeAction(node, effect="NoExecute"))
        self._do(ApplyTolerantPod(pod, node, toleration))

    @precondition(lambda self: bool(_pod_nodes(self)))
    @rule(i=INDEX, remove=st.booleans())
    def taint_node_of_pod(self, i: int, remove: bool) -> None:
        """Draws: a node a pod of the default namespace runs on; taint or untaint
        Does: `kubectl taint nodes N dedicated=infra:NoExecute` (`taint-node`), or its removal (refused by kubectl
        when the node has no such taint): the pods that do not tolerate it are evicted, the others once their
        tolerationSeconds have passed; removed, the evictions still pending are cancelled
        Shrinks to: taint the first such node"""
        self._do(TaintNodeAction(pick(i, _pod_nodes(self)), effect="NoExecute", remove=remove))

    # -- StatefulSets and Deployments ----------------------------------------------------------------------------

    @rule(replicas=st.integers(0, 3), parallel=st.booleans(), image=st.integers(0, len(IMAGES) - 1),
          strategy=st.integers(0, len(SET_STRATEGIES) - 1))
    def apply_statefulset_strategy(self, replicas: int, parallel: bool, image: int, strategy: int) -> None:
        """Draws: 0-3 replicas; OrderedReady or Parallel; an image; a row of `SET_STRATEGIES`: OnDelete,
        RollingUpdate partition 1, partition 2 with revisionHistoryLimit 1, minReadySeconds 5, minReadySeconds 5
        with revisionHistoryLimit 0
        Does: `kubectl apply` of the StatefulSet `db` with that strategy (`apply-statefulset-strategy`): OnDelete
        replaces a pod of an old revision only once it is deleted, a partition keeps the ordinals below it at the
        old revision, minReadySeconds holds an ordered rollout until a pod has been ready that long; another pod
        management policy than the set's is refused (422)
        Shrinks to: 0 replicas, OrderedReady, the first image, OnDelete"""
        self._do(ApplyStatefulSetStrategy(replicas, parallel, image, strategy))

    @rule(app=st.sampled_from(APPS), selector=st.integers(0, len(NODE_SELECTORS) - 1))
    def set_node_selector(self, app: str, selector: int) -> None:
        """Draws: an app; a row of `NODE_SELECTORS`: none, disktype=ssd, topology.kubernetes.io/zone=zone-b
        Does: `kubectl patch deployment` of its pod template's nodeSelector (`set-node-selector`): a new template,
        so a rollout, whose new pods stay Pending until a node carries the label (label_node)
        Shrinks to: the nodeSelector of web removed"""
        self._do(SetNodeSelector(app, selector))

    @precondition(lambda self: bool(_replicated_pods(self)))
    @rule(i=INDEX, cost=st.integers(0, len(SCALE_DOWN_COSTS) - 1))
    def annotate_and_scale_down(self, i: int, cost: int) -> None:
        """Draws: a pod of a Deployment that runs two pods or more; a row of `SCALE_DOWN_COSTS`: -100, 100, -007,
        then values the API server refuses: +10, 008, 2147483648
        Does: `kubectl annotate pod P controller.kubernetes.io/pod-deletion-cost=C --overwrite` (`patch-object`:
        a merge patch; 422 "must be a 32bit integer" for a value upstream's parse refuses), then `kubectl scale
        deployment` one replica down (`scale-deployment`): its ReplicaSet ranks its pods (unscheduled, pending,
        not ready, cheaper, doubled up on a node, ready for less time, restarted more, newer) and deletes the first
        Shrinks to: the first such pod annotated -100, its Deployment scaled down by one"""
        app, pod = pick(i, _replicated_pods(self))
        self._do(PatchObject("pods", "default", pod, "merge",
                             {"metadata": {"annotations": {POD_DELETION_COST: SCALE_DOWN_COSTS[cost]}}}))
        deployment = self.cluster.get("deployments", "default", app)
        replicas = deployment.spec.replicas if deployment is not None and deployment.spec.replicas is not None else 1
        self._do(ScaleDeployment(app, max(0, replicas - 1)))

    @precondition(lambda self: bool(_rolling_out(self)))
    @rule(i=INDEX, replicas=st.integers(0, 6))
    def scale_rollout(self, i: int, replicas: int) -> None:
        """Draws: a Deployment with two ReplicaSets or more that want pods (a rollout in progress); 0-6 replicas
        Does: `kubectl scale deployment` (`scale-deployment`): the Deployment controller scales its ReplicaSets in
        proportion to their sizes (the leftover to the largest), within maxSurge
        Shrinks to: the first such Deployment scaled to 0"""
        self._do(ScaleDeployment(pick(i, _rolling_out(self)), replicas))
