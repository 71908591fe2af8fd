"""The pod garbage collector (pkg/controller/podgc), its orphaned-pods part: "controller/podgc".

Theory of operation
-------------------
A pod bound to a node that no longer exists can never be run, stopped or confirmed gone by a kubelet: nobody
would ever remove it, and its ReplicaSet would count it forever. Upstream's PodGC, every 20 s (gcCheckPeriod),
finds pods whose spec.nodeName names a node absent from its node informer, waits a quarantine of 40 s
(the node may only be missing from a lagging cache), confirms with a live GET of the node (404), then
force-deletes the pod (gracePeriodSeconds 0) after marking it Failed with the DisruptionTarget condition
(reason DeletionByPodGC, a server-side apply).

The model does the same, level-driven: a key is a pod; the periodic timer queues every pod whose node is
missing from the cache; its sync waits out the quarantine (requeue_after), GETs the node and deletes the pod
with grace 0 when the node is really gone. Not modelled: the Failed phase and DisruptionTarget condition written
before the delete (the pod is deleted as it was); gcTerminated (the 12,500 terminated-pods threshold),
gcUnscheduledTerminating and gcTerminating (out-of-service taint).
"""

from __future__ import annotations

from typing import Any, Hashable

from kmodel.apiserver.bootstrap_policy import READ, rule
from kmodel.component.registry import controller
from kmodel.cluster.components import ClusterContext
from kmodel.component import Out
from kmodel.controllers.base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches

GC_CHECK_PERIOD_MS = 20_000
QUARANTINE_MS = 40_000
TIMER = "podgc/check"


class PodGCController(Controller):
    service_account = "pod-garbage-collector"

    def __init__(self, endpoints: Any, *, name: str = "controller/podgc",
                 switches: Switches = DEFAULT_SWITCHES) -> None:
        self.missing_since: dict[str, int] = {}
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.missing_since = {}
        self.pods = self.informer("pods", on_add=self._ignore, on_update=self._ignore, on_delete=self._ignore)
        self.nodes = self.informer("nodes", on_add=self._ignore, on_update=self._ignore, on_delete=self._ignore)

    @staticmethod
    def _ignore(*args: Any) -> None:
        """Level-driven: the periodic check looks at the caches; events need no key of their own."""

    def on_started(self, now: int, out: Out) -> None:
        out.set_timer(TIMER, GC_CHECK_PERIOD_MS)

    def on_own_timer(self, now: int, name: str, out: Out) -> None:
        if name != TIMER:
            return
        out.set_timer(TIMER, GC_CHECK_PERIOD_MS)
        if not self.synced():
            return
        for pod in self.pods.list():
            node = pod.spec.node_name
            if node and self.nodes.get("", node) is None:
                key = f"{pod.metadata.namespace}/{pod.metadata.name}"
                self.missing_since.setdefault(key, now)
                self.queue.add(key)

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace, _, name = str(key).partition("/")
        pod = self.pods.get(namespace, name)
        if pod is None or not pod.spec.node_name or self.nodes.get("", pod.spec.node_name) is not None:
            self.missing_since.pop(str(key), None)
            return
        since = self.missing_since.setdefault(str(key), now)
        if now < since + QUARANTINE_MS:
            sync.requeue_after(since + QUARANTINE_MS - now)
            return
        node = pod.spec.node_name

        def node_checked(t: int, response: Any, o: Out) -> bool:
            if response.code != 404:
                return True  # the node exists after all (our cache lagged): nothing to do
            sync.request(t, o, "delete", "pods", namespace=namespace, name=name, grace_period_seconds=0,
                         on_done=lambda t2, r, o2: r.code == 404)  # already gone is fine
            self.missing_since.pop(str(key), None)
            return True

        sync.request(now, out, "get", "nodes", name=node, on_done=node_checked)


@controller("podgc", service_account="pod-garbage-collector", default=True, rbac_rules=(
    rule(("list", "watch", "delete"), ("pods",)),
    rule(READ, ("nodes",)),
    rule(("patch",), ("pods/status",))))
def make(ctx: ClusterContext) -> list:
    """The pod garbage collector (orphaned pods)."""
    return [PodGCController(ctx.apiservers, name=ctx.named("controller/podgc"), switches=ctx.switches)]
