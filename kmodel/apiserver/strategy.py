"""Per-kind create/update strategies (upstream's rest.BeforeCreate / BeforeUpdate and each kind's
PrepareForCreate / PrepareForUpdate), as pure functions over frozen objects.

Create (`prepare_for_create`):
* name from generateName: `<generateName><5 chars>` drawn from upstream's alphabet "bcdfghjklmnpqrstvwxz2456789"
  with the caller's seeded random source; uid: a UUID drawn from the same source; creationTimestamp = logical
  now; generation 1 for kinds with a spec; resourceVersion = the revision the write will get;
  deletionTimestamp/deletionGracePeriodSeconds cleared;
* status: reset for kinds with a status subresource (pods: phase Pending and their QoS class; namespaces:
  phase Active), kept for nodes (a kubelet registers its node with its status), as upstream's strategies.

Update (`prepare_for_update`): the main resource keeps the stored status, a status update keeps everything
but the status; uid (if empty), creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds come from
the stored object; generation moves by one when the spec changed.

`same_but_version(a, b)` tells a no-op write (equal except metadata.resourceVersion), which upstream's
GuaranteedUpdate skips.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import attrs

from kmodel.apiserver.resources import Resource

from kmodel.apiserver.fastevolve import evolve as _evolve
GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_SUFFIX_LENGTH = 5
_META_FIELDS = tuple(a.name for a in attrs.fields(__import__("kmodel.objects.meta", fromlist=["ObjectMeta"]).ObjectMeta)
                     if a.name != "resource_version")


def generated_name(base: str, rng: random.Random) -> str:
    """SimpleNameGenerator: base (cut to 58 characters) + 5 random characters."""
    if len(base) > 63 - GENERATE_NAME_SUFFIX_LENGTH:
        base = base[:63 - GENERATE_NAME_SUFFIX_LENGTH]
    return base + "".join(rng.choice(GENERATE_NAME_ALPHABET) for _ in range(GENERATE_NAME_SUFFIX_LENGTH))


def new_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def has_spec(obj: Any) -> bool:
    return hasattr(obj, "spec")


def qos_class(spec: Any) -> str:
    """v1qos.GetPodQOS, for cpu and memory."""
    requests: dict = {}
    limits: dict = {}
    is_guaranteed = True
    for c in spec.init_containers + spec.containers:
        req, lim = c.resources.requests, c.resources.limits
        for name in ("cpu", "memory"):
            if name in req:
                requests[name] = True
            if name in lim:
                limits[name] = True
        if not all(n in lim for n in ("cpu", "memory")):
            is_guaranteed = False
        for name in ("cpu", "memory"):
            if name in req and name in lim and req[name] != lim[name]:
                is_guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if is_guaranteed and len(limits) == 2:
        return "Guaranteed"
    return "Burstable"


def prepare_for_create(res: Resource, obj: Any, *, now: int, rng: random.Random, revision: int, name: str) -> Any:
    meta = obj.metadata
    changes: dict[str, Any] = {
        "name": name,
        "uid": new_uid(rng),
        "creation_timestamp": now,
        "resource_version": str(revision),
        "deletion_timestamp": None,
        "deletion_grace_period_seconds": None,
    }
    if res.namespaced:
        changes["namespace"] = meta.namespace
    if has_spec(obj):
        changes["generation"] = 1
    new_meta = _evolve(meta, **changes)
    kind = res.name
    if kind == "pods":
        status = type(obj.status)(phase="Pending", qos_class=qos_class(obj.spec))
        return _evolve(obj, metadata=new_meta, status=status)
    if kind == "namespaces":
        return _evolve(obj, metadata=new_meta, status=_evolve(obj.status, phase="Active"))
    if res.has_status and kind != "nodes":
        return _evolve(obj, metadata=new_meta, status=type(obj.status)())
    return _evolve(obj, metadata=new_meta)


def prepare_for_update(res: Resource, new: Any, old: Any, *, subresource: str, revision: int) -> Any:
    """The object to store for an update of `old` by `new` (see the module docstring)."""
    old_meta = old.metadata
    if subresource == "status":
        # only the status moves; metadata and spec stay as stored (ResetObjectMetaForStatus)
        return _evolve(old, metadata=_evolve(old_meta, resource_version=str(revision)), status=new.status)
    meta = new.metadata
    generation = old_meta.generation
    if has_spec(new) and generation and new.spec != old.spec:
        generation += 1
    new_meta = _evolve(
        meta,
        uid=meta.uid or old_meta.uid,
        creation_timestamp=old_meta.creation_timestamp,
        deletion_timestamp=old_meta.deletion_timestamp,
        deletion_grace_period_seconds=old_meta.deletion_grace_period_seconds,
        generation=generation,
        resource_version=str(revision),
    )
    if res.has_status:
        return _evolve(new, metadata=new_meta, status=old.status)
    return _evolve(new, metadata=new_meta)


def same_but_version(a: Any, b: Any) -> bool:
    """Whether two objects of one kind are equal apart from metadata.resourceVersion."""
    if a is b:
        return True
    for f in attrs.fields(type(a)):
        name = f.name
        if name == "metadata":
            am, bm = a.metadata, b.metadata
            if am is bm:
                continue
            for mf in _META_FIELDS:
                if getattr(am, mf) != getattr(bm, mf):
                    return False
        elif getattr(a, name) != getattr(b, name):
            return False
    return True
