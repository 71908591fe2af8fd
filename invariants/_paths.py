"""Which way the invariants read: their shortcuts (the default) or the plain reference path beside each.

Some invariants take a shortcut where the plain way of reading would cost more and give the same answer: they
read a log's compact entries as they are stored instead of having the log build each entry's objects, or
share one reading of the same input between them within a check. Each shortcut keeps its plain path beside
it, taken when `REFERENCE` is true; tests/invariants/test_paths.py runs clusters and checker sessions both
ways and compares every check's answer, so the shortcuts stay exact.
"""

from __future__ import annotations

#: True: every invariant takes its plain reference path (tests set it to compare the two ways)
REFERENCE = False
