"""What a request may change: a refused request changes nothing, and a deleted object stays deleted.

Both read incrementally: the audit trail (one record per request, with the store revision after it) and the
store's history (invariants/_history.py).
"""

from __future__ import annotations

from typing import Any, Iterator

from invariants._history import audit_since, change_feed, name_of
from invariants.registry import SAFETY, invariant

#: the answers that refuse a request: nothing of it may reach the store. A 5xx is left out on purpose: a
#: timeout (504) is an unknown outcome, where the write may well have happened.
REFUSALS = frozenset({400, 401, 403, 404, 405, 409, 410, 415, 422, 429})


@invariant("refused-request-changes-nothing", kind=SAFETY, principle="the API as the single contract")
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


@invariant("api-status-codes", kind=SAFETY, principle="the API as the single contract")
def api_status_codes(cluster: Any, memo: dict) -> Iterator[str]:
    """Every answer an API server gave carries a code kube-apiserver gives: 201 Created for a create that stored
    its object, 200 for any other success, and for a refusal or a failure one of the codes its errors
    (metav1.Status reasons) carry: 400, 401, 403, 404, 405, 409, 410, 415, 422, 429, 500, 503 or 504.

    Clients branch on the code (client-go's rest.Result, kubectl's messages), so a success under another code
    reads as a failure and a failure under a 2xx as a success."""
    bad: list = memo.setdefault("bad", [])
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    for r in audit_since(cluster, memo, start, end):
        success = 201 if r.verb == "create" else 200
        if r.code != success and r.code not in REFUSALS and r.code not in FAILURES:
            target = "/".join(p for p in (r.namespace, r.resource, r.name, r.subresource) if p)
            bad.append(f"{r.replica} answered {r.verb} {target} from {r.user or 'an unauthenticated user'} with "
                       f"{r.code} at {r.time} ms: a {r.verb} succeeds with {success}, and fails with a 4xx or 5xx "
                       f"code of upstream's")
    yield from bad


@invariant("deleted-stays-deleted", kind=SAFETY, principle="optimistic concurrency")
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
