"""The namespace controller (pkg/controller/namespace), as a sans-IO controller: "controller/namespace".

Theory of operation
-------------------
Deleting a namespace only marks it (deletionTimestamp, phase Terminating: kmodel/apiserver/deletion.py); the
NamespaceLifecycle admission plugin then refuses new content in it (403 `unable to create new content in
namespace X because it is being terminated`), and this controller empties it. Its service account is
namespace-controller, with upstream's role (`system:controller:namespace-controller`).

Keys are namespace names, queued 5 s after a namespace being deleted is seen added or updated
(namespaceDeletionGracePeriod: time for the other controllers' caches to see the deletion too). A sync is
upstream's namespacedResourcesDeleter.Delete (Kubernetes 1.28-1.32,
pkg/controller/namespace/deletion/namespaced_resources_deleter.go):

1. GET the namespace: gone, or not being deleted → nothing; phase not Terminating → its status is updated to
   Terminating first; no `kubernetes` in spec.finalizers (finalized already) → nothing;
2. deleteAllContent, for every namespaced resource the API serves: LIST it in the namespace and DELETE each
   item with propagationPolicy Background (upstream's fallback for a resource without deletecollection; the
   model serves no deletecollection, see docs/rules-access.md), the pods' estimate being the longest
   terminationGracePeriodSeconds of those not Succeeded or Failed; then LIST again: what remains is being
   deleted gracefully (the estimate) or held by finalizers (15 s, finalizerEstimateSeconds); anything else
   remaining is an error (`unexpected items still remain`) and the sync is retried with the rate limiter;
3. content remains → look again after estimate / 2 + 1 seconds (ResourcesRemainingError); none → PUT
   namespaces/<name>/finalize without `kubernetes` in spec.finalizers, and the API server removes the
   namespace (its last finalizer gone). A conflict fails the sync, which is retried.

Not modelled: the namespace status conditions (NamespaceDeletionContentFailure, NamespaceContentRemaining,
NamespaceFinalizersRemaining ...) and the periodic resync (5 min).
"""

from __future__ import annotations

from typing import Any, Hashable, Optional

from kmodel.apiserver.bootstrap_policy import rule
from kmodel.component.registry import controller
from kmodel.apiserver.deletion import BACKGROUND, NAMESPACE_FINALIZER
from kmodel.apiserver.resources import RESOURCES
from kmodel.component import Out
from kmodel.controllers.base import Controller, Sync
from kmodel.objects import dump

NAME = "controller/namespace"
#: namespaceDeletionGracePeriod: how long after a namespace is seen being deleted its content is removed
DELETION_GRACE_PERIOD_MS = 5_000
#: finalizerEstimateSeconds: the wait for content kept by finalizers
FINALIZER_ESTIMATE_SECONDS = 15
#: what deleteAllContent empties: every namespaced resource that can be deleted (bindings are create-only)
CONTENT: tuple[str, ...] = tuple(sorted(name for name, res in RESOURCES.items()
                                        if res.namespaced and name != "bindings"))


def pods_estimate(pods: Any) -> int:
    """estimateGracefulTerminationForPods: the longest grace period of the pods not yet done."""
    estimate = 0
    for pod in pods:
        if pod.status.phase in ("Succeeded", "Failed"):
            continue
        grace = pod.spec.termination_grace_period_seconds
        if grace is not None and grace > estimate:
            estimate = grace
    return estimate


