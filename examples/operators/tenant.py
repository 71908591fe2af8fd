"""The tenant operator: a Tenant (tenant.yaml, cluster-scoped) gets a namespace of its own, tenant-<name>, owned
by it, and its status names that namespace. Written so that crashes, stale caches and lost answers cannot
break its guarantee:

* the namespace's name comes from the Tenant's, so a second create (after a crash, or from a stale read) is
  refused with 409 AlreadyExists instead of making a second namespace;
* the status is written from what the operator sees (the namespace in its cache, owned by this Tenant's uid),
  never from a create's answer, so a crash between the two writes is repaired by the next sync;
* a namespace left by an earlier Tenant of the same name (another uid, being garbage collected) is waited for,
  not adopted;
* the Tenant is read live before its namespace is made, so a Tenant the cache keeps after it is gone (its CRD
  deleted, the informer's list failing) does not get a namespace that the garbage collector takes and the
  operator makes again, for ever.

Its guarantees: each Tenant has at most one namespace (safety), and once the cluster has settled, every Tenant
has its namespace and its status names it (liveness).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from kmodel.invariants.registry import LIVENESS, SAFETY, Invariant
from kmodel.apiserver.bootstrap_policy import READ, rule
from kmodel.component.registry import controller
from kmodel.controllers.base import Controller
from kmodel.objects import Namespace, ObjectMeta, OwnerReference, frozen_map

from examples.operators.custom import manifests, with_status

GROUP = "ops.example.com"
#: the CustomResourceDefinition and one Tenant, created when the cluster boots
BOOT = manifests("tenant.yaml")
TENANT_LABEL = f"{GROUP}/tenant"
#: how long to wait before looking again at a namespace an earlier Tenant of the same name left behind
WAIT_FOR_OLD_NAMESPACE_MS = 5_000


def namespace_name(tenant: str) -> str:
    return f"tenant-{tenant}"


def _owner_uid(obj: Any) -> str:
    for ref in obj.metadata.owner_references:
        if ref.kind == "Tenant" and ref.controller:
            return ref.uid
    return ""


def one_namespace_per_tenant(cluster: Any, memo: dict) -> Iterator[str]:
    """Each Tenant has at most one namespace."""
    owned: dict[str, list[str]] = {}
    for ns in cluster.objects("namespaces"):
        uid = _owner_uid(ns)
        if uid:
            owned.setdefault(uid, []).append(ns.metadata.name)
    for uid, names in sorted(owned.items()):
        if len(names) > 1:
            yield f"the Tenant of uid {uid} has {len(names)} namespaces: {', '.join(sorted(names))}"


def tenants_have_their_namespace(cluster: Any, memo: dict) -> Iterator[str]:
    """Every Tenant has its namespace, and its status names it."""
    namespaces = {ns.metadata.name: ns for ns in cluster.objects("namespaces")}
    for tenant in cluster.objects("tenants"):
        if tenant.metadata.deletion_timestamp is not None:
            continue
        name = namespace_name(tenant.metadata.name)
        ns = namespaces.get(name)
        if ns is None or _owner_uid(ns) != tenant.metadata.uid:
            yield f"Tenant {tenant.metadata.name} has no namespace {name} of its own"
        elif (tenant.status or {}).get("namespace") != name:
            yield f"Tenant {tenant.metadata.name}'s status does not name its namespace {name}"


ONE_NAMESPACE = Invariant("one-namespace-per-tenant", SAFETY, "operator: tenants",
                          "Each Tenant has at most one namespace.", one_namespace_per_tenant)
TENANTS_SERVED = Invariant("tenants-have-their-namespace", LIVENESS, "operator: tenants",
                           "Every Tenant has its namespace, and its status names it.", tenants_have_their_namespace)


def tenant_of(namespace: Any) -> Optional[str]:
    """The Tenant a namespace was made for (its events enqueue it)."""
    return namespace.metadata.labels.get(TENANT_LABEL)


@controller("tenant-operator", process="", service_account="tenant-operator",
            invariants=(ONE_NAMESPACE, TENANTS_SERVED), boot_objects=BOOT, rbac_rules=(
                rule(READ, ("tenants",), (GROUP,)),
                rule(("update",), ("tenants/status",), (GROUP,)),
                rule(READ + ("create",), ("namespaces",))))
class TenantOperator(Controller):
    """Makes each Tenant's namespace and records it (see the module docstring)."""

    def setup(self) -> None:
        self.tenants = self.informer("tenants", key=lambda tenant: tenant.metadata.name)
        self.namespaces = self.informer("namespaces", key=tenant_of)

    def sync(self, key: Any, sync: Any, now: int, out: Any) -> None:
        tenant = self.tenants.indexer.get("", key)
        if tenant is None or tenant.metadata.deletion_timestamp is not None:
            return
        name = namespace_name(key)
        namespace = self.namespaces.indexer.get("", name)
        if namespace is None:
            owner = OwnerReference(api_version=tenant.api_version, kind=tenant.kind, name=key,
                                   uid=tenant.metadata.uid, controller=True, block_owner_deletion=True)
            wanted = Namespace(metadata=ObjectMeta(name=name, labels=frozen_map({TENANT_LABEL: key}),
                                                   owner_references=(owner,)))

            def confirmed(t: int, response: Any, o: Any) -> Optional[bool]:
                if response.code == 404:
                    return True  # the Tenant is gone (or its CRD is): nothing to make
                if not response.ok:
                    return None  # the sync fails and is retried
                m = response.body.metadata
                if m.uid == tenant.metadata.uid and m.deletion_timestamp is None:
                    # 409: it exists already (made before a crash, or not yet in the cache): its event brings the
                    # key back
                    sync.create(t, o, "namespaces", wanted, on_done=lambda t, response, o: response.code == 409 or None)
                return True

            # The cache may keep a Tenant that is gone: after its CRD is deleted the informer's list fails and
            # its store keeps what it had. A namespace made for it would be collected by the garbage collector
            # (its owner is gone), and made again at the next event, for ever. So the Tenant is read live first,
            # as ClaimPods reads the owner again before it adopts.
            sync.request(now, out, "get", "tenants", name=key, on_done=confirmed)
            return
        if _owner_uid(namespace) != tenant.metadata.uid:
            sync.requeue_after(WAIT_FOR_OLD_NAMESPACE_MS)  # an earlier Tenant's, on its way out
            return
        if (tenant.status or {}).get("namespace") != name:
            sync.update_status(now, out, "tenants", with_status(tenant, namespace=name))
