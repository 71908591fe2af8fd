"""The backup operator: a Backup (backup.yaml) is taken by one runner pod, which the operator starts and records
in the Backup's status. It has a bug of the kind operators ship.

Its guarantee: a Backup has at most one runner pod at a time (two would write the same backup target at once).

The bug: the runner is created with generateName, and its name is written to status.runner only once the create
is answered; the operator starts a runner whenever the Backup it reads has no status.runner. Two writes, and
nothing ties the second to the first:

* a crash between them (the runner created, the status not yet written) leaves a Backup without status.runner,
  and the restarted operator starts a second runner;
* so does a stale read: the new runner's ADDED event enqueues the Backup again, and the operator's cache may
  not have the status write yet.

The fix is the tenant operator's pattern (tenant.py): a name derived from the owner (a second create is refused
with 409 AlreadyExists), or looking for an existing runner owned by the Backup (its pod cache) before creating.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from kmodel.invariants.registry import SAFETY, Invariant
from kmodel.apiserver.bootstrap_policy import READ, rule
from kmodel.component.registry import controller
from kmodel.controllers.base import Controller
from kmodel.objects import Container, ObjectMeta, OwnerReference, Pod, PodSpec, frozen_map

from examples.operators.custom import manifests, with_status

GROUP = "ops.example.com"
#: the CustomResourceDefinition and one Backup, created when the cluster boots
BOOT = manifests("backup.yaml")
BACKUP_LABEL = f"{GROUP}/backup"


def runners_of(cluster: Any) -> dict[str, list[str]]:
    """The live runner pods (not being deleted) of each Backup, by the Backup's uid."""
    runners: dict[str, list[str]] = {}
    for pod in cluster.objects("pods"):
        if pod.metadata.deletion_timestamp is not None:
            continue
        for ref in pod.metadata.owner_references:
            if ref.kind == "Backup" and ref.api_version.startswith(GROUP + "/") and ref.controller:
                runners.setdefault(ref.uid, []).append(pod.metadata.name)
    return runners


def one_runner_per_backup(cluster: Any, memo: dict) -> Iterator[str]:
    """A Backup has at most one runner pod at a time."""
    backups = {b.metadata.uid: b for b in cluster.objects("backups")}
    for uid, names in sorted(runners_of(cluster).items()):
        if len(names) > 1:
            backup = backups.get(uid)
            which = f"{backup.metadata.namespace}/{backup.metadata.name}" if backup is not None else uid
            yield f"Backup {which} has {len(names)} runner pods at once: {', '.join(sorted(names))}"


ONE_RUNNER = Invariant("one-runner-per-backup", SAFETY, "operator: backups",
                       "A Backup has at most one runner pod at a time.", one_runner_per_backup)


def owner_key(pod: Any) -> Optional[str]:
    """The Backup a runner pod belongs to (namespace/name), so that its events enqueue it (controller-runtime's
    Owns)."""
    for ref in pod.metadata.owner_references:
        if ref.kind == "Backup" and ref.controller:
            return f"{pod.metadata.namespace}/{ref.name}"
    return None


def runner_pod(backup: Any, **meta: Any) -> Pod:
    """A runner pod for `backup`, owned by it (`meta`: its name or generateName)."""
    owner = OwnerReference(api_version=backup.api_version, kind=backup.kind, name=backup.metadata.name,
                           uid=backup.metadata.uid, controller=True, block_owner_deletion=True)
    return Pod(metadata=ObjectMeta(namespace=backup.metadata.namespace, owner_references=(owner,),
                                   labels=frozen_map({BACKUP_LABEL: backup.metadata.name}), **meta),
               spec=PodSpec(containers=(Container(name="backup", image="backup-runner:1.0"),), restart_policy="Never"))


@controller("backup-operator", process="", service_account="backup-operator", invariants=(ONE_RUNNER,),
            boot_objects=BOOT, rbac_rules=(
                rule(READ, ("backups",), (GROUP,)),
                rule(("update",), ("backups/status",), (GROUP,)),
                rule(READ + ("create",), ("pods",))))
class BackupOperator(Controller):
    """Starts a runner pod for each Backup without one (see the module docstring: the bug)."""

    def setup(self) -> None:
        self.backups = self.informer("backups")
        self.runners = self.informer("pods", key=owner_key)

    def sync(self, key: Any, sync: Any, now: int, out: Any) -> None:
        namespace, name = key.split("/")
        backup = self.backups.indexer.get(namespace, name)
        if backup is None or backup.metadata.deletion_timestamp is not None:
            return
        if (backup.status or {}).get("runner"):
            return  # taken care of

        def created(t: int, response: Any, o: Any) -> None:
            if response.code == 201:
                sync.update_status(t, o, "backups", with_status(backup, runner=response.body.metadata.name))

        sync.create(now, out, "pods", runner_pod(backup, generate_name=f"{name}-"), on_done=created)
