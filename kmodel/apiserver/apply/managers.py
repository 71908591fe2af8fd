"""Field managers: who owns which fields of an object (metadata.managedFields), and how an Apply or an Update
moves ownership (k8s.io/apimachinery/pkg/util/managedfields/internal over structured-merge-diff's merge.Updater,
Kubernetes 1.31).

A manager is identified by its name, operation (Apply or Update), apiVersion (Update only: an applier is the same
manager whatever version it applies) and subresource. Its entry holds its field set and the time it last took a
field.

* Update (create, update, non-apply patch): the fields the write added or changed become the manager's (joined to
  what it had); every other manager loses them, without conflict; fields the write removed leave every manager.
* Apply: the object is the configuration merged over the live object (merge.py); the applier's set becomes
  exactly the configuration's fields; fields it owned before and no longer applies are removed from the object
  unless another manager owns them too; a field the apply changes or adds that another manager owns is a
  conflict (409, `ApplyConflict`), unless force, which takes it from that manager. Applying a value equal to the
  live one shares the field (no conflict).
* A write that would change nothing but an entry's time keeps the stored entries, so it stores nothing.
* An object with no managedFields at all that is applied to is first given one Update manager,
  "before-first-apply", owning everything it holds (so an apply cannot silently take fields set before managers
  were recorded).

Fields no manager ever owns (upstream's StripMetaManager): apiVersion, kind, metadata itself and its name,
namespace, uid, resourceVersion, generation, creationTimestamp, selfLink, managedFields. A resource with a status
subresource ignores status on its main endpoint, and everything but status on /status (the strategies'
GetResetFields).

Entries are kept in upstream's order: by operation (Apply first), then time in seconds, manager, apiVersion,
subresource. Not modelled: the cap of 10 Update managers merged into "ancient-changes", converting field sets
between API versions (one version per resource is served).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional, Sequence

import attrs

from kmodel.apiserver.apply.fieldpath import (FieldSet, Path, compare, from_fields_v1, iteration_key, path_string,
                                              to_fields_v1, under, walk)
from kmodel.apiserver.apply.merge import merge, remove
from kmodel.apiserver.apply.schema import Shape
from kmodel.objects.logical_time import format_time, parse_time

APPLY, UPDATE = "Apply", "Update"
BEFORE_FIRST_APPLY = "before-first-apply"
STRIPPED = frozenset({(("f", "apiVersion"),), (("f", "kind"),), (("f", "metadata"),)} | {
    (("f", "metadata"), ("f", name)) for name in ("name", "namespace", "creationTimestamp", "selfLink", "uid",
                                                  "clusterName", "generation", "managedFields", "resourceVersion")})
_STATUS = (("f", "status"),)


@attrs.frozen
class Entry:
    """One managedFields entry; `time` in logical milliseconds (None: never took a field)."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: Optional[int] = None
    subresource: str = ""

    @property
    def identity(self) -> tuple:
        """What makes two entries the same manager (BuildManagerIdentifier)."""
        return (self.manager, self.operation, "" if self.operation == APPLY else self.api_version,
                self.subresource)

    def identifier(self) -> str:
        """The manager identifier upstream sorts conflicts by: the entry's JSON without fields and time."""
        out = {"manager": self.manager, "operation": self.operation}
        if self.operation != APPLY:
            out["apiVersion"] = self.api_version
        if self.subresource:
            out["subresource"] = self.subresource
        return json.dumps(out, separators=(",", ":"))

    def printed(self) -> str:
        """printManager: ``"kubectl"``, ``"kube-controller-manager" using apps/v1``."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


@attrs.frozen
class Scope:
    """What an operation on one object needs: its shape, the apiVersion it is served at, the subresource, and
    whether the resource has a status subresource (whose fields its main endpoint ignores)."""

    shape: Shape
    api_version: str
    subresource: str = ""
    has_status: bool = False

    def owned(self, paths: Iterable[Path]) -> frozenset:
        """`paths` without the fields no manager owns and those this endpoint ignores."""
        kept = set(paths) - STRIPPED
        if self.subresource == "status":
            return frozenset(p for p in kept if p[:1] == _STATUS)
        if self.has_status:
            kept -= under(kept, _STATUS)
        return frozenset(kept)


class ApplyConflict(Exception):
    """An apply changes fields other managers own: `conflicts` is [(entry, path)] in upstream's order."""

    def __init__(self, conflicts: Sequence[tuple[Entry, Path]]) -> None:
        super().__init__(conflict_message(conflicts))
        self.conflicts = list(conflicts)


def conflict_message(conflicts: Sequence[tuple[Entry, Path]]) -> str:
    """internal.NewConflictError's message."""
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {entry.printed()}: {path_string(path)}"
    lines = []
    by_manager: dict[str, list] = {}
    for entry, path in conflicts:
        by_manager.setdefault(entry.identifier(), []).append((entry, path))
    for ident in sorted(by_manager):
        lines.append(f"conflicts with {by_manager[ident][0][0].printed()}:")
        lines.extend(f"- {path_string(path)}" for _, path in by_manager[ident])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# -- the operations -----------------------------------------------------------------------------------------

