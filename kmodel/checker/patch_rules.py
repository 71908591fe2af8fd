"""The patch rule: a user's kubectl patch of an object that exists, of every patch type (a mixin of `KmodelMachine`).

    patch_object   kubectl patch <kind> <name> --type=merge|json|strategic -p '<patch>': a Deployment, the
                   StatefulSet db, a pod, a Service, a node or a ReplicaSet, with a document from the type's table
                   (kmodel.checker.patch_actions) built from the object as the rule reads it

The target is an index into the objects that exist now (taken modulo their number), the type an index into
`TYPES` (merge first: what every other rule sends), the row a number below `ROWS` taken modulo the rows of the
type's table that fit the object's kind; every draw shrinks toward the first object, a merge patch, the first
row. The document is
built when the rule runs and sent when kubectl gets to it, so a `test` of what was read may meet an object a
controller has written since.
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.access_rules import _listed
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.patch_actions import PATCH_TABLES, PATCHED, PatchObject, rows_for
from kmodel.checker.preconditions import once_per_step
from kmodel.objects import dump
from kmodel.checker.rulebook import RuleFamily, rule

#: the patch types drawn, simplest first: a merge patch is what the checker's other rules send
TYPES = ("merge", "json", "strategic")
#: a row is drawn in the range of the longest table and taken modulo the rows that fit: a small range, so that
#: every row comes up (an INDEX's draws crowd toward 0: most would take the first row)
ROWS = max(len(table) for table in PATCH_TABLES.values())


class PatchRules(RuleFamily):
    """The rule patching objects. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    def _patchable(self) -> list:
        return _listed(self.cluster, PATCHED)

    @precondition(once_per_step(lambda self: bool(self._patchable())))
    @rule(i=INDEX, patch_type=st.integers(0, len(TYPES) - 1), row=st.integers(0, ROWS - 1))
    def patch_object(self, i: int, patch_type: int, row: int) -> None:
        """Draws: an object that exists now (a Deployment, the StatefulSet `db`, a pod of the default or team
        namespace, a Service, a node, a ReplicaSet); a patch type (merge, json, strategic); a row of that type's table
        (`MERGE_PATCHES`, `JSON_PATCHES`, `STRATEGIC_PATCHES` in `kmodel/checker/patch_actions.py`) among those that
        fit the object's kind, built from the object as the rule reads it
        Does: `kubectl patch <kind> <name> --type=<type> -p '<patch>'` (`patch-object`, the rules are the mixin
        `PatchRules` of `kmodel/checker/patch_rules.py`): the action carries the patch document as canonical JSON
        text, so the trace shows the command typed and replays without the tables. JSON patches: the label
        `tier=canary` added; a `test` of the resourceVersion read when the rule ran, then the label (422 when
        anything wrote the object between the draw and kubectl's send); a `test` of the resourceVersion before it
        (422); `remove` of the label (422 where it is absent); a `test` of spec.replicas, then `replace`; `replace`
        of a pod's app label (its ReplicaSet releases it; 422 on a bare pod); `replace` of the first container's
        image (a rollout; allowed on a pod); `copy` and `move` of the app label to the label (422 where there is
        none); `remove` of the first finalizer (422 where there is none). Strategic merge patches: the label; the
        finalizer `example.com/hold` (a union with those there); the container `app` merged by name with the other
        image (a rollout); a container `sidecar` added, and deleted with `$patch: delete`; host port 8080 on
        containerPort 80, merged by containerPort; a UDP port 53 merged by port into a Service's (422: two ports need
        names unless the Service's are named already); a toleration (the list has no merge key and is replaced whole:
        a pod's defaulted tolerations would go, 422); a node's taints replaced whole by `dedicated=infra:NoSchedule`;
        the label removed (null); the `app` container's image with `$setElementOrder/containers` naming the
        containers there (as kubectl apply sends it); the finalizer with `$setElementOrder/finalizers`; a workload's
        labels replaced whole (`$patch: replace`) by its app label and the label. Merge patches: the label set, or
        removed (null); spec.replicas; the finalizers replaced whole by one; a required field nulled (a selector, a
        pod's containers, a Service's ports: 422); the containers list replaced whole by the `app` container with the
        other image (its ports go); a pod's `controller.kubernetes.io/pod-deletion-cost` annotation set to 100 or
        -100 (its ReplicaSet scales the cheaper pods down first); the ownerReferences removed (a ReplicaSet or pod
        orphaned: its controller adopts it again while its labels match). A pod's spec may change only its images and gain tolerations, so the template
        rows are refused on a pod (422), as upstream refuses them
        Shrinks to: the first object (Deployment web) labelled by a merge patch; minimization drops a JSON patch's
        operations, or a merge or strategic patch's top-level keys, one at a time"""
        resource, ns, obj = pick(i, self._patchable())
        body = dump(obj)
        kind = TYPES[patch_type]
        _, doc = pick(row, rows_for(kind, body))
        self._do(PatchObject(resource, ns, obj.metadata.name, kind, doc))
