"""The API-depth rules: requests that reach the API server's rarer decisions (a mixin of `KmodelMachine`).

    apply_gadget_crd   kubectl apply of the Gadget CRD, with loose or strict bounds (a schema tightened under
                       stored objects), or of a rival asking for its plural or its kind
    delete_gadget_crd  kubectl delete of one of them
    apply_gadget       kubectl apply (client- or server-side) of a Gadget, valid or invalid in one way
    patch_gadget       kubectl patch of a Gadget: merge, JSON and strategic merge patches
    tighten_gadget_schema
                       a Gadget stored, its CRD's bounds tightened under it, then a patch of it (ratcheting)
    patch_odd          kubectl patch of an object that exists with a JSON patch or a strategic merge patch at
                       the edges of its spec
    create_odd_body    POST of a body with a field of a rare shape or the wrong JSON type

The actions and their tables are kmodel.checker.api_depth_actions'. Each row is drawn uniformly from a small
range, so that every row comes up in a dev run (an INDEX crowds toward 0), and shrinks toward the first: a
valid Gadget, a merge patch of one field, an escaped pointer, a null in a ConfigMap. The Gadget rules run only
once the CRD is stored (apply_gadget applies it first when it is not), and the patch rules only where there is
an object to patch.
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition

from kmodel.checker.api_depth_actions import (
    ADMIN_DIRECTORIES, CLUSTER_SCOPED_BODIES, CRD_NAME, CRD_VARIANTS, DIRECTORY, GADGET_PATCHES, GADGETS, ODD_BODIES,
    ODD_BODY_ACTORS, ODD_PATCHES, PLURAL, SHAPES, TIGHTENED, TIGHTENED_PATCHES, VALID_SHAPES, ApplyGadget,
    ApplyGadgetCRD, DeleteGadgetCRD, PatchGadget,
)
from kmodel.checker.actions import RunFair
from kmodel.checker.collide_actions import SendRequest
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.patch_actions import PatchObject
from kmodel.checker.patch_rules import PatchRules
from kmodel.checker.preconditions import once_per_step
from kmodel.checker.rulebook import RuleFamily, rule
from kmodel.objects import dump


#: how long apply_gadget waits for a CRD it has just applied to be Established (`kubectl wait`): the
#: apiextensions controller accepts the names within a second of a quiet cluster's time
CRD_WAIT_MS = 2_000


def gadget_shape(i: int) -> str:
    """The shape a draw below twice the shapes' number names: each shape at its own index, and past them a valid
    one (`VALID_SHAPES`, in turn), so that half the Gadgets applied are stored and the rules that patch one have
    one to patch."""
    return SHAPES[i] if i < len(SHAPES) else VALID_SHAPES[i % len(VALID_SHAPES)]


class ApiDepthRules(RuleFamily):
    """Rules for a richly schemed CRD, odd patches and odd bodies (see the module docstring). Mixed into
    KmodelMachine, which provides `cluster` and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    def _gadget_crd_stored(self) -> bool:
        return self.cluster.get("customresourcedefinitions", "", CRD_NAME) is not None

    def _gadgets(self) -> list[str]:
        return [g.metadata.name for g in self.cluster.objects(PLURAL, "default")] \
            if self._gadget_crd_stored() else []

    @rule(variant=st.integers(0, len(CRD_VARIANTS) - 1))
    def apply_gadget_crd(self, variant: int) -> None:
        """Draws: loose bounds, strict bounds, or a rival CRD (`CRD_VARIANTS`)
        Does: `kubectl apply` of the Gadget CRD (`apply-gadget-crd`): an int-or-string port, a nullable note, a
        defaulted count, a name bounded in length and pattern, a ratio with exclusive bounds, a list of tags
        (`set`), a map of short labels, a preserved `extra`, an embedded resource `template`, a `map` list of
        ports; the strict bounds (a name of at most 3 characters, at most 2 tags) tighten the schema under the
        Gadgets stored, whose updates are then ratcheted; a rival of another group asking for the plural
        `gadgets` (PluralConflict), or of the same group asking for the kind `Gadget` (KindConflict), is not
        accepted while the Gadget CRD holds the name
        Shrinks to: the loose CRD"""
        self._do(ApplyGadgetCRD(CRD_VARIANTS[variant]))

    @rule(variant=st.integers(0, len(CRD_VARIANTS) - 1))
    def delete_gadget_crd(self, variant: int) -> None:
        """Draws: the Gadget CRD or a rival
        Does: `kubectl delete customresourcedefinition` (`delete-gadget-crd`, 404 for one not stored): the
        Gadgets are deleted first (one with a finalizer holds the CRD, Terminating), then a rival waiting for
        the names gets them
        Shrinks to: the Gadget CRD"""
        self._do(DeleteGadgetCRD(CRD_VARIANTS[variant]))

    @rule(i=INDEX, shape=st.integers(0, 2 * len(SHAPES) - 1), server_side=st.booleans())
    def apply_gadget(self, i: int, shape: int, server_side: bool) -> None:
        """Draws: a Gadget (`g1`, `g2`); a shape (`GADGET_SPECS` in `kmodel/checker/api_depth_actions.py`: plain,
        every field, a numeric port and an integral float count, nulls, valid only under the loose bounds, then
        one mistake each: a bool port, a name too long, of the wrong pattern or empty, a ratio at its exclusive
        bounds, a fraction or a string count, one out of range, too many tags, tags not a list, a null or
        unsupported size, a label too long or a number, an embedded resource without kind or with bad names,
        a port item without its key, an empty ports list, an unknown field, a spec that is a string), or, as
        often, one of the valid shapes; client-side or server-side
        Does: `kubectl apply [--server-side] gadget` (`apply-gadget`): 201/200, 422 with the schema's messages,
        400 for an unknown field (strict field validation, also under the embedded resource's metadata), 409
        when a server-side apply meets fields the client-side apply owns
        While the Gadget CRD is not stored, the user applies it first (its loose variant) and waits for it
        (`kubectl wait --for=condition=Established`, `CRD_WAIT_MS` of fair running), as one does before the
        first Gadget: swarm testing turns each rule off in about half the examples, and an example draws this
        rule only a few times, so a Gadget that had to wait for a later draw would seldom be stored (a CRD
        that is not yet Established when the wait ends leaves kubectl without the kind: the Gadget is refused)
        Shrinks to: a plain Gadget `g1`, client-side"""
        if not self._gadget_crd_stored():
            self._do(ApplyGadgetCRD())
            self._do(RunFair(CRD_WAIT_MS))
        self._do(ApplyGadget(pick(i, GADGETS), gadget_shape(shape), server_side))

    @rule(row=st.integers(0, len(TIGHTENED_PATCHES) - 1))
    def tighten_gadget_schema(self, row: int) -> None:
        """Draws: a row of `TIGHTENED_PATCHES`
        Does: a schema tightened under a stored object, then an update of it, in one step: the user applies the
        Gadget `g2` with a name and tags valid only under the loose bounds, a keyed list of ports and a map of
        labels (`loose-only-lists`; the loose CRD first, and a wait, when none is stored), the operator applies
        the strict CRD (`kubectl wait` for it), and the user patches `g2` (`patch-gadget`): validation ratcheting
        lets an update through whose invalid fields are as stored (200), correlating list items by their keys and
        maps by key, and refuses one that changes them (422)
        Shrinks to: a merge patch of spec.count"""
        if not self._gadget_crd_stored():
            self._do(ApplyGadgetCRD())
            self._do(RunFair(CRD_WAIT_MS))
        gadget, shape = TIGHTENED
        self._do(ApplyGadget(gadget, shape))
        self._do(ApplyGadgetCRD("strict"))
        self._do(RunFair(CRD_WAIT_MS))
        patch_type, doc = TIGHTENED_PATCHES[row]
        self._do(PatchGadget(gadget, patch_type, doc))

    @precondition(once_per_step(lambda self: bool(self._gadgets())))
    @rule(i=INDEX, row=st.integers(0, len(GADGET_PATCHES) - 1))
    def patch_gadget(self, i: int, row: int) -> None:
        """Draws: a stored Gadget; a row of `GADGET_PATCHES`
        Does: `kubectl patch gadget` (`patch-gadget`): merge patches of one field, which leave the others as
        stored (ratcheted under the strict bounds), a label; JSON patches at a list's end (`-`), at an index, past
        the end (422), a `test` then `replace`, a `copy` and a `move` between fields (422 from a missing one),
        a `remove` of the only port (422: minItems), the embedded resource's kind replaced; the finalizer
        `example.com/hold` set and the finalizers removed; a strategic merge
        patch (415: custom objects have no merge keys)
        Shrinks to: a merge patch of spec.count"""
        patch_type, doc = GADGET_PATCHES[row]
        self._do(PatchGadget(pick(i, self._gadgets()), patch_type, doc))

    @precondition(once_per_step(lambda self: bool(PatchRules._patchable(self))))
    @rule(i=INDEX, row=st.integers(0, len(ODD_PATCHES) - 1))
    def patch_odd(self, i: int, row: int) -> None:
        """Draws: an object the patch rule patches (a Deployment, the StatefulSet `db`, a pod, a Service, a node);
        a row of `ODD_PATCHES`, the first that fits the object's kind from it on
        Does: `kubectl patch --type=json|strategic` (`patch-object`): JSON patches with an escaped pointer
        (`~1`), a `test` of the kind, finalizers added at `-` and at 0, at an index past the end (422), a
        `remove` of a container's port that may not exist, a `copy` from a list index, a `move` under a missing
        parent (422), an unknown op, a pointer without its slash, an operation without a path, a document that
        is no list (400); strategic merge patches with `$patch: replace` on a map and in a list,
        `$deleteFromPrimitiveList`, `$setElementOrder`, `$retainKeys`, `$patch: delete` on a map, and a document
        that is no object (400)
        Shrinks to: the first object's annotation under an escaped key"""
        resource, ns, obj = pick(i, PatchRules._patchable(self))
        body = dump(obj)
        for n in range(len(ODD_PATCHES)):
            patch_type, patch_row = ODD_PATCHES[(row + n) % len(ODD_PATCHES)]
            doc = patch_row.build(body)
            if doc is not None:
                self._do(PatchObject(resource, ns, obj.metadata.name, patch_type, doc))
                return

    @rule(row=st.integers(0, len(ODD_BODIES) - 1), actor=st.integers(0, len(ODD_BODY_ACTORS) - 1))
    def create_odd_body(self, row: int, actor: int = 0) -> None:
        """Draws: a row of `ODD_BODIES`; the admin or alice
        Does: `POST` in default (`send-request`) of a ConfigMap with nulls (201), a Deployment with an integral
        float replicas (201); 400 with Go's decoding message for a fraction, a number past int32, a string or a
        bool where a number is, a list where a map is, a number where a time is, an unknown field (strict), a
        fractional targetPort, a null item and a string port, a pod with a wrong type in seven fields (the first
        reported), no kind, a kind that is a number; 400 for a
        ConfigMap of another namespace; the SelfSubjectAccessReviews of `kubectl auth can-i` (resource
        attributes, non-resource attributes, neither: 422) and the SelfSubjectReview of `kubectl auth whoami`;
        then `kubectl create -f` of a directory of `ODD_OBJECTS`, each with several mistakes at once (422
        listing them in upstream's order): PriorityClasses with a reserved name, a value past 10^9 and an
        unknown policy, and a global default (201; from then on it gives every new pod its priority) then a
        second one (403), pods naming a class that is not there or bringing a priority of their own (403); a pod
        (port names, a probe without a handler, an extended resource's request not its limit, a container
        without an image, of a taken name, with a dot in its name, a restart policy, an Exists toleration with a
        value), Services of an unknown type and with a nodePort under ClusterIP, EndpointSlices (a loopback, an
        IPv6 and no address in an IPv4 slice, a bad FQDN, an unknown address type), Endpoints (an address that is
        none, a loopback, an unspecified one, unnamed ports, a subset without addresses), a CRD (a name that is
        not plural.group, a label that is not a qualified name, a version without a schema, two storage
        versions, a property without a type), a ConfigMap without a name, Secrets of the basic-auth and TLS
        types without their keys, a namespace enforcing Pod Security baseline and a pod in it with the host's
        network, a host port and a privileged container (403), a Lease of 0 s, a Role rule without verbs, a
        RoleBinding to a Secret, a ConfigMap with incomplete and rival controller references; and of a directory
        of dockerconfigjson Secrets pasted by hand (`DOCKER_CONFIGS`: Go's json messages); the directories of
        manifests go as the admin whoever is drawn, the ConfigMaps and the reviews as the one drawn: alice's writes
        are refused (403), her reviews answered
        Shrinks to: the ConfigMap with nulls, as the admin"""
        resource, body = ODD_BODIES[row]
        if resource != DIRECTORY:
            namespace = "" if resource in CLUSTER_SCOPED_BODIES else "default"
            self._do(SendRequest("create", resource, namespace, body=body, actor=ODD_BODY_ACTORS[actor]))
            return
        sender = ODD_BODY_ACTORS[0] if body in ADMIN_DIRECTORIES else ODD_BODY_ACTORS[actor]
        for resource, one in body:  # kubectl create -f <dir>/: each manifest in its own namespace, else default
            namespace = "" if resource in CLUSTER_SCOPED_BODIES else one["metadata"].get("namespace", "default")
            self._do(SendRequest("create", resource, namespace, body=one, actor=sender))
