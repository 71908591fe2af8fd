"""Job, Secret and service account token actions: a user running the Job `report`, keeping the Secret `creds`,
and asking a token for the namespace's default ServiceAccount.

Each action is one kubectl invocation sent through the cluster's kubectl component (`Cluster.submit`):

* ``kubectl apply`` of the Job `report`: drawn completions (1-3) and parallelism (1-2), completion mode
  NonIndexed or Indexed (one pod per completion index), pods that succeed or fail (the model's
  kmodel.io/exit-code convention: kmodel.kubelet.completion) with backoffLimit 1, and a TTL after it finishes or
  none. A Job's template and completions are immutable: applying it again with others is refused
  (422), as upstream's;
* ``kubectl apply`` of the Secret `creds`: one of two passwords in stringData, immutable or not (a password
  changed on an immutable Secret is refused, 422);
* ``kubectl --token=$(kubectl create token default) get serviceaccount default``: a bound token for the default
  ServiceAccount (made by the service account controller: 404 until it is), then a request with it (403: the
  account has no rights, but it is authenticated), or only the token request.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default, fewer
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply, CreateToken, Get
from kmodel.loop.events import at_least

#: the checker's Job, Secret, and the ServiceAccount whose tokens it asks for
JOB = "report"
SECRET = "creds"
SERVICE_ACCOUNT = "default"
#: the passwords apply_secret draws from
PASSWORDS: tuple[str, ...] = ("hunter2", "correct-horse")
#: how long a Job's pod runs (kmodel.io/run-seconds), its backoffLimit, and the TTL after it finishes
RUN_SECONDS = 5
BACKOFF_LIMIT = 1
TTL_SECONDS = 30


def job_manifest(completions: int, parallelism: int, fails: bool, ttl: bool, indexed: bool = False) -> dict:
    """The `report` Job (see the module docstring)."""
    annotations = {"kmodel.io/run-seconds": str(RUN_SECONDS)}
    if fails:
        annotations["kmodel.io/exit-code"] = "1"
    spec: dict = {"completions": completions, "parallelism": parallelism, "backoffLimit": BACKOFF_LIMIT,
                  "template": {"metadata": {"annotations": annotations},
                               "spec": {"restartPolicy": "Never",
                                        "containers": [{"name": "report", "image": "busybox"}]}}}
    if ttl:
        spec["ttlSecondsAfterFinished"] = TTL_SECONDS
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": JOB, "namespace": "default"}, "spec": spec}


@attrs.frozen
class ApplyJob(Action):
    """kubectl apply the Job `report` (see the module docstring)."""

    kind: ClassVar[str] = "apply-job"
    simplest: ClassVar[Simplest] = (("completions", fewer(1)), ("parallelism", fewer(1)), ("fails", default(False)),
                                    ("ttl", default(False)), ("indexed", default(False)))
    completions: int = at_least(1, default=1)
    parallelism: int = at_least(1, default=1)
    fails: bool = False
    ttl: bool = False
    indexed: bool = False

    @property
    def name(self) -> str:
        extras = ((", indexed" if self.indexed else "") + (", failing" if self.fails else "")
                  + (f", ttl {TTL_SECONDS}s" if self.ttl else ""))
        return f"kubectl apply job {JOB} ({self.completions} completions, parallelism {self.parallelism}{extras})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(job_manifest(self.completions, self.parallelism, self.fails, self.ttl, self.indexed)))


@attrs.frozen
class ApplySecret(Action):
    """kubectl apply the Secret `creds` with password `password` (an index into PASSWORDS), immutable or not."""

    kind: ClassVar[str] = "apply-secret"
    simplest: ClassVar[Simplest] = (("password", fewer(0)), ("immutable", default(False)))
    password: int = at_least(0, default=0)
    immutable: bool = False

    @property
    def name(self) -> str:
        return f"kubectl apply secret {SECRET} (password {self.password}{', immutable' if self.immutable else ''})"

    def apply(self, cluster: Cluster) -> None:
        manifest = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": "default"},
                    "stringData": {"password": PASSWORDS[self.password]}}
        if self.immutable:
            manifest["immutable"] = True
        cluster.submit(Apply(manifest))


@attrs.frozen
class RequestToken(Action):
    """kubectl create token default (and, with `use`, a get of the account with that token)."""

    kind: ClassVar[str] = "request-token"
    simplest: ClassVar[Simplest] = (("use", default(False)),)
    use: bool = False

    @property
    def name(self) -> str:
        token = f"kubectl create token {SERVICE_ACCOUNT}"
        return f"kubectl --token=$({token}) get serviceaccount {SERVICE_ACCOUNT}" if self.use else token

    def apply(self, cluster: Cluster) -> None:
        then = Get("serviceaccounts", "default", SERVICE_ACCOUNT) if self.use else None
        cluster.submit(CreateToken("default", SERVICE_ACCOUNT, then=then))
