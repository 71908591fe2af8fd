"""The patch rule: a user's kubectl patch of an object that exists, of every patch type (a mixin of `KmodelMachine`).

    patch_object   kubectl patch <kind> <name> --type=merge|json|strategic -p '<patch>': a Deployment, the
                   StatefulSet db, a pod, a Service or a node, with a document from the type's table
                   (kmodel.checker.patch_actions) built from the object as the rule reads it

The target is an index into the objects that exist now (taken modulo their number), the type an index into
`TYPES` (merge first: what every other rule sends), the row a number below `ROWS` taken modulo the rows of the
type's table that fit the object's kind; every draw shrinks toward the first object, a merge patch, the first
row. The document is
built when the rule runs and sent when kubectl gets to it, so a `test` of what was read may meet an object a
controller has written since.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kmodel.checker.access_rules import _listed
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.patch_actions import PATCH_TABLES, PATCHED, PatchObject, rows_for
from kmodel.checker.preconditions import once_per_step
from kmodel.objects import dump

#: the patch types drawn, simplest first: a merge patch is what the checker's other rules send
TYPES = ("merge", "json", "strategic")
#: a row is drawn in the range of the longest table and taken modulo the rows that fit: a small range, so that
#: every row comes up (an INDEX's draws crowd toward 0: most would take the first row)
ROWS = max(len(table) for table in PATCH_TABLES.values())


class PatchRules:
    """The rule patching objects. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    cluster: Any
    _do: Any

    def _patchable(self) -> list:
        return _listed(self.cluster, PATCHED)

    @precondition(once_per_step(lambda self: bool(self._patchable())))
    @rule(i=INDEX, patch_type=st.integers(0, len(TYPES) - 1), row=st.integers(0, ROWS - 1))
    def patch_object(self, i: int, patch_type: int, row: int) -> None:
        resource, ns, obj = pick(i, self._patchable())
        body = dump(obj)
        kind = TYPES[patch_type]
        _, doc = pick(row, rows_for(kind, body))
        self._do("patch_object", PatchObject(resource, ns, obj.metadata.name, kind, doc))
