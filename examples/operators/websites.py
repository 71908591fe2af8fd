"""The guarantees of the Website operators (kopf_correct.py, kopf_buggy.py; kopf.yaml), as invariants over the
served cluster for `kmodel check --operator ... --invariants examples.operators.websites:INVARIANTS`: each reads
the stored objects only."""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants.registry import LIVENESS, SAFETY, Invariant

LABEL = "web.example.com/website"


def _owner_uid(obj: Any) -> str:
    for ref in obj.metadata.owner_references:
        if ref.kind == "Website" and ref.controller:
            return ref.uid
    return ""


def one_configmap_per_website(cluster: Any, memo: dict) -> Iterator[str]:
    """Each Website owns at most one ConfigMap."""
    owned: dict[str, list[str]] = {}
    for cm in cluster.objects("configmaps"):
        uid = _owner_uid(cm)
        if uid and cm.metadata.deletion_timestamp is None:
            owned.setdefault(uid, []).append(f"{cm.metadata.namespace}/{cm.metadata.name}")
    for uid, names in sorted(owned.items()):
        if len(names) > 1:
            yield f"the Website of uid {uid} owns {len(names)} ConfigMaps: {', '.join(sorted(names))}"


def websites_served(cluster: Any, memo: dict) -> Iterator[str]:
    """Every Website's status names a ConfigMap it owns that holds its content."""
    maps = {(cm.metadata.namespace, cm.metadata.name): cm for cm in cluster.objects("configmaps")}
    for site in cluster.objects("websites"):
        meta = site.metadata
        if meta.deletion_timestamp is not None:
            continue
        named = (site.status or {}).get("configMap")
        cm = maps.get((meta.namespace, named)) if isinstance(named, str) else None
        if cm is None or _owner_uid(cm) != meta.uid:
            yield f"Website {meta.namespace}/{meta.name}'s status names no ConfigMap of its own ({named!r})"
        elif dict(cm.data or {}).get("content") != (site.spec or {}).get("content"):
            yield f"Website {meta.namespace}/{meta.name}'s ConfigMap {named} does not hold its content"


ONE_CONFIGMAP = Invariant("one-configmap-per-website", SAFETY, "operator: websites",
                          "Each Website owns at most one ConfigMap.", one_configmap_per_website)
WEBSITES_SERVED = Invariant("websites-served", LIVENESS, "operator: websites",
                            "Every Website's status names a ConfigMap it owns that holds its content.",
                            websites_served)
INVARIANTS = (ONE_CONFIGMAP, WEBSITES_SERVED)
