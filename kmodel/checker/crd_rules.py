"""The custom resource family's rules: a rule family of the checker's state machine (kmodel.checker.rulebook).

Theory of operation
-------------------
Each rule draws a few indices and turns them into one action of kmodel/checker/crd_actions.py, handed to the
session through `self._do` as machine.py's rules do; every index shrinks toward the simplest action (the
first Database, a valid object, no replicas, no propagation policy).

    apply_crd              the Database CRD (when it is not stored: applying it again is an unchanged patch)
    apply_database         a Database, valid (most draws) or broken in one drawn way (no precondition:
                           without the CRD, kubectl refuses it as unmapped)
    write_database_status  status.replicas through the status subresource, at times with a spec.replicas
                           the subresource ignores
    scale_database         spec.replicas, up to one past the schema's maximum, by kubectl scale or by a merge
                           or JSON patch of the scale subresource (which may send -1)
    delete_database        with a drawn propagation policy
    delete_crd             the CRD, and with it every Database

Only apply_crd has a precondition. The others name a Database (or the CRD) whether or not it is stored yet, as
delete_namespace does: kubectl runs the user's commands in order, so one drawn right after the apply that makes
its object reaches it, and one drawn without gets 404 (or kubectl's own refusal).

The invariants of invariants/crd.py check what these drive: every stored Database valid against its CRD,
stored under its CRD's scope, and none left once its CRD is deleted.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.crd_actions import (
    CRD_NAME, DATABASES, MAX_REPLICAS, SCALE_WAYS, SHAPES, ApplyCRD, ApplyDatabase, DeleteCRD, DeleteDatabase,
    ScaleDatabase, WriteDatabaseStatus,
)
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.rulebook import RuleFamily, rule


def shape_of(i: int) -> str:
    """The shape an INDEX draw names: each broken one at its own index, valid everywhere else (and at 0, where
    it shrinks), so most applied Databases are stored and the rules that need one can run."""
    return SHAPES[i] if i < len(SHAPES) else SHAPES[0]


class CrdRules(RuleFamily):
    """Rules for a CustomResourceDefinition and its objects (see the module docstring). Mixed into KmodelMachine,
    which provides `cluster` and `_do`."""


    def _crd_stored(self) -> bool:
        return self.cluster.get("customresourcedefinitions", "", CRD_NAME) is not None

    @precondition(once_per_step(lambda self: not self._crd_stored()))
    @rule()
    def apply_crd(self) -> None:
        self._do(ApplyCRD())

    @rule(i=INDEX, replicas=st.integers(0, MAX_REPLICAS), shape=INDEX)
    def apply_database(self, i: int, replicas: int, shape: int) -> None:
        self._do(ApplyDatabase(pick(i, DATABASES), replicas, shape_of(shape)))

    @rule(i=INDEX, replicas=st.integers(0, MAX_REPLICAS), spec=st.integers(0, 2 * MAX_REPLICAS + 1))
    def write_database_status(self, i: int, replicas: int, spec: int) -> None:
        # about half the draws (and the simplest) send no spec; the others a spec.replicas 0..MAX_REPLICAS
        spec_replicas = spec - MAX_REPLICAS - 1 if spec > MAX_REPLICAS else None
        self._do(WriteDatabaseStatus(pick(i, DATABASES), replicas, spec_replicas))

    @rule(i=INDEX, replicas=st.integers(-1, MAX_REPLICAS + 1), way=st.integers(0, len(SCALE_WAYS) - 1))
    def scale_database(self, i: int, replicas: int, way: int) -> None:
        how = SCALE_WAYS[way]
        self._do(ScaleDatabase(pick(i, DATABASES), max(replicas, 0) if how == "scale" else replicas, how))

    @rule(i=INDEX, policy=INDEX)
    def delete_database(self, i: int, policy: int) -> None:
        self._do(DeleteDatabase(pick(i, DATABASES), pick(policy, PROPAGATION)))

    @rule()
    def delete_crd(self) -> None:
        self._do(DeleteCRD())
