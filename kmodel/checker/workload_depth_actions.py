"""Workload depth actions: Jobs of the shapes real manifests use, a user suspending one and waiting for it, and
pods that tolerate a NoExecute taint for a while.

Each action but `WaitForJob` is one kubectl invocation sent through the cluster's kubectl component
(`Cluster.submit`):

* ``kubectl apply`` of the Job `batch` (beside jobs_actions' `report`), built from small indices into the tables
  below: completions (none: a work queue, whose Job completes once one pod succeeded and none runs; or 1-3),
  parallelism 1-3, NonIndexed or Indexed (Indexed needs completions: without, the API server refuses it, 422),
  pods that succeed or fail, restartPolicy Never or OnFailure (the kubelet restarts a failed container in place:
  backoffLimit counts those restarts), backoffLimit 0-2, activeDeadlineSeconds (none, 3 s: shorter than a pod's
  5 s run, so the Job fails DeadlineExceeded; 60 s), suspended or not, ttlSecondsAfterFinished (none, 0, 30 s).
  spec.suspend, parallelism, backoffLimit and activeDeadlineSeconds may change on a Job that exists; its
  completions, completion mode and template may not (422, as upstream's ValidateJobSpecUpdate);
* ``kubectl patch job J --type=merge -p '{"spec":{"suspend":true}}'`` (or false): a suspended Job's active pods
  are deleted and its Suspended condition set; resumed, its startTime restarts;
* ``kubectl apply`` of the StatefulSet `db` (statefulset_actions' manifest) with an update strategy real
  manifests use: OnDelete, a RollingUpdate partition, minReadySeconds, a short revisionHistoryLimit;
* ``kubectl patch deployment D`` of its pod template's nodeSelector (`NODE_SELECTORS`: a label some nodes
  may carry, or none): a rollout whose new pods no node takes stays in progress, with two ReplicaSets active,
  until a node gets the label or the selector goes (scale_rollout then scales such a rollout: the Deployment
  controller scales its ReplicaSets in proportion);
* ``kubectl apply`` of a bare pod pinned to a node, tolerating the checker's taint `dedicated=infra:NoExecute`
  in one of the ways `TOLERATIONS` lists: for 0, 5 or 30 s, for ever, by value or only by key, with no effect
  (every effect), or a value the taint does not have (not tolerated).

`WaitForJob` sends nothing: it is the user waiting, as `kubectl wait --for=condition=complete job/J` does, while
the cluster runs fairly, until the Job has finished (Complete or Failed), is gone, or the timeout has passed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import attrs

from kmodel.checker.actions import Action, run_fairly
from kmodel.checker.job_actions import RUN_SECONDS
from kmodel.checker.simpler import Simplest, default, fewer
from kmodel.checker.statefulset_actions import IMAGES, STATEFULSET, statefulset_manifest
from kmodel.checker.workload_actions import (
    LABEL_DISK, LABEL_ZONE, TAINT_KEY, TAINT_VALUE, pod_shape_manifest,
)
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply, Patch
from kmodel.loop.events import at_least


#: the Job the depth rules apply (jobs_actions' `report` is the other one a user may suspend)
BATCH_JOB = "batch"
#: completions of `batch`: 0 is none (a work queue: parallelism pods, done once one succeeded and none runs)
COMPLETIONS: tuple[int, ...] = (1, 0, 2, 3)
#: activeDeadlineSeconds of `batch`: 0 is none; 3 s ends before a pod's 5 s run does, 60 s after
DEADLINES: tuple[int, ...] = (0, 3, 60)
#: ttlSecondsAfterFinished of `batch`: None is none, 0 deletes it as soon as it finishes
TTLS: tuple[Optional[int], ...] = (None, 0, 30)
#: pod-deletion-cost values annotate_and_scale_down sets, the plainest first: valid ones (upstream's parse takes
#: "-007"), then ones the API server refuses (a plus sign, a leading zero, past int32)
SCALE_DOWN_COSTS: tuple[str, ...] = ("-100", "100", "-007", "+10", "008", "2147483648")
#: the longest a user waits for a Job in one step
MAX_WAIT_SECONDS = 60
#: ways to tolerate `dedicated=infra:NoExecute` (the workload rules' taint), the plainest first: a dict is one
#: toleration as a manifest writes it
TOLERATIONS: tuple[dict, ...] = (
    {"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
    {"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE, "effect": "NoExecute", "tolerationSeconds": 30},
    {"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0},
    {"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute"},
    {"key": TAINT_KEY, "operator": "Exists"},
    {"key": TAINT_KEY, "operator": "Equal", "value": "other", "effect": "NoExecute", "tolerationSeconds": 30},
)


@attrs.frozen
class JobShape:
    """The drawn features of the Job `batch` (see the module docstring); each field's simplest value is 0/False."""

    completions: int = 0  # an index into COMPLETIONS
    parallelism: int = 1
    indexed: bool = False
    fails: bool = False
    on_failure: bool = False
    backoff_limit: int = 0
    deadline: int = 0  # an index into DEADLINES
    suspend: bool = False
    ttl: int = 0  # an index into TTLS


