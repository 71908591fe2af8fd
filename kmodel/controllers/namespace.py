"""The namespace controller (pkg/controller/namespace), as a sans-IO controller: "controller/namespace".

Theory of operation
-------------------
Deleting a namespace only marks it (deletionTimestamp, phase Terminating: kmodel/apiserver/deletion.py); the
NamespaceLifecycle admission plugin then refuses new content in it (403 `unable to create new content in
namespace X because it is being terminated`), and this controller empties it. Its service account is
namespace-controller, with upstream's role (`system:controller:namespace-controller`).

Keys are namespace names, queued 5 s after a namespace being deleted is seen added or updated
(namespaceDeletionGracePeriod: time for the other controllers' caches to see the deletion too). A sync is
upstream's namespacedResourcesDeleter.Delete (Kubernetes 1.31,
pkg/controller/namespace/deletion/namespaced_resources_deleter.go):

1. GET the namespace: gone, or not being deleted → nothing; phase not Terminating → its status is updated to
   Terminating first; spec.finalizers empty (finalized already) → nothing;
2. discovery: every namespaced resource the API serves that can be deleted: the built-in ones (bindings are
   create-only) and the custom resources of the Established, Namespaced CRDs. The model's discovery is a LIST
   of the CRDs (standing in for GET /apis, as kubectl's does in kmodel/cluster/kubectl.py). When it fails, the
   built-in resources are still emptied (upstream: "discovery errors are not fatal"), the failure is reported
   in the NamespaceDeletionDiscoveryFailure condition, and the sync fails;
3. deleteAllContent, for each resource: LIST it in the namespace and DELETE each item with propagationPolicy
   Background (upstream's fallback for a resource without deletecollection; the model serves no
   deletecollection, see docs/rules-access.md; a 404 or 405 is no error); then, if nothing failed, LIST it again
   (deleteAllContentForGroupVersionResource): what remains is being deleted gracefully (pods: the estimate,
   the longest terminationGracePeriodSeconds of those not Succeeded or Failed, zero once that long has passed
   since the namespace's deletionTimestamp) or held by finalizers (15 s, finalizerEstimateSeconds); anything
   else remaining is an error (`unexpected items still remain in namespace: X for gvr: /v1, Resource=pods`);
4. the namespace's conditions are set from what the sweep found (namespace_conditions.py) and its status
   written if any changed (a failed write is only logged upstream: nothing here);
5. an error (discovery, a LIST, a DELETE, items unexpectedly left) fails the sync, which is retried with the
   rate limiter; content remaining → look again after estimate / 2 + 1 seconds (ResourcesRemainingError);
   none → PUT namespaces/<name>/finalize without `kubernetes` in spec.finalizers, and the API server removes
   the namespace (its last finalizer gone).

The two writes to the namespace itself (the phase, the finalize) are retried on a conflict after a fresh GET,
as upstream's retryOnConflictError (a namespace re-created under the same name meanwhile fails the sync). The
finalize is built from the namespace as read before the conditions were written, as upstream's is, so after a
conditions write it meets one conflict and goes through on the fresh copy.

Not modelled: the periodic resync (5 min), discovery's preferred version of a custom group (the messages name
the CRD's storage version).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional

from kmodel.apiserver.bootstrap_policy import rule
from kmodel.apiserver.customresources import established, resource_for
from kmodel.component.registry import controller
from kmodel.apiserver.deletion import BACKGROUND, NAMESPACE_FINALIZER
from kmodel.apiserver.resources import RESOURCES, Resource
from kmodel.component import Out
from kmodel.controllers.base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.controllers.namespace_conditions import DeletionOutcome, updated
from kmodel.objects import dump

NAME = "controller/namespace"
#: namespaceDeletionGracePeriod: how long after a namespace is seen being deleted its content is removed
DELETION_GRACE_PERIOD_MS = 5_000
#: finalizerEstimateSeconds: the wait for content kept by finalizers
FINALIZER_ESTIMATE_SECONDS = 15
#: the built-in resources deleteAllContent empties: every namespaced one that can be deleted (bindings are
#: create-only)
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


def discovered(crds: Any) -> list[Resource]:
    """The resources deleteAllContent empties, given the CRDs listed: the built-in ones, then the custom
    resources of the Established, Namespaced CRDs that serve a version (as discovery lists them), by name."""
    custom = [resource_for(crd) for crd in crds
              if established(crd) and crd.spec.scope == "Namespaced" and any(v.served for v in crd.spec.versions)]
    return [RESOURCES[name] for name in CONTENT] + sorted(custom, key=lambda res: res.name)


def gvr(res: Resource) -> str:
    """schema.GroupVersionResource.String(), as upstream's error messages print it: "apps/v1, Resource=pods"."""
    api_version = res.api_version if "/" in res.api_version else "/" + res.api_version
    return f"{api_version}, Resource={res.name}"


