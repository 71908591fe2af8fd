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

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from kmodel.checker.access_actions import DeleteWith
from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.job_actions import JOB, PASSWORDS, ApplyJob, ApplySecret, RequestToken


class JobRules:
    """Rules of the user's Job, Secret and tokens. Mixed into `KmodelMachine` (which provides `_do`)."""

    _do: Any

    @rule(completions=st.integers(1, 3), parallelism=st.integers(1, 2), fails=st.booleans(), ttl=st.booleans(),
          indexed=st.booleans())
    def apply_job(self, completions: int, parallelism: int, fails: bool, ttl: bool, indexed: bool) -> None:
        self._do("apply_job", ApplyJob(completions, parallelism, fails, ttl, indexed))

    @rule(cascade=st.sampled_from(PROPAGATION))
    def delete_job(self, cascade: str) -> None:
        self._do("delete_job", DeleteWith("jobs", "default", JOB, propagation_policy=cascade))

    @rule(password=st.integers(0, len(PASSWORDS) - 1), immutable=st.booleans())
    def apply_secret(self, password: int, immutable: bool) -> None:
        self._do("apply_secret", ApplySecret(password, immutable))

    @rule(use=st.booleans())
    def request_token(self, use: bool) -> None:
        self._do("request_token", RequestToken(use))
