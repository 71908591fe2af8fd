"""The patch rule: a user's kubectl patch of an object that exists, of every patch type (a mixin of `KmodelMachine`).

    patch_object   kubectl patch <kind> <name> --type=merge|json|strategic -p '<patch>': a Deployment, the
                   StatefulSet db, a pod, a Service or a node, with a document from the type's table
                   (kmodel.checker.patch_actions) built from the object as the rule reads it

The target is an index into the objects that exist now (taken modulo their number), the type an index into
`TYPES` (merge first: what every other rule sends), the row an index into the rows of the type's table that fit
the object's kind; every draw shrinks toward the first object, a merge patch, the first row. The document is
built when the rule runs and sent when kubectl gets to it, so a `test` of what was read may meet an object a
controller has written since.
"""

from __future__ import annotations

from typing import Any

from hypothesis.stateful import precondition, rule

from kmodel.checker.access_rules import _listed
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.patch_actions import PATCHED, PatchObject, rows_for
from kmodel.checker.preconditions import once_per_step
from kmodel.objects import dump

#: the patch types drawn, simplest first: a merge patch is what the checker's other rules send
TYPES = ("merge", "json", "strategic")


class PatchRules:
    """The rule patching objects. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    cluster: Any
    _do: Any

    def _patchable(self) -> list:
        return _listed(self.cluster, PATCHED)

    @precondition(once_per_step(lambda self: bool(self._patchable())))
    @rule(i=INDEX, patch_type=INDEX, row=INDEX)
    def patch_object(self, i: int, patch_type: int, row: int) -> None:
        resource, ns, obj = pick(i, self._patchable())
        body = dump(obj)
        kind = pick(patch_type, TYPES)
        _, doc = pick(row, rows_for(kind, body))
        self._do("patch_object", PatchObject(resource, ns, obj.metadata.name, kind, doc))
