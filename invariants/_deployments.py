"""Which ReplicaSet is a Deployment's new one, computed by the invariants for themselves (never the Deployment
controller's kmodel.controllers.deployment_logic: a mistake there must not move the oracle with it).

Upstream 1.31 (pkg/controller/deployment/util FindNewReplicaSet, EqualIgnoreHash): of the Deployment's
ReplicaSets, oldest first (creation time, then name), the first whose pod template equals the Deployment's
once the pod-template-hash label is taken out of both.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import attrs

#: the label the Deployment controller adds to a ReplicaSet's template (apps/v1 DefaultDeploymentUniqueLabelKey)
POD_TEMPLATE_HASH = "pod-template-hash"


def _without_hash(template: Any) -> tuple:
    """The template's metadata, field by field, its labels without pod-template-hash."""
    meta = template.metadata
    return tuple({k: v for k, v in meta.labels.items() if k != POD_TEMPLATE_HASH} if f.name == "labels"
                 else getattr(meta, f.name) for f in attrs.fields(type(meta)))


def _same_template(a: Any, b: Any) -> bool:
    return a.spec == b.spec and _without_hash(a) == _without_hash(b)


def new_replica_set(deployment: Any, sets: Sequence[Any]) -> Optional[Any]:
    """The Deployment's new ReplicaSet among `sets` (its own), or None."""
    def age(rs: Any) -> tuple:
        ts = rs.metadata.creation_timestamp
        return (ts is not None, ts or 0, rs.metadata.name)

    return next((rs for rs in sorted(sets, key=age) if _same_template(rs.spec.template, deployment.spec.template)),
                None)
