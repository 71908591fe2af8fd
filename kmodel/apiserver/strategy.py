"""Per-kind create/update strategies (upstream's rest.BeforeCreate / BeforeUpdate and each kind's
PrepareForCreate / PrepareForUpdate), as pure functions over frozen objects.

Create (`prepare_for_create`):
* name from generateName: `<generateName><5 chars>` drawn from upstream's alphabet "bcdfghjklmnpqrstvwxz2456789"
  with the caller's seeded random source; uid: a UUID drawn from the same source; creationTimestamp = logical
  now; generation 1 for kinds with a spec and EndpointSlices; resourceVersion = the revision the write will get;
  deletionTimestamp/deletionGracePeriodSeconds cleared;
* status: reset for kinds with a status subresource (pods: phase Pending and their QoS class; namespaces:
  phase Active), kept for nodes (a kubelet registers its node with its status), as upstream's strategies.

Update (`prepare_for_update`): the main resource keeps the stored status, a status update keeps everything
but the status; uid (if empty), creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds come from
the stored object; generation moves by one when the spec changed (an EndpointSlice's: when anything but its
metadata, or its labels, changed).

`same_but_version(a, b)` tells a no-op write (equal except metadata.resourceVersion), which upstream's
GuaranteedUpdate skips.
"""

from __future__ import annotations

import operator
import random
from typing import Any, Callable

import attrs

from kmodel.apiserver.deletion import NAMESPACE_FINALIZER
from kmodel.apiserver.resources import Resource
from kmodel.objects.fastevolve import replacer
from kmodel.memo import POD_SPEC_MEMO_SIZE, identity_memo
from kmodel.objects.batch import (
    CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL,
)
from kmodel.objects.frozendict import FrozenDict
from kmodel.objects.meta import LabelSelector, ObjectMeta

from kmodel.apiserver.fastevolve import evolve as _evolve
from kmodel.apiserver import customresources
from kmodel.apiserver.crd_status import stored_versions
GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_SUFFIX_LENGTH = 5
_META_FIELDS = tuple(a.name for a in attrs.fields(__import__("kmodel.objects.meta", fromlist=["ObjectMeta"]).ObjectMeta)
                     if a.name != "resource_version")


def generated_name(base: str, rng: random.Random) -> str:
    """SimpleNameGenerator: base (cut to 58 characters) + 5 random characters."""
    if len(base) > 63 - GENERATE_NAME_SUFFIX_LENGTH:
        base = base[:63 - GENERATE_NAME_SUFFIX_LENGTH]
    return base + "".join(rng.choice(GENERATE_NAME_ALPHABET) for _ in range(GENERATE_NAME_SUFFIX_LENGTH))


def new_uid(rng: random.Random) -> str:
    """str(uuid.UUID(int=rng.getrandbits(128), version=4)), without building the UUID object (the 32 hex
    digits as bytes.hex gives them: a little cheaper than "%032x" % n, and the same string)."""
    h = ((rng.getrandbits(128) & _UUID_KEEP) | _UUID_SET).to_bytes(16, "big").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# uuid.UUID(version=4): variant RFC 4122 (bits 62-63 of the low half = 10), version 4 (bits 76-79 = 0100)
_UUID_KEEP = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID_SET = (0x8000 << 48) | (4 << 76)


def has_spec(obj: Any) -> bool:
    return hasattr(obj, "spec")


def qos_class(spec: Any) -> str:
    """v1qos.GetPodQOS, for cpu and memory (memoised per spec object: pods of one template share it)."""
    return _qos_class_memo(spec)


def _qos_class(spec: Any) -> str:
    requests: dict = {}
    limits: dict = {}
    is_guaranteed = True
    for c in spec.init_containers + spec.containers:
        req, lim = c.resources.requests, c.resources.limits
        for name in ("cpu", "memory"):
            if name in req:
                requests[name] = True
            if name in lim:
                limits[name] = True
        if not all(n in lim for n in ("cpu", "memory")):
            is_guaranteed = False
        for name in ("cpu", "memory"):
            if name in req and name in lim and req[name] != lim[name]:
                is_guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if is_guaranteed and len(limits) == 2:
        return "Guaranteed"
    return "Burstable"


_qos_class_memo = identity_memo(_qos_class, maxsize=POD_SPEC_MEMO_SIZE)


