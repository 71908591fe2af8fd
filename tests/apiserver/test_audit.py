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