def update(entries: Sequence[Entry], live: Any, new: Any, manager: str, scope: Scope, now: int) -> list[Entry]:
    """The entries after an Update by `manager` of `live` (None for a create) into `new` (JSON forms)."""
    if live is None:
        live = zero_of(new, scope.shape)
    old_nodes = walk(live, scope.shape)[0]
    new_nodes = walk(new, scope.shape)[0]
    added, modified, removed = compare(old_nodes, new_nodes)
    taken = scope.owned(added | modified)
    removed = frozenset(removed)
    me = Entry(manager, UPDATE, scope.api_version, frozenset(), None, scope.subresource)
    out, previous = [], None
    for entry in entries:
        if entry.identity == me.identity:
            previous = entry
            continue
        out.append(_without(entry, taken | removed))
    if previous is not None:
        mine = _without(previous, removed)
        if taken:
            mine = attrs.evolve(mine, fields=mine.fields | taken, time=now)
        out.append(mine)
    elif taken:
        out.append(attrs.evolve(me, fields=frozenset(taken), time=now))
    return ordered(e for e in out if e.fields)


def apply(entries: Sequence[Entry], live: Any, config: Any, manager: str, force: bool, scope: Scope,
          now: int) -> tuple[Any, list[Entry]]:
    """(the object, the entries) after `manager` applies `config` to `live` (None: the object is created);
    raises ApplyConflict."""
    if live is not None and not entries:
        held = scope.owned(walk(live, scope.shape)[1])
        entries = [Entry(BEFORE_FIRST_APPLY, UPDATE, scope.api_version, held, None, scope.subresource)] if held else []
    me = Entry(manager, APPLY, scope.api_version, frozenset(), now, scope.subresource)
    previous = next((e for e in entries if e.identity == me.identity), None)
    others = [e for e in entries if e.identity != me.identity]
    applied = scope.owned(walk(config, scope.shape)[1])
    merged = merge(live, config, scope.shape)
    if previous is not None:
        owned = set(applied).union(*(e.fields for e in others))
        merged = remove(merged, scope.shape, previous.fields - owned, owned)
    added, modified, removed = compare(walk(live, scope.shape)[0], walk(merged, scope.shape)[0])
    changed = scope.owned(added | modified)
    conflicts = [(e, p) for e in others for p in e.fields & changed]
    if conflicts and not force:
        conflicts.sort(key=lambda c: (c[0].identifier(), iteration_key(c[1])))
        raise ApplyConflict(conflicts)
    out = [_without(e, changed | frozenset(removed)) for e in others]
    out.append(attrs.evolve(me, fields=applied))
    result = ordered(e for e in out if e.fields)
    if merged == live and _untimed(result) == _untimed(entries):
        # nothing but the applier's time would change: the write is a no-op (upstream's
        # IgnoreManagedFieldsTimestampsTransformer keeps the stored timestamps)
        return merged, list(entries)
    return merged, result


def _untimed(entries: Iterable[Entry]) -> set:
    return {attrs.evolve(e, time=None) for e in entries}


def zero_of(obj: Any, shape: Shape) -> dict:
    """The JSON of the kind's empty object, as far as `obj` has it: the fields Go writes even when empty (structs
    that are not pointers, as {}; fields without omitempty, as null) are there, so a create does not count them as
    added (upstream compares the new object with the kind's New())."""
    out: dict = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            if shape.written_empty(key):
                out[key] = zero_of(value, shape.child(key)[0]) if isinstance(value, dict) else None
    return out


def _without(entry: Entry, paths: frozenset) -> Entry:
    if entry.fields.isdisjoint(paths):
        return entry
    return attrs.evolve(entry, fields=entry.fields - paths)


def ordered(entries: Iterable[Entry]) -> list[Entry]:
    """sortEncodedManagedFields: operation, time in seconds, manager, apiVersion, subresource."""
    return sorted(entries, key=lambda e: (e.operation, (e.time or 0) // 1000, e.manager, e.api_version,
                                          e.subresource))


# -- metadata.managedFields ---------------------------------------------------------------------------------

def encode(entries: Sequence[Entry]) -> list[dict]:
    """The entries as metadata.managedFields JSON."""
    out = []
    for e in entries:
        item: dict[str, Any] = {"manager": e.manager, "operation": e.operation, "apiVersion": e.api_version}
        if e.time is not None:
            item["time"] = format_time(e.time - e.time % 1000)  # metav1.Time: whole seconds
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = to_fields_v1(e.fields)
        if e.subresource:
            item["subresource"] = e.subresource
        out.append(item)
    return out


class ManagedFieldsError(ValueError):
    """metadata.managedFields that do not decode (upstream answers the write 400... and resets them)."""


def decode(managed: Any) -> list[Entry]:
    """The entries of metadata.managedFields JSON (None or empty: none)."""
    out = []
    for item in managed or ():
        try:
            fields = from_fields_v1(item.get("fieldsV1") or {})
            when = item.get("time")
            out.append(Entry(str(item.get("manager") or ""), str(item.get("operation") or ""),
                             str(item.get("apiVersion") or ""), fields, parse_time(when) if when else None,
                             str(item.get("subresource") or "")))
        except (ValueError, AttributeError, TypeError) as e:
            raise ManagedFieldsError(f"metadata.managedFields: {e}") from None
    return out
