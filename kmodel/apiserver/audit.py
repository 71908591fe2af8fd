"""The audit trail: one record per request a replica handled, in the order they were handled.

Like kube-apiserver's audit log at level Metadata (stage ResponseComplete): who did what to which object and
what came of it. `revision` is the store revision after the request (so a record says which write, if any,
the request made). `decision` is authorization's verdict, upstream's audit annotation
authorization.k8s.io/decision: "allow", "forbid" (a 403 from RBAC and the Node authorizer, told apart from
an admission plugin's 403), or "" when the request never reached authorization (unknown resource,
authentication failed). One `AuditLog` may be shared by every replica of a cluster; records then interleave in
the global order the loop delivered the requests.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from kmodel.store.compact_log import CompactLog


class AuditRecord(NamedTuple):
    time: int  # logical ms
    replica: str
    user: str  # "" when authentication failed
    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str
    code: int
    revision: int
    decision: str = ""  # ALLOW, FORBID, or "" (authorization not reached)


ALLOW, FORBID = "allow", "forbid"
_FIELDS = len(AuditRecord._fields)


_new = tuple.__new__


class AuditRecords(CompactLog):
    """The records of an `AuditLog`, in order: a read-only sequence of AuditRecords plus `append`.

    The pipeline appends each record as the plain tuple of its fields (`append_fields`): a tuple of strings
    and ints is one Python's cyclic collector stops tracking, where a NamedTuple (a tuple subclass) stays
    tracked and is walked at every full collection for the rest of the run. Reading an entry turns it into
    its AuditRecord (equal fields), kept in its place so that later reads get the same object."""

    __slots__ = ()

    def append(self, record: AuditRecord) -> None:
        self._entries.append(record)

    def append_fields(self, fields: tuple) -> None:
        """Append the record whose fields (in AuditRecord's order) are `fields`, a plain tuple."""
        self._entries.append(fields)

    def _expand(self, entry: Any) -> Optional[AuditRecord]:
        if type(entry) is not tuple:
            return None
        return _new(AuditRecord, entry if len(entry) == _FIELDS else entry + ("",) * (_FIELDS - len(entry)))


class AuditLog:
    """An append-only list of AuditRecords."""

    def __init__(self) -> None:
        self.records = AuditRecords()

    def record(self, record: AuditRecord) -> None:
        self.records.append(record)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)

    def format(self) -> str:
        """One line per record, for reports."""
        lines = []
        for r in self.records:
            target = "/".join(p for p in (r.namespace, r.resource, r.name, r.subresource) if p)
            lines.append(f"{r.time:>8} {r.replica:<10} {r.user or '-':<32} {r.verb:<6} {target} {r.code} rv={r.revision}")
        return "\n".join(lines)
