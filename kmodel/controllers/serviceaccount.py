"""The service account controller (pkg/controller/serviceaccount/serviceaccounts_controller.go) as a sans-IO
component: every active namespace has a ServiceAccount "default".

Theory of operation
-------------------
Endpoint "controller/serviceaccount", service account service-account-controller (upstream's role: create
serviceaccounts, and events). Informers on namespaces and serviceaccounts; the work queue holds namespace names.
A namespace added or updated queues itself; a ServiceAccount deleted queues its namespace (so a deleted
"default" is made again).

`sync(namespace)` is syncNamespace: a namespace gone from the cache or not Active (being deleted) is left alone;
otherwise each account to ensure ("default") that the cache lacks is created. AlreadyExists is success (the
cache lagged); a refusal because the namespace is terminating is ignored (upstream checks the
NamespaceTerminating cause); any other error fails the sync, which is retried with the rate limiter.
"""

from __future__ import annotations

from typing import Any, Hashable

from kmodel.apiserver.bootstrap_policy import events_rule, rule
from kmodel.client.indexer import DeletedFinalStateUnknown
from kmodel.component import Out
from kmodel.component.registry import controller
from kmodel.objects import ObjectMeta, ServiceAccount

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches

NAME = "controller/serviceaccount"
#: serviceAccountsToEnsure (kube-controller-manager's default)
ENSURED = ("default",)


def _is_terminating(response: Any) -> bool:
    """The create was refused because the namespace is being deleted (NamespaceLifecycle admission's 403)."""
    return response.code == 403 and "because it is being terminated" in getattr(response.body, "message", "")


class ServiceAccountsController(Controller):
    """See the module docstring."""

    service_account = "service-account-controller"

    def __init__(self, endpoints: Any, *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.namespaces = self.informer("namespaces", key=lambda ns: ns.metadata.name,
                                        on_delete=lambda now, obj, out: None)
        self.accounts = self.informer("serviceaccounts", on_add=lambda now, obj, out: None,
                                      on_update=lambda now, old, new, out: None, on_delete=self._account_deleted)

    def _account_deleted(self, now: int, obj: Any, out: Out) -> None:
        sa = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self.queue.add(sa.metadata.namespace)

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace = str(key)
        ns = self.namespaces.get("", namespace)
        if ns is None or ns.status.phase != "Active":
            return
        for name in ENSURED:
            if self.accounts.get(namespace, name) is not None:
                continue
            account = ServiceAccount(metadata=ObjectMeta(name=name, namespace=namespace))

            def created(t: int, response: Any, o: Out) -> bool | None:
                if response.ok or response.code == 409 or _is_terminating(response):
                    return True
                return None

            sync.create(now, out, "serviceaccounts", account, on_done=created)


@controller("serviceaccount", service_account="service-account-controller", default=True, rbac_rules=(
    rule(("create",), ("serviceaccounts",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The service account controller."""
    return [ServiceAccountsController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches)]
