"""The custom resource family's rules: a rule family of the checker's state machine (kmodel.checker.rulebook).

Theory of operation
-------------------
Each rule draws a few indices and turns them into an action of kmodel/checker/crd_actions.py (two for a rule
that first makes the Database it acts on), handed to the session through `self._do` as machine.py's rules do; every index shrinks toward the simplest action (the
first Database, a valid object, no replicas, no propagation policy).

    apply_crd              the Database CRD, in the release of examples/crd.yaml (when none is stored and
                           no apply of it is queued at kubectl: applying it again would say nothing new)
    apply_database         without an Established CRD, the CRD (as apply_crd) then a valid Database: the
                           sentence that installs the kind; with one, a Database valid, broken in one drawn
                           way, or held by a finalizer; or one whose spec is drawn from the stored CRD's schema (schema_draws.py), with a
                           status at times; or a drawn release of the CRD applied with the stored Database, its
                           replicas kept and its engine switched (ApplyCRDAndDatabase: where the tightened
                           release refuses the replicas, the update leaves them as they are, and validation
                           ratcheting lets it through)
    write_database_status  status.replicas (and status.selector at times) through the status subresource, at
                           times with a spec.replicas the subresource ignores
    scale_database         spec.replicas, up to one past the schema's maximum, by kubectl scale or by a merge
                           or JSON patch of the scale subresource (which may send -1)
                           (both apply the Database first when it is not stored, and the CRD before it when
                           none is Established: `_install`)
    delete_database        with a drawn propagation policy
    delete_crd             the CRD with a drawn propagation policy, and with it every Database; while it is
                           Terminating on Databases a finalizer holds (the `held` shape), their finalizers
                           taken off by hand instead (ReleaseDatabase), the known way to unstick it

delete_database runs while the CRD is Established (`ESTABLISHED`), the only time a Database can be stored,
and names one whether or not it is stored yet (404: kubectl runs the user's commands in order, so one drawn
right after the apply that makes its object reaches it). delete_crd has no precondition (without a CRD: 404);
with Databases stored, the CRD stays Terminating while the API server deletes them, and an apply queued behind
it is refused (405) or unmapped.

The invariants of invariants/crd.py check what these drive: every stored Database valid against its CRD,
stored under its CRD's scope, and none left once its CRD is deleted.
"""

from __future__ import annotations

from typing import Any, Optional

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.access_actions import HOLD
from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.actions import Action
from kmodel.checker.crd_actions import (
    CRD_NAME, CRD_RELEASES, DATABASES, ENGINES, GROUP, MAX_REPLICAS, PLURAL, SCALE_WAYS, SHAPES, ApplyCRD,
    ApplyCRDAndDatabase, ApplyDatabase, DeleteCRD, DeleteDatabase, ReleaseDatabase, ScaleDatabase,
    WriteDatabaseStatus,
)
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.own_crd_actions import ApplyCustomObject, canonical
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.rulebook import RuleFamily, rule
from kmodel.checker.schema_draws import drawn_part
from kmodel.cluster.kubectl import Apply
from kmodel.objects.frozendict import thaw

#: apply_database's `shape` draw past SHAPES: from KEEP on, one index per release of the CRD, applied with the
#: stored Database (ApplyCRDAndDatabase); at every index after those, a spec drawn from the CRD's schema (most
#: draws: the API server's own validation, defaulting and pruning)
KEEP = len(SHAPES)
DRAWN = KEEP + len(CRD_RELEASES)
#: the release apply_crd creates the CRD in
FIRST_RELEASE = "example"


def shape_of(i: int) -> str:
    """The shape an INDEX draw names below KEEP: each broken one at its own index, valid at 0 (where it
    shrinks)."""
    return SHAPES[i] if i < len(SHAPES) else SHAPES[0]


def _established(machine: Any) -> bool:
    return machine._established()


#: the precondition of the rules on Databases, worked out once per step for all of them
ESTABLISHED = once_per_step(_established)