# ObjectMeta as BeforeCreate and BeforeUpdate set it, built in one call (no dict of changes)
_CREATE_META = replacer(ObjectMeta, "name", "uid", "creation_timestamp", "resource_version", "deletion_timestamp",
                        "deletion_grace_period_seconds", "generation")
_UPDATE_META = replacer(ObjectMeta, "uid", "creation_timestamp", "deletion_timestamp",
                        "deletion_grace_period_seconds", "generation", "resource_version")
_VERSION_META = replacer(ObjectMeta, "resource_version")
_WITH_META_STATUS: dict[type, Callable[..., Any]] = {}  # kind -> replacer(kind, "metadata", "status")


def _with_meta_status(obj: Any, meta: Any, status: Any) -> Any:
    """evolve(obj, metadata=meta, status=status)."""
    cls = type(obj)
    fn = _WITH_META_STATUS.get(cls)
    if fn is None:
        fn = _WITH_META_STATUS[cls] = replacer(cls, "metadata", "status")
    return fn(obj, meta, status)


def prepare_for_create(res: Resource, obj: Any, *, now: int, rng: random.Random, revision: int, name: str) -> Any:
    meta = obj.metadata
    new_meta = _CREATE_META(meta, name, new_uid(rng), now, str(revision), None, None,
                            1 if hasattr(obj, "spec") or res.name in _GENERATION_BEYOND_META else meta.generation)
    kind = res.name
    if res.crd is not None:
        return customresources.prepare_for_create(res, _evolve(obj, metadata=new_meta))
    if kind == "pods":
        return _with_meta_status(obj, new_meta, _pending_status(type(obj.status), _qos_class_memo(obj.spec)))
    if kind == "customresourcedefinitions":
        return stored_versions(_evolve(obj, metadata=new_meta, status=type(obj.status)()))
    if kind == "namespaces":
        # on create a namespace gets the namespace controller's finalizer (namespaceStrategy.PrepareForCreate)
        spec = obj.spec
        if NAMESPACE_FINALIZER not in spec.finalizers:
            spec = _evolve(spec, finalizers=spec.finalizers + (NAMESPACE_FINALIZER,))
        return _evolve(obj, metadata=new_meta, spec=spec, status=_evolve(obj.status, phase="Active"))
    if kind == "jobs":
        obj = _generate_selector(obj, new_meta)
    if res.has_status and kind != "nodes":
        return _evolve(obj, metadata=new_meta, status=type(obj.status)())
    return _evolve(obj, metadata=new_meta)


def _generate_selector(job: Any, meta: ObjectMeta) -> Any:
    """The Job strategy's generateSelector (run upstream from Validate, once the uid is set), unless
    spec.manualSelector is true: the template gets the job-name and controller-uid labels (legacy and
    batch.kubernetes.io/ ones) it does not have yet, and the selector matchLabels batch.kubernetes.io/controller-uid
    unless it names one already (a wrong one then fails validation: it does not match the template)."""
    spec = job.spec
    if spec.manual_selector:
        return job
    template = spec.template
    labels = dict(template.metadata.labels)
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, meta.name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta.uid)
    selector = spec.selector or LabelSelector()
    if CONTROLLER_UID_LABEL not in selector.match_labels:
        selector = _evolve(selector, match_labels=FrozenDict({**selector.match_labels, CONTROLLER_UID_LABEL: meta.uid}))
    template = _evolve(template, metadata=_evolve(template.metadata, labels=FrozenDict(labels)))
    return _evolve(job, spec=_evolve(spec, selector=selector, template=template))


_PENDING: dict[tuple[type, str], Any] = {}


def _pending_status(cls: type, qos: str) -> Any:
    """A new pod's status, phase Pending and its QoS class: an immutable value, so one per class is shared."""
    status = _PENDING.get((cls, qos))
    if status is None:
        status = _PENDING[(cls, qos)] = cls(phase="Pending", qos_class=qos)
    return status


#: kinds whose status updates take the new metadata (upstream's status strategies reset only the spec); every
#: other kind keeps the stored metadata, as ResetObjectMetaForStatus does (a simplification for pods, nodes and
#: services, whose writers in the model send whole objects where upstream's send status patches)
STATUS_UPDATES_KEEP_METADATA = frozenset({"deployments", "replicasets", "statefulsets", "jobs"})


