"""The namespace family's rules: a namespace filled and deleted in one step, and ownerReferences a user writes (a
rule family of the checker's state machine, kmodel.checker.rulebook).

Theory of operation
-------------------
The access family's rules reach a namespace's deletion one command at a time: create it, put content in it,
delete it, each a separate draw, so the namespace controller rarely meets a namespace that holds anything, and a
dev run may never see one emptied and removed. `namespace_round_trip` is the user's whole sequence as one step
(kubectl apply of the namespace and its content, a pause, kubectl delete namespace and its wait): the namespace
controller meets running pods (graceful termination: the pods estimate), content held by a finalizer
(NamespaceFinalizersRemaining, until `remove_finalizer` takes it off) and content still being made.

The garbage collector's graph otherwise holds only the references its own controllers write, which always
resolve. `apply_owned` writes references as an operator's author does (kmodel.checker.namespace_actions): to an
owner drawn from what exists, to a uid nothing has, to both; from a ConfigMap or a cluster-scoped ClusterRole;
with blockOwnerDeletion or without. An owner in the team namespace is one in another namespace than the
ConfigMap's; a Node is a cluster-scoped owner. Every draw shrinks toward the first row of its table.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st

from kmodel.checker.access_rules import USER_NAMESPACES
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.namespace_actions import (
    CONTENTS, DEPENDENTS, OWNER_SHAPES, PAUSES, POLICIES, WAITS, ApplyOwned, NamespaceRoundTrip,
)
from kmodel.checker.rulebook import RuleFamily, rule

#: the kinds an `apply_owned` owner is drawn from (workloads first: the garbage collector's usual owners)
OWNER_RESOURCES: tuple[str, ...] = ("deployments", "replicasets", "statefulsets", "jobs", "pods", "services",
                                    "nodes")


def owners(cluster: Any) -> list[tuple[str, str, str]]:
    """(resource, namespace, name) of every object `apply_owned` may name as an owner: OWNER_RESOURCES of the user's
    namespaces, and the Nodes, in a stable order."""
    out = []
    for resource in OWNER_RESOURCES:
        for obj in cluster.objects(resource):
            ns = obj.metadata.namespace
            if not ns or ns in USER_NAMESPACES:
                out.append((resource, ns, obj.metadata.name))
    return out


class NamespaceRules(RuleFamily):
    """Rules that take the namespace controller and the garbage collector to their rare sides (see the module
    docstring). Mixed into KmodelMachine, which provides `cluster` and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    @rule(content=st.integers(0, len(CONTENTS) - 1), pause=st.integers(0, len(PAUSES) - 1),
          policy=st.integers(0, len(POLICIES) - 1), wait=st.integers(0, len(WAITS) - 1))
    def namespace_round_trip(self, content: int, pause: int, policy: int, wait: int) -> None:
        """Draws: the content (the Deployment `shop` and its Service; the bare pod `probe`; `probe` holding
        `example.com/hold`; `shop` and the held `probe`); a pause of 5, 0 or 30 s; a propagation policy (none,
        Background, Foreground, Orphan); a wait of 60 s or none
        Does: `kubectl apply` of the namespace `team` with that content, then `kubectl delete namespace team`,
        waiting for it to go (`namespace-round-trip`): the namespace controller deletes the content and waits
        for running pods to end (NamespaceContentRemaining) and for finalizers to be removed
        (NamespaceFinalizersRemaining), then finalizes the namespace; content applied while the namespace is
        Terminating is refused (403)
        Shrinks to: `shop` and its Service, 5 s, no policy, a 60 s wait"""
        self._do(NamespaceRoundTrip(content, pause, policy, wait))

    @rule(i=INDEX, dependent=st.integers(0, len(DEPENDENTS) - 1), shape=st.integers(0, len(OWNER_SHAPES) - 1),
          block=st.booleans())
    def apply_owned(self, i: int, dependent: int, shape: int, block: bool) -> None:
        """Draws: an owner that exists (a Deployment, ReplicaSet, StatefulSet, Job, pod or Service of `default` or
        `team`, or a Node); the ConfigMap `owned` of `default` or the ClusterRole `owned`; a reference with the
        owner's uid, a dangling uid, or both; blockOwnerDeletion or not
        Does: `kubectl apply` of the dependent with those ownerReferences (`apply-owned`): the garbage collector
        deletes it when its owners are all gone or dangling, drops a dangling reference beside a live one, warns
        OwnerRefInvalidNamespace for an owner of another namespace, and never collects a cluster-scoped
        dependent of a namespaced owner
        Shrinks to: the ConfigMap owned by the first owner, with its uid, not blocking"""
        found = owners(self.cluster)
        resource, namespace, name = pick(i, found) or ("nodes", "", "node-1")
        self._do(ApplyOwned(resource, namespace, name, dependent, shape, block))