def error_message(response: Any) -> str:
    """The message of a failed response (its Status), as a Go client's error prints it."""
    message = getattr(response.body, "message", "")
    return message or f"the server answered {response.code}"


def without_finalizer(ns: Any) -> dict:
    """finalizeNamespace's body: the namespace with its other finalizers, sorted, and without `kubernetes`."""
    body = dump(ns)
    body["spec"]["finalizers"] = sorted({f for f in ns.spec.finalizers if f != NAMESPACE_FINALIZER})
    return body


def terminating(ns: Any) -> Optional[dict]:
    """updateNamespaceStatusFunc's body: the namespace with phase Terminating (None: it already is)."""
    if ns.metadata.deletion_timestamp is None or ns.status.phase == "Terminating":
        return None
    body = dump(ns)
    body["status"]["phase"] = "Terminating"
    return body


class _Sweep:
    """One deleteAllContent: the resources to empty and what emptying them found."""

    __slots__ = ("ns", "resources", "outcome", "failed", "estimate", "pods")

    def __init__(self, ns: Any, resources: list[Resource], outcome: DeletionOutcome) -> None:
        self.ns = ns
        self.resources = resources
        self.outcome = outcome
        self.failed: dict[str, str] = {}  # resource name -> its first error
        self.estimate = 0
        self.pods: Any = ()

    def fail(self, res: Resource, message: str) -> None:
        self.failed.setdefault(res.name, message)

    def pods_estimate_seconds(self, now: int) -> int:
        """estimateGracefulTermination: the pods' estimate, zero once it has passed since the deletion began."""
        estimate = pods_estimate(self.pods)
        deleted_at = self.ns.metadata.deletion_timestamp or 0
        return 0 if now - deleted_at >= estimate * 1000 else estimate


