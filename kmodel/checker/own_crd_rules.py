"""The rules of a component's own custom kinds: a mixin the campaign adds when a component brings a CRD.

Theory of operation
-------------------
kmodel/checker/run.py adds `OwnCrdRules` to the machine's bases when a component of its cluster creates a
CustomResourceDefinition at boot (own_crd_actions.own_kinds): an operator registered with `kmodel check
--component`, or named in a `kmodel_test` machine's configuration. A cluster without one runs the machine
without these rules, so its exploration is that of the rules it has.

Each rule draws an INDEX into the (kind, object name) pairs of those kinds, and its content from the kind's
structural schema (schema_draws.py): valid in most draws, broken in one listed way in some, so that the API
server's 422 (and 400 for an unknown field) is exercised; each draw shrinks toward the first object and a
valid value with optional fields left out.

    apply_custom_object   a create, or an update of a stored one (the spec within or outside the schema)
    write_custom_status   the status subresource (kinds that have it)
    scale_custom_object   the scale subresource (kinds that have it), 0..MAX_SCALE replicas
    delete_custom_object  with a drawn propagation policy
    delete_own_crd        the CRD itself (while stored), and with it every object of its kind: rare (one draw in
                          DELETE_CRD_ODDS acts), since nothing creates the CRD again (own_crd_actions.py)

Like the Database rules (crd_rules.py), they name an object whether or not it is stored yet: one that is not
gets 404, as kubectl would (and once the CRD is deleted, kubectl refuses the kind as unmapped). The operator's
own invariants (its registration's) and the custom resource invariants (invariants/crd.py: no object of a
deleted CRD left once settled) check what they drive.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.own_crd_actions import (
    MAX_SCALE, ApplyCustomObject, CustomKind, DeleteCustomObject, DeleteOwnCRD, ScaleCustomObject, WriteCustomStatus,
    canonical, own_kinds,
)
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.schema_draws import drawn_part
from kmodel.checker.rulebook import RuleFamily, rule


#: delete_own_crd acts on one of this many draws and does nothing on the others: a deleted CRD is not created
#: again, so the rest of the example drives no object of its kind, and most examples should keep it
DELETE_CRD_ODDS = 10


def _drawn(data: Any, kind: CustomKind, part: str, breakage: int) -> Any:
    """A value of `kind`'s top-level property `part` drawn from its schema, broken as the `breakage` draw says."""
    return drawn_part(data, kind.part(part), part, breakage, f"{kind.kind}.{part}")


class OwnCrdRules(RuleFamily):
    """Rules for the objects of the cluster's components' own CRDs (see the module docstring). Mixed into the
    campaign's machine, which provides `config`, `cluster` and `_do`."""

    in_every_machine: ClassVar[bool] = False  # kmodel.checker.run adds it when the cluster calls for it

    config: Any
    _own_kinds: ClassVar[dict] = {}  # the components of a configuration -> their kinds (read once)

    def _kinds(self) -> list[CustomKind]:
        components = tuple(self.config.components)
        if components not in OwnCrdRules._own_kinds:
            OwnCrdRules._own_kinds[components] = own_kinds(components)
        return OwnCrdRules._own_kinds[components]

    def _objects(self, subresource: str = "") -> list[tuple[CustomKind, str]]:
        """(kind, object name) for every object the rules name, of the kinds with `subresource` if given."""
        return [(kind, name) for kind in self._kinds() if not subresource or getattr(kind, subresource)
                for name in kind.names]

    @rule(i=INDEX, breakage=INDEX, data=st.data())
    def apply_custom_object(self, i: int, breakage: int, data: Any) -> None:
        kind, name = pick(i, self._objects())
        content = _drawn(data, kind, "spec", breakage)
        self._do(ApplyCustomObject(kind.api_version, kind.kind, kind.namespace, name,
                                                          canonical(content)))

    @precondition(lambda self: bool(self._objects("status")))
    @rule(i=INDEX, breakage=INDEX, data=st.data())
    def write_custom_status(self, i: int, breakage: int, data: Any) -> None:
        kind, name = pick(i, self._objects("status"))
        status = _drawn(data, kind, "status", breakage)["status"]
        self._do(WriteCustomStatus(kind.plural, kind.namespace, name, canonical(status)))

    @precondition(lambda self: bool(self._objects("scale")))
    @rule(i=INDEX, replicas=st.integers(0, MAX_SCALE))
    def scale_custom_object(self, i: int, replicas: int) -> None:
        kind, name = pick(i, self._objects("scale"))
        self._do(ScaleCustomObject(kind.plural, kind.namespace, name, replicas))

    @rule(i=INDEX, policy=INDEX)
    def delete_custom_object(self, i: int, policy: int) -> None:
        kind, name = pick(i, self._objects())
        self._do(DeleteCustomObject(kind.plural, kind.namespace, name,
                                                            pick(policy, PROPAGATION)))

    def _stored_kinds(self) -> list[CustomKind]:
        """The kinds whose CRD is stored."""
        return [kind for kind in self._kinds()
                if self.cluster.get("customresourcedefinitions", "", kind.crd_name) is not None]

    @precondition(once_per_step(lambda self: bool(self._stored_kinds())))
    @rule(i=INDEX, chance=st.integers(0, DELETE_CRD_ODDS - 1))
    def delete_own_crd(self, i: int, chance: int) -> None:
        if chance != DELETE_CRD_ODDS - 1:  # most draws, and what a draw shrinks toward: nothing (DELETE_CRD_ODDS)
            return
        self._do(DeleteOwnCRD(pick(i, self._stored_kinds()).crd_name))
