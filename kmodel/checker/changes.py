"""What each step of a replay changed in the cluster, as TLC prints the state along an error trace.

Theory of operation
-------------------
A `ChangeRecorder` looks at the cluster before the first step and after each one, as an observer outside the
model: the live objects in the store (read without a request, so the store's history, which invariants read,
is untouched: kmodel.apiserver.storeview), the components that are down, and the groups of endpoints cut off
by a partition. Two looks in a row give a `StepChanges` (kmodel.report.story): the objects created, updated
(another mod revision) and deleted, by reference ``resource/namespace/name``. A look keeps references to the
store's KeyValues, which are never copied nor changed, so it costs one dict per step.

The recorder also remembers the last version of every object it saw and when one was deleted: what
`object_texts` searches for the values a violation names (kmodel.report.focus) and what `final_states` shows.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import attrs
import yaml

from kmodel.apiserver.resources import resource_of
from kmodel.apiserver.storeview import current_prefix
from kmodel.objects.codec import dump
from kmodel.objects.unstructured import CustomObject
from kmodel.report.story import ObjectState, StepChanges


def object_ref(value: Any, key: str = "") -> str:
    """``resource/namespace/name`` (``resource/name`` when cluster-scoped) of a stored object; a custom object's
    resource is the plural its etcd key names (``/registry/<group>/<plural>/...``)."""
    meta = value.metadata
    if isinstance(value, CustomObject):
        resource = key.split("/")[3]
    else:
        resource = resource_of(value).name
    return f"{resource}/{meta.namespace}/{meta.name}" if meta.namespace else f"{resource}/{meta.name}"


@attrs.frozen
class Look:
    """The cluster at one moment: live objects (ref -> KeyValue, in key order), components down, partitions."""

    objects: dict
    down: tuple[str, ...]
    partitions: tuple[str, ...]
    time_ms: int


def look(cluster: Any) -> Look:
    objects = {}
    for kv in current_prefix(cluster.store, "/"):
        try:
            objects[object_ref(kv.value, kv.key)] = kv
        except (AttributeError, KeyError, IndexError):  # not an API object (nothing the model writes today)
            objects[kv.key] = kv
    loop = cluster.loop
    sides = tuple(", ".join(side) for side in loop.network.reachability.sides())
    return Look(objects, tuple(loop.down_components()), sides, cluster.now)


def difference(step: int, before: Look, after: Look) -> StepChanges:
    created, updated, deleted = [], [], []
    for ref, kv in after.objects.items():
        old = before.objects.get(ref)
        if old is None:
            created.append(ref)
        elif old.create_revision != kv.create_revision:
            deleted.append(ref)
            created.append(ref)
        elif old.mod_revision != kv.mod_revision:
            updated.append(ref)
    deleted.extend(ref for ref in before.objects if ref not in after.objects)
    return StepChanges(step, sorted(created), sorted(updated), sorted(deleted), after.down, after.partitions,
                       after.time_ms)


def _yaml(value: Any) -> str:
    try:
        shape = dump(value)
    except Exception:  # a value the codec does not know: its repr says what it is
        return repr(value)
    return yaml.safe_dump(shape, sort_keys=False, default_flow_style=False, width=100).rstrip("\n")


def _command_ref(response: Any) -> str:
    """The object a kubectl command's successful answer carries, as a reference ("" when it carries none, or one
    of a custom resource, whose plural only its etcd key tells)."""
    body = response.body
    if not response.ok or getattr(body, "metadata", None) is None or isinstance(body, CustomObject):
        return ""
    try:
        return object_ref(body)
    except KeyError:  # not a stored kind
        return ""


class ChangeRecorder:
    """Looks at a cluster before the first step (`__init__`) and after each one (`after_step`).

    It also follows kubectl's commands, which kubectl runs one at a time in the order they were submitted: the
    step that submitted each one (by its place in that order), and when its answer came back, the object it
    changed, so that a step's `landed` can name what an earlier step's command changed in it."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self._last = look(cluster)
        kubectl = cluster.kubectl
        #: the step that submitted each kubectl command, in kubectl's order (-1: before the first step)
        self._sent_in: list[int] = [-1] * (len(kubectl.results) + len(kubectl.unanswered()))
        self._answered = len(kubectl.results)
        self.changes: list[StepChanges] = []
        self.last_seen: dict[str, Any] = dict(self._last.objects)   # ref -> the last KeyValue seen
        self.deleted_in: dict[str, int] = {}                        # ref -> the step that deleted it (0-based)
        self.created_in: dict[str, int] = {}                        # ref -> the step that created it last

    def after_step(self, step: int) -> StepChanges:
        now = look(self.cluster)
        change = difference(step, self._last, now)
        landed = self._landed(step, {*change.created, *change.updated, *change.deleted})
        if landed:
            change = attrs.evolve(change, landed=landed)
        for ref in change.deleted:
            self.deleted_in[ref] = step
        for ref in change.created:
            self.deleted_in.pop(ref, None)
            self.created_in[ref] = step
        self.last_seen.update(now.objects)
        self._last = now
        self.changes.append(change)
        return change

    def _landed(self, step: int, changed: set[str]) -> list[tuple[str, int]]:
        """The objects of `changed` that kubectl commands of earlier steps, answered in this one, changed."""
        kubectl = self.cluster.kubectl
        submitted = len(kubectl.results) + len(kubectl.unanswered())
        self._sent_in.extend([step] * (submitted - len(self._sent_in)))
        landed = []
        for index in range(self._answered, len(kubectl.results)):
            ref = _command_ref(kubectl.results[index].response)
            if 0 <= self._sent_in[index] < step and ref in changed:
                landed.append((ref, self._sent_in[index]))
        self._answered = len(kubectl.results)
        return landed

    @property
    def endpoints(self) -> list[str]:
        return sorted(self.cluster.loop.components)

    def object_texts(self) -> dict[str, str]:
        """Each object seen, by ref: the JSON of its last version, for kmodel.report.focus to search."""
        texts = {}
        for ref in sorted(self.last_seen):
            try:
                texts[ref] = json.dumps(dump(self.last_seen[ref].value), sort_keys=True)
            except Exception:
                texts[ref] = repr(self.last_seen[ref].value)
        return texts

    def final_states(self, refs: Iterable[str]) -> tuple[ObjectState, ...]:
        """The last state of each object named: live at the end, or as it was before it was deleted."""
        states = []
        for ref in refs:
            kv = self.last_seen.get(ref)
            if kv is None:
                continue
            if ref in self.deleted_in:
                status = f"deleted in step {self.deleted_in[ref] + 1}; its last version before that"
            else:
                made = self.created_in.get(ref)
                status = "live at the end" + (f" (created in step {made + 1})" if made is not None else "")
            states.append(ObjectState(ref, status, _yaml(kv.value)))
        return tuple(states)
