"""What a merge patch writes: every field it sets holds its value, every field it nulls is gone.

Judged from kubectl's record of its commands (`cluster.kubectl.results`: each command with the answer it got) with
a reference reading of RFC 7386 of its own, never kmodel/apiserver/patch.py: a mistake there would move an
oracle that called it along with the model.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.cluster.kubectl import Patch, describe
from kmodel.invariants.inputs import KUBECTL_RESULTS
from kmodel.invariants.registry import SAFETY, invariant
from kmodel.objects import dump

#: fields the API server sets whatever a patch says: resourceVersion in a patch is a precondition, and the answer
#: carries the new one
_SERVER_SET = {("metadata", "resourceVersion")}
#: Go's zero values: the JSON form leaves a field out when it holds one (omitempty), so a patch that sets one is
#: met by the field's absence
_ZEROS = ("", 0, False, (), None)


def _absent_or_zero(value: Any) -> bool:
    return value is None or value in _ZEROS or value == [] or value == {}


def _holds(wanted: Any, found: Any) -> bool:
    """Whether `found` holds the value a merge patch set (`wanted`: a scalar or a list, replaced whole): equal, but
    an object in a list may have gained fields defaulting filled in, and a zero value may be absent."""
    if _absent_or_zero(wanted) and _absent_or_zero(found):
        return True
    if isinstance(wanted, dict):
        return isinstance(found, dict) and all(
            _absent_or_zero(v) and _absent_or_zero(found.get(k)) or _holds(v, found.get(k)) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (isinstance(found, list) and len(found) == len(wanted)
                and all(_holds(w, f) for w, f in zip(wanted, found)))
    return wanted == found and type(wanted) is type(found)


def unmet(patch: dict, obj: Any, path: tuple[str, ...] = ()) -> Iterator[str]:
    """Where `obj` (the object's JSON) does not show the merge patch `patch` applied: RFC 7386 merges an object
    key by key, deletes a key whose value is null, and replaces anything else by the patch's value."""
    here = obj if isinstance(obj, dict) else {}
    for key, value in patch.items():
        at = (*path, key)
        if at in _SERVER_SET or at == ("status",):  # status: the main resource's strategy keeps the stored one
            continue
        if value is None:
            if key in here:
                yield f"{'.'.join(at)} is {here[key]!r}, which the patch nulled"
        elif isinstance(value, dict):
            yield from unmet(value, here.get(key), at)
        elif not _holds(value, here.get(key)):
            yield f"{'.'.join(at)} is {here.get(key)!r}, not the patch's {value!r}"


@invariant("merge-patch-applied", kind=SAFETY, principle="the API as the single contract",
           reads=(KUBECTL_RESULTS,))
def merge_patch_applied(cluster: Any, memo: dict) -> Iterator[str]:
    """Every merge patch kubectl sent that the API server accepted left each field the patch set at the patch's
    value and each field it nulled absent, in the object the server answered with (the one it stored).

    A JSON merge patch (RFC 7386) says exactly what it changes; an answer that shows otherwise is a write the user
    did not ask for. Patches of a subresource are left out (a status patch changes only the status)."""
    bad: list = memo.setdefault("bad", [])
    results = cluster.kubectl.results
    start, end = memo.get("pos", 0), len(results)
    memo["pos"] = end
    for result in results[start:end]:
        command = result.command
        if not isinstance(command, Patch) or command.type != "merge" or command.subresource or not result.ok:
            continue
        if not isinstance(command.patch, dict):
            continue
        for problem in unmet(command.patch, dump(result.response.body)):
            bad.append(f"kubectl's merge patch of {describe(command)} was accepted, yet {problem}")
    yield from bad
