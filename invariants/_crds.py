"""What a stored CRD declares, read from its own fields by the invariants (never the API server's
kmodel.apiserver.customresources, which decides what it serves: a mistake there must not move the oracle).

Upstream apiextensions-apiserver (1.31): a CRD is served once its Established condition is True
(pkg/controller/establish), and its objects are stored under `/registry/<spec.group>/<spec.names.plural>/`
(pkg/registry/customresource: the etcd prefix is the group and the plural, as for built-in resources),
namespaced when `spec.scope` is Namespaced.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class CustomKind(NamedTuple):
    """The kind a CRD declares, as far as the invariants need it."""

    name: str  #: the plural, the resource's name
    kind: str
    group: str
    namespaced: bool
    prefix: str  #: where its objects are stored (no trailing slash)


def established(crd: Any) -> bool:
    """The CRD's Established condition is True."""
    return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions)


def custom_kind(crd: Any) -> CustomKind:
    """The kind `crd` declares, from its spec."""
    spec = crd.spec
    return CustomKind(name=spec.names.plural, kind=spec.names.kind, group=spec.group,
                      namespaced=spec.scope == "Namespaced", prefix=f"/registry/{spec.group}/{spec.names.plural}")
