"""Storage invariants: optimistic concurrency and resourceVersions, read from the store's own history (and, for
lost updates at the API, the clients' record of their accepted updates and the audit trail)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import attrs

from kmodel.invariants import _paths
from kmodel.invariants._history import audit_since, change_feed, stored_since
from kmodel.invariants.records import declares, record
from kmodel.invariants.inputs import AUDIT, CLIENT_UPDATES, REPLICA_CACHES, STORE_HISTORY, writes
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.apiserver.resources import RESOURCES, object_key
from kmodel.store.history import TXN_PUT_REVISION
from kmodel.store.history import is_compact as is_compact_txn_put
from kmodel.store.types import TxnRequest


def _conditional_on(request: Any, key: str, mod_revision: int) -> bool:
    """Did the txn `request` (taking its success branch) compare `key`'s mod_revision to `mod_revision`?"""
    if type(request) is not TxnRequest:
        return False
    for c in request.compare:
        if _compares_mod_revision(c, key, mod_revision):
            return True
    return False


def _compares_mod_revision(c: Any, key: str, mod_revision: int) -> bool:
    """Does the compare `c` (a Compare, or its fields as a tuple: key, target, result, value, range_end) ask that
    `key`'s mod_revision equal `mod_revision`?"""
    return c[0] == key and c[4] in (None, "") and c[1] == "MOD" and c[2] == "EQUAL" and c[3] == mod_revision


@invariant("occ-no-lost-update", kind=SAFETY, principle="optimistic concurrency",
           reads=(writes("/registry/"), AUDIT, CLIENT_UPDATES,))
def occ_no_lost_update(cluster: Any, memo: dict) -> Iterator[str]:
    """No write loses an update: every store write that replaced or deleted a value compared the mod_revision
    it replaced, and no update an API server accepted overwrote a change made after the resourceVersion its
    body was read at.

    Two levels, both read incrementally:

    * the store (`store.history`): a write over an existing key must be a txn comparing that key's
      mod_revision to the one it replaced, taking its success branch (kube-apiserver's GuaranteedUpdate always
      is, even for an unconditional update; a blind put or delete is not);
    * the API: an update carries the resourceVersion R its body was read at, and Kubernetes refuses it with
      409 unless the object is still at R. The clients' own record of each accepted update (`ApiClient.updates`:
      R, and the resourceVersion N of the object that came back; an observer's instrumentation, since a
      client of the `blind-writes` variant strips R from the body) is matched with the store write that made
      N (the audit trail names the request that made each revision: an update of the same object, handled
      between the send and the answer). If that write replaced a version M newer than R, the versions
      R < v <= M were never seen by the writer, and any part of the object (a metadata field, or a field of
      spec or status) that they changed and this write changed again is a lost update (the change overwritten
      may be the writer's own earlier one, seen through a cache that lagged behind it: Kubernetes' 409 would
      have made it read again all the same). A status write after a spec change loses nothing (the server
      keeps the stored spec) and is not flagged. An update whose body carried no resourceVersion is
      unconditional by the writer's choice (Kubernetes allows it for the resources the model serves) and is
      not judged."""
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo)
        memo["bad"] = []
        memo["versions"] = {}  # (key, revision) -> the Change that made that version
        memo["makers"] = {}  # revision -> the audit record of the request that made it
        memo["audit_pos"] = 0
        memo["audit_rev"] = 0
        memo["client_pos"] = {}
    bad: list = memo["bad"]
    versions: dict = memo["versions"]
    for ch in reader.read(cluster.store):
        if ch.value is not None:
            versions[(ch.key, ch.rev)] = ch
        if ch.prev is None:
            continue  # a create: nothing to lose
        request = ch.request
        if request is None:  # a txn put the history keeps compact: it succeeded, with the one compare ch.compare
            if _compares_mod_revision(ch.compare, ch.key, ch.prev_mod):
                continue
            how = "a txn that did not compare its mod_revision"
        else:
            succeeded = getattr(ch.response, "succeeded", False)
            if succeeded and _conditional_on(request, ch.key, ch.prev_mod):
                continue
            how = ("a txn's failure branch" if type(request) is TxnRequest and not succeeded
                   else "a txn that did not compare its mod_revision" if type(request) is TxnRequest
                   else f"a plain {type(request).__name__}")
        what = "put" if ch.value is not None else "delete"
        bad.append(f"revision {ch.rev}: blind {what} of {ch.key} over mod_revision {ch.prev_mod} ({how}); "
                   f"an update made in between would be lost")
    _read_makers(cluster, memo)
    for name, client in _clients(cluster, memo):
        records = record(client, "updates")
        pos = memo["client_pos"].get(name, 0)
        if pos < len(records):
            memo["client_pos"][name] = len(records)
            for update in records[pos:]:
                found = _lost_update(name, update, versions, memo["makers"])
                if found:
                    bad.append(found)
    yield from bad