def batch_job_manifest(shape: JobShape) -> dict:
    """The Job `batch` of `shape` (its pods run RUN_SECONDS and exit 0, or 1 when `fails`)."""
    annotations = {"kmodel.io/run-seconds": str(RUN_SECONDS)}
    if shape.fails:
        annotations["kmodel.io/exit-code"] = "1"
    spec: dict[str, Any] = {
        "parallelism": shape.parallelism, "backoffLimit": shape.backoff_limit,
        "template": {"metadata": {"annotations": annotations},
                     "spec": {"restartPolicy": "OnFailure" if shape.on_failure else "Never",
                              "containers": [{"name": "batch", "image": "busybox"}]}}}
    completions = COMPLETIONS[shape.completions]
    if completions:
        spec["completions"] = completions
    if shape.indexed:
        spec["completionMode"] = "Indexed"
    if DEADLINES[shape.deadline]:
        spec["activeDeadlineSeconds"] = DEADLINES[shape.deadline]
    if shape.suspend:
        spec["suspend"] = True
    if TTLS[shape.ttl] is not None:
        spec["ttlSecondsAfterFinished"] = TTLS[shape.ttl]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": BATCH_JOB, "namespace": "default"},
            "spec": spec}


def describe_job(shape: JobShape) -> str:
    completions = COMPLETIONS[shape.completions]
    parts = [f"{completions} completions" if completions else "no completions",
             f"parallelism {shape.parallelism}", f"backoffLimit {shape.backoff_limit}"]
    parts += [word for flag, word in ((shape.indexed, "indexed"), (shape.fails, "failing"),
                                      (shape.on_failure, "OnFailure"), (shape.suspend, "suspended")) if flag]
    if DEADLINES[shape.deadline]:
        parts.append(f"deadline {DEADLINES[shape.deadline]}s")
    if TTLS[shape.ttl] is not None:
        parts.append(f"ttl {TTLS[shape.ttl]}s")
    return ", ".join(parts)


@attrs.frozen
class ApplyBatchJob(Action):
    """kubectl apply the Job `batch` of the drawn shape (see the module docstring)."""

    kind: ClassVar[str] = "apply-batch-job"
    simplest: ClassVar[Simplest] = (
        ("completions", fewer(0)), ("parallelism", fewer(1)), ("indexed", default(False)), ("fails", default(False)),
        ("on_failure", default(False)), ("backoff_limit", fewer(0)), ("deadline", fewer(0)),
        ("suspend", default(False)), ("ttl", fewer(0)))
    completions: int = at_least(0, default=0)
    parallelism: int = at_least(1, default=1)
    indexed: bool = False
    fails: bool = False
    on_failure: bool = False
    backoff_limit: int = at_least(0, default=0)
    deadline: int = at_least(0, default=0)
    suspend: bool = False
    ttl: int = at_least(0, default=0)

    @property
    def shape(self) -> JobShape:
        return JobShape(*(getattr(self, f.name) for f in attrs.fields(JobShape)))

    @property
    def name(self) -> str:
        return f"kubectl apply job {BATCH_JOB} ({describe_job(self.shape)})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(batch_job_manifest(self.shape)))


@attrs.frozen
class SuspendJob(Action):
    """kubectl patch job `job` -p '{"spec":{"suspend":true}}' (false when not `suspend`; 404 without the Job)."""

    kind: ClassVar[str] = "suspend-job"
    simplest: ClassVar[Simplest] = (("suspend", default(True)),)
    job: str
    suspend: bool = True

    @property
    def name(self) -> str:
        value = "true" if self.suspend else "false"
        return f"kubectl patch job {self.job} --type=merge -p '{{\"spec\":{{\"suspend\":{value}}}}}'"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Patch("jobs", "default", self.job, {"spec": {"suspend": self.suspend}}))


def job_finished_or_gone(cluster: Cluster, job: str) -> bool:
    """The Job `job` of the default namespace is gone or has a Complete or Failed condition that is True."""
    found = next((j for j in cluster.objects("jobs", "default") if j.metadata.name == job), None)
    if found is None:
        return True
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in found.status.conditions)


@attrs.frozen
class WaitForJob(Action):
    """The user waits up to `seconds` for the Job `job` to finish (`kubectl wait --for=condition=complete`): the
    cluster runs fairly a second at a time until the Job is finished or gone, or the time is up."""

    kind: ClassVar[str] = "wait-for-job"
    simplest: ClassVar[Simplest] = (("seconds", fewer(1)),)
    job: str
    seconds: int = at_least(1, default=MAX_WAIT_SECONDS)

    @property
    def name(self) -> str:
        return f"kubectl wait --for=condition=complete job/{self.job} --timeout={self.seconds}s"

    def apply(self, cluster: Cluster) -> None:
        deadline = cluster.now + self.seconds * 1000
        while cluster.now < deadline and not job_finished_or_gone(cluster, self.job):
            run_fairly(cluster, min(deadline, cluster.now + 1000))


