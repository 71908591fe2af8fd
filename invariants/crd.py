"""Custom resource invariants: what the API server guarantees about the objects a CRD declares.

    custom-objects-valid     (safety) every custom object written after its CRD's last change is valid
                             against that CRD's storage schema, and stored at its storage version
    custom-objects-scoped    (safety) every custom object is stored under its CRD's scope: with a namespace
                             when the CRD is Namespaced, without one when it is Cluster
    crd-objects-removed      (liveness) once settled, no custom object is stored without an Established CRD
                             that is not being deleted, and no CRD is left terminating

Custom objects are found by their etcd keys: `/registry/<group>/<plural>/...` for a stored CRD. The safety
checks look only at keys written since their last check, so each step costs what it wrote. An object written
before its CRD's last write may legitimately fail a schema made stricter since (upstream keeps it, and
validates only what its next update changes: validation ratcheting).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from kmodel.invariants._crd_schema import validator_for
from kmodel.invariants._crds import custom_kind, established
from kmodel.invariants._history import change_feed
from kmodel.invariants.inputs import writes
from kmodel.invariants.registry import LIVENESS, SAFETY, invariant
from kmodel.apiserver.customresources import CRD_PREFIX, crds
from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.storeview import current_prefix
from kmodel.objects.frozendict import thaw
from kmodel.objects.unstructured import CustomObject


def _custom_kvs(cluster: Any, memo: dict) -> Iterator[tuple[Any, Any, Any]]:
    """(CRD, its Resource, KeyValue) of each custom object written since the memo's last look."""
    store = cluster.store
    since = memo.get("revision", 0)
    memo["revision"] = store.revision
    if store.revision == since:
        return
    for crd_kv in current_prefix(store, CRD_PREFIX):
        crd = crd_kv.value
        res = custom_kind(crd)
        for kv in current_prefix(store, res.prefix + "/"):
            if kv.mod_revision > since:
                yield crd_kv, res, kv


@invariant("custom-objects-valid", kind=SAFETY, principle="the API as the single contract",
           reads=(writes("/registry/"),))
def custom_objects_valid(cluster: Any, memo: dict) -> Iterator[str]:
    """Every custom object written after its CRD's last change is valid against that CRD's storage schema and
    stored at the storage version. The API server validates every create and update of a custom object (and its
    status writes) against the CRD's structural schema before it writes, so nothing it stores can break it.

    Judged by a reference of its own, never the API server's validator: each write of a custom object, read
    from the store's history in revision order, against the CRD stored at that revision, with the `jsonschema`
    library (_crd_schema.py: the schema as JSON Schema, pruning included) and a DNS-subdomain name check. An
    update is judged as upstream's validation ratcheting does (CRDValidationRatcheting, on by default since
    1.30): an error at a value the update left as it was is not one, so an object written under an earlier
    version of the CRD may keep a value a stricter schema refuses, and be written again (its status, a
    finalizer) without it counting. A list item's old value is, as upstream's CorrelatedObject correlates it
    (Kubernetes 1.31): in a list of `x-kubernetes-list-type: map` the old item with the same keys; in a `set` or
    `atomic` list none, unless the whole list is as it was (such a list ratchets only as a unit, so a changed set
    keeps no item's old value, wherever the item sits); in a list of no list type the one at the same index."""
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, ("/registry/",))
        memo["crds"] = {}  # CRD key -> _Served: each CRD as stored now
    served: dict[str, _Served] = memo["crds"]
    for ch in feed.read(cluster.store):
        if ch.key.startswith(CRD_PREFIX):
            if ch.value is None:
                served.pop(ch.key, None)
            else:
                served[ch.key] = _Served(ch.value)
            continue
        if ch.value is None or not served:
            continue
        for crd in served.values():
            if ch.key.startswith(crd.prefix):
                yield from crd.judge(ch)
                break


class _Served:
    """A stored CRD as custom-objects-valid reads it: where its objects live, the apiVersion and kind of its
    storage version, and a validator of that version's schema (built once per CRD value)."""

    __slots__ = ("prefix", "api_version", "kind", "schema", "validator")

    def __init__(self, crd: Any) -> None:
        spec = crd.spec
        storage = next((v for v in spec.versions if v.storage), None)
        self.prefix = f"/registry/{spec.group}/{spec.names.plural}/"
        self.api_version = f"{spec.group}/{storage.name}" if storage is not None else ""
        self.kind = spec.names.kind
        self.schema = thaw((storage.schema or {}).get("openAPIV3Schema") or {}) if storage else {}
        self.validator = validator_for(self.schema or None)

    def judge(self, ch: Any) -> Iterator[str]:
        obj = ch.value
        if not isinstance(obj, CustomObject) or obj.api_version != self.api_version or obj.kind != self.kind:
            yield (f"{ch.key}: stored as {getattr(obj, 'api_version', type(obj).__name__)} "
                   f"{getattr(obj, 'kind', '')}, not at the storage version {self.api_version} {self.kind}")
            return
        name = obj.metadata.name
        if ch.prev is None and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
            yield f"{ch.key} (revision {ch.rev}): metadata.name {name!r} is not a DNS subdomain"
        if self.validator is None:
            return
        content = thaw(obj.content)
        errors = sorted(self.validator.iter_errors(content), key=lambda e: list(map(str, e.absolute_path)))
        if not errors:
            return
        old = thaw(ch.prev.content) if isinstance(ch.prev, CustomObject) else None
        for error in errors:
            path = tuple(error.absolute_path)
            here = _at(content, path)
            if old is not None and here is not _ABSENT and _same(_old_at(old, content, self.schema, path), here):
                continue  # ratcheted: the update left this value as it was
            where = ".".join(str(p) for p in path) or "."
            yield f"{ch.key} (revision {ch.rev}) breaks its CRD's schema: {where}: {error.message}"
            return