def _read_makers(cluster: Any, memo: dict) -> None:
    """The audit record of the request that made each store revision: a record whose revision (the store's,
    after the request) is newer than every record's before it made that write."""
    records = cluster.audit.records
    makers = memo["makers"]
    last = memo["audit_rev"]
    for r in audit_since(cluster, memo, memo["audit_pos"], len(records)):
        if r.revision > last:
            makers[r.revision] = r
            last = r.revision
    memo["audit_pos"] = len(records)
    memo["audit_rev"] = last


def _clients(cluster: Any, memo: dict) -> list:
    """(name, ApiClient) of every component with a client, by name. Components are only ever added to the loop
    (a removed machine's stay, crashed) and keep their client (a crash resets it, the same object), so the
    list is kept until there are more components or a component holds another client than the one kept."""
    components = cluster.loop.components
    known = memo.get("components")
    if known is not None and known[0] == len(components) and all(
            component.client is client for _, component, client in known[1]):
        return known[2]
    entries = []
    for name, component in sorted(components.items()):
        if declares(component, "client") and declares(client := record(component, "client"), "updates"):
            entries.append((name, component, client))
    known = memo["components"] = (len(components), entries, [(name, client) for name, _, client in entries])
    return known[2]


_UNJUDGED_META = ("resource_version", "generation", "managed_fields")


def _parts(obj: Any) -> dict[str, Any]:
    """The parts a lost update is judged by: each metadata field but the server's bookkeeping, each field of
    spec and status (or a top-level field that is not a structure)."""
    parts: dict[str, Any] = {}
    for f in attrs.fields(type(obj)):
        value = getattr(obj, f.name)
        if attrs.has(type(value)):
            for sub in attrs.fields(type(value)):
                if f.name == "metadata" and sub.name in _UNJUDGED_META:
                    continue
                parts[f"{f.name}.{sub.name}"] = getattr(value, sub.name)
        else:
            parts[f.name] = value
    return parts


def _who(makers: dict, revision: int) -> str:
    r = makers.get(revision)
    return f"{r.verb} by {r.user or '?'}" if r is not None else "a write outside the audit trail"


def _lost_update(client: str, record: Any, versions: dict, makers: dict) -> Optional[str]:
    res = RESOURCES.get(record.resource)
    if res is None:
        return None
    key = object_key(res, record.namespace, record.name)
    change = versions.get((key, record.written_rv))
    maker = makers.get(record.written_rv)
    if change is None or maker is None or maker.verb != "update" or (
            maker.resource, maker.namespace, maker.name, maker.subresource) != (
            record.resource, record.namespace, record.name, record.subresource) or \
            not record.sent <= maker.time <= record.answered:
        return None  # no write of this update made that version (e.g. it changed nothing)
    replaced = change.prev_mod
    if change.prev is None or record.read_rv >= replaced:
        return None
    target = "/".join(p for p in (record.resource, record.namespace, record.name, record.subresource) if p)
    head = (f"revision {change.rev}: {client} ({maker.user or '?'}) updated {target} from a body read at "
            f"resourceVersion {record.read_rv}, over resourceVersion {replaced}")
    # the versions the writer never saw, newest first: (revision, value, revision before it)
    unseen = []
    rev = replaced
    while rev > record.read_rv:
        ch = versions.get((key, rev))
        if ch is None:
            break
        unseen.append(ch)
        rev = ch.prev_mod
    if rev != record.read_rv or not unseen:
        return f"{head}; the object it read was deleted and made again since: its writes were lost"
    before, current, written = _parts(unseen[-1].prev), _parts(change.prev), _parts(change.value)
    lost = [p for p in current if before.get(p) != current[p] and written.get(p) != current[p]]
    if not lost:
        return None  # the changes it never saw are all still there (e.g. a status write after a spec change)
    details = []
    for part in lost:
        by = [f"{ch.rev} ({_who(makers, ch.rev)})" for ch in reversed(unseen)
              if _parts(ch.prev).get(part) != _parts(ch.value).get(part)]
        details.append(f"{part} changed at revision {', '.join(by)}")
    return f"{head}, and overwrote changes it never saw: {'; '.join(details)}"


