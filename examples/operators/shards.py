"""The guarantee of the Shard operators (client_correct.py, client_buggy.py; client.yaml), as an invariant over the
served cluster for `kmodel check --operator ... --invariants examples.operators.shards:INVARIANTS`."""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.registry import LIVENESS, Invariant

LABEL = "batch.example.com/shard"


def shard_configmaps(cluster: Any, memo: dict) -> Iterator[str]:
    """The labelled ConfigMaps are exactly <shard>-0 … <shard>-(N-1) of every Shard of spec.replicas N."""
    wanted = {(s.metadata.namespace, f"{s.metadata.name}-{i}") for s in cluster.objects("shards")
              if s.metadata.deletion_timestamp is None for i in range(int((s.spec or {}).get("replicas") or 0))}
    made = {(cm.metadata.namespace, cm.metadata.name) for cm in cluster.objects("configmaps")
            if LABEL in dict(cm.metadata.labels or {})}
    for namespace, name in sorted(made - wanted):
        yield f"ConfigMap {namespace}/{name} belongs to no Shard that wants it"
    for namespace, name in sorted(wanted - made):
        yield f"ConfigMap {namespace}/{name} of a Shard is missing"


SHARD_CONFIGMAPS = Invariant("shard-configmaps", LIVENESS, "operator: shards",
                             "The labelled ConfigMaps are exactly <shard>-0 … <shard>-(N-1) of every Shard of "
                             "spec.replicas N.", shard_configmaps)
INVARIANTS = (SHARD_CONFIGMAPS,)
