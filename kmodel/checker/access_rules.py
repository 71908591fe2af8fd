"""The access family's rules: a rule family of the checker's state machine (kmodel.checker.rulebook).

Theory of operation
-------------------
Each rule draws a few indices, turns them into one concrete action of kmodel/checker/access_actions.py against
the cluster as it is now (objects read from the store, as the user would list them), and hands it to the
session through `self._do`, as machine.py's rules do. Every index shrinks toward the simplest action: the
first candidate, the admin as the user, no grace period and no propagation policy. Who acts is drawn by
`user_of`: the admin three times in four, else alice, bob or the builder service account, who have no rights
until a binding grants some (their refused requests are 403s, audited with their user name).

    namespaces   create_namespace (enforcing no Pod Security level, baseline or restricted), apply_in_namespace
                 (the apps' Deployment, Service or a bare pod, with or without a host port, in team or
                 default), delete_namespace (team, with a propagation policy: Terminating until the namespace
                 controller has emptied and finalized it and the garbage collector has removed the policy's
                 finalizer; 404 when there is none)
    deletion     delete_with_options: a Deployment, ReplicaSet, StatefulSet, pod or Service (the kind drawn first,
                 so that owners are not outnumbered by their pods) with a grace period
                 (none, 0 with --force, 5 s, 60 s) and a propagation policy (none, Background, Foreground,
                 Orphan: the garbage collector monitors every one of these kinds; a StatefulSet applied again
                 adopts the pods an Orphan delete left)
    finalizers   add_finalizer (example.com/hold on any object: nodes, namespaces, workloads, the StatefulSet,
                 services),
                 remove_finalizer (any finalizer of any of those or a Job: the user's own, or one a component put
                 there)
    RBAC         apply_role (app-access in default, team, or a ClusterRole; view or edit), apply_binding (a
                 user or the service account to it), delete_rbac
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.access_actions import (
    HOLD, NAMESPACED_APPS, POD_SECURITY_LEVELS, ROLE, ROLE_LEVELS, TEAM, USERS, AddFinalizer, ApplyBinding,
    ApplyInNamespace, ApplyRole,
    CreateNamespace, DeleteWith, RemoveFinalizer, binding_name,
)
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.rulebook import RuleFamily, rule

#: the namespaces the user's objects live in (team first: the one that comes and goes)
USER_NAMESPACES = (TEAM, "default")
#: what apply_in_namespace applies: (resource, with a host port), a bare pod with hostPort last (what Pod
#: Security admission refuses in a namespace that enforces baseline)
NAMESPACED_CHOICES: tuple[tuple[str, bool], ...] = (*((r, False) for r in NAMESPACED_APPS), ("pods", True))
#: what delete_with_options deletes
DELETABLE = ("deployments", "replicasets", "statefulsets", "pods", "services")
#: what add_finalizer marks: any object the user sees, cluster-scoped ones too
MARKABLE = ("deployments", "replicasets", "statefulsets", "pods", "services", "nodes", "namespaces")
#: whose finalizers remove_finalizer takes off: those, and the Jobs (foregroundDeletion, when the TTL controller
#: deletes one)
FINALIZED = (*MARKABLE, "jobs")
#: DeleteOptions.gracePeriodSeconds drawn (None: the object's own; 0: --force)
GRACE_PERIODS = (None, 0, 5, 60)
PROPAGATION = ("", "Background", "Foreground", "Orphan")
#: a drawn INDEX below this runs as the admin (three draws in four)
ADMIN_DRAWS = 48
#: the API server's own Service, kept by kube-apiserver (its endpoint reconciler recreates it): not the user's
_KEPT = {("services", "default", "kubernetes")}


def user_of(i: int) -> str:
    """The user an INDEX draw names: the admin below ADMIN_DRAWS (and at 0, where it shrinks), else one of the
    others in turn."""
    return USERS[0] if i < ADMIN_DRAWS else USERS[1 + i % (len(USERS) - 1)]


def _listed(cluster: Any, resources: tuple[str, ...]) -> list[tuple[str, str, Any]]:
    """(resource, namespace, object) of every object of `resources` the user could name, in a stable order."""
    out = []
    for resource in resources:
        for obj in cluster.objects(resource):
            ns = obj.metadata.namespace
            if (resource, ns, obj.metadata.name) in _KEPT or (ns and ns not in USER_NAMESPACES):
                continue
            out.append((resource, ns, obj))
    return out


class AccessRules(RuleFamily):
    """Rules for namespaces, deletion options, finalizers, RBAC and requests as other users (see the module
    docstring). Mixed into KmodelMachine, which provides `cluster` and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Kind", "Does")

    # -- namespaces -------------------------------------------------------------------------------------------

    @rule(who=INDEX, level=st.integers(0, len(POD_SECURITY_LEVELS) - 1))
    def create_namespace(self, who: int, level: int) -> None:
        """Create (or relabel) the team namespace, enforcing a drawn Pod Security level (shrinks to none).

        Kind: `create-namespace`
        Does: `kubectl apply` the namespace `team`, labelled `pod-security.kubernetes.io/enforce` `baseline` or
        `restricted`, or not at all (applying it again changes the label)"""
        self._do(CreateNamespace(TEAM, user_of(who), POD_SECURITY_LEVELS[level]))

    @rule(ns=INDEX, what=INDEX, who=INDEX)
    def apply_in_namespace(self, ns: int, what: int, who: int) -> None:
        """Kind: `apply-in-namespace`
        Does: `kubectl apply` the Deployment `shop` (1 replica), the Service `shop` or the bare pod `probe` (with
        hostPort 8080 or without: Pod Security admission refuses it with 403 where the namespace enforces
        `baseline`) in `team` or `default`"""
        resource, host_port = pick(what, NAMESPACED_CHOICES)
        self._do(ApplyInNamespace(pick(ns, USER_NAMESPACES), resource, user_of(who),
                                                        host_port))

    @rule(who=INDEX, policy=INDEX)
    def delete_namespace(self, who: int, policy: int) -> None:
        """With a drawn propagation policy (shrinking to none): Orphan and Foreground put their finalizer on the
        namespace, which the garbage collector removes once the namespace controller has emptied it. No
        precondition on the namespace being there yet: kubectl runs the user's commands in order, so a delete
        drawn right after a create (and some content) reaches the namespace they made; without one it gets 404.

        Kind: `delete-with`
        Does: `kubectl delete namespace team` with `--cascade` (none, background, foreground, orphan) (404 when
        there is none: kubectl runs commands in order, so one drawn after a create reaches it)"""
        self._do(DeleteWith("namespaces", "", TEAM, propagation_policy=pick(policy, PROPAGATION),
                                                user=user_of(who)))

    # -- deletion ---------------------------------------------------------------------------------------------

    def _deletable(self) -> list:
        return _listed(self.cluster, DELETABLE)

    @precondition(once_per_step(lambda self: bool(self._deletable())))
    @rule(kind=st.integers(0, len(DELETABLE) - 1), i=INDEX, grace=INDEX, policy=INDEX, who=INDEX)
    def delete_with_options(self, kind: int, i: int, grace: int, policy: int, who: int) -> None:
        """The kind is drawn first, then an object of it (any object when there is none of that kind): pods
        outnumber their owners, and a propagation policy matters only for an object with dependents.

        Kind: `delete-with`
        Does: `kubectl delete` a Deployment, ReplicaSet, the StatefulSet `db`, a pod or Service, with
        `--grace-period` (none, 0 with `--force`, 5, 60) and `--cascade` (none, background, foreground, orphan)"""
        found = self._deletable()
        resource, ns, obj = pick(i, [c for c in found if c[0] == DELETABLE[kind]] or found)
        self._do(DeleteWith(resource, ns, obj.metadata.name, pick(grace, GRACE_PERIODS),
                                                   pick(policy, PROPAGATION), user_of(who)))

    # -- finalizers -------------------------------------------------------------------------------------------

    def _unmarked(self) -> list:
        return [c for c in _listed(self.cluster, MARKABLE) if HOLD not in c[2].metadata.finalizers]

    def _finalized(self) -> list:
        """(resource, namespace, object, finalizer) for each finalizer of each object the user sees: its own
        example.com/hold, and those components put there (foregroundDeletion and orphan while the garbage collector
        deletes an owner, a Job's batch.kubernetes.io/job-tracking on its pods)."""
        return [(*c, f) for c in _listed(self.cluster, FINALIZED) for f in c[2].metadata.finalizers]

    @precondition(once_per_step(lambda self: bool(self._unmarked())))
    @rule(i=INDEX, who=INDEX)
    def add_finalizer(self, i: int, who: int) -> None:
        """Kind: `add-finalizer`
        Does: `kubectl edit`: put `example.com/hold` on any object (Deployments, ReplicaSets, the StatefulSet, pods,
        Services, Nodes, Namespaces)"""
        resource, ns, obj = pick(i, self._unmarked())
        self._do(AddFinalizer(resource, ns, obj.metadata.name, user_of(who)))

    @precondition(once_per_step(lambda self: bool(self._finalized())))
    @rule(i=INDEX, who=INDEX)
    def remove_finalizer(self, i: int, who: int) -> None:
        """Its candidates are every finalizer of every object, not only the user's own: with only example.com/hold
        it could run only after an add_finalizer in the same example (about one example in six), and took off what
        no component relies on.

        Kind: `remove-finalizer`
        Does: `kubectl edit`: take a finalizer off: `example.com/hold`, or one a component put there
        (`foregroundDeletion`, `orphan`, a Job's pod tracking finalizer), as a user unsticks an object by hand"""
        resource, ns, obj, finalizer = pick(i, self._finalized())
        self._do(RemoveFinalizer(resource, ns, obj.metadata.name, user_of(who), finalizer))

    # -- RBAC -------------------------------------------------------------------------------------------------

    @rule(ns=INDEX, level=INDEX, who=INDEX)
    def apply_role(self, ns: int, level: int, who: int) -> None:
        """Kind: `apply-role`
        Does: `kubectl apply` the Role `app-access` in `default` or `team`, or the ClusterRole `app-access`, at
        level `view` (get, list, watch) or `edit` (also create, update, patch, delete) on pods, services,
        deployments and replicasets; applying it again at the other level changes it"""
        self._do(ApplyRole(pick(ns, ("default", TEAM, "")), pick(level, tuple(ROLE_LEVELS)),
                                         user_of(who)))

    @rule(ns=INDEX, subject=INDEX, cluster_role=st.booleans(), who=INDEX)
    def apply_binding(self, ns: int, subject: int, cluster_role: bool, who: int) -> None:
        """Kind: `apply-binding`
        Does: `kubectl apply` a RoleBinding (or ClusterRoleBinding) of alice, bob or builder to `app-access` (the
        namespace's Role or the ClusterRole)"""
        self._do(ApplyBinding(pick(ns, ("default", TEAM, "")), pick(subject, USERS[1:]),
                                               cluster_role, user_of(who)))

    def _rbac_objects(self) -> list:
        names = {ROLE, *(binding_name(u) for u in USERS[1:])}
        return [(resource, obj.metadata.namespace, obj)
                for resource in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")
                for obj in self.cluster.objects(resource) if obj.metadata.name in names]

    @precondition(once_per_step(lambda self: bool(self._rbac_objects())))
    @rule(i=INDEX, who=INDEX)
    def delete_rbac(self, i: int, who: int) -> None:
        """Kind: `delete-with`
        Does: `kubectl delete` one of those Roles, ClusterRoles or bindings"""
        resource, ns, obj = pick(i, self._rbac_objects())
        self._do(DeleteWith(resource, ns, obj.metadata.name, user=user_of(who)))