def prepare_for_update(res: Resource, new: Any, old: Any, *, subresource: str, revision: int) -> Any:
    """The object to store for an update of `old` by `new` (see the module docstring)."""
    old_meta = old.metadata
    if res.crd is not None:
        meta = new.metadata
        return customresources.prepare_for_update(res, new, old, subresource=subresource, meta=_UPDATE_META(
            meta, meta.uid or old_meta.uid, old_meta.creation_timestamp, old_meta.deletion_timestamp,
            old_meta.deletion_grace_period_seconds, old_meta.generation, str(revision)))
    if subresource == "status":
        if res.name in STATUS_UPDATES_KEEP_METADATA:
            # upstream's deployment/replicaset/statefulset status strategies reset only spec (and a Deployment's labels):
            # the controller records its revision annotation through the status update
            meta = new.metadata
            if res.name == "deployments":
                meta = _evolve(meta, labels=old_meta.labels)
            return _evolve(old, metadata=_evolve(
                meta, uid=old_meta.uid, creation_timestamp=old_meta.creation_timestamp,
                deletion_timestamp=old_meta.deletion_timestamp,
                deletion_grace_period_seconds=old_meta.deletion_grace_period_seconds,
                generation=old_meta.generation, resource_version=str(revision)), status=new.status)
        # only the status moves; metadata and spec stay as stored (ResetObjectMetaForStatus)
        return _with_meta_status(old, _VERSION_META(old_meta, str(revision)), new.status)
    if res.name == "namespaces":
        # spec.finalizers change only through the finalize subresource (namespaceStrategy.PrepareForUpdate
        # keeps the stored ones; namespaceFinalizeStrategy takes the new ones)
        finalizers = new.spec.finalizers if subresource == "finalize" else old.spec.finalizers
        if finalizers != new.spec.finalizers:
            new = _evolve(new, spec=_evolve(new.spec, finalizers=finalizers))
    meta = new.metadata
    generation = old_meta.generation
    if has_spec(new) and generation and new.spec is not old.spec and new.spec != old.spec:
        generation += 1
    elif res.name in _GENERATION_BEYOND_META and _changed_beyond_meta(new, old):
        generation += 1
    new_meta = _UPDATE_META(meta, meta.uid or old_meta.uid, old_meta.creation_timestamp, old_meta.deletion_timestamp,
                            old_meta.deletion_grace_period_seconds, generation, str(revision))
    if res.has_status:
        return _with_meta_status(new, new_meta, old.status)
    return _evolve(new, metadata=new_meta)


#: kinds without a spec whose generation starts at 1 and moves when anything but metadata, or the labels, changed
#: (endpointSliceStrategy's PrepareForCreate and PrepareForUpdate: an EndpointSlice's generation is what the
#: EndpointSlice controller's tracker compares with its own writes)
_GENERATION_BEYOND_META = frozenset({"endpointslices"})


def _changed_beyond_meta(new: Any, old: Any) -> bool:
    return (new.metadata.labels != old.metadata.labels
            or any(getattr(new, a.name) != getattr(old, a.name) for a in attrs.fields(type(new)) if a.name != "metadata"))


def same_but_version(a: Any, b: Any) -> bool:
    """Whether two objects of one kind are equal apart from metadata.resourceVersion."""
    if a is b:
        return True
    getters = _GETTERS.get(type(a))
    if getters is None:
        getters = _GETTERS[type(a)] = _getters(type(a))
    others, has_meta = getters
    # tuples of fields compare element by element, shared parts by identity first (a status update keeps
    # the stored spec object)
    if others(a) != others(b):
        return False
    if has_meta:
        am, bm = a.metadata, b.metadata
        return am is bm or _META_GETTER(am) == _META_GETTER(bm)
    return True


def _getters(cls: type) -> tuple[Callable[[Any], tuple], bool]:
    names = tuple(f.name for f in attrs.fields(cls))
    others = tuple(n for n in names if n != "metadata")
    # attrgetter of one name returns the value, not a 1-tuple: fine, it is compared the same way
    return (operator.attrgetter(*others) if others else (lambda obj: ())), "metadata" in names


_GETTERS: dict[type, tuple[Callable[[Any], tuple], bool]] = {}
_META_GETTER = operator.attrgetter(*_META_FIELDS)

