"""What a request may change: a refused request changes nothing, a deleted object stays deleted, and no DELETE
removes an object its finalizers still hold.

Both read incrementally: the audit trail (one record per request, with the store revision after it) and the
store's history (invariants/_history.py).
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import NAMESPACES, audit_since, change_feed, name_of
from kmodel.invariants.inputs import AUDIT, writes
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.apiserver.customresources import CRD_PREFIX
from kmodel.apiserver.deletion import GC_FINALIZERS
from kmodel.objects.apiextensions import CLEANUP_FINALIZER

#: the answers that refuse a request: nothing of it may reach the store. A 5xx is left out on purpose: a
#: timeout (504) is an unknown outcome, where the write may well have happened.
REFUSALS = frozenset({400, 401, 403, 404, 405, 409, 410, 415, 422, 429})


@invariant("refused-request-changes-nothing", kind=SAFETY, principle="the API as the single contract",
           reads=(AUDIT,))
def refused_request_changes_nothing(cluster: Any, memo: dict) -> Iterator[str]:
    """A request the API servers refused (authentication, RBAC, admission, validation, a conflict) changed
    nothing: the store's revision after it is the revision after the request handled just before it.

    Every store write goes through an API server's request pipeline and is audited in the same instant
    (api-single-contract), so a refused request that wrote would show as a revision step on its own record."""
    bad: list = memo.setdefault("bad", [])
    records = cluster.audit.records
    start = memo.get("pos", 0)
    end = len(records)
    if start < end:
        memo["pos"] = end
        prev = memo.get("revision")
        for r in audit_since(cluster, memo, start, end):
            if prev is not None and r.code in REFUSALS and r.revision != prev:
                target = "/".join(p for p in (r.namespace, r.resource, r.name, r.subresource) if p)
                bad.append(f"{r.replica} refused {r.verb} {target} from {r.user or 'an unauthenticated user'} "
                           f"with {r.code} at {r.time} ms, yet the store moved from revision {prev} to "
                           f"{r.revision}")
            prev = r.revision
        memo["revision"] = prev
    yield from bad


#: the codes kube-apiserver answers a failed request with, beside REFUSALS: an internal error (500, etcd's
#: failures among them), unavailable (503) and a timeout (504)
FAILURES = frozenset({500, 503, 504})
#: the verbs whose success may also be 201 Created (the object did not exist and the request made it)
_MAY_CREATE = ("update", "patch")


@invariant("api-status-codes", kind=SAFETY, principle="the API as the single contract",
           reads=(AUDIT,))
def api_status_codes(cluster: Any, memo: dict) -> Iterator[str]:
    """Every answer an API server gave carries a code kube-apiserver gives: 201 Created for a create that stored
    its object, 200 or 201 for an update or patch (201 when it created the object: a server-side apply of an absent
    object, an update of a kind created on update, as the update and patch handlers answer), 200 for any other
    success, and for a refusal or a failure one of the codes its errors (metav1.Status reasons) carry: 400, 401,
    403, 404, 405, 409, 410, 415, 422, 429, 500, 503 or 504.

    Clients branch on the code (client-go's rest.Result, kubectl's messages), so a success under another code
    reads as a failure and a failure under a 2xx as a success."""
    bad: list = memo.setdefault("bad", [])
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    for r in audit_since(cluster, memo, start, end):
        success = 201 if r.verb == "create" else 200
        if r.code != success and r.code not in REFUSALS and r.code not in FAILURES and not (
                r.code == 201 and r.verb in _MAY_CREATE):
            target = "/".join(p for p in (r.namespace, r.resource, r.name, r.subresource) if p)
            bad.append(f"{r.replica} answered {r.verb} {target} from {r.user or 'an unauthenticated user'} with "
                       f"{r.code} at {r.time} ms: a {r.verb} succeeds with {success}, and fails with a 4xx or 5xx "
                       f"code of upstream's")
    yield from bad


@invariant("deleted-stays-deleted", kind=SAFETY, principle="optimistic concurrency",
           reads=(writes("/registry/"),))
def deleted_stays_deleted(cluster: Any, memo: dict) -> Iterator[str]:
    """Nothing is written for an object that was already deleted: once an object (a uid) is gone from the
    store, no later write carries its uid.

    An update or patch that arrives after its object's deletion must fail (404, or 409 on a uid precondition);
    an object re-created under the same name is a new object with a new uid."""
    bad: list = memo.setdefault("bad", [])
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, ("/registry/",))
    gone: dict = memo.setdefault("gone", {})  # uid -> revision of its deletion
    for ch in feed.read(cluster.store):
        if ch.value is None:
            uid = _uid(ch.prev)
            if uid:
                gone[uid] = ch.rev
            continue
        uid = _uid(ch.value)
        if uid and uid in gone:
            bad.append(f"revision {ch.rev} wrote {name_of(ch.key)} with uid {uid}, an object deleted at revision "
                       f"{gone[uid]}")
    yield from bad


def _uid(obj: Any) -> str:
    meta = getattr(obj, "metadata", None)
    return getattr(meta, "uid", "") or ""


@invariant("finalizers-hold-deletion", kind=SAFETY, principle="the API as the single contract",
           reads=(writes("/registry/"), AUDIT,))
def finalizers_hold_deletion(cluster: Any, memo: dict) -> Iterator[str]:
    """No DELETE removes an object that still has finalizers (nor a namespace whose spec.finalizers is not
    empty): it only marks the object as being deleted, and the object goes with the update that removes its
    last finalizer.

    Finalizers are how a controller that must clean up first (the namespace controller, a CRD's cleanup, a
    user's own) holds a deletion; an object removed under them is gone before that controller had its turn.
    Each removal of a held object is traced to the request that made its revision (the first audit record at
    or after it: requests are handled one at a time); an update or patch that removed the last finalizer is how
    the deletion completes. The garbage collector's `orphan` and `foregroundDeletion` are not judged: a DELETE's
    propagationPolicy replaces them (upstream's deletionFinalizersForGarbageCollection), so a second DELETE
    with Background removes an object the first one marked with Orphan, at once. The one removal made inside
    another request is a terminating CRD's, whose cleanup finalizer the API server's own finalizing controller
    removes once the CRD's objects are gone (an update upstream)."""
    bad: list = memo.setdefault("bad", [])
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, ("/registry/",))
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    removed = [(ch, _holds(ch.key, ch.prev)) for ch in feed.read(cluster.store) if ch.value is None]
    held = [(ch, holds) for ch, holds in removed if holds]
    if not held:
        yield from bad
        return
    audited = audit_since(cluster, memo, start, end)
    for ch, holds in held:
        if ch.key.startswith(CRD_PREFIX) and holds == [CLEANUP_FINALIZER]:
            continue  # the finalizing controller's removal of the cleanup finalizer (see the docstring)
        by = next((r for r in audited if r.revision >= ch.rev), None)
        if by is not None and by.verb != "delete":
            continue  # the update or patch that removed the last finalizer
        meta = ch.prev.metadata
        how = (f"a delete of {by.resource} {'/'.join(p for p in (by.namespace, by.name) if p)} from "
               f"{by.user or 'an unauthenticated user'}" if by is not None else "no audited request")
        bad.append(f"revision {ch.rev} removed {name_of(ch.key)} (uid {meta.uid}) while finalizers {holds} still "
                   f"held it: {how}")
    yield from bad


def _holds(key: str, obj: Any) -> list:
    """The finalizers that hold `obj` against a DELETE: its own but the garbage collector's, and a namespace's
    spec.finalizers."""
    meta = getattr(obj, "metadata", None)
    if meta is None:
        return []
    held = [f for f in meta.finalizers if f not in GC_FINALIZERS]
    if key.startswith(NAMESPACES):
        held += obj.spec.finalizers
    return held