class CrdRules(RuleFamily):
    """Rules for a CustomResourceDefinition and its objects (see the module docstring). Mixed into KmodelMachine,
    which provides `cluster` and `_do`."""

    def _crd(self) -> Any:
        return self.cluster.get("customresourcedefinitions", "", CRD_NAME)

    def _crd_stored(self) -> bool:
        return self._crd() is not None

    def _established(self) -> bool:
        crd = self._crd()
        return crd is not None and crd.status.is_true("Established")

    def _apply_queued(self, kind: str, name: str) -> bool:
        """An apply of the `kind` called `name` that kubectl has not answered yet."""
        return any(isinstance(c, Apply) and isinstance(c.obj, dict) and c.obj.get("kind") == kind
                   and (c.obj.get("metadata") or {}).get("name") == name for c in self.cluster.kubectl.unanswered())

    def _crd_apply_queued(self) -> bool:
        return self._apply_queued("CustomResourceDefinition", CRD_NAME)

    @precondition(once_per_step(lambda self: not self._crd_stored() and not self._crd_apply_queued()))
    @rule()
    def apply_crd(self) -> None:
        self._do(ApplyCRD(FIRST_RELEASE))

    @rule(i=INDEX, replicas=st.integers(0, MAX_REPLICAS), shape=INDEX, data=st.data())
    def apply_database(self, i: int, replicas: int, shape: int, data: Any) -> None:
        name = pick(i, DATABASES)
        if not self._established():
            self._do(self._install(name, replicas))
        elif shape < KEEP:
            self._do(ApplyDatabase(name, replicas, shape_of(shape)))
        elif shape < DRAWN:
            self._do(self._upgrade(CRD_RELEASES[shape - KEEP], name, replicas))
        else:
            self._do(self._drawn_database(name, data))

    def _install(self, name: str, replicas: int = 1) -> Optional[Action]:
        """What makes the Database `name` stored, as a user does before acting on it (swarm testing turns each
        rule off in about half the examples, so the rule that would have made it often does not run): None when
        it is stored or an apply of it is queued; the CRD then the Database while no CRD is Established (the
        Database alone while an apply of the CRD is queued: kubectl maps it, or refuses it as unmapped, when its
        turn comes)."""
        if self.cluster.get(PLURAL, "default", name) is not None or self._apply_queued("Database", name):
            return None
        if self._established() or self._crd_apply_queued():
            return ApplyDatabase(name, replicas)
        return ApplyCRDAndDatabase(FIRST_RELEASE, name, replicas)

    def _upgrade(self, release: str, name: str, replicas: int) -> ApplyCRDAndDatabase:
        """`release` of the CRD applied with the stored Database `name`, its replicas as stored and the other
        engine (`replicas` and the first engine when none is stored)."""
        stored = self.cluster.get(PLURAL, "default", name)
        spec = thaw(stored.content).get("spec") if stored is not None else None
        if not isinstance(spec, dict):
            return ApplyCRDAndDatabase(release, name, replicas)
        kept = spec.get("replicas")
        engine = ENGINES[1] if spec.get("engine") == ENGINES[0] else ENGINES[0]
        valid_count = isinstance(kept, int) and not isinstance(kept, bool) and 0 <= kept <= MAX_REPLICAS
        return ApplyCRDAndDatabase(release, name, kept if valid_count else replicas, engine)

    def _drawn_database(self, name: str, data: Any) -> ApplyCustomObject:
        """A Database whose spec (and, one draw in two, status) is drawn from the stored CRD's storage schema,
        broken in one way at times (schema_draws.py)."""
        crd = self._crd()
        version = crd.storage_version() if crd is not None else None
        schema = thaw(version.open_api_schema() or {}) if version is not None else {}
        parts = schema.get("properties") or {}
        content = drawn_part(data, parts.get("spec") or {}, "spec", data.draw(INDEX, label="breakage"),
                             "Database.spec")
        if "status" in parts and data.draw(st.booleans(), label="with status"):
            content.update(drawn_part(data, parts["status"], "status", 0, "Database.status"))
        return ApplyCustomObject(f"{GROUP}/{version.name if version is not None else 'v1'}", "Database", "default",
                                 name, canonical(content))

    @rule(i=INDEX, replicas=st.integers(0, MAX_REPLICAS), spec=st.integers(0, 2 * MAX_REPLICAS + 1),
          selector=st.booleans())
    def write_database_status(self, i: int, replicas: int, spec: int, selector: bool) -> None:
        # about half the draws (and the simplest) send no spec; the others a spec.replicas 0..MAX_REPLICAS
        spec_replicas = spec - MAX_REPLICAS - 1 if spec > MAX_REPLICAS else None
        name = pick(i, DATABASES)
        self._do(self._install(name))
        self._do(WriteDatabaseStatus(name, replicas, spec_replicas, selector))

    @rule(i=INDEX, replicas=st.integers(-1, MAX_REPLICAS + 1), way=st.integers(0, len(SCALE_WAYS) - 1))
    def scale_database(self, i: int, replicas: int, way: int) -> None:
        how, name = SCALE_WAYS[way], pick(i, DATABASES)
        self._do(self._install(name))
        self._do(ScaleDatabase(name, max(replicas, 0) if how == "scale" else replicas, how))

    @precondition(ESTABLISHED)
    @rule(i=INDEX, policy=INDEX)
    def delete_database(self, i: int, policy: int) -> None:
        self._do(DeleteDatabase(pick(i, DATABASES), pick(policy, PROPAGATION)))

    def _held_while_terminating(self) -> list[str]:
        """The Databases a finalizer holds while the CRD is Terminating (none while it is not)."""
        crd = self._crd()
        if crd is None or crd.metadata.deletion_timestamp is None:
            return []
        return [d.metadata.name for d in self.cluster.objects(PLURAL, "default") if HOLD in d.metadata.finalizers]

    @rule(policy=INDEX)
    def delete_crd(self, policy: int) -> None:
        held = self._held_while_terminating()
        if held:  # the CRD is stuck on them: their finalizers taken off by hand, as one does
            self._do(ReleaseDatabase(pick(policy, held)))
        else:
            self._do(DeleteCRD(pick(policy, PROPAGATION)))