#: metadata.name of a custom object: a DNS subdomain (RFC 1123), at most 253 characters
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_ABSENT = object()


def _at(value: Any, path: tuple) -> Any:
    """The value at a JSON path of keys and indices, or _ABSENT."""
    for step in path:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return _ABSENT
    return value


def _old_at(old: Any, new: Any, schema: Any, path: tuple) -> Any:
    """The old object's value at the place of `new`'s value at `path`, or _ABSENT. A list item's old value
    depends on the list's `x-kubernetes-list-type`: `map`, the old item with the same values at its
    `x-kubernetes-list-map-keys` (so a reordered list keeps its items' old values); `set` or `atomic`, the item at
    the same index only when the whole list is as it was (upstream correlates no item of such a list, and
    ratchets it only as a unit); no list type, the old item at the same index."""
    for step in path:
        schema = schema if isinstance(schema, dict) else {}
        if isinstance(step, int):
            if not isinstance(old, list) or not isinstance(new, list) or step >= len(new):
                return _ABSENT
            list_type = schema.get("x-kubernetes-list-type")
            keys = schema.get("x-kubernetes-list-map-keys") if list_type == "map" else None
            item = new[step]
            if keys and isinstance(item, dict):
                old = next((o for o in old if isinstance(o, dict)
                            and all(k in o and k in item and _same(o[k], item[k]) for k in keys)), _ABSENT)
            elif list_type in ("set", "atomic") and not _same(old, new):
                return _ABSENT  # a changed set or atomic list: none of its items has an old value
            else:
                old = old[step] if step < len(old) else _ABSENT
            new, schema = item, schema.get("items")
        else:
            if not isinstance(old, dict) or step not in old or not isinstance(new, dict):
                return _ABSENT
            old, new = old[step], new.get(step)
            additional = schema.get("additionalProperties")
            schema = (schema.get("properties") or {}).get(step, additional if isinstance(additional, dict) else {})
        if old is _ABSENT:
            return _ABSENT
    return old


def _same(a: Any, b: Any) -> bool:
    """Two decoded JSON values are equal as Go's reflect.DeepEqual finds them: of the same JSON types throughout
    (1, 1.0 and True differ), lists item by item, objects key by key."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(
            _same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@invariant("custom-objects-scoped", kind=SAFETY, principle="the API as the single contract",
           reads=(writes("/registry/"),))
def custom_objects_scoped(cluster: Any, memo: dict) -> Iterator[str]:
    """Every custom object is stored under its CRD's scope: with a namespace when the CRD is Namespaced, without
    one when it is Cluster. The key and metadata.namespace agree with the scope the API server served it under."""
    for _, res, kv in _custom_kvs(cluster, memo):
        namespace = kv.value.metadata.namespace
        rest = kv.key[len(res.prefix) + 1:]
        if res.namespaced and (not namespace or rest != f"{namespace}/{kv.value.metadata.name}"):
            yield f"{kv.key}: a {res.kind} of a Namespaced CRD stored without its namespace ({namespace!r})"
        elif not res.namespaced and (namespace or "/" in rest):
            yield f"{kv.key}: a {res.kind} of a Cluster-scoped CRD stored in namespace {namespace!r}"


def _builtin_prefixes() -> tuple[str, ...]:
    return tuple(sorted(res.prefix + "/" for res in RESOURCES.values() if res.prefix))


@invariant("crd-objects-removed", kind=LIVENESS, principle="level-driven reconciliation")
def crd_objects_removed(cluster: Any, memo: dict) -> Iterator[str]:
    """Once settled, no custom object is stored without an Established CRD that is not being deleted, and no CRD
    is left terminating. Deleting a CRD deletes its objects (the customresourcecleanup finalizer) before the CRD
    itself goes; a terminating CRD refuses new objects."""
    store = cluster.store
    live: list[str] = []
    for crd in crds(store):
        if crd.metadata.deletion_timestamp is not None:
            yield f"CRD {crd.metadata.name} is still terminating (finalizers {list(crd.metadata.finalizers)})"
        elif established(crd):
            live.append(custom_kind(crd).prefix + "/")
    builtin = _builtin_prefixes()
    for kv in current_prefix(store, "/registry/"):
        key = kv.key
        if key.startswith(builtin) or key.startswith(CRD_PREFIX) or key.startswith(tuple(live)):
            continue
        if isinstance(kv.value, CustomObject):
            yield f"{key} is stored, but no Established CRD serves it"
