"""The audit log's records read back as AuditRecords, whether appended whole or as their fields."""

from __future__ import annotations

import gc

from kmodel.apiserver.audit import AuditLog, AuditRecord


def test_records_appended_as_fields_read_back_as_audit_records():
    log = AuditLog()
    whole = AuditRecord(1, "apiserver-0", "admin", "get", "pods", "default", "p", "", 200, 5)
    fields = (2, "apiserver-1", "", "create", "pods", "default", "q", "", 401, 5)
    log.record(whole)
    log.records.append_fields(fields)
    gc.collect()
    assert not gc.is_tracked(log.records._entries[1])  # why fields are kept as a plain tuple
    assert log.records[0] is whole
    second = log.records[1]
    assert type(second) is AuditRecord and second == AuditRecord(*fields) and second.code == 401
    assert log.records[-1] is second and log.records[1:] == [second]
    assert list(log) == [whole, second] == list(log.records) and len(log) == 2
    assert log.records == [whole, second]
    assert log.format().splitlines()[1].split() == ["2", "apiserver-1", "-", "create", "default/pods/q", "401", "rv=5"]


def test_slices_from_any_position_read_what_entry_by_entry_reads():
    """Readers take `records[position:]` over and over, each from its own position, while records keep coming:
    every slice (and a step, a negative start, an empty range) reads what indexing one entry at a time does."""
    log = AuditLog()
    for n in range(12):
        if n % 3:
            log.records.append_fields((n, "apiserver-0", "", "get", "pods", "default", f"p{n}", "", 200, n))
        else:
            log.record(AuditRecord(n, "apiserver-0", "u", "get", "pods", "default", f"p{n}", "", 200, n))
        for part in (slice(0, None), slice(n // 2, None), slice(n, None), slice(n + 1, None), slice(-2, None),
                     slice(None, None, 2), slice(5, 3)):
            got = log.records[part]
            assert all(type(r) is AuditRecord for r in got)
            assert got == [log.records[i] for i in range(*part.indices(len(log)))]
