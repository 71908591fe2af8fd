"""The Job, Secret and token rules (a mixin of `KmodelMachine`):

    apply_job       kubectl apply job report: 1-3 completions, parallelism 1-2, NonIndexed or Indexed, pods that
                    succeed or fail, a TTL
    delete_job      kubectl delete job report, with a cascade: none (the server's default), background, foreground
                    or orphan
    apply_secret    kubectl apply secret creds: one of two passwords, immutable or not
    request_token   kubectl create token default, and a request with the token

Every draw shrinks toward the simplest: one completion, parallelism 1, NonIndexed, pods that succeed, no TTL, the
first password, mutable, the token only. Every rule always sends its command (a delete before the Job exists is
kubectl's 404, a token before the default ServiceAccount exists 404, recorded as their results).
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st

from kmodel.checker.access_actions import DeleteWith
from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.job_actions import JOB, PASSWORDS, ApplyJob, ApplySecret, RequestToken
from kmodel.checker.rulebook import RuleFamily, rule


class JobRules(RuleFamily):
    """Rules of the user's Job, Secret and tokens. Mixed into `KmodelMachine` (which provides `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    @rule(completions=st.integers(1, 3), parallelism=st.integers(1, 2), fails=st.booleans(), ttl=st.booleans(),
          indexed=st.booleans())
    def apply_job(self, completions: int, parallelism: int, fails: bool, ttl: bool, indexed: bool) -> None:
        """Draws: 1-3 completions; parallelism 1-2; completion mode NonIndexed or Indexed; pods that succeed or fail;
        a TTL of 30 s after it finishes or none
        Does: `kubectl apply` of the Job `report` (`apply-job`, `kmodel/checker/job_actions.py`; the rules are the
        mixin `JobRules` of `kmodel/checker/job_rules.py`): its controller runs the pods (one per completion index
        for an Indexed Job; each runs 5 s and exits 0, or 1 when failing: the model's `kmodel.io/run-seconds` and
        `kmodel.io/exit-code` convention), counts them through the tracking finalizer (an Indexed Job by index, in
        `completedIndexes`), and marks the Job Complete, or Failed past backoffLimit 1; the TTL-after-finished
        controller deletes a finished Job with a TTL, and the garbage collector its pods; applying it again with
        other completions or another template is refused (422: immutable)
        Shrinks to: one completion, parallelism 1, NonIndexed, succeeding pods, no TTL"""
        self._do(ApplyJob(completions, parallelism, fails, ttl, indexed))

    @rule(cascade=st.sampled_from(PROPAGATION))
    def delete_job(self, cascade: str) -> None:
        """Draws: a cascade: none (the server's default, background), background, foreground, orphan
        Does: `kubectl delete job report` (`delete-with`; 404 while there is no Job): the Job controller releases
        the finalizers of the pods it leaves, the garbage collector deletes them unless orphaned
        Shrinks to: no cascade"""
        self._do(DeleteWith("jobs", "default", JOB, propagation_policy=cascade))

    @rule(password=st.integers(0, len(PASSWORDS) - 1), immutable=st.booleans())
    def apply_secret(self, password: int, immutable: bool) -> None:
        """Draws: a password (`PASSWORDS`); immutable or not
        Does: `kubectl apply` of the Secret `creds` with the password in `stringData` (`apply-secret`), stored
        base64 in `data`; another password on an immutable Secret is refused (422)
        Shrinks to: the first password, mutable"""
        self._do(ApplySecret(password, immutable))

    @rule(use=st.booleans())
    def request_token(self, use: bool) -> None:
        """Draws: use the token or not
        Does: `kubectl create token default` (`request-token`): a bound token for the default ServiceAccount of the
        default namespace (404 until the service account controller has made it); with use, `kubectl --token=<it>
        get serviceaccount default`, authenticated as the account and refused by RBAC (403)
        Shrinks to: the token only"""
        self._do(RequestToken(use))