@invariant("resource-version-monotonic", kind=SAFETY, principle="optimistic concurrency",
           reads=(STORE_HISTORY, REPLICA_CACHES,))
def resource_version_monotonic(cluster: Any, memo: dict) -> Iterator[str]:
    """Store revisions strictly increase (each write by exactly one, no answer older than a write before it),
    a stored object's resourceVersion is its mod_revision, and no API server's watch cache ever goes back to
    an older resourceVersion (except by crashing, which empties it)."""
    bad: list = memo.setdefault("bad", [])
    history = cluster.store.history
    start = memo.get("pos", 0)
    last = memo.get("last", 1)  # the newest revision any answer has shown
    last_write = memo.get("last_write", 1)
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = change_feed(memo)
    entries = history[start:] if _paths.REFERENCE else stored_since(history, start)
    for i, entry in enumerate(entries, start):
        header = entry[TXN_PUT_REVISION] if is_compact_txn_put(entry) else getattr(entry[1], "header_revision", None)
        if header is None or header == 0:
            continue
        if header < last:
            bad.append(f"store history #{i}: {type(history[i][0]).__name__} answered at revision {header}, "
                       f"older than revision {last} already shown")
        last = max(last, header)
    memo["pos"] = len(history)
    memo["last"] = last
    seen_revs: list = []
    for ch in reader.read(cluster.store):
        if not seen_revs or seen_revs[-1] != ch.rev:
            seen_revs.append(ch.rev)
        if ch.value is not None:
            meta = getattr(ch.value, "metadata", None)
            rv = getattr(meta, "resource_version", None)
            if rv is not None and rv != "" and rv != str(ch.rev):
                bad.append(f"{ch.key} stored at revision {ch.rev} says resourceVersion {rv}")
    for rev in seen_revs:
        if rev != last_write + 1:
            bad.append(f"store write at revision {rev} follows revision {last_write}: revisions must rise by one "
                       f"per write")
        last_write = max(last_write, rev)
    memo["last_write"] = last_write
    caches: dict = memo.setdefault("caches", {})
    for replica in cluster.replicas:
        cache = replica.cache
        rv = cache.resource_version
        seen = caches.get(replica.name)
        if seen is not None and seen[0] is cache and rv < seen[1]:
            bad.append(f"{replica.name}'s watch cache went back from resourceVersion {seen[1]} to {rv}")
        caches[replica.name] = (cache, max(rv, seen[1]) if seen is not None and seen[0] is cache else rv)
    yield from bad


#: the stored kinds, by class, for judging where each object is kept (the API server's resource table)
_RESOURCE_OF_CLASS = {r.cls: r for r in RESOURCES.values()}


@invariant("store-keys-canonical", kind=SAFETY, principle="the API as the single contract",
           reads=(writes("/registry/"),))
def store_keys_canonical(cluster: Any, memo: dict) -> Iterator[str]:
    """Every object is stored under kube-apiserver's key for it: its resource's prefix, then its namespace and
    name (a cluster-scoped object's name alone), as in /registry/pods/default/web-1.

    That layout keeps same-named objects of two namespaces apart, and it is what etcdctl, backups and a
    restore read. Built here from the object's own metadata, not by the API server's key function."""
    bad: list = memo.setdefault("bad", [])
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, ("/registry/",))
    for ch in feed.read(cluster.store):
        obj = ch.value
        res = _RESOURCE_OF_CLASS.get(type(obj)) if obj is not None else None
        if res is None:
            continue
        meta = obj.metadata
        want = f"{res.prefix}/{meta.namespace}/{meta.name}" if res.namespaced else f"{res.prefix}/{meta.name}"
        if ch.key != want:
            bad.append(f"revision {ch.rev}: {res.name} {meta.namespace + '/' if res.namespaced else ''}{meta.name} "
                       f"was stored under {ch.key}, not {want}")
    yield from bad
