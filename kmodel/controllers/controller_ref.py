"""ControllerRefManager (pkg/controller/controller_ref_manager.go): the decisions, and issuing them.

Theory of operation
-------------------
A controller (a ReplicaSet claiming pods, a Deployment claiming ReplicaSets) looks at every object of the
dependent kind in its namespace and sorts each into one of four outcomes, exactly as ClaimObject does:

* owned by another controller (its controller ownerReference has another uid): ignored;
* owned by us and matching our selector: *claimed*;
* owned by us but no longer matching: *released* (a patch removing our ownerReference), unless we are
  being deleted;
* an orphan (no controller ownerReference) that matches, is not being deleted, lives in our namespace, while
  we are not being deleted ourselves: *adopted* (a patch adding our controller ownerReference). Upstream
  first re-reads the controller with a live GET (RecheckDeletionTimestamp: same uid, not being deleted).

`claim` decides (pure); `issue_claims` carries the decision out as part of a controller's `Sync`: the live
GET of the controller (only when something is to be adopted), then every adopt/release patch at once, and
calls its continuation with the claimed objects (claimed + successfully adopted) and the first error, if
any (a 404 on a patch is not an error: the dependent is gone, as upstream ignores NotFound).

The patches are JSON merge patches carrying the whole new ownerReferences list (upstream sends strategic
merge patches that add or delete one entry by uid; the API server here speaks merge patch, so the list is
computed from the cached object) and the dependent's uid as a precondition, as upstream's patches do: the
API server rejects a uid change, so a dependent deleted and re-created under the same name is never
touched.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import attrs

from kmodel.objects import OwnerReference, dump_struct
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.client import NAMESPACE_INDEX


@attrs.frozen
class Claims:
    """The outcome of ClaimObject over a list, in the list's order."""

    claimed: tuple = ()
    adopt: tuple = ()
    release: tuple = ()


def controller_of(obj: Any) -> Optional[OwnerReference]:
    """metav1.GetControllerOf: the ownerReference with controller=true, if any."""
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return ref
    return None


def resolve_controller_ref(informer: Any, namespace: str, ref: Any, kind: str) -> Any:
    """resolveControllerRef: the owner of `kind` that `ref` names, if `informer`'s cache holds it with that
    uid (an owner re-created under the same name is another owner); else None."""
    if ref.kind != kind:
        return None
    owner = informer.get(namespace, ref.name)
    return owner if owner is not None and owner.metadata.uid == ref.uid else None


def owners_selecting(informer: Any, obj: Any) -> list:
    """Get<Pod|ReplicaSet>...Sets: the owners in `informer`'s cache, in `obj`'s namespace, whose non-empty
    selector matches `obj`'s labels (a selector that does not parse matches nothing)."""
    found = []
    for owner in informer.by_index(NAMESPACE_INDEX, obj.metadata.namespace):
        try:
            sel = label_selector_from_object(owner.spec.selector)
        except SelectorError:
            continue
        if not sel.empty() and sel.matches(obj.metadata.labels):
            found.append(owner)
    return found


def new_controller_ref(owner: Any, api_version: str, kind: str) -> OwnerReference:
    """metav1.NewControllerRef: controller and blockOwnerDeletion set."""
    return OwnerReference(api_version=api_version, kind=kind, name=owner.metadata.name, uid=owner.metadata.uid,
                          controller=True, block_owner_deletion=True)


def claim(controller: Any, selector: Any, objs: Sequence[Any]) -> Claims:
    """ClaimObject over `objs`; `selector` has `matches(labels)` (a parsed label selector)."""
    cmeta = controller.metadata
    claimed, adopt, release = [], [], []
    for obj in objs:
        m = obj.metadata
        ref = controller_of(obj)
        matches = selector.matches(m.labels)
        if ref is not None:
            if ref.uid != cmeta.uid:
                continue
            if matches:
                claimed.append(obj)
            elif cmeta.deletion_timestamp is None:
                release.append(obj)
            continue
        if cmeta.deletion_timestamp is not None or not matches or m.deletion_timestamp is not None:
            continue
        if cmeta.namespace and cmeta.namespace != m.namespace:
            continue
        adopt.append(obj)
    return Claims(tuple(claimed), tuple(adopt), tuple(release))


def _refs_patch(obj: Any, refs: tuple) -> dict:
    return {"metadata": {"ownerReferences": [dump_struct(r) for r in refs], "uid": obj.metadata.uid}}


def adopt_patch(obj: Any, controller_ref: OwnerReference) -> dict:
    """The merge patch that adds our controller reference (ownerRefControllerPatch)."""
    refs = tuple(r for r in obj.metadata.owner_references if r.uid != controller_ref.uid) + (controller_ref,)
    return _refs_patch(obj, refs)


def release_patch(obj: Any, controller_uid: str) -> dict:
    """The merge patch that removes our reference (GenerateDeleteOwnerRefStrategicMergeBytes)."""
    return _refs_patch(obj, tuple(r for r in obj.metadata.owner_references if r.uid != controller_uid))


Then = Callable[[int, Any, list, Optional[str]], None]


def issue_claims(sync: Any, now: int, out: Any, *, owner_resource: str, owner: Any, dependent_resource: str,
                 dependent_kind: str, claims: Claims, controller_ref: OwnerReference, then: Then) -> None:
    """Carry out `claims` through `sync` (a controllers.base.Sync); then(now, out, claimed, error)."""
    if not claims.adopt and not claims.release:
        then(now, out, list(claims.claimed), None)
        return
    adopted: list = []
    errors: list[str] = []
    pending = [len(claims.adopt) + len(claims.release)]
    ns = owner.metadata.namespace

    def one_done(t: int, o: Any) -> None:
        pending[0] -= 1
        if pending[0] == 0:
            then(t, o, list(claims.claimed) + adopted, errors[0] if errors else None)

    def patched(adopting: bool, obj: Any) -> Callable:
        def done(t: int, response: Any, o: Any) -> bool:
            if response.ok:
                if adopting:
                    adopted.append(response.body)
            elif response.code != 404:
                errors.append(getattr(response.body, "message", str(response.body)))
            one_done(t, o)
            return True
        return done

    for obj in claims.release:
        sync.patch(now, out, dependent_resource, obj.metadata.name, release_patch(obj, owner.metadata.uid),
                   namespace=ns, on_done=patched(False, obj))
    if not claims.adopt:
        return

    def rechecked(t: int, response: Any, o: Any) -> bool:
        m = owner.metadata
        problem = None
        if not response.ok:
            problem = getattr(response.body, "message", str(response.body))
        elif response.body.metadata.uid != m.uid:
            problem = (f"original {owner_kind(owner)} {m.namespace}/{m.name} is gone: got uid "
                       f"{response.body.metadata.uid}, wanted {m.uid}")
        elif response.body.metadata.deletion_timestamp is not None:
            problem = f"{m.namespace}/{m.name} has just been deleted at {response.body.metadata.deletion_timestamp}"
        for obj in claims.adopt:
            if problem is not None:
                d = obj.metadata
                errors.append(f"can't adopt {dependent_kind} {d.namespace}/{d.name} ({d.uid}): {problem}")
                one_done(t, o)
            else:
                sync.patch(t, o, dependent_resource, obj.metadata.name, adopt_patch(obj, controller_ref),
                           namespace=ns, on_done=patched(True, obj))
        return True

    sync.request(now, out, "get", owner_resource, namespace=ns, name=owner.metadata.name, on_done=rechecked)


def owner_kind(obj: Any) -> str:
    return type(obj).__name__