@attrs.frozen
class ApplyTolerantPod(Action):
    """kubectl apply a bare pod `pod` pinned to `node`, tolerating `dedicated=infra:NoExecute` as
    TOLERATIONS[`toleration`] does."""

    kind: ClassVar[str] = "apply-tolerant-pod"
    simplest: ClassVar[Simplest] = (("toleration", fewer(0)),)
    pod: str
    node: str
    toleration: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        t = TOLERATIONS[self.toleration]
        how = f"{t['key']}{'=' + t['value'] if 'value' in t else ''}:{t.get('effect', '*')}"
        seconds = t.get("tolerationSeconds")
        return (f"kubectl apply pod {self.pod} (on {self.node}, tolerates {how}"
                f"{f' for {seconds}s' if seconds is not None else ''})")

    def apply(self, cluster: Cluster) -> None:
        manifest = pod_shape_manifest(self.pod, self.node, (0, 0, 0, 0))
        manifest["spec"]["tolerations"] = [dict(TOLERATIONS[self.toleration])]
        cluster.submit(Apply(manifest))


# -- StatefulSets ----------------------------------------------------------------------------------------------

#: the spec fields a StatefulSet strategy row adds to `db`, the plainest first
SET_STRATEGIES: tuple[dict, ...] = (
    {"updateStrategy": {"type": "OnDelete"}},
    {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
    {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, "revisionHistoryLimit": 1},
    {"minReadySeconds": 5},
    {"minReadySeconds": 5, "revisionHistoryLimit": 0},
)


def describe_set_strategy(row: dict) -> str:
    parts = []
    update = row.get("updateStrategy")
    if update is not None:
        partition = (update.get("rollingUpdate") or {}).get("partition")
        parts.append(update["type"] + (f" partition {partition}" if partition is not None else ""))
    if "minReadySeconds" in row:
        parts.append(f"minReadySeconds {row['minReadySeconds']}")
    if "revisionHistoryLimit" in row:
        parts.append(f"revisionHistoryLimit {row['revisionHistoryLimit']}")
    return ", ".join(parts)


@attrs.frozen
class ApplyStatefulSetStrategy(Action):
    """kubectl apply the StatefulSet `db` of `replicas` pods (Parallel when `parallel`), image IMAGES[`image`],
    with SET_STRATEGIES[`strategy`]'s fields."""

    kind: ClassVar[str] = "apply-statefulset-strategy"
    simplest: ClassVar[Simplest] = (("replicas", fewer(0)), ("parallel", default(False)), ("image", fewer(0)),
                                    ("strategy", fewer(0)))
    replicas: int = at_least(0)
    parallel: bool = False
    image: int = at_least(0, default=0)
    strategy: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        policy = ", Parallel" if self.parallel else ""
        return (f"kubectl apply statefulset {STATEFULSET} ({self.replicas} replicas{policy}, {IMAGES[self.image]}, "
                f"{describe_set_strategy(SET_STRATEGIES[self.strategy])})")

    def apply(self, cluster: Cluster) -> None:
        manifest = statefulset_manifest(self.replicas, self.parallel, self.image)
        manifest["spec"].update(SET_STRATEGIES[self.strategy])
        cluster.submit(Apply(manifest))


# -- Deployments -----------------------------------------------------------------------------------------------

#: the pod template nodeSelectors set_node_selector draws: none (the field removed), then labels label_node sets
NODE_SELECTORS: tuple[dict, ...] = ({}, {LABEL_DISK: "ssd"}, {LABEL_ZONE: "zone-b"})


@attrs.frozen
class SetNodeSelector(Action):
    """kubectl patch deployment `app` of spec.template.spec.nodeSelector: NODE_SELECTORS[`selector`] (the field
    removed for the empty one): a new pod template, so a rollout."""

    kind: ClassVar[str] = "set-node-selector"
    simplest: ClassVar[Simplest] = (("selector", fewer(0)),)
    app: str
    selector: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        chosen = NODE_SELECTORS[self.selector]
        value = ",".join(f"{k}={v}" for k, v in chosen.items()) or "none"
        return f"kubectl patch deployment {self.app} (nodeSelector {value})"

    def apply(self, cluster: Cluster) -> None:
        chosen = NODE_SELECTORS[self.selector]
        patch = {"spec": {"template": {"spec": {"nodeSelector": dict(chosen) if chosen else None}}}}
        cluster.submit(Patch("deployments", "default", self.app, patch))


__all__ = ["ApplyBatchJob", "ApplyStatefulSetStrategy", "ApplyTolerantPod", "BATCH_JOB", "COMPLETIONS",
           "DEADLINES", "JobShape", "MAX_WAIT_SECONDS", "NODE_SELECTORS", "SET_STRATEGIES",
           "SetNodeSelector", "SuspendJob", "TOLERATIONS", "TTLS", "WaitForJob", "batch_job_manifest",
           "job_finished_or_gone"]