class NamespaceController(Controller):
    """See the module docstring."""

    service_account = "namespace-controller"

    def __init__(self, endpoints: Any, *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name, endpoints, switches)

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
            if ns.metadata.deletion_timestamp is not None:
                self._write(ns, sync, t, o, "status", terminating, self._delete_content)
            return True

        sync.request(now, out, "get", "namespaces", name=name, on_done=got)

    def _write(self, ns: Any, sync: Sync, now: int, out: Out, subresource: str,
               change: Callable[[Any], Optional[dict]], then: Optional[Callable[..., None]]) -> None:
        """retryOnConflictError: write `change(ns)` to the subresource (nothing to write: go on with `ns`), and
        on a conflict GET the namespace and try again on it, unless its UID changed (a namespace re-created
        meanwhile: the sync fails). A 404 ends the sync (the namespace is gone); `then` goes on with the
        namespace written."""
        body = change(ns)
        if body is None:
            if then is not None:
                then(ns, sync, now, out)
            return

        def written(t: int, response: Any, o: Out) -> Optional[bool]:
            if response.ok:
                if then is not None:
                    then(response.body, sync, t, o)
                return True
            if response.code == 404:
                return True
            if response.code != 409:
                return None

            def reread(t2: int, fresh: Any, o2: Out) -> Optional[bool]:
                if not fresh.ok:
                    return True if fresh.code == 404 else None
                if fresh.body.metadata.uid != ns.metadata.uid:
                    sync.fail()  # "namespace uid has changed across retries"
                elif fresh.body.metadata.deletion_timestamp is not None:
                    self._write(fresh.body, sync, t2, o2, subresource, change, then)
                return True

            sync.request(t, o, "get", "namespaces", name=ns.metadata.name, on_done=reread)
            return True

        sync.request(now, out, "update", "namespaces", name=ns.metadata.name, subresource=subresource, body=body,
                     on_done=written)

    def _delete_content(self, ns: Any, sync: Sync, now: int, out: Out) -> None:
        """Discovery, then deleteAllContent (steps 2 to 5 of the module docstring)."""
        if not ns.spec.finalizers:
            return  # finalized already

        def listed(t: int, response: Any, o: Out) -> Optional[bool]:
            outcome = DeletionOutcome()
            if response.ok:
                resources = discovered(response.body.items)
            else:
                outcome.discovery_error = error_message(response)
                resources = discovered(())
            self._delete_each(_Sweep(ns, resources, outcome), sync, t, o)
            return True  # a failed discovery fails the sync once the sweep is done

        sync.request(now, out, "list", "customresourcedefinitions", on_done=listed)

    def _delete_each(self, sweep: _Sweep, sync: Sync, now: int, out: Out) -> None:
        """deleteEachItem for every resource at once; then the second LISTs."""
        namespace = sweep.ns.metadata.name
        pending = [len(sweep.resources)]

        def one_done(t: int, o: Out) -> None:
            pending[0] -= 1
            if pending[0] == 0:
                self._check_remaining(sweep, sync, t, o)

        for res in sweep.resources:
            def got_list(t: int, response: Any, o: Out, res: Resource = res) -> Optional[bool]:
                if not response.ok:
                    sweep.fail(res, error_message(response))
                    one_done(t, o)
                    return True
                items = response.body.items
                if res.name == "pods":
                    sweep.pods = items
                left = [len(items)]
                if not items:
                    one_done(t, o)
                for item in items:
                    def deleted(t2: int, r: Any, o2: Out) -> Optional[bool]:
                        if not r.ok and r.code not in (404, 405):
                            sweep.fail(res, error_message(r))
                        left[0] -= 1
                        if left[0] == 0:
                            one_done(t2, o2)
                        return True

                    sync.request(t, o, "delete", res.name, namespace=namespace, name=item.metadata.name,
                                 propagation_policy=BACKGROUND, on_done=deleted)
                return True

            sync.request(now, out, "list", res.name, namespace=namespace, on_done=got_list)

    def _check_remaining(self, sweep: _Sweep, sync: Sync, now: int, out: Out) -> None:
        """The second LIST of every resource emptied without an error: what remains decides the wait, or is an
        error."""
        namespace = sweep.ns.metadata.name
        checked = [r for r in sweep.resources if r.name not in sweep.failed]
        pending = [len(checked)]
        if not checked:
            self._conclude(sweep, sync, now, out)
            return

        for res in checked:
            def got_list(t: int, response: Any, o: Out, res: Resource = res) -> Optional[bool]:
                if response.ok:
                    self._remaining(sweep, res, response.body.items, t)
                else:
                    sweep.fail(res, error_message(response))
                pending[0] -= 1
                if pending[0] == 0:
                    self._conclude(sweep, sync, t, o)
                return True

            sync.request(now, out, "list", res.name, namespace=namespace, on_done=got_list)

    @staticmethod
    def _remaining(sweep: _Sweep, res: Resource, items: Any, now: int) -> None:
        """What deleteAllContentForGroupVersionResource makes of the items a resource still has."""
        if not items:
            return
        outcome = sweep.outcome
        outcome.remaining[f"{res.name}.{res.group}"] = len(items)
        finalizers: dict[str, int] = {}
        for item in items:
            for finalizer in item.metadata.finalizers:
                finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        estimate = sweep.pods_estimate_seconds(now) if res.name == "pods" else 0
        if estimate == 0 and finalizers:
            estimate = FINALIZER_ESTIMATE_SECONDS
        if estimate == 0:
            sweep.fail(res, f"unexpected items still remain in namespace: {sweep.ns.metadata.name} for gvr: "
                            f"{gvr(res)}")
            return
        sweep.estimate = max(sweep.estimate, estimate)
        for finalizer, n in finalizers.items():
            outcome.finalizers[finalizer] = outcome.finalizers.get(finalizer, 0) + n

    def _conclude(self, sweep: _Sweep, sync: Sync, now: int, out: Out) -> None:
        """Write the conditions if they changed, then fail, wait, or finalize."""
        outcome = sweep.outcome
        outcome.content_errors = [sweep.failed[name] for name in sorted(sweep.failed)]

        def decide(t: int, o: Out) -> None:
            if outcome.discovery_error or outcome.content_errors:
                sync.fail()
            elif sweep.estimate > 0:
                sync.requeue_after((sweep.estimate // 2 + 1) * 1000)
            else:
                self._write(sweep.ns, sync, t, o, "finalize", without_finalizer, None)

        with_conditions = updated(sweep.ns, outcome, now)
        if with_conditions is None:
            decide(now, out)
            return

        def written(t: int, response: Any, o: Out) -> Optional[bool]:
            decide(t, o)
            return True  # upstream only logs a failed conditions write

        sync.request(now, out, "update", "namespaces", name=sweep.ns.metadata.name, subresource="status",
                     body=dump(with_conditions), on_done=written)


@controller("namespace", service_account="namespace-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "delete"), ("namespaces",)),
    rule(("update",), ("namespaces/finalize", "namespaces/status")),
    rule(("get", "list", "delete", "deletecollection"), ("*",), ("*",))))
def make(ctx: Any) -> list:
    """The cluster factory: one namespace controller."""
    return [NamespaceController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches)]
