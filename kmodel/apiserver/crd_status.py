"""A CustomResourceDefinition's status as apiextensions-apiserver's controllers write it (Kubernetes 1.30-1.32).

Theory of operation
-------------------
Upstream, three controllers watch CRDs:

* the naming controller (pkg/controller/status/naming_controller.go) checks the requested names against the
  other CRDs of the group and writes `acceptedNames` and the `NamesAccepted` condition (True, reason
  NoConflicts, "no conflicts found"; or False, reason PluralConflict / KindConflict, `"x" is already in use`);
* the establishing controller (pkg/controller/establish) sets `Established` True (reason
  InitialNamesAccepted, "the initial names have been accepted") once the names are accepted; from then on
  the resource is served;
* the finalizing controller (pkg/controller/finalizer) deletes every custom object of a CRD being deleted,
  then removes the `customresourcecleanup.apiextensions.k8s.io` finalizer.

The model runs the first two as a second write right after the API server stores a new or changed CRD
(`accept_names`): the CRD exists for one revision without conditions, as upstream's does until its
controllers catch up, but no request can arrive in between. Names are checked against every CRD and every
built-in resource, whatever the group, because the model keys resources by plural alone. When a CRD is
removed, the naming controller requeues the other CRDs of its group (requeueAllOtherGroupCRDs): each whose
names are not all accepted (`names_pending`) is checked again, in name order, so one refused for a conflict
with the removed CRD is accepted and Established (customresource_cleanup.names_freed; the model looks at
every group, for the reason above).
The finalizing controller's work is in customresource_cleanup.py.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.objects.apiextensions import (
    CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames,
)

NAMES_ACCEPTED, ESTABLISHED, TERMINATING = "NamesAccepted", "Established", "Terminating"


def requested_names(crd: CustomResourceDefinition) -> CustomResourceDefinitionNames:
    """spec.names with upstream's defaults: singular = lower-case kind, listKind = kind + "List"."""
    names = crd.spec.names
    return attrs.evolve(names, singular=names.singular or names.kind.lower(),
                        list_kind=names.list_kind or f"{names.kind}List")


def name_conflict(crd: CustomResourceDefinition, others: list[CustomResourceDefinition]) -> Optional[tuple[str, str]]:
    """(reason, message) when the CRD's names are taken, else None."""
    names = crd.spec.names
    if names.plural in RESOURCES:
        return "PluralConflict", f'"{names.plural}" is already in use'
    for other in others:
        if other.metadata.name == crd.metadata.name:
            continue
        accepted = other.status.accepted_names
        if accepted.plural == names.plural or names.plural in accepted.short_names:
            return "PluralConflict", f'"{names.plural}" is already in use'
        if other.spec.group == crd.spec.group and accepted.kind == names.kind:
            return "KindConflict", f'"{names.kind}" is already in use'
    return None


def names_pending(crd: CustomResourceDefinition) -> bool:
    """Whether some requested name is not accepted yet: the CRDs the naming controller looks at again when a CRD
    is deleted and frees its names (its sync skips a CRD whose spec.names equal status.acceptedNames)."""
    return requested_names(crd) != crd.status.accepted_names


def _set_condition(conditions: tuple, cond: CustomResourceDefinitionCondition) -> tuple:
    """SetCRDCondition: replace the condition of that type (keeping lastTransitionTime when the status holds)."""
    out = []
    placed = False
    for c in conditions:
        if c.type == cond.type:
            out.append(attrs.evolve(cond, last_transition_time=c.last_transition_time)
                       if c.status == cond.status else cond)
            placed = True
        else:
            out.append(c)
    if not placed:
        out.append(cond)
    return tuple(out)


def accept_names(crd: CustomResourceDefinition, others: list[CustomResourceDefinition],
                 now: int) -> CustomResourceDefinition:
    """The CRD with the naming and establishing controllers' status (the CRD itself when nothing changes)."""
    status = crd.status
    conflict = name_conflict(crd, others)
    conditions = status.conditions
    if conflict is None:
        accepted = requested_names(crd)
        conditions = _set_condition(conditions, CustomResourceDefinitionCondition(
            NAMES_ACCEPTED, "True", now, "NoConflicts", "no conflicts found"))
        if crd.metadata.deletion_timestamp is None:
            conditions = _set_condition(conditions, CustomResourceDefinitionCondition(
                ESTABLISHED, "True", now, "InitialNamesAccepted", "the initial names have been accepted"))
    else:
        accepted = status.accepted_names
        conditions = _set_condition(conditions, CustomResourceDefinitionCondition(
            NAMES_ACCEPTED, "False", now, conflict[0], conflict[1]))
        if not status.is_true(ESTABLISHED):
            conditions = _set_condition(conditions, CustomResourceDefinitionCondition(
                ESTABLISHED, "False", now, "NotAccepted", "not all names are accepted"))
    new_status = attrs.evolve(status, accepted_names=accepted, conditions=conditions)
    if new_status == status:
        return crd
    return attrs.evolve(crd, status=new_status)


def with_terminating(crd: CustomResourceDefinition, now: int, objects_left: int) -> CustomResourceDefinition:
    """The Terminating condition the CRD registry sets on delete and the finalizer updates."""
    if objects_left:
        cond = CustomResourceDefinitionCondition(TERMINATING, "True", now, "InstanceDeletionInProgress",
                                                 "CustomResource deletion is in progress")
    else:
        cond = CustomResourceDefinitionCondition(TERMINATING, "True", now, "InstanceDeletionPending",
                                                 "CustomResourceDefinition marked for deletion; CustomResource "
                                                 "deletion will begin soon")
    return attrs.evolve(crd, status=attrs.evolve(crd.status, conditions=_set_condition(crd.status.conditions,
                                                                                         cond)))


def stored_versions(crd: CustomResourceDefinition) -> CustomResourceDefinition:
    """status.storedVersions gains the storage version (the CRD strategy's PrepareForCreate/Update)."""
    storage = crd.storage_version()
    if storage is None or storage.name in crd.status.stored_versions:
        return crd
    return attrs.evolve(crd, status=attrs.evolve(crd.status,
                                                  stored_versions=crd.status.stored_versions + (storage.name,)))


def is_crd(obj: Any) -> bool:
    return isinstance(obj, CustomResourceDefinition)
