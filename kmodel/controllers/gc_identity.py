"""What the garbage collector knows an object by: upstream's objectReference (pkg/controller/garbagecollector
graph.go), an ownerReference's coordinates (apiVersion, kind, name, uid) and a namespace.

A graph node's identity is the object's as its monitor saw it (the namespace is the object's own, "" for a
cluster-scoped one), or, for an owner not seen yet (a "virtual" node), the one the first dependent naming it
gave: its ownerReference's coordinates and the dependent's namespace. The absentOwnerCache holds identities
too, so an owner verified gone is gone only at those coordinates. Kubernetes 1.28-1.32.
"""

from __future__ import annotations

from typing import Any

import attrs

#: the warning event the graph builder records on a dependent whose ownerReference names an owner (by uid) that
#: lives in another namespace (graph_builder.go reportInvalidNamespaceOwnerRef)
INVALID_NAMESPACE_REASON = "OwnerRefInvalidNamespace"


@attrs.frozen
class Identity:
    """objectReference: an ownerReference's coordinates and a namespace."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str

    @classmethod
    def of_reference(cls, ref: Any, namespace: str) -> "Identity":
        """ownerReferenceCoordinates(ref) in `namespace` (a dependent's, or "" for a cluster-scoped owner)."""
        return cls(ref.api_version, ref.kind, namespace, ref.name, ref.uid)

    def matches(self, ref: Any) -> bool:
        """ownerReferenceMatchesCoordinates: the reference names this uid, name, kind and apiVersion."""
        return (ref.uid == self.uid and ref.name == self.name and ref.kind == self.kind
                and ref.api_version == self.api_version)

    def __str__(self) -> str:
        # objectReference.String(), which the event's message prints
        return f"[{self.api_version}/{self.kind}, namespace: {self.namespace}, name: {self.name}, uid: {self.uid}]"


def invalid_namespace_message(ref: Any, namespace: str) -> str:
    """The OwnerRefInvalidNamespace event's message about a dependent in `namespace` ("" for a cluster-scoped
    one) whose ownerReference `ref` names an owner of another namespace."""
    return f'ownerRef {Identity.of_reference(ref, namespace)} does not exist in namespace "{namespace}"'
