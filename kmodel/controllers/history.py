"""A controller's history as ControllerRevisions (pkg/controller/history, Kubernetes 1.31): the pure parts.

A revision is a ControllerRevision named `<parent>-<hash>` and controlled by its parent: `data` holds what the
parent saved (a StatefulSet's: the strategic merge patch that restores its pod template), `revision` a number
that orders the history. The hash is FNV-1 32 over the data's JSON bytes, then, when the parent has seen name
collisions, over the decimal collision count (HashControllerRevision), encoded by rand.SafeEncodeString.

The data's bytes are Go's `json.Marshal` of a map: keys sorted, no spaces, `<`, `>` and `&` escaped as
`\\u003c`, `\\u003e`, `\\u0026` (`go_json`). Two revisions are equal when their data are (EqualRevision: the
`controller.kubernetes.io/hash` label is compared first only when both parse as integers, which the encoded
hashes never do).

The requests (create with the collision loop, renumber, adopt, delete) are the controller's: see
statefulset.py.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional, Sequence

import attrs

from kmodel.objects import ControllerRevision, ObjectMeta, OwnerReference
from kmodel.objects.frozendict import frozen_map

from .controller_ref import controller_of
from .deployment_logic import safe_encode_string

#: history.ControllerRevisionHashLabel
HASH_LABEL = "controller.kubernetes.io/hash"
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193
#: ControllerRevisionName keeps at most this much of the parent's name, so the name stays within 253 bytes
_MAX_PREFIX = 223


def fnv32(data: bytes, h: int = _FNV_OFFSET) -> int:
    """FNV-1 (hash/fnv New32: multiply, then xor), not the FNV-1a of pod-template-hash."""
    for b in data:
        h = ((h * _FNV_PRIME) & 0xFFFFFFFF) ^ b
    return h


def _plain(value: Any) -> Any:
    """Frozen maps and tuples as the dicts and lists json.dumps writes."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def go_json(value: Any) -> bytes:
    """encoding/json.Marshal of a map[string]interface{}: sorted keys, compact, HTML-escaped."""
    text = json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode()


def hash_revision(data: Any, probe: Optional[int]) -> str:
    """HashControllerRevision: FNV-1 of the data's bytes, then of the collision count in decimal."""
    h = fnv32(go_json(data))
    if probe is not None:
        h = fnv32(str(probe).encode(), h)
    return safe_encode_string(str(h))


def revision_name(prefix: str, hash_: str) -> str:
    """ControllerRevisionName: `<prefix>-<hash>`, the prefix cut to 223 bytes."""
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def new_controller_revision(parent: Any, controller_ref: OwnerReference, template_labels: Any, data: Any,
                            revision: int, collision_count: int, hash_: Optional[str] = None) -> ControllerRevision:
    """NewControllerRevision: the template's labels plus the hash label, controlled by `parent` (`hash_`: the
    data's hash with the collision count, when the caller has it already)."""
    if hash_ is None:
        hash_ = hash_revision(data, collision_count)
    labels = frozen_map({**template_labels, HASH_LABEL: hash_})
    meta = ObjectMeta(name=revision_name(parent.metadata.name, hash_), namespace=parent.metadata.namespace,
                      labels=labels, owner_references=(controller_ref,))
    return ControllerRevision(metadata=meta, data=data, revision=revision)


def renamed(revision: ControllerRevision, parent_name: str, collision_count: int) -> ControllerRevision:
    """The revision as CreateControllerRevision sends it after `collision_count` collisions: its name is the
    hash of its data with that count (the labels keep the first hash, as upstream's clone does)."""
    name = revision_name(parent_name, hash_revision(revision.data, collision_count))
    return attrs.evolve(revision, metadata=attrs.evolve(revision.metadata, name=name))


def owned_revisions(revisions: Iterable[ControllerRevision], selector: Any, parent_uid: str) -> list:
    """ListControllerRevisions: those matching `selector` that `parent_uid` controls or nothing controls."""
    owned = []
    for r in revisions:
        if not selector.matches(r.metadata.labels):
            continue
        ref = controller_of(r)
        if ref is None or ref.uid == parent_uid:
            owned.append(r)
    return owned


def sort_revisions(revisions: Iterable[ControllerRevision]) -> list:
    """SortControllerRevisions: by revision number, then creation time, then name."""
    return sorted(revisions, key=lambda r: (r.revision, r.metadata.creation_timestamp or 0, r.metadata.name))


def _hash_label(r: ControllerRevision) -> Optional[int]:
    text = r.metadata.labels.get(HASH_LABEL)
    if text is None:
        return None
    try:
        value = int(text, 10)
    except ValueError:
        return None
    return value if -(2 ** 31) <= value < 2 ** 31 else None


def equal_revision(a: Optional[ControllerRevision], b: Optional[ControllerRevision]) -> bool:
    """EqualRevision: both absent, or the same data (different integer hash labels: different)."""
    if a is None or b is None:
        return a is b
    ha, hb = _hash_label(a), _hash_label(b)
    if ha is not None and hb is not None and ha != hb:
        return False
    return a.data == b.data


def find_equal_revisions(revisions: Sequence[ControllerRevision], needle: ControllerRevision) -> list:
    """FindEqualRevisions, in the order of `revisions`."""
    return [r for r in revisions if equal_revision(r, needle)]


def next_revision(revisions: Sequence[ControllerRevision]) -> int:
    """nextRevision: one more than the last of the sorted `revisions`, 1 for none."""
    return revisions[-1].revision + 1 if revisions else 1
