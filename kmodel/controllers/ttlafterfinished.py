"""The TTL-after-finished controller (pkg/controller/ttlafterfinished) as a sans-IO component: a finished Job with
spec.ttlSecondsAfterFinished is deleted that many seconds after it finished.

Theory of operation
-------------------
Endpoint "controller/ttlafterfinished", service account ttl-after-finished-controller (upstream's role: jobs get,
list, watch and delete; events). An informer on jobs; a Job added or updated that is not being deleted, has a TTL
and is finished (a Complete or Failed condition True) queues its key.

`sync(key)` is processJob: the Job from the cache; its expiry is the finish time (the lastTransitionTime of its
Complete or Failed condition) plus the TTL. Not expired yet: the key again when it will be. Expired: the cache
may be stale, so the Job is read again from the API server (a live GET) and checked again; still expired, it is
deleted with propagationPolicy Foreground and its uid as a precondition (a Job made again under its name is not
deleted by mistake). The garbage collector then deletes its pods before the Job (they lose their tracking
finalizer to the Job controller, as the pods of a finished Job).
"""

from __future__ import annotations

from typing import Any, Hashable, Optional

from kmodel.apiserver.bootstrap_policy import events_rule, rule
from kmodel.apiserver.wire import Preconditions
from kmodel.client.indexer import meta_namespace_key
from kmodel.component import Out
from kmodel.component.registry import controller
from kmodel.objects import Job

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .job_logic import COMPLETE, FAILED

NAME = "controller/ttlafterfinished"


def expires_at(job: Job) -> Optional[int]:
    """When a finished Job with a TTL may be deleted (None: no TTL, or not finished)."""
    ttl = job.spec.ttl_seconds_after_finished
    if ttl is None:
        return None
    for c in job.status.conditions:
        if c.type in (COMPLETE, FAILED) and c.status == "True" and c.last_transition_time is not None:
            return c.last_transition_time + ttl * 1000
    return None


class TTLAfterFinishedController(Controller):
    """See the module docstring."""

    service_account = "ttl-after-finished-controller"

    def __init__(self, endpoints: Any, *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.jobs = self.informer("jobs", on_add=self._seen, on_update=lambda now, old, cur, out: self._seen(
            now, cur, out), on_delete=lambda now, obj, out: None)

    def _seen(self, now: int, job: Job, out: Out) -> None:
        if job.metadata.deletion_timestamp is None and expires_at(job) is not None:
            self.queue.add(meta_namespace_key(job))

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace, _, name = str(key).partition("/")
        job = self.jobs.get(namespace, name)
        if job is None or job.metadata.deletion_timestamp is not None:
            return
        expiry = expires_at(job)
        if expiry is None:
            return
        if now < expiry:
            sync.requeue_after(expiry - now)
            return

        def fresh(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.code == 404:
                return True
            if not response.ok:
                return None
            current = response.body
            if current.metadata.deletion_timestamp is not None:
                return True
            again = expires_at(current)
            if again is None:
                return True
            if t < again:
                sync.requeue_after(again - t)
                return True
            sync.request(t, o, "delete", "jobs", namespace=namespace, name=name, propagation_policy="Foreground",
                         body=Preconditions(uid=current.metadata.uid),
                         on_done=lambda t2, r, o2: True if r.code in (404, 409) else None)
            return True

        sync.request(now, out, "get", "jobs", namespace=namespace, name=name, on_done=fresh)


@controller("ttlafterfinished", service_account="ttl-after-finished-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "delete"), ("jobs",), ("batch",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The TTL-after-finished controller."""
    return [TTLAfterFinishedController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches)]