class NamespaceController(Controller):
    """See the module docstring."""

    service_account = "namespace-controller"

    def __init__(self, endpoints: Any, *, name: str = NAME) -> None:
        super().__init__(name, endpoints)

    def setup(self) -> None:
        self.namespaces = self.informer("namespaces", on_add=self._seen, on_update=self._seen_update,
                                        on_delete=self._ignore)

    def _seen(self, now: int, obj: Any, out: Out) -> None:
        if obj.metadata.deletion_timestamp is not None:
            self.queue.add_after(now, out, obj.metadata.name, DELETION_GRACE_PERIOD_MS)

    def _seen_update(self, now: int, old: Any, cur: Any, out: Out) -> None:
        self._seen(now, cur, out)

    @staticmethod
    def _ignore(*args: Any) -> None:
        """A namespace gone needs nothing more."""

    # -- namespacedResourcesDeleter.Delete ---------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        name = str(key)

        def got(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.code == 404:
                return True
            if not response.ok:
                return None
            ns = response.body
            if ns.metadata.deletion_timestamp is None:
                return True
            if ns.status.phase != "Terminating":
                body = dump(ns)
                body["status"]["phase"] = "Terminating"

                def terminating(t2: int, r: Any, o2: Out) -> Optional[bool]:
                    if r.ok:
                        self._delete_content(r.body, sync, t2, o2)
                        return True
                    return True if r.code == 404 else None

                sync.request(t, o, "update", "namespaces", name=name, subresource="status", body=body,
                             on_done=terminating)
                return True
            self._delete_content(ns, sync, t, o)
            return True

        sync.request(now, out, "get", "namespaces", name=name, on_done=got)

    def _delete_content(self, ns: Any, sync: Sync, now: int, out: Out) -> None:
        if NAMESPACE_FINALIZER not in ns.spec.finalizers:
            return  # finalized already
        namespace = ns.metadata.name
        listed: dict[str, Any] = {}
        failed = [False]

        def after_deletes(t: int, o: Out) -> None:
            if failed[0]:
                sync.fail()
                return
            self._check_remaining(ns, sync, pods_estimate(listed.get("pods", ())), t, o)

        pending = [len(CONTENT)]

        def one_done(t: int, o: Out) -> None:
            pending[0] -= 1
            if pending[0] == 0:
                after_deletes(t, o)

        for resource in CONTENT:
            def got_list(t: int, response: Any, o: Out, resource: str = resource) -> Optional[bool]:
                if not response.ok:
                    failed[0] = True
                    one_done(t, o)
                    return None
                items = response.body.items
                listed[resource] = items
                left = [len(items)]
                if not items:
                    one_done(t, o)
                for item in items:
                    def deleted(t2: int, r: Any, o2: Out) -> Optional[bool]:
                        handled = True if r.ok or r.code == 404 else None
                        if handled is None:
                            failed[0] = True
                        left[0] -= 1
                        if left[0] == 0:
                            one_done(t2, o2)
                        return handled

                    sync.request(t, o, "delete", resource, namespace=namespace, name=item.metadata.name,
                                 propagation_policy=BACKGROUND, on_done=deleted)
                return True

            sync.request(now, out, "list", resource, namespace=namespace, on_done=got_list)

    def _check_remaining(self, ns: Any, sync: Sync, estimate: int, now: int, out: Out) -> None:
        """The second LIST of every resource: what remains decides the wait, or the namespace is finalized."""
        namespace = ns.metadata.name
        pending = [len(CONTENT)]
        remaining: list[tuple[str, Any]] = []
        failed = [False]

        def decided(t: int, o: Out) -> None:
            if failed[0]:
                sync.fail()
                return
            if not remaining:
                self._finalize(ns, sync, t, o)
                return
            wait = estimate
            if any(item.metadata.finalizers for _, item in remaining):
                wait = max(wait, FINALIZER_ESTIMATE_SECONDS)
            if wait == 0:
                sync.fail()  # "unexpected items still remain in namespace": retried with the rate limiter
                return
            sync.requeue_after((wait // 2 + 1) * 1000)

        for resource in CONTENT:
            def got_list(t: int, response: Any, o: Out, resource: str = resource) -> Optional[bool]:
                if response.ok:
                    remaining.extend((resource, item) for item in response.body.items)
                else:
                    failed[0] = True
                pending[0] -= 1
                if pending[0] == 0:
                    decided(t, o)
                return True if response.ok else None

            sync.request(now, out, "list", resource, namespace=namespace, on_done=got_list)

    def _finalize(self, ns: Any, sync: Sync, now: int, out: Out) -> None:
        """finalizeNamespace: PUT namespaces/<name>/finalize without the `kubernetes` finalizer."""
        body = dump(ns)
        body["spec"]["finalizers"] = [f for f in ns.spec.finalizers if f != NAMESPACE_FINALIZER]
        sync.request(now, out, "update", "namespaces", name=ns.metadata.name, subresource="finalize", body=body,
                     on_done=lambda t, r, o: True if r.code == 404 else None)


@controller("namespace", service_account="namespace-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "delete"), ("namespaces",)),
    rule(("update",), ("namespaces/finalize", "namespaces/status")),
    rule(("get", "list", "delete", "deletecollection"), ("*",), ("*",))))
def make(ctx: Any) -> list:
    """The cluster factory: one namespace controller."""
    return [NamespaceController(ctx.apiservers, name=ctx.named(NAME))]
