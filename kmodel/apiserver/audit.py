"""The audit trail: one record per request a replica handled, in the order they were handled.

Like kube-apiserver's audit log at level Metadata (stage ResponseComplete): who did what to which object and
what came of it. `revision` is the store revision after the request (so a record says which write, if any,
the request made). One `AuditLog` may be shared by every replica of a cluster; records then interleave in
the global order the loop delivered the requests.
"""

from __future__ import annotations

from typing import NamedTuple


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


class AuditLog:
    """An append-only list of AuditRecords."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

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
